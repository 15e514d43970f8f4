package odata

import (
	"errors"
	"math"
	"testing"

	"github.com/unified-data/gotables/tables/service"
)

// FuzzParse checks that Parse never panics and refuses only with a *SyntaxError inside the
// input; that a parsed filter stays within the comparison limit, evaluates without panicking,
// and prints (String) to a filter that parses back to the same meaning. The seed corpus in
// testdata/fuzz/FuzzParse covers every grammar feature.
func FuzzParse(f *testing.F) {
	rows := []*service.Row{
		testRow(),
		benchRow(),
		{},
		{PartitionKey: "\uff61", RowKey: "\U0001F600", Properties: []service.Property{
			{Name: "A", Value: service.Double(math.Copysign(0, -1))},
			{Name: "B", Value: service.Int64(-1 << 63)},
			{Name: "C", Value: service.Int32(-1 << 31)},
		}},
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T, want *SyntaxError", s, err)
			}
			if se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("Parse(%q) offset %d outside the input", s, se.Offset)
			}
			return
		}
		if n := flt.Comparisons(); n > MaxComparisons {
			t.Fatalf("Parse(%q) accepted %d comparisons", s, n)
		}
		printed := flt.String()
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("Parse(%q) prints as %q, which does not parse: %v", s, printed, err)
		}
		if again.String() != printed || again.Comparisons() != flt.Comparisons() {
			t.Fatalf("Parse(%q) prints as %q, which reads back as %q", s, printed, again.String())
		}
		for i, row := range rows {
			if flt.Match(row) != again.Match(row) {
				t.Fatalf("Parse(%q) and its printed form %q disagree on row %d", s, printed, i)
			}
		}
	})
}
