package odata

import "testing"

func TestPartitionKey(t *testing.T) {
	for _, tc := range []struct {
		filter string
		pk     string
		ok     bool
	}{
		{"PartitionKey eq 'p'", "p", true},
		{"'p' eq PartitionKey", "p", true},
		{"PartitionKey eq 'it''s' and RowKey ge 'a'", "it's", true},
		{"RowKey ge 'a' and (N gt 1 and PartitionKey eq 'q')", "q", true},
		{"PartitionKey eq 'p' or PartitionKey eq 'q'", "", false},
		{"not (PartitionKey eq 'p')", "", false},
		{"PartitionKey ge 'p'", "", false},
		{"PartitionKey ne 'p'", "", false},
		{"N eq 1", "", false},
	} {
		f, err := Parse(tc.filter)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if pk, ok := f.PartitionKey(); pk != tc.pk || ok != tc.ok {
			t.Errorf("%s: PartitionKey() = %q, %v, want %q, %v", tc.filter, pk, ok, tc.pk, tc.ok)
		}
	}
}

func TestRowKeyRange(t *testing.T) {
	for _, tc := range []struct {
		filter  string
		from    string
		hasFrom bool
		to      string
		hasTo   bool
	}{
		{"PartitionKey eq 'p' and RowKey ge 'a' and RowKey lt 'c'", "a", true, "c", true},
		{"RowKey gt 'a' and RowKey ge 'b' and RowKey le 'x' and RowKey lt 'y'", "b", true, "x", true},
		{"RowKey eq 'm'", "m", true, "m", true},
		{"'m' lt RowKey", "m", true, "", false},
		{"PartitionKey eq 'p' and (RowKey ge 'a' or RowKey lt 'c')", "", false, "", false},
		{"not (RowKey ge 'a')", "", false, "", false},
		{"RowKey ne 'a'", "", false, "", false},
		{"RowKey ge 1", "", false, "", false},
		{"N ge 'a'", "", false, "", false},
	} {
		f, err := Parse(tc.filter)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		from, hasFrom, to, hasTo := f.RowKeyRange()
		if from != tc.from || hasFrom != tc.hasFrom || to != tc.to || hasTo != tc.hasTo {
			t.Errorf("%s: RowKeyRange() = %q %v %q %v, want %q %v %q %v", tc.filter, from, hasFrom, to, hasTo, tc.from, tc.hasFrom, tc.to, tc.hasTo)
		}
	}
}
