package inmemory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

// The Cosmos profile answers queries in a hashed order, not key order. These tests hold
// each read that promises key order to that promise on the profile, by comparing it with
// the same read of the same rows on the Table Storage profile; or check that it is refused
// before anything is sent.

type Ranked struct {
	abstractions.Entity
	Rank int32 `table:",index=rank"`
	Text string
}

type Snapshot struct {
	abstractions.VersionedEntity
	State string
}

// orderedKeys are row keys whose UTF-16 order differs from their byte order (a
// supplementary character sorts before U+FF01 in UTF-16 and after it in UTF-8).
var orderedKeys = func() []string {
	keys := []string{"r\U0001F600", "r\uff01", "r\u00e9"}
	for i := range 60 {
		keys = append(keys, fmt.Sprintf("r%03d", (i*37)%60))
	}
	return keys
}()

// twin is one store over the Table Storage profile and one over the Cosmos profile,
// holding the same rows, and the requests that reached the Cosmos service.
type twin[T any] struct {
	storage, cosmos *tables.Store[T]
	sent            *sentCounter
}

func newTwin[T any, P abstractions.EntityPtr[T]](t *testing.T, table string, fill func(s *tables.Store[T])) twin[T] {
	t.Helper()
	opts := &tables.Options{IDs: tables.IDsAsWritten}
	st, err := tables.For[T, P](inmemory.NewAccount(opts), &tables.StoreOptions{Table: table, TableScans: tables.AllowTableScans})
	if err != nil {
		t.Fatal(err)
	}
	sent := &sentCounter{Tables: memservice.New(memservice.Cosmos())}
	cos, err := tables.For[T, P](inmemory.NewAccountOver(sent, nil, &tables.Options{IDs: tables.IDsAsWritten, Service: service.Cosmos}), &tables.StoreOptions{Table: table, TableScans: tables.AllowTableScans})
	if err != nil {
		t.Fatal(err)
	}
	fill(st)
	fill(cos)
	sent.n.Store(0)
	return twin[T]{st, cos, sent}
}

func idsOf[T any, P abstractions.EntityPtr[T]](vs []*T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = P(v).Base().ID
	}
	return out
}

func collect[T any](t *testing.T, seq iter.Seq2[*T, error]) []*T {
	t.Helper()
	var out []*T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// pageAll reads every page of q, following its cursors, and returns their items in order.
func pageAll[T any](ctx context.Context, s *tables.Store[T], q abstractions.Query[T]) ([]*T, error) {
	var out []*T
	for {
		p, err := s.Page(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if !p.HasMore() {
			return out, nil
		}
		q.Cursor = p.Cursor
	}
}

// sameIDs fails unless the read gives the same ids, in the same order, on both profiles.
func sameIDs[T any, P abstractions.EntityPtr[T]](t *testing.T, what string, tw twin[T], read func(*tables.Store[T]) ([]*T, error)) {
	t.Helper()
	want, err := read(tw.storage)
	if err != nil {
		t.Fatalf("%s on Table Storage: %v", what, err)
	}
	got, err := read(tw.cosmos)
	if err != nil {
		t.Fatalf("%s on Cosmos DB: %v", what, err)
	}
	if w, g := idsOf[T, P](want), idsOf[T, P](got); !slices.Equal(w, g) {
		t.Fatalf("%s: Cosmos DB read\n%q\nTable Storage\n%q", what, g, w)
	}
	if len(want) == 0 {
		t.Fatalf("%s read nothing", what)
	}
}

func fillRanked(s *tables.Store[Ranked]) {
	ctx := context.Background()
	var vs []*Ranked
	for i, rk := range orderedKeys {
		for _, pk := range []string{"p", "q"} {
			vs = append(vs, &Ranked{Entity: abstractions.Entity{ID: pk + "|" + rk}, Rank: int32(i % 7), Text: "t"})
		}
	}
	if err := s.CreateBatch(ctx, vs); err != nil {
		panic(err)
	}
}

func TestCosmosProfileAnswersOutOfKeyOrder(t *testing.T) {
	tw := newTwin[Ranked](t, "ranked", fillRanked)
	page, err := tw.sent.Query(context.Background(), "ranked", service.Query{Filter: "PartitionKey eq 'p'"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.IsSortedFunc(page.Rows, func(a, b service.Row) int { return service.CompareUTF16(a.RowKey, b.RowKey) }) {
		t.Fatal("the Cosmos profile answered in key order; these tests would prove nothing")
	}
}

func TestCosmosOrderedReadsKeepKeyOrder(t *testing.T) {
	ctx := context.Background()
	tw := newTwin[Ranked](t, "ranked", fillRanked)
	type R = Ranked
	read := map[string]func(s *tables.Store[R]) ([]*R, error){
		"Query, one partition, Take": func(s *tables.Store[R]) ([]*R, error) {
			return s.Query(ctx, abstractions.Query[R]{Partition: "p", Take: 5})
		},
		"Query, prefix and filter, Take": func(s *tables.Store[R]) ([]*R, error) {
			rank := abstractions.Field(func(r *R) *int32 { return &r.Rank })
			return s.Query(ctx, abstractions.Query[R]{Partition: "q", RowKeyPrefix: "r0", Where: rank.Ge(2), Take: 9})
		},
		"Query, whole table, no Take": func(s *tables.Store[R]) ([]*R, error) { return s.Query(ctx, abstractions.Query[R]{}) },
		"Stream, one partition": func(s *tables.Store[R]) ([]*R, error) {
			return collect(t, s.Stream(ctx, abstractions.Query[R]{Partition: "p"})), nil
		},
		"Stream, one partition, Take": func(s *tables.Store[R]) ([]*R, error) {
			return collect(t, s.Stream(ctx, abstractions.Query[R]{Partition: "q", Take: 11})), nil
		},
		"List":    func(s *tables.Store[R]) ([]*R, error) { return s.List(ctx, "q") },
		"ListAll": func(s *tables.Store[R]) ([]*R, error) { return s.ListAll(ctx) },
		"Page and its cursors": func(s *tables.Store[R]) ([]*R, error) {
			return pageAll(ctx, s, abstractions.Query[R]{Partition: "p", Take: 7})
		},
		"index Find": func(s *tables.Store[R]) ([]*R, error) {
			ix, err := index.On(s, "rank")
			if err != nil {
				return nil, err
			}
			return ix.Find(ctx, "p", 3)
		},
		"index Page and its cursors": func(s *tables.Store[R]) ([]*R, error) {
			ix, err := index.On(s, "rank")
			if err != nil {
				return nil, err
			}
			var out []*R
			q := abstractions.Query[R]{Partition: "q", Take: 4}
			for {
				p, err := ix.Page(ctx, index.Range{From: 1, To: 5}, q)
				if err != nil {
					return nil, err
				}
				out = append(out, p.Items...)
				if !p.HasMore() {
					return out, nil
				}
				q.Cursor = p.Cursor
			}
		},
	}
	for name, fn := range read {
		t.Run(name, func(t *testing.T) { sameIDs[R](t, name, tw, fn) })
	}
}

func TestCosmosLogsAndStreamsKeepNewestFirst(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	logs := newTwin[Ranked](t, "logs", func(s *tables.Store[Ranked]) {
		for i := range 40 {
			sub := ""
			if i%3 == 0 {
				sub = "audit"
			}
			if err := abstractions.AppendAt(ctx, s, "log", &Ranked{Text: fmt.Sprint(i)}, sub, at.Add(time.Duration(i*7%40)*time.Minute)); err != nil {
				panic(err)
			}
		}
	})
	sameIDs[Ranked](t, "Recent", logs, func(s *tables.Store[Ranked]) ([]*Ranked, error) {
		return abstractions.Recent(ctx, s, "log", 5, "")
	})
	sameIDs[Ranked](t, "Recent of a sub-stream", logs, func(s *tables.Store[Ranked]) ([]*Ranked, error) {
		return abstractions.Recent(ctx, s, "log", 4, "audit")
	})

	streams := newTwin[Snapshot](t, "snapshots", func(s *tables.Store[Snapshot]) {
		for _, v := range []int{3, 17, 1, 40, 8, 22, 5} {
			if err := abstractions.AppendVersion(ctx, s, "order-1", &Snapshot{VersionedEntity: abstractions.VersionedEntity{Version: v}}); err != nil {
				panic(err)
			}
		}
	})
	one := func(v *Snapshot, err error) ([]*Snapshot, error) { return []*Snapshot{v}, err }
	sameIDs[Snapshot](t, "Latest", streams, func(s *tables.Store[Snapshot]) ([]*Snapshot, error) {
		return one(abstractions.Latest(ctx, s, "order-1"))
	})
	sameIDs[Snapshot](t, "AtOrBefore", streams, func(s *tables.Store[Snapshot]) ([]*Snapshot, error) {
		return one(abstractions.AtOrBefore(ctx, s, "order-1", 21))
	})
	sameIDs[Snapshot](t, "History", streams, func(s *tables.Store[Snapshot]) ([]*Snapshot, error) {
		return collect(t, abstractions.History(ctx, s, "order-1", 4)), nil
	})
}

// LargeNote has a value split over continuation rows, which sort right after their main
// row on Table Storage and anywhere on Cosmos DB.
type LargeNote struct {
	abstractions.Entity
	Body string `table:",split=text"`
}

func TestCosmosLargeValuesReadWholeInKeyOrder(t *testing.T) {
	ctx := context.Background()
	body := strings.Repeat("0123456789abcdef", 9000) // over one row: continuation rows
	tw := newTwin[LargeNote](t, "large", func(s *tables.Store[LargeNote]) {
		for _, rk := range []string{"b", "a", "d", "c"} {
			if err := s.Create(ctx, &LargeNote{Entity: abstractions.Entity{ID: "p|" + rk}, Body: rk + body}); err != nil {
				panic(err)
			}
		}
	})
	for _, take := range []int{0, 3} {
		sameIDs[LargeNote](t, fmt.Sprint("Query, Take ", take), tw, func(s *tables.Store[LargeNote]) ([]*LargeNote, error) {
			vs, err := s.Query(ctx, abstractions.Query[LargeNote]{Partition: "p", Take: take})
			for _, v := range vs {
				if _, rk := abstractions.SplitID(v.ID); err == nil && v.Body != rk+body {
					return nil, fmt.Errorf("%s read back a body of %d bytes", v.ID, len(v.Body))
				}
			}
			return vs, err
		})
	}
}

func TestCosmosPolyPageKeepsKeyOrder(t *testing.T) {
	ctx := context.Background()
	reg := ledgerTypes(t)
	sent := &sentCounter{Tables: memservice.New(memservice.Cosmos())}
	var stores []*tables.PolyStore[Ledger]
	for _, acct := range []*tables.Account{inmemory.NewAccount(nil), inmemory.NewAccountOver(sent, nil, &tables.Options{Service: service.Cosmos})} {
		s, err := tables.PolyFor[Ledger](acct, reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ws []abstractions.PolyWrite[Ledger]
		for _, rk := range orderedKeys {
			ws = append(ws, abstractions.PolyWrite[Ledger]{Key: key("p", rk), Item: &Credit{Cents: 1}})
		}
		if err := s.UpsertBatch(ctx, ws); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	var keys [2][]string
	for i, s := range stores {
		q := abstractions.Query[abstractions.PolyEntry[Ledger]]{Partition: "p", Take: 6}
		for {
			p, err := s.Page(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Items {
				keys[i] = append(keys[i], e.Key.RowKey)
			}
			if !p.HasMore() {
				break
			}
			q.Cursor = p.Cursor
		}
		list, err := s.List(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range list {
			if e.Key.RowKey != keys[i][j] {
				t.Fatalf("List's row %d is %q, Page's %q", j, e.Key.RowKey, keys[i][j])
			}
		}
	}
	if !slices.Equal(keys[0], keys[1]) || len(keys[0]) != len(orderedKeys) {
		t.Fatalf("Cosmos DB paged\n%q\nTable Storage\n%q", keys[1], keys[0])
	}
}

// refusedUnordered fails the test unless err is the refusal of an ordered read across
// partitions and nothing reached the service.
func refusedUnordered(t *testing.T, err error, sent *sentCounter) {
	t.Helper()
	if !errors.Is(err, abstractions.ErrNotSupported) || !strings.Contains(err.Error(), "Cosmos DB for Table returns query results in no order") ||
		!strings.Contains(err.Error(), "set Partition") || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("error = %v, want ErrNotSupported naming the Cosmos DB limit", err)
	}
	if n := sent.n.Load(); n != 0 {
		t.Fatalf("%d requests reached the service", n)
	}
}

func TestCosmosOrderedReadsAcrossPartitionsRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	tw := newTwin[Ranked](t, "ranked", fillRanked)
	s := tw.cosmos
	_, err := s.Query(ctx, abstractions.Query[Ranked]{Take: 3})
	refusedUnordered(t, err, tw.sent)
	for _, err := range s.Stream(ctx, abstractions.Query[Ranked]{}) {
		refusedUnordered(t, err, tw.sent)
	}
	_, err = s.Page(ctx, abstractions.Query[Ranked]{})
	refusedUnordered(t, err, tw.sent)

	poly, err := tables.PolyFor[Ledger](inmemory.NewAccountOver(tw.sent, nil, &tables.Options{Service: service.Cosmos}), ledgerTypes(t), &tables.StoreOptions{Table: "ranked", TableScans: tables.AllowTableScans})
	if err != nil {
		t.Fatal(err)
	}
	_, err = poly.Page(ctx, abstractions.Query[abstractions.PolyEntry[Ledger]]{})
	refusedUnordered(t, err, tw.sent)

	// A refused read is not logged as a table scan: nothing was sent.
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	logging, err := tables.For[Ranked](inmemory.NewAccountOver(tw.sent, nil, &tables.Options{Service: service.Cosmos, Logger: logger}),
		&tables.StoreOptions{Table: "ranked"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = logging.Query(ctx, abstractions.Query[Ranked]{Take: 3})
	refusedUnordered(t, err, tw.sent)
	for _, err := range logging.Stream(ctx, abstractions.Query[Ranked]{Take: 3}) {
		refusedUnordered(t, err, tw.sent)
	}
	_, err = logging.Page(ctx, abstractions.Query[Ranked]{Take: 3})
	refusedUnordered(t, err, tw.sent)
	loggingPoly, err := tables.PolyFor[Ledger](inmemory.NewAccountOver(tw.sent, nil, &tables.Options{Service: service.Cosmos, Logger: logger}),
		ledgerTypes(t), &tables.StoreOptions{Table: "ranked"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = loggingPoly.Page(ctx, abstractions.Query[abstractions.PolyEntry[Ledger]]{})
	refusedUnordered(t, err, tw.sent)
	if logged.Len() != 0 {
		t.Fatalf("a refused read logged %q", logged.String())
	}

	// Reads that do not rely on order are not refused.
	if ok, err := s.Any(ctx, abstractions.Query[Ranked]{}); err != nil || !ok {
		t.Fatalf("Any = %v, %v", ok, err)
	}
	if n, err := s.CountAll(ctx); err != nil || n != 2*len(orderedKeys) {
		t.Fatalf("CountAll = %d, %v", n, err)
	}
}

func TestCosmosOrderedReadOverTheSortLimit(t *testing.T) {
	ctx := context.Background()
	const rows = 10_001 // one more than the library sorts
	tw := newTwin[CosmosNote](t, "many", func(s *tables.Store[CosmosNote]) {
		vs := make([]*CosmosNote, rows)
		for i := range vs {
			vs[i] = &CosmosNote{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%05d", i)}}
		}
		if _, err := s.UpsertBatch(ctx, vs); err != nil {
			panic(err)
		}
	})
	s := tw.cosmos
	for name, err := range map[string]error{
		"Query with Take": func() error {
			_, err := s.Query(ctx, abstractions.Query[CosmosNote]{Partition: "p", Take: 1})
			return err
		}(),
		"Page": func() error { _, err := s.Page(ctx, abstractions.Query[CosmosNote]{Partition: "p"}); return err }(),
	} {
		var se *abstractions.StoreError
		if !errors.Is(err, abstractions.ErrNotSupported) || !errors.As(err, &se) || !strings.Contains(err.Error(), "more than 10000 rows") ||
			!strings.Contains(err.Error(), "nothing was returned") {
			t.Fatalf("%s: error = %v, want ErrNotSupported naming the limit", name, err)
		}
	}
	// A range narrowed under the limit is sorted; a read of every row is sorted whatever
	// its size.
	sameIDs[CosmosNote](t, "Query with prefix and Take", tw, func(s *tables.Store[CosmosNote]) ([]*CosmosNote, error) {
		return s.Query(ctx, abstractions.Query[CosmosNote]{Partition: "p", RowKeyPrefix: "099", Take: 20})
	})
	sameIDs[CosmosNote](t, "Query without Take", tw, func(s *tables.Store[CosmosNote]) ([]*CosmosNote, error) {
		return s.Query(ctx, abstractions.Query[CosmosNote]{Partition: "p"})
	})
}

// TestCosmosPageWithAFilterAtTheComparisonLimit pages with a filter of 15 comparisons, the
// service's limit, which leaves none for the key a cursor resumes at: the rows before it
// are dropped once read instead, and the pages are Table Storage's.
func TestCosmosPageWithAFilterAtTheComparisonLimit(t *testing.T) {
	ctx := context.Background()
	tw := newTwin[CosmosNote](t, "notes", func(s *tables.Store[CosmosNote]) {
		var vs []*CosmosNote
		for _, rk := range orderedKeys {
			vs = append(vs, &CosmosNote{Entity: abstractions.Entity{ID: "p|" + rk}, Text: rk})
		}
		if err := s.CreateBatch(ctx, vs); err != nil {
			panic(err)
		}
	})
	text := abstractions.Field(func(n *CosmosNote) *string { return &n.Text })
	var not []abstractions.Filter[CosmosNote]
	for i := range 7 { // 14 comparisons; with the partition's, 15
		v := fmt.Sprintf("r%03d", i)
		not = append(not, abstractions.Or(text.Lt(v), text.Gt(v)))
	}
	sameIDs[CosmosNote](t, "Page with 15 comparisons", tw, func(s *tables.Store[CosmosNote]) ([]*CosmosNote, error) {
		return pageAll(ctx, s, abstractions.Query[CosmosNote]{Partition: "p", Take: 6, Where: abstractions.And(not...)})
	})
}
