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
