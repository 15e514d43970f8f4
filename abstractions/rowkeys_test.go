package abstractions

import (
	"errors"
	"math"
	"sort"
	"testing"
	"time"
)

func TestTicksMatchDotNet(t *testing.T) {
	cases := []struct {
		t     time.Time
		ticks int64
	}{
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Unix(0, 0), 621_355_968_000_000_000},
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 639_028_224_000_000_000},
		{time.Date(2026, 1, 1, 1, 0, 0, 0, time.FixedZone("x", 3600)), 639_028_224_000_000_000},
		{time.Date(2026, 1, 1, 0, 0, 0, 199, time.UTC), 639_028_224_000_000_001},
		{time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), 3_155_378_975_999_999_999},
		{time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC), 3_155_378_975_999_999_999},
	}
	for _, c := range cases {
		if got := Ticks(c.t); got != c.ticks {
			t.Errorf("Ticks(%v) = %d, want %d", c.t, got, c.ticks)
		}
	}
	if got := InvertedTicks(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); got != "8584343812854775807" {
		t.Errorf("InvertedTicks = %s", got)
	}
	if got := InvertedTicks(time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)); got != "6067993060854775808" || len(got) != 19 {
		t.Errorf("InvertedTicks(max) = %s", got)
	}
}

func TestInvertedTicksSortNewestFirst(t *testing.T) {
	base := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	var keys []string
	for i := 0; i < 50; i++ {
		keys = append(keys, InvertedTicks(base.Add(time.Duration(i*i)*time.Millisecond+time.Duration(i)*100)))
	}
	if !sort.SliceIsSorted(keys, func(i, j int) bool { return keys[i] > keys[j] }) {
		t.Fatal("later times do not get smaller keys")
	}
	back, err := ParseInvertedTicks(keys[7])
	if want := base.Add(49*time.Millisecond + 700); err != nil || !back.Equal(want) {
		t.Errorf("ParseInvertedTicks = %v, %v; want %v", back, err, want)
	}
	for _, bad := range []string{"", "123", "x234567890123456789", "9223372036854775807"[:18] + "x"} {
		if _, err := ParseInvertedTicks(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseInvertedTicks(%q): %v", bad, err)
		}
	}
}

func TestVersionKey(t *testing.T) {
	cases := map[int]string{0: "2147483647", 3: "2147483644", 1000: "2147482647", math.MaxInt32: "0000000000", math.MaxInt32 - 7: "0000000007"}
	for v, want := range cases {
		if got := VersionKey(v); got != want {
			t.Errorf("VersionKey(%d) = %s, want %s", v, got, want)
		}
		if back, err := ParseVersionKey(want); err != nil || back != v {
			t.Errorf("ParseVersionKey(%s) = %d, %v", want, back, err)
		}
	}
	if VersionKey(10) >= VersionKey(9) {
		t.Error("higher versions must sort first")
	}
	for _, bad := range []string{"", "214748364", "2147483648", "21474836a7"} {
		if _, err := ParseVersionKey(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseVersionKey(%q): %v", bad, err)
		}
	}
	for _, v := range []int{-1, math.MaxInt32 + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("VersionKey(%d) did not panic", v)
				}
			}()
			VersionKey(v)
		}()
	}
}
