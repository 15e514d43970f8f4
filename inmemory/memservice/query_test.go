package memservice

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/unified-data/gotables/inmemory/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// queryAll follows continuations to the end and returns the rows and the number of pages.
func queryAll(t *testing.T, s *Service, q service.Query) ([]service.Row, int) {
	t.Helper()
	var rows []service.Row
	pages := 0
	for {
		page, err := s.Query(context.Background(), "Tab1", q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		rows = append(rows, page.Rows...)
		if page.Next == nil {
			return rows, pages
		}
		if pages > 10000 {
			t.Fatal("the query does not end")
		}
		q.Continuation = page.Next
	}
}

func keysOf(rows []service.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.PartitionKey + "|" + r.RowKey
	}
	return out
}

func TestQueryOrderUTF16(t *testing.T) {
	s, _ := newTable(t)
	// Azurite's observed order, which Go's byte order breaks at the last two.
	want := []string{"B", "a", "a ", "a0", "b", "e", "é", "😀", "｡"}
	var all []string
	for _, pk := range []string{"", "😀", "｡"} {
		for _, rk := range want {
			all = append(all, pk+"|"+rk)
		}
	}
	shuffled := append([]string(nil), all...)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, k := range shuffled {
		pk, rk, _ := strings.Cut(k, "|")
		mustWrite(t, s, insert(row(pk, rk)))
	}
	rows, _ := queryAll(t, s, service.Query{})
	if got := keysOf(rows); strings.Join(got, ",") != strings.Join(all, ",") {
		t.Fatalf("order = %q\nwant    %q", got, all)
	}
	// Paging one row at a time keeps the order.
	rows, pages := queryAll(t, s, service.Query{Top: 1})
	if got := keysOf(rows); strings.Join(got, ",") != strings.Join(all, ",") || pages != len(all) {
		t.Fatalf("paged order = %q in %d pages", got, pages)
	}
}

func seed(t *testing.T, s *Service, n int) {
	t.Helper()
	actions := make([]service.Action, 0, 100)
	for i := range n {
		actions = append(actions, service.Action{Op: service.OpInsert,
			Row: row("p", fmt.Sprintf("r%04d", i), prop("v", service.Int32(int32(i))), prop("odd", service.Bool(i%2 == 1)))})
		if len(actions) == 100 || i == n-1 {
			if err := txErr(s.Transact(context.Background(), "Tab1", actions)); err != nil {
				t.Fatal(err)
			}
			actions = actions[:0]
		}
	}
}

func TestQueryPaging(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	seed(t, s, 25)

	tests := []struct {
		name      string
		q         service.Query
		wantRows  int
		wantPages int
	}{
		{"all in one page", service.Query{}, 25, 1},
		{"pages of 10", service.Query{Top: 10}, 25, 3},
		{"pages of 25: no empty last page", service.Query{Top: 25}, 25, 1},
		{"pages of 5", service.Query{Top: 5}, 25, 5},
		{"filtered", service.Query{Filter: "odd eq true", Top: 4}, 12, 3},
		{"filtered, page of the exact size", service.Query{Filter: "v lt 8", Top: 8}, 8, 1},
		{"filtered to nothing", service.Query{Filter: "v gt 100", Top: 1}, 0, 1},
		{"key range", service.Query{Filter: "PartitionKey eq 'p' and RowKey ge 'r0020'", Top: 2}, 5, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, pages := queryAll(t, s, tc.q)
			if len(rows) != tc.wantRows || pages != tc.wantPages {
				t.Fatalf("%d rows in %d pages, want %d in %d", len(rows), pages, tc.wantRows, tc.wantPages)
			}
			for i := 1; i < len(rows); i++ {
				if rows[i-1].RowKey >= rows[i].RowKey {
					t.Fatalf("rows out of order: %q before %q", rows[i-1].RowKey, rows[i].RowKey)
				}
			}
		})
	}

	// A continuation is a position: rows written behind it are not seen, rows ahead are.
	page, err := s.Query(ctx, "Tab1", service.Query{Top: 10})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, insert(row("p", "r0000a")))
	mustWrite(t, s, insert(row("p", "r0015a")))
	mustWrite(t, s, service.Action{Op: service.OpDelete, Row: row("p", "r0010")})
	rows, _ := queryAll(t, s, service.Query{Top: 10, Continuation: page.Next})
	if len(rows) != 15 || rows[0].RowKey != "r0011" {
		t.Fatalf("after the writes: %d rows from %q", len(rows), rows[0].RowKey)
	}
}

func TestQueryTop(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	seed(t, s, 1500)
	for _, top := range []int{0, 1000, 1001, 5000} {
		page, err := s.Query(ctx, "Tab1", service.Query{Top: top})
		if err != nil || len(page.Rows) != 1000 || page.Next == nil {
			t.Fatalf("Top %d: %d rows, next %v, %v", top, len(page.Rows), page.Next, err)
		}
	}
	_, err := s.Query(ctx, "Tab1", service.Query{Top: -1})
	wantStatus(t, err, http.StatusBadRequest, "InvalidInput")
}

func TestQueryErrors(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	var comparisons []string
	for i := range 16 {
		comparisons = append(comparisons, fmt.Sprintf("v eq %d", i))
	}
	tests := []struct {
		name string
		q    service.Query
	}{
		{"dangling or", service.Query{Filter: "v eq 1 or"}},
		{"function", service.Query{Filter: "startswith(RowKey, 'a')"}},
		{"16 comparisons", service.Query{Filter: strings.Join(comparisons, " or ")}},
		{"foreign continuation", service.Query{Continuation: &service.Continuation{NextPartitionKey: "cA==", NextRowKey: "YSA="}}},
		{"undecodable continuation", service.Query{Continuation: &service.Continuation{NextPartitionKey: "1!***", NextRowKey: "1!"}}},
		{"half a continuation", service.Query{Continuation: &service.Continuation{NextPartitionKey: "1!cA"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Query(ctx, "Tab1", tc.q)
			wantStatus(t, err, http.StatusBadRequest, "InvalidInput")
		})
	}
	if _, err := s.Query(ctx, "Tab1", service.Query{Filter: strings.Join(comparisons[:15], " or ")}); err != nil {
		t.Fatalf("15 comparisons: %v", err)
	}
}

func TestQueryEmptyPages(t *testing.T) {
	s, _ := newTable(t, WithEmptyPages(3))
	seed(t, s, 50)
	rows, pages := queryAll(t, s, service.Query{Top: 10})
	if len(rows) != 50 {
		t.Fatalf("%d rows, want 50", len(rows))
	}
	for i, r := range rows {
		if want := fmt.Sprintf("r%04d", i); r.RowKey != want {
			t.Fatalf("row %d is %q, want %q", i, r.RowKey, want)
		}
	}
	// Five full pages plus every third call answered empty.
	if pages != 7 {
		t.Fatalf("%d pages, want 7", pages)
	}

	ctx := context.Background()
	s, _ = newTable(t, WithEmptyPages(2))
	page, err := s.Query(ctx, "Tab1", service.Query{})
	if err != nil || page.Next != nil {
		t.Fatalf("first query: %v, %v", page, err)
	}
	page, err = s.Query(ctx, "Tab1", service.Query{})
	if err != nil || len(page.Rows) != 0 || page.Next == nil {
		t.Fatalf("second query on an empty table: %+v, %v; want an empty page with a continuation", page, err)
	}
	page, err = s.Query(ctx, "Tab1", service.Query{Continuation: page.Next})
	if err != nil || page.Next != nil {
		t.Fatalf("third query: %+v, %v", page, err)
	}
}

func TestQuerySelect(t *testing.T) {
	s, _ := newTable(t)
	mustWrite(t, s, insert(row("p", "r", prop("a", service.Int32(1)), prop("b", service.Int32(2)), prop("C", service.Int32(3)))))
	page, err := s.Query(context.Background(), "Tab1", service.Query{Select: []string{"a", "c", "RowKey", "zz"}})
	if err != nil {
		t.Fatal(err)
	}
	got := page.Rows[0]
	if !equalProps(propMap(got), map[string]service.Value{"a": service.Int32(1)}) {
		t.Fatalf("selected %v, want only a", got.Properties)
	}
	if got.PartitionKey != "p" || got.RowKey != "r" || got.ETag == "" || got.Timestamp.IsZero() {
		t.Fatalf("system fields missing: %+v", got)
	}
	// A filter sees every property, whatever is selected.
	page, err = s.Query(context.Background(), "Tab1", service.Query{Filter: "b eq 2", Select: []string{"a"}})
	if err != nil || len(page.Rows) != 1 {
		t.Fatalf("filter on an unselected property: %+v, %v", page, err)
	}
}

// A missing table answers 404 TableNotFound before its filter is read, as the service does:
// even a filter that does not parse.
func TestQueryMissingTableBeforeFilter(t *testing.T) {
	s := New()
	for _, filter := range []string{"", "PartitionKey eq", "A eq 1 and", "Größe eq 1", "null eq 1"} {
		_, err := s.Query(context.Background(), "Nope", service.Query{Filter: filter})
		wantStatus(t, err, http.StatusNotFound, "TableNotFound")
	}
	s, _ = newTable(t)
	_, err := s.Query(context.Background(), "Tab1", service.Query{Filter: "PartitionKey eq"})
	wantStatus(t, err, http.StatusBadRequest, "InvalidInput")
}

// TestQueryRowKeyRange: a query of one partition seeks to the lower bound its filter puts on
// RowKey and stops past the upper one; its pages, followed to the end at any page size, hold
// exactly the partition's rows the whole filter matches.
func TestQueryRowKeyRange(t *testing.T) {
	s := New()
	ctx := context.Background()
	if err := s.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	keys := []string{"", "a", "a!", "ab", "b", "b\uffff", "c", "\U0001F600", "\uff01", "z"}
	for _, pk := range []string{"o", "p", "q"} {
		for i, rk := range keys {
			row := service.Row{PartitionKey: pk, RowKey: rk, Properties: []service.Property{{Name: "N", Value: service.Int64(int64(i))}}}
			if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpInsert, Row: row}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	ops := []string{"eq", "ge", "gt", "le", "lt", "ne"}
	for i := range 300 {
		filter := "PartitionKey eq 'p'"
		for range 1 + rnd.IntN(3) {
			filter += fmt.Sprintf(" and RowKey %s '%s'", ops[rnd.IntN(len(ops))], keys[rnd.IntN(len(keys))])
		}
		if rnd.IntN(3) == 0 {
			filter += fmt.Sprintf(" and (N gt %d or RowKey eq 'c')", rnd.IntN(10))
		}
		f, err := odata.Parse(filter)
		if err != nil {
			t.Fatalf("%s: %v", filter, err)
		}
		var want []string
		all, _ := queryAll(t, s, service.Query{Filter: "PartitionKey eq 'p'"})
		for j := range all {
			if f.Match(&all[j]) {
				want = append(want, all[j].PartitionKey+"|"+all[j].RowKey)
			}
		}
		got, _ := queryAll(t, s, service.Query{Filter: filter, Top: 1 + i%4})
		if strings.Join(keysOf(got), ",") != strings.Join(want, ",") {
			t.Fatalf("%s: got %q, want %q", filter, keysOf(got), want)
		}
	}
}
