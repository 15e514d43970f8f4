package codec

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// parseTimeSpan reads a duration stored as text: .NET's invariant TimeSpan form
// "[-][d.]hh:mm:ss[.fffffff]", which a writer that stores a TimeSpan as a string produces,
// or, failing that, Go's time.Duration text ("1h30m").
func parseTimeSpan(s string) (time.Duration, error) {
	if d, ok := parseDotNetTimeSpan(s); ok {
		return d, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	return 0, fmt.Errorf("the string %.40q is not a duration ([-][d.]hh:mm:ss[.fffffff] or Go's 1h2m3s form)", s)
}

func parseDotNetTimeSpan(s string) (time.Duration, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var days int64
	hms := s
	if dot, colon := strings.IndexByte(s, '.'), strings.IndexByte(s, ':'); dot >= 0 && colon > dot {
		n, ok := digits(s[:dot], 0)
		if !ok {
			return 0, false
		}
		days, hms = n, s[dot+1:]
	}
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return 0, false
	}
	sec, frac, _ := strings.Cut(parts[2], ".")
	h, ok1 := digits(parts[0], 2)
	m, ok2 := digits(parts[1], 2)
	sc, ok3 := digits(sec, 2)
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sc > 59 {
		return 0, false
	}
	var ns int64
	if frac != "" {
		if len(frac) > 7 {
			return 0, false
		}
		f, ok := digits(frac, 0)
		if !ok {
			return 0, false
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	// Check for overflow before multiplying: a TimeSpan reaches far beyond a Duration.
	const maxDays = math.MaxInt64 / int64(24*time.Hour)
	if days > maxDays {
		return 0, false
	}
	rest := h*int64(time.Hour) + m*int64(time.Minute) + sc*int64(time.Second) // < 24h when valid
	if rest < 0 || days*int64(24*time.Hour) > math.MaxInt64-rest {
		return 0, false
	}
	total := days*int64(24*time.Hour) + rest
	if total > math.MaxInt64-ns {
		return 0, false
	}
	total += ns
	if neg {
		total = -total
	}
	return time.Duration(total), true
}

// digits parses a run of ASCII digits of the given width (0 = 1 to 18 digits).
func digits(s string, width int) (int64, bool) {
	if s == "" || (width > 0 && len(s) != width) || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
