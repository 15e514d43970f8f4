package tables

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

type qStatus int

func (s qStatus) MarshalText() ([]byte, error) { return []byte(fmt.Sprint("s", int(s))), nil }
func (s *qStatus) UnmarshalText(b []byte) error {
	_, err := fmt.Sscanf(string(b), "s%d", (*int)(s))
	return err
}

type qInner struct{ City string }

type qRow struct {
	abstractions.Entity
	Name   string
	N32    int32
	N64    int64
	U      uint
	F      float64
	F32    float32
	B      bool
	T      time.Time
	D      time.Duration
	G      abstractions.GUID
	S      qStatus
	P      *int
	In     qInner
	Ptr    *qInner
	List   []int
	Bytes  []byte
	Hidden int `table:"-"`
	Flag   *bool
}

var (
	qName = abstractions.Field(func(r *qRow) *string { return &r.Name })
	qN32  = abstractions.Field(func(r *qRow) *int32 { return &r.N32 })
)

func planOf(t *testing.T) *codec.Plan {
	t.Helper()
	p, err := codec.PlanOf(reflect.TypeFor[qRow]())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFilterTranslation(t *testing.T) {
	plan := planOf(t)
	tm := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	g := abstractions.GUID{0xAB, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xEF}
	cases := []struct {
		f    abstractions.Filter[qRow]
		want string
	}{
		{qName.Eq("it's"), "Name eq 'it''s'"},
		{qName.Lt(""), "Name lt ''"},
		{qN32.Ge(-5), "N32 ge -5"},
		{abstractions.Field(func(r *qRow) *int64 { return &r.N64 }).Ne(math.MinInt64), "N64 ne -9223372036854775808L"},
		{abstractions.Field(func(r *qRow) *uint { return &r.U }).Eq(math.MaxUint64), "U eq -1L"},
		{abstractions.Field(func(r *qRow) *float64 { return &r.F }).Lt(5), "F lt 5.0"},
		{abstractions.Field(func(r *qRow) *float64 { return &r.F }).Gt(-1e-7), "F gt -0.0000001"},
		{abstractions.Field(func(r *qRow) *float64 { return &r.F }).Gt(1e22), "F gt 10000000000000000000000.0"},
		{abstractions.Field(func(r *qRow) *float32 { return &r.F32 }).Eq(0.1), "F32 eq 0.10000000149011612"},
		{abstractions.Field(func(r *qRow) *bool { return &r.B }).Eq(false), "B eq false"},
		{abstractions.IsTrue(abstractions.Field(func(r *qRow) *bool { return &r.B })), "B"},
		{abstractions.Not(abstractions.IsTrue(abstractions.Field(func(r *qRow) *bool { return &r.B }))), "not (B)"},
		{abstractions.IsTrue(abstractions.NullableField(func(r *qRow) **bool { return &r.Flag })), "Flag"},
		{abstractions.Field(func(r *qRow) *time.Time { return &r.T }).Ge(tm), "T ge datetime'2026-01-02T02:04:05.1234567Z'"},
		{abstractions.Field(func(r *qRow) *time.Time { return &r.Timestamp }).Lt(tm), "Timestamp lt datetime'2026-01-02T02:04:05.1234567Z'"},
		{abstractions.Field(func(r *qRow) *time.Duration { return &r.D }).Le(time.Second), "D le 1000000000L"},
		{abstractions.Field(func(r *qRow) *abstractions.GUID { return &r.G }).Eq(g), "G eq guid'ab010203-0405-0607-0809-0a0b0c0d0eef'"},
		{abstractions.Field(func(r *qRow) *qStatus { return &r.S }).Ne(3), "S ne 's3'"},
		{abstractions.NullableField(func(r *qRow) **int { return &r.P }).Gt(2), "P gt 2L"},
		{abstractions.Field(func(r *qRow) **int { return &r.P }).Eq(new(int)), "P eq 0L"},
		{abstractions.Field(func(r *qRow) *string { return &r.In.City }).Eq("x"), "In_City eq 'x'"},
		{abstractions.Field(func(r *qRow) *string { return &r.ID }).Eq("p|r"), "Id eq 'p|r'"},
		{abstractions.And(qN32.Eq(1), abstractions.Or(qN32.Eq(2), qName.Eq("a"))), "(N32 eq 1) and ((N32 eq 2) or (Name eq 'a'))"},
		{abstractions.Or(qN32.Eq(1)), "N32 eq 1"},
		{abstractions.Not(abstractions.Not(qName.Eq("a"))), "not (not (Name eq 'a'))"},
	}
	for _, c := range cases {
		got, err := odata.Filter(plan, "", "", driver.Root(c.f))
		if err != nil || got != c.want {
			t.Errorf("got %q, %v; want %q", got, err, c.want)
		}
	}
	got, err := odata.Filter(plan, "p'", "ab", driver.Root(qN32.Eq(1)))
	if want := "PartitionKey eq 'p''' and RowKey ge 'ab' and RowKey lt 'ac' and (N32 eq 1)"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	got, err = odata.Filter(plan, "p", "\uffff", nil)
	if want := "PartitionKey eq 'p' and RowKey ge '\uffff'"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

func TestFilterRefusals(t *testing.T) {
	plan := planOf(t)
	many := func(n int) abstractions.Filter[qRow] {
		fs := make([]abstractions.Filter[qRow], n)
		for i := range fs {
			fs[i] = qN32.Eq(int32(i))
		}
		return abstractions.Or(fs...)
	}
	cases := []struct {
		name string
		f    abstractions.Filter[qRow]
		pk   string
		kind error
		says string
	}{
		{"json", abstractions.Field(func(r *qRow) *[]int { return &r.List }).Eq(nil), "", abstractions.ErrNotSupported, "JSON"},
		{"bytes", abstractions.Field(func(r *qRow) *[]byte { return &r.Bytes }).Eq([]byte{1}), "", abstractions.ErrNotSupported, "binary"},
		{"hidden", abstractions.Field(func(r *qRow) *int { return &r.Hidden }).Eq(1), "", abstractions.ErrNotSupported, "no stored column"},
		{"etag", abstractions.Field(func(r *qRow) *string { return &r.ETag }).Eq(""), "", abstractions.ErrNotSupported, "ETag"},
		{"nested struct", abstractions.Field(func(r *qRow) *qInner { return &r.In }).Eq(qInner{}), "", abstractions.ErrNotSupported, "nested struct"},
		{"pointer nested", abstractions.Field(func(r *qRow) *string { return &r.Ptr.City }).Eq(""), "", abstractions.ErrNotSupported, "pointer"},
		{"nil selector", abstractions.Field[qRow, string](nil).Eq(""), "", abstractions.ErrInvalidArgument, "nil"},
		{"zero field", abstractions.TypedField[qRow, string]{}.Eq(""), "", abstractions.ErrInvalidArgument, "zero TypedField"},
		{"not bare pointer bool", abstractions.Not(abstractions.IsTrue(abstractions.NullableField(func(r *qRow) **bool { return &r.Flag }))), "", abstractions.ErrNotSupported, "negated"},
		{"enum order", abstractions.Field(func(r *qRow) *qStatus { return &r.S }).Gt(1), "", abstractions.ErrNotSupported, "text"},
		{"uint order", abstractions.Field(func(r *qRow) *uint { return &r.U }).Le(1), "", abstractions.ErrNotSupported, "MaxInt64"},
		{"string ne", qName.Ne("a"), "", abstractions.ErrNotSupported, "inequality"},
		{"not string", abstractions.Not(qName.Lt("a")), "", abstractions.ErrNotSupported, "negated"},
		{"not pointer bool", abstractions.Not(abstractions.Field(func(r *qRow) **int { return &r.P }).Eq(nil)), "", abstractions.ErrNotSupported, "negated"},
		{"nil pointer value", abstractions.Field(func(r *qRow) **int { return &r.P }).Eq(nil), "", abstractions.ErrNotSupported, "null"},
		{"time ne", abstractions.Field(func(r *qRow) *time.Time { return &r.T }).Ne(time.Now()), "", abstractions.ErrNotSupported, "inequality"},
		{"zero time", abstractions.Field(func(r *qRow) *time.Time { return &r.T }).Gt(time.Time{}), "", abstractions.ErrNotSupported, "zero time"},
		{"NaN", abstractions.Field(func(r *qRow) *float64 { return &r.F }).Gt(math.NaN()), "", abstractions.ErrNotSupported, "literal"},
		{"15 ok", many(15), "", nil, ""},
		{"16", many(16), "", abstractions.ErrNotSupported, "16 comparisons"},
		{"15 plus partition", many(15), "p", abstractions.ErrNotSupported, "16 comparisons"},
		{"empty and", abstractions.And[qRow](), "", abstractions.ErrInvalidArgument, "at least one"},
		{"zero operand", abstractions.Not(abstractions.Filter[qRow]{}), "", abstractions.ErrInvalidArgument, "zero Filter"},
		{"bare non-bool", abstractions.Filter[qRow]{}, "", nil, ""},
	}
	for _, c := range cases {
		_, ferr := odata.Filter(plan, c.pk, "", driver.Root(c.f))
		if c.kind == nil {
			if ferr != nil {
				t.Errorf("%s: refused: %s", c.name, ferr.Reason)
			}
			continue
		}
		if ferr == nil {
			t.Errorf("%s: not refused", c.name)
			continue
		}
		if ferr.Kind != c.kind || !strings.Contains(ferr.Reason, c.says) {
			t.Errorf("%s: refused with %v %q, want %v mentioning %q", c.name, ferr.Kind, ferr.Reason, c.kind, c.says)
		}
	}
}

// pageTables is a table service of one table, held in key order, that answers queries on
// PartitionKey only, records what it was asked and can return empty pages.
type pageTables struct {
	service.Tables
	rows    []service.Row
	queries []service.Query
	empty   bool // every other page is empty
}

func (p *pageTables) CreateTable(context.Context, string) error { return nil }

func (p *pageTables) Query(_ context.Context, _ string, q service.Query) (service.Page, error) {
	p.queries = append(p.queries, q)
	start := 0
	if q.Continuation != nil {
		fmt.Sscan(q.Continuation.NextRowKey, &start)
	}
	if p.empty && len(p.queries)%2 == 1 {
		return service.Page{Next: &service.Continuation{NextPartitionKey: "p", NextRowKey: fmt.Sprint(start)}}, nil
	}
	top := q.Top
	if top == 0 {
		top = 1000
	}
	end := min(start+top, len(p.rows))
	page := service.Page{Rows: p.rows[start:end]}
	if end < len(p.rows) {
		page.Next = &service.Continuation{NextPartitionKey: "p", NextRowKey: fmt.Sprint(end)}
	}
	return page, nil
}

func newPaged(t *testing.T, n int, empty bool) (*Store[qRow], *pageTables) {
	t.Helper()
	pt := &pageTables{empty: empty}
	for i := 0; i < n; i++ {
		pt.rows = append(pt.rows, service.Row{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i)})
	}
	s, err := For[qRow](testAccount("test", pt, nil, nil), &StoreOptions{Table: "paged"})
	if err != nil {
		t.Fatal(err)
	}
	return s, pt
}

func TestQueryTakeAcrossPages(t *testing.T) {
	ctx := context.Background()
	for _, empty := range []bool{false, true} {
		s, pt := newPaged(t, 2500, empty)
		got, err := s.Query(ctx, abstractions.Query[qRow]{Partition: "p", Take: 1500})
		if err != nil || len(got) != 1500 || got[1499].ID != "p|01499" {
			t.Fatalf("take 1500: %d rows, %v", len(got), err)
		}
		var tops []int
		for _, q := range pt.queries {
			tops = append(tops, q.Top)
		}
		want := []int{1000, 500}
		if empty {
			want = []int{1000, 1000, 500, 500}
		}
		if !reflect.DeepEqual(tops, want) {
			t.Errorf("empty=%v: $top per request %v, want %v", empty, tops, want)
		}
	}
}

func TestStreamStopsAndNeverBuffers(t *testing.T) {
	ctx := context.Background()
	s, pt := newPaged(t, 2500, true)
	n := 0
	for v, err := range s.Stream(ctx, abstractions.Query[qRow]{}) {
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("p|%05d", n); v.ID != want {
			t.Fatalf("row %d is %s", n, v.ID)
		}
		n++
		if n == 1001 {
			break
		}
	}
	// Two empty pages and two full ones: the stream stopped in the second full page.
	if len(pt.queries) != 4 {
		t.Errorf("%d requests after stopping in the second page", len(pt.queries))
	}
}

func TestPageSkipsEmptyPagesAndBindsCursor(t *testing.T) {
	ctx := context.Background()
	s, _ := newPaged(t, 230, true)
	var seen []string
	cursor := ""
	pages := 0
	for {
		page, err := s.Page(ctx, abstractions.Query[qRow]{Partition: "p", Take: 50, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.Items) == 0 && page.HasMore() {
			t.Fatal("an empty page with a cursor")
		}
		for _, v := range page.Items {
			seen = append(seen, v.ID)
		}
		if !page.HasMore() {
			break
		}
		if _, err := s.Page(ctx, abstractions.Query[qRow]{Partition: "p", Take: 49, Cursor: page.Cursor}); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Fatalf("a cursor with another page size: %v", err)
		}
		cursor = page.Cursor
	}
	if len(seen) != 230 || pages != 5 || seen[229] != "p|00229" {
		t.Errorf("%d rows in %d pages", len(seen), pages)
	}
}

// A cursor is refused by a store of another table with a message that says so, and by
// another query of the same table with one that names what may differ.
func TestPageCursorOfAnotherTable(t *testing.T) {
	ctx := context.Background()
	s, pt := newPaged(t, 120, false)
	page, err := s.Page(ctx, abstractions.Query[qRow]{Partition: "p", Take: 50})
	if err != nil || !page.HasMore() {
		t.Fatalf("first page: %v", err)
	}
	other, err := For[qRow](s.account, &StoreOptions{Table: "otherpaged"})
	if err != nil {
		t.Fatal(err)
	}
	n := len(pt.queries)
	_, err = other.Page(ctx, abstractions.Query[qRow]{Partition: "p", Take: 50, Cursor: page.Cursor})
	wantKind(t, err, abstractions.ErrInvalidArgument)
	if err == nil || !strings.Contains(err.Error(), "another table") || strings.Contains(err.Error(), "page size") {
		t.Errorf("a cursor of another table: %v", err)
	}
	_, err = s.Page(ctx, abstractions.Query[qRow]{Partition: "p", Take: 40, Cursor: page.Cursor})
	if err == nil || strings.Contains(err.Error(), "another table") || !strings.Contains(err.Error(), "page size") {
		t.Errorf("a cursor of another query of the table: %v", err)
	}
	if len(pt.queries) != n {
		t.Errorf("a refused cursor sent %d queries", len(pt.queries)-n)
	}
}

func TestAnyReadsOneKey(t *testing.T) {
	s, pt := newPaged(t, 10, false)
	ok, err := s.Any(context.Background(), abstractions.Query[qRow]{Where: qN32.Eq(0)})
	if err != nil || !ok {
		t.Fatalf("any: %v %v", ok, err)
	}
	q := pt.queries[0]
	if q.Top != 1 || q.Select == nil || len(q.Select) != 0 || q.Filter != "N32 eq 0" {
		t.Errorf("any asked %+v", q)
	}
}

func TestProjectionColumns(t *testing.T) {
	s, pt := newPaged(t, 1, false)
	sel := []abstractions.Selector[qRow]{
		abstractions.Field(func(r *qRow) *qInner { return &r.In }),
		abstractions.Field(func(r *qRow) *[]int { return &r.List }),
		qN32,
		abstractions.Field(func(r *qRow) *time.Time { return &r.CreatedAt }),
	}
	if _, err := s.Query(context.Background(), abstractions.Query[qRow]{Select: sel}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Id", "Id__GZip", "In_City", "In_City__GZip", "List__Json", "List__GZip", "N32", "CreatedAt", "Created"}
	if got := pt.queries[0].Select; !reflect.DeepEqual(got, want) {
		t.Errorf("select %q, want %q", got, want)
	}
}

// Every query refusal comes before anything is sent, from every entry point.
func TestQueryRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		q    abstractions.Query[qRow]
		kind error
		page bool // refused by Page only
	}{
		{name: "negative take", q: abstractions.Query[qRow]{Take: -1}, kind: abstractions.ErrInvalidArgument},
		{name: "prefix without a partition", q: abstractions.Query[qRow]{RowKeyPrefix: "a"}, kind: abstractions.ErrNotSupported},
		{name: "bad prefix", q: abstractions.Query[qRow]{Partition: "p", RowKeyPrefix: "a/"}, kind: abstractions.ErrInvalidKey},
		{name: "bad partition", q: abstractions.Query[qRow]{Partition: "a|b"}, kind: abstractions.ErrInvalidKey},
		{name: "filter", q: abstractions.Query[qRow]{Where: qName.Ne("a")}, kind: abstractions.ErrNotSupported},
		{name: "nil selector", q: abstractions.Query[qRow]{Select: []abstractions.Selector[qRow]{nil}}, kind: abstractions.ErrInvalidArgument},
		{name: "selector of an ignored field", q: abstractions.Query[qRow]{Select: []abstractions.Selector[qRow]{
			abstractions.Field(func(r *qRow) *int { return &r.Hidden })}}, kind: abstractions.ErrNotSupported},
		{name: "page larger than the service's", q: abstractions.Query[qRow]{Take: 1001}, kind: abstractions.ErrInvalidArgument, page: true},
		{name: "cursor not made by Page", q: abstractions.Query[qRow]{Cursor: "not a cursor"}, kind: abstractions.ErrInvalidArgument, page: true},
		{name: "cursor of another query", q: abstractions.Query[qRow]{Cursor: engine.EncodeCursor(engine.Cursor{Bounds: "x", PK: "p", RK: "r"})},
			kind: abstractions.ErrInvalidArgument, page: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newStore[qRow](t, nil)
			_, err := s.Page(ctx, tc.q)
			wantKind(t, err, tc.kind)
			// Query, Stream and Any refuse a cursor, and everything Page refuses but the page size.
			if !tc.page || tc.q.Cursor != "" {
				want := tc.kind
				_, err = s.Query(ctx, tc.q)
				wantKind(t, err, want)
				for _, err = range s.Stream(ctx, tc.q) {
					break
				}
				wantKind(t, err, want)
				_, err = s.Any(ctx, tc.q)
				wantKind(t, err, want)
			}
			if len(f.calls) != 0 {
				t.Errorf("a refused query sent %v", f)
			}
		})
	}
}

// Queries read what the engine's own filters select (the fake evaluates those) and report
// the service's failures, from every entry point.
func TestQueryPartitionAndPrefix(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[qRow](t, nil)
	var rows []service.Row
	for _, id := range [][2]string{{"p", "ab"}, {"p", "abc"}, {"p", "ac"}, {"p", "b"}, {"q", "ab"}} {
		rows = append(rows, service.Row{PartitionKey: id[0], RowKey: id[1], Properties: []service.Property{{Name: "Id", Value: service.String(id[0] + "|" + id[1])}}})
	}
	f.put("Items", rows...)
	got, err := s.Query(ctx, abstractions.Query[qRow]{Partition: "P", RowKeyPrefix: "AB"})
	if err != nil || len(got) != 2 || got[0].ID != "p|ab" || got[1].ID != "p|abc" {
		t.Fatalf("prefix query: %v, %v", got, err)
	}
	n := 0
	for v, err := range s.Stream(ctx, abstractions.Query[qRow]{Partition: "p"}) {
		if err != nil || v.ID[0] != 'p' {
			t.Fatalf("stream: %v, %v", v, err)
		}
		n++
	}
	if n != 4 {
		t.Errorf("streamed %d rows", n)
	}
	if ok, err := s.Any(ctx, abstractions.Query[qRow]{Partition: "r"}); ok || err != nil {
		t.Errorf("any in an empty partition: %v, %v", ok, err)
	}
	busy := fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
	f.before = func(string) error { return busy }
	var errs []error
	for _, err := range s.Stream(ctx, abstractions.Query[qRow]{}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], abstractions.ErrUnavailable) {
		t.Errorf("a failing stream yielded %v", errs)
	}
	if _, err := s.Any(ctx, abstractions.Query[qRow]{}); !errors.Is(err, abstractions.ErrUnavailable) {
		t.Errorf("a failing any: %v", err)
	}
	// A row that does not decode ends the stream with its error.
	f.before = nil
	f.put("Items", service.Row{PartitionKey: "z", RowKey: "bad", Properties: []service.Property{{Name: "N32", Value: service.String("x")}}})
	errs = errs[:0]
	for _, err := range s.Stream(ctx, abstractions.Query[qRow]{Partition: "z"}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || errs[0] == nil {
		t.Errorf("a row that does not decode yielded %v", errs)
	}
	if _, err := s.Page(ctx, abstractions.Query[qRow]{Partition: "z"}); err == nil {
		t.Error("a page with a row that does not decode")
	}
}

// A query's values come from shared arrays: each is distinct, a skipped row's value is
// given to the next row, and no array is larger than Take.
func TestQuerySlab(t *testing.T) {
	s := slab[int]{take: 2}
	a := s.next()
	*a = 1
	b := s.next()
	s.unused()
	if c := s.next(); c != b || *c != 0 {
		t.Fatal("a skipped row's value was not given to the next row")
	}
	if cap(s.values) != 2 {
		t.Fatalf("an array holds %d values; Take is 2", cap(s.values))
	}
	d := s.next()
	if d == a || d == b || *a != 1 {
		t.Fatal("a full array was reused")
	}
	var all slab[int]
	all.next()
	if cap(all.values) != slabSize {
		t.Fatalf("without Take an array holds %d values, want %d", cap(all.values), slabSize)
	}
}
