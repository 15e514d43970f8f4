package bench

import (
	"slices"
	"time"
)

// Median returns the middle of the samples (the mean of the two middle ones for an even
// count), and 0 for none. The samples are not reordered.
func Median(samples []time.Duration) time.Duration {
	n := len(samples)
	if n == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	// Halve before adding so that two huge durations cannot overflow.
	return s[n/2-1]/2 + s[n/2]/2 + (s[n/2-1]%2+s[n/2]%2)/2
}

// Ratio returns library ÷ raw, and false when raw is not positive (no ratio to report).
func Ratio(library, raw time.Duration) (float64, bool) {
	if raw <= 0 || library < 0 {
		return 0, false
	}
	return float64(library) / float64(raw), true
}

// Throughput returns operations per second for n operations that took busy time in total
// across workers running side by side, and false when nothing was measured.
func Throughput(n, workers int, busy time.Duration) (float64, bool) {
	if n <= 0 || busy <= 0 || workers <= 0 {
		return 0, false
	}
	return float64(n) * float64(workers) / busy.Seconds(), true
}

// sum adds the samples.
func sum(samples []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range samples {
		t += d
	}
	return t
}
