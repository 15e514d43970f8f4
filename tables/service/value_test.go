package service

import (
	"math"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCompareUTF16(t *testing.T) {
	// The service's order, code unit by code unit ("😀" is D83D DE00, "｡" is FF61).
	want := []string{"", "B", "a", "a ", "a0", "b", "e", "é", "😀", "😁", "｡"}
	got := append([]string(nil), want...)
	sort.Slice(got, func(i, j int) bool { return CompareUTF16(got[i], got[j]) < 0 })
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %q, want %q", got, want)
		}
	}
	// Against a reference that encodes to UTF-16 and compares the units.
	ref := func(a, b string) int {
		ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
		for i := 0; i < len(ua) && i < len(ub); i++ {
			if ua[i] != ub[i] {
				if ua[i] < ub[i] {
					return -1
				}
				return 1
			}
		}
		switch {
		case len(ua) < len(ub):
			return -1
		case len(ua) > len(ub):
			return 1
		}
		return 0
	}
	samples := []string{"", "a", "ab", "\uffff", "\U00010000", "\U0010ffff", "\ue000", "ﬀ", "😀x", "😀", "a😀", "a｡ "}
	for _, a := range samples {
		for _, b := range samples {
			if g, w := CompareUTF16(a, b), ref(a, b); g != w {
				t.Errorf("CompareUTF16(%q, %q) = %d, want %d", a, b, g, w)
			}
		}
	}
}

func FuzzCompareUTF16(f *testing.F) {
	f.Add("a", "b")
	f.Add("😀", "｡")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			// Invalid bytes decode as U+FFFD, as they would reach the service: distinct
			// invalid strings may compare equal. Keys are checked for UTF-8 before use.
			return
		}
		if CompareUTF16(a, b) != -CompareUTF16(b, a) {
			t.Fatalf("not antisymmetric for %q, %q", a, b)
		}
		if (CompareUTF16(a, b) == 0) != (a == b) {
			t.Fatalf("equality differs for %q, %q", a, b)
		}
	})
}

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "😀": 2, "a😀b": 4, "｡": 1} {
		if got := UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
	// Long values go eight ASCII bytes at a time: put every kind of character (an invalid
	// byte counts as one unit, as U+FFFD) at every position of a word.
	for _, odd := range []string{"é", "😀", "\xff", "｡"} {
		for at := range 17 {
			s := strings.Repeat("a", at) + odd + strings.Repeat("b", 20)
			want := len(utf16.Encode([]rune(s)))
			if got := UTF16Len(s); got != want {
				t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
			}
		}
	}
}

func TestValues(t *testing.T) {
	g, err := ParseGuid("00112233-4455-6677-8899-AABBCCDDEEFF")
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		v    Value
		kind Kind
		str  string
		size int
	}{
		{String("hé😀"), KindString, `Edm.String("hé😀")`, 8},
		{Binary([]byte{1, 2}), KindBinary, "Edm.Binary(0102)", 2},
		{Bool(true), KindBool, "Edm.Boolean(true)", 1},
		{Int32(-5), KindInt32, "Edm.Int32(-5)", 4},
		{Int64(math.MinInt64), KindInt64, "Edm.Int64(-9223372036854775808)", 8},
		{Double(0.5), KindDouble, "Edm.Double(0.5)", 8},
		{DateTime(when), KindDateTime, "Edm.DateTime(2024-01-02T02:04:05.1234567Z)", 8},
		{g, KindGuid, "Edm.Guid(00112233-4455-6677-8899-aabbccddeeff)", 16},
	} {
		if tc.v.Kind() != tc.kind || tc.v.String() != tc.str || tc.v.Size() != tc.size || !tc.v.Equal(tc.v) {
			t.Errorf("%v: kind %v size %d", tc.v, tc.v.Kind(), tc.v.Size())
		}
		if k, ok := KindOf(tc.kind.String()); !ok || k != tc.kind {
			t.Errorf("KindOf(%q) = %v, %v", tc.kind.String(), k, ok)
		}
	}
	if !Double(math.NaN()).Equal(Double(math.NaN())) || Double(0).Equal(Double(math.Copysign(0, -1))) {
		t.Error("doubles must compare by bits")
	}
	if Int32(1).Equal(Int64(1)) {
		t.Error("values of different kinds must differ")
	}
	if g.GuidBytes() != [16]byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff} {
		t.Errorf("GuidBytes = % x", g.GuidBytes())
	}
	if _, err := ParseGuid("not-a-guid"); err == nil {
		t.Error("ParseGuid accepted garbage")
	}
	b := []byte{1}
	v := Binary(b)
	b[0] = 9
	if v.Bytes()[0] != 1 {
		t.Error("Binary must copy its input")
	}
	if DateTime(when).Time().Location() != time.UTC {
		t.Error("DateTime must be UTC")
	}
	if e := Binary(nil).Bytes(); e == nil || len(e) != 0 || !Binary(nil).Equal(BinaryNoCopy([]byte{})) {
		t.Errorf("empty binary: %#v", e)
	}
	if !Binary([]byte{1, 2}).Equal(BinaryNoCopy([]byte{1, 2})) || Binary([]byte{1}).Equal(String("\x01")) {
		t.Error("binary values compare by content and kind")
	}
	if Binary([]byte("x")).Str() != "" || String("x").Bytes() != nil || Int64(1).Time() != (time.Time{}) {
		t.Error("a value's accessors of other kinds give their zero values")
	}
	if unsafe.Sizeof(Value{}) != 32 {
		t.Errorf("a Value is %d bytes, want 32 (a row's property list is copied and kept)", unsafe.Sizeof(Value{}))
	}
}

// TestDateTimeTicks checks that a date-time, held as 100 ns ticks since the Unix epoch,
// reads back as the instant it was made from, truncated to 100 ns, over the years the
// service stores and on both sides of the epoch.
func TestDateTimeTicks(t *testing.T) {
	for _, in := range []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Unix(0, 0),
		time.Unix(-1, 50),
		time.Date(2026, 12, 2, 1, 2, 3, 456789012, time.FixedZone("x", -7*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	} {
		want := in.UTC().Truncate(100 * time.Nanosecond)
		got := DateTime(in).Time()
		if !got.Equal(want) || got != want.Round(0) {
			t.Errorf("DateTime(%v).Time() = %v, want %v", in, got, want)
		}
		if !DateTime(in).Equal(DateTime(want)) || DateTime(in).Equal(DateTime(want.Add(100))) {
			t.Errorf("DateTime(%v) compares wrongly", in)
		}
	}
	// Times the ticks cannot count stay far outside the service's years, on their own side.
	for _, in := range []time.Time{
		time.Date(100_000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(1<<62, 0),
		time.Date(math.MaxInt32, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		if y := DateTime(in).Time().Year(); y < 29_000 {
			t.Errorf("DateTime(%v) reads back in year %d", in, y)
		}
	}
	for _, in := range []time.Time{
		time.Date(-100_000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(-(1 << 62), 0),
		{},
	} {
		if y := DateTime(in).Time().Year(); y > -25_000 && !in.IsZero() || in.IsZero() && y != 1 {
			t.Errorf("DateTime(%v) reads back in year %d", in, y)
		}
	}
}
