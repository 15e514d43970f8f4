package bench

import (
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{7}, 7},
		{[]time.Duration{9, 1, 5}, 5},
		{[]time.Duration{4, 1, 3, 2}, 2}, // mean of 2 and 3, rounded down
		{[]time.Duration{10, 30, 20, 40}, 25},
		{[]time.Duration{3, 3, 3, 100}, 3},
		{[]time.Duration{1<<62 + 1, 1<<62 + 1}, 1<<62 + 1}, // no overflow
	} {
		in := slices.Clone(tc.in)
		if got := Median(in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median reordered its input: %v", in)
		}
	}
}

func TestRatio(t *testing.T) {
	if r, ok := Ratio(105, 100); !ok || r != 1.05 {
		t.Errorf("Ratio(105, 100) = %v, %v; want 1.05, true", r, ok)
	}
	if r, ok := Ratio(50, 200); !ok || r != 0.25 {
		t.Errorf("Ratio(50, 200) = %v, %v; want 0.25, true", r, ok)
	}
	if _, ok := Ratio(100, 0); ok {
		t.Error("Ratio(100, 0) reported a ratio")
	}
	if _, ok := Ratio(-1, 10); ok {
		t.Error("Ratio(-1, 10) reported a ratio")
	}
}

func TestThroughput(t *testing.T) {
	if v, ok := Throughput(100, 1, time.Second); !ok || v != 100 {
		t.Errorf("Throughput(100, 1, 1s) = %v, %v", v, ok)
	}
	// Two workers busy for 1s in total ran side by side for half a second.
	if v, ok := Throughput(100, 2, time.Second); !ok || v != 200 {
		t.Errorf("Throughput(100, 2, 1s) = %v, %v", v, ok)
	}
	if _, ok := Throughput(0, 1, time.Second); ok {
		t.Error("Throughput of no operations reported a figure")
	}
	if _, ok := Throughput(10, 1, 0); ok {
		t.Error("Throughput over no time reported a figure")
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{7: "7", 300: "300", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
