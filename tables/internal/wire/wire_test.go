package wire

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestAppendJSONDouble(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{5, "5.0"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{2.5, "2.5"},
		{1e20, "100000000000000000000.0"},
		{1e21, "1e+21"},
		{1e-7, "1e-7"},
		{-1.5e-9, "-1.5e-9"},
		{0.000001, "0.000001"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), `"NaN"`},
		{math.Inf(1), `"Infinity"`},
		{math.Inf(-1), `"-Infinity"`},
	}
	for _, tc := range cases {
		if got := string(AppendJSONDouble([]byte("x"), tc.f)); got != "x"+tc.want {
			t.Errorf("AppendJSONDouble(%v) = %s, want x%s", tc.f, got, tc.want)
		}
		if math.IsNaN(tc.f) || math.IsInf(tc.f, 0) {
			continue
		}
		// The number is encoding/json's, but for the ".0" of a whole one.
		b, _ := json.Marshal(tc.f)
		if want := strings.TrimSuffix(tc.want, ".0"); string(b) != want {
			t.Errorf("%v: encoding/json writes %s, AppendJSONDouble %s", tc.f, b, tc.want)
		}
	}
}

// AppendDateTime writes what time.Time.Format writes with the service's layout, for any
// instant and zone: years 0 to 9999 by its own digits, the rest through Format.
func TestAppendDateTimeIsTheLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{
		{},
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 2, 28, 23, 59, 59, 99, time.FixedZone("", -14*3600)),
		time.Unix(0, 0),
		time.Now(),
	}
	for range 10_000 {
		times = append(times, time.Unix(r.Int64N(500_000_000_000)-200_000_000_000, r.Int64N(1e9)).
			In(time.FixedZone("", (r.IntN(29)-14)*3600)))
	}
	for _, tm := range times {
		want := tm.UTC().Format("2006-01-02T15:04:05.0000000Z")
		if got := string(AppendDateTime([]byte("x"), tm)); got != "x"+want {
			t.Fatalf("AppendDateTime(%v) = %q, want %q", tm, got, "x"+want)
		}
	}
}
