package engine

import (
	"slices"
	"testing"

	"github.com/unified-data/gotables/tables/service"
)

func TestSortRowsInUTF16Order(t *testing.T) {
	rows := []service.Row{{PartitionKey: "q", RowKey: "a"}, {PartitionKey: "p", RowKey: "\uff01"}, {PartitionKey: "p", RowKey: "\U0001F600"}, {PartitionKey: "p", RowKey: "b"}}
	SortRows(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.PartitionKey+"|"+r.RowKey)
	}
	// A character above U+FFFF is two surrogates (0xD83D…), which sort before U+FF01.
	if want := []string{"p|b", "p|\U0001F600", "p|\uff01", "q|a"}; !slices.Equal(got, want) {
		t.Fatalf("SortRows = %q, want %q", got, want)
	}
}

func TestAtOrAfter(t *testing.T) {
	for _, tc := range []struct{ filter, rk, want string }{
		{"", "r1", "RowKey ge 'r1'"},
		{"PartitionKey eq 'p' or X eq 1", "it's", "(PartitionKey eq 'p' or X eq 1) and RowKey ge 'it''s'"},
	} {
		if got := AtOrAfter(tc.filter, tc.rk); got != tc.want {
			t.Errorf("AtOrAfter(%q, %q) = %q, want %q", tc.filter, tc.rk, got, tc.want)
		}
	}
}
