package wire

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
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
