package tables

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// sharedStores returns a typed store (caching) and a polymorphic store sharing the table
// Shop of one account over the fake, behind a fault injector.
func sharedStores(t *testing.T) (*Store[item], *PolyStore[event], *faults.Tables, *fakeTables) {
	t.Helper()
	f := newFake()
	f.tables["shop"] = map[fakeKey]service.Row{}
	ft := faults.NewTables(f)
	acct := testAccount("test", ft, nil, &Options{Now: func() time.Time { return testNow }})
	typed, err := For[item](acct, &StoreOptions{Table: "Shop", SharedTable: true, Cache: Absolute(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	types := new(abstractions.TypeRegistry)
	if err := errors.Join(abstractions.RegisterType[opened](types, "Opened"), abstractions.RegisterType[noted](types, "Noted")); err != nil {
		t.Fatal(err)
	}
	poly, err := PolyFor[event](acct, types, &StoreOptions{Table: "Shop", SharedTable: true})
	if err != nil {
		t.Fatal(err)
	}
	return typed, poly, ft, f
}

func pkey(pk, rk string) abstractions.TableKey {
	return abstractions.TableKey{PartitionKey: pk, RowKey: rk}
}

// A transaction of typed and polymorphic writes commits as one: the entities carry their
// new versions, the cache serves them without a read, and each store of the shared table
// reads only its own rows.
func TestTransactionCommitsAcrossStores(t *testing.T) {
	ctx := context.Background()
	typed, poly, _, f := sharedStores(t)
	old := &item{Entity: abstractions.Entity{ID: "t1|gone"}, N: 0}
	if err := typed.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	order := &item{Entity: abstractions.Entity{ID: "t1|o1"}, Name: "placed", N: 1}
	tx := typed.Transaction("t1")
	typed.CreateIn(tx, order)
	typed.DeleteIn(tx, "t1|gone", old.ETag)
	poly.InsertIn(tx, abstractions.PolyWrite[event]{Key: pkey("t1", "evt-1"), Item: &noted{Text: "o1 placed"}})
	poly.UpsertIn(tx, abstractions.Marker[event](pkey("t1", "head"), map[string]any{"_Seq": int64(1)}))
	if order.ETag != "" {
		t.Fatal("the entity changed before the commit")
	}
	f.resetCalls()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if f.count("Transact") != 1 || f.count("Write") != 0 {
		t.Fatalf("calls %v, want one transaction", f.calls)
	}
	stored, ok := f.row("Shop", "t1", "o1")
	if !ok || order.ETag == "" || order.ETag != stored.ETag || order.CreatedAt.IsZero() {
		t.Fatalf("the entity's ETag %q, stored %q (%v); CreatedAt %v", order.ETag, stored.ETag, ok, order.CreatedAt)
	}
	if _, ok := f.row("Shop", "t1", "gone"); ok {
		t.Error("the delete was not applied")
	}
	marker, _ := f.row("Shop", "t1", "head")
	if v, ok := marker.Get(codec.TypeNameColumn); !ok || v.Str() != "" {
		t.Errorf("a marker of a shared table carries %v (%v), want an empty discriminator", v, ok)
	}
	f.resetCalls()
	got, err := typed.One(ctx, "t1|o1")
	if err != nil || got.ETag != order.ETag || f.count("GetRow") != 0 {
		t.Fatalf("One after the commit: %v, %v (%d reads; the cache should hold the version written)", got, err, f.count("GetRow"))
	}
	if err := tx.Commit(ctx); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a second Commit: %v, want ErrInvalidArgument", err)
	}

	// Each store reads its own rows.
	list, err := typed.List(ctx, "t1")
	if err != nil || len(list) != 1 || list[0].Name != "placed" {
		t.Fatalf("typed List: %v, %v", list, err)
	}
	if n, err := typed.Count(ctx, "t1"); err != nil || n != 1 {
		t.Fatalf("typed Count: %d, %v", n, err)
	}
	if _, err := typed.One(ctx, "t1|evt-1"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("typed One of a polymorphic row: %v, want ErrNotFound", err)
	}
	if ok, err := typed.Exists(ctx, "t1|head"); err != nil || ok {
		t.Fatalf("typed Exists of a marker: %v, %v", ok, err)
	}
	entries, err := poly.List(ctx, "t1")
	if err != nil || len(entries) != 2 || entries[0].Key.RowKey != "evt-1" || !entries[1].IsMarker() || entries[1].Columns["_Seq"] != int64(1) {
		t.Fatalf("poly List: %v, %v", entries, err)
	}
	if _, err := poly.One(ctx, pkey("t1", "o1")); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("poly One of a typed row: %v, want ErrNotFound", err)
	}
	if n, err := typed.DeletePartition(ctx, "t1"); err != nil || n != 1 || f.size("Shop") != 2 {
		t.Fatalf("typed DeletePartition: %d, %v (%d rows left, want the 2 polymorphic ones)", n, err, f.size("Shop"))
	}
}

// Without the opt-in a polymorphic store still refuses a typed row.
func TestSharedTableIsOptIn(t *testing.T) {
	ctx := context.Background()
	typed, poly, _, _ := sharedStores(t)
	if err := typed.Create(ctx, &item{Entity: abstractions.Entity{ID: "t1|o1"}, Name: "x"}); err != nil {
		t.Fatal(err)
	}
	owner, err := PolyFor[event](poly.Account(), poly.types, &StoreOptions{Table: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.List(ctx, "t1"); !errors.Is(err, abstractions.ErrIntegrity) {
		t.Fatalf("List of a table holding a typed row without SharedTable: %v, want ErrIntegrity", err)
	}
	type big struct {
		abstractions.Entity
		Body string `table:",split=text"`
	}
	if _, err := For[big](typed.Account(), &StoreOptions{Table: "Shop", SharedTable: true}); !errors.Is(err, abstractions.ErrNotSupported) {
		t.Fatalf("a split-aware type sharing a table: %v, want ErrNotSupported", err)
	}
}

// A write conditional on a stale version fails the whole transaction: nothing is written,
// the entity keeps its version, and the cache keeps nothing it had not.
func TestTransactionStaleETagWritesNothing(t *testing.T) {
	ctx := context.Background()
	typed, poly, _, f := sharedStores(t)
	order := &item{Entity: abstractions.Entity{ID: "t1|o1"}, Name: "placed"}
	if err := typed.Create(ctx, order); err != nil {
		t.Fatal(err)
	}
	stale := *order
	order.Name = "paid"
	if err := typed.Update(ctx, order, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	stale.Name = "cancelled"
	tx := typed.Transaction("t1")
	typed.UpdateIn(tx, &stale, abstractions.Strict)
	poly.InsertIn(tx, abstractions.PolyWrite[event]{Key: pkey("t1", "evt-2"), Item: &noted{Text: "cancelled"}})
	before := f.size("Shop")
	staleETag := stale.ETag
	err := tx.Commit(ctx)
	if !errors.Is(err, abstractions.ErrConcurrencyConflict) || !strings.Contains(err.Error(), "o1") {
		t.Fatalf("Commit on a stale ETag: %v, want ErrConcurrencyConflict naming the row", err)
	}
	if f.size("Shop") != before {
		t.Error("a failed transaction wrote rows")
	}
	if stale.ETag != staleETag || stale.Name != "cancelled" {
		t.Error("a failed transaction changed the entity")
	}
	got, err := typed.One(ctx, "t1|o1")
	if err != nil || got.Name != "paid" {
		t.Fatalf("One after the failed transaction: %+v, %v", got, err)
	}
}

// What a transaction cannot carry is refused before anything is sent, and the refusal
// sticks: Commit returns it.
func TestTransactionRefusals(t *testing.T) {
	ctx := context.Background()
	typed, poly, _, f := sharedStores(t)
	other, err := For[item](typed.Account(), &StoreOptions{Table: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := For[item](testAccount("other", newFake(), nil, nil), &StoreOptions{Table: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	type big struct {
		abstractions.Entity
		Body string `table:",split=text"`
	}
	split, err := For[big](typed.Account(), &StoreOptions{Table: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	type guarded struct {
		abstractions.Entity
		Owner string `table:",protected=admin"`
	}
	prot, err := For[guarded](typed.Account(), &StoreOptions{Table: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(rk string) abstractions.PolyWrite[event] {
		return abstractions.PolyWrite[event]{Key: pkey("t1", rk), Item: &noted{Text: rk}}
	}
	cases := []struct {
		name  string
		add   func(tx *Transaction)
		kind  error
		names string
	}{
		{"another partition", func(tx *Transaction) { typed.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "t2|o"}}) }, abstractions.ErrInvalidArgument, "t2"},
		{"another partition (poly)", func(tx *Transaction) {
			poly.InsertIn(tx, abstractions.PolyWrite[event]{Key: pkey("T1", "e"), Item: &noted{}})
		}, abstractions.ErrInvalidArgument, "T1"},
		{"another table", func(tx *Transaction) { other.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "t1|o"}}) }, abstractions.ErrInvalidArgument, "Other"},
		{"another account", func(tx *Transaction) {
			elsewhere.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "t1|o"}})
		}, abstractions.ErrInvalidArgument, "account"},
		{"a key twice", func(tx *Transaction) {
			typed.UpsertIn(tx, &item{Entity: abstractions.Entity{ID: "t1|k"}})
			poly.InsertIn(tx, ev("k"))
		}, abstractions.ErrDuplicateKey, "k"},
		{"a split-aware type", func(tx *Transaction) { split.CreateIn(tx, &big{Entity: abstractions.Entity{ID: "t1|b"}}) }, abstractions.ErrNotSupported, "split-aware"},
		{"a protected type upserted", func(tx *Transaction) {
			prot.UpsertIn(tx, &guarded{Entity: abstractions.Entity{ID: "t1|g"}})
		}, abstractions.ErrNotSupported, "protected"},
		{"Strict without an ETag", func(tx *Transaction) {
			typed.UpdateIn(tx, &item{Entity: abstractions.Entity{ID: "t1|u"}}, abstractions.Strict)
		}, abstractions.ErrInvalidArgument, "ETag"},
		{"101 writes", func(tx *Transaction) {
			for i := range 101 {
				poly.InsertIn(tx, ev(fmt.Sprintf("%03d", i)))
			}
		}, abstractions.ErrInvalidArgument, "101"},
		{"over 4 MiB", func(tx *Transaction) {
			for i := range 80 {
				typed.CreateIn(tx, &item{Entity: abstractions.Entity{ID: fmt.Sprintf("t1|%03d", i)}, Name: strings.Repeat("é", 30_000)})
			}
		}, abstractions.ErrInvalidArgument, "4 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.resetCalls()
			tx := typed.Transaction("t1")
			c.add(tx)
			err := tx.Commit(ctx)
			wantKind(t, err, c.kind)
			if !strings.Contains(err.Error(), c.names) {
				t.Errorf("the error %v does not name %q", err, c.names)
			}
			if f.count("Transact")+f.count("Write") != 0 {
				t.Errorf("a refused transaction sent %v", f.calls)
			}
		})
	}
	// An invalid partition is refused by Commit; a nil transaction takes no write and is
	// refused by Commit.
	tx := typed.Transaction("a/b")
	typed.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "a/b|x"}})
	wantKind(t, tx.Commit(ctx), abstractions.ErrInvalidKey)
	typed.CreateIn(nil, &item{})
	poly.InsertIn(nil, abstractions.PolyWrite[event]{})
	wantKind(t, (*Transaction)(nil).Commit(ctx), abstractions.ErrInvalidArgument)
	// An empty transaction commits nothing.
	f.resetCalls()
	if err := typed.Transaction("t1").Commit(ctx); err != nil || len(f.calls) != 0 {
		t.Fatalf("an empty transaction: %v, %v", err, f.calls)
	}
}

// A transaction whose answer was lost is reported committed when the rows hold what it
// wrote, with the versions read back; one that was not applied fails, saying the outcome
// is unknown, and leaves the entity as it was.
func TestTransactionCommitTellsItsOwnEcho(t *testing.T) {
	ctx := context.Background()
	typed, poly, ft, f := sharedStores(t)
	order := &item{Entity: abstractions.Entity{ID: "t1|o1"}, Name: "placed"}
	tx := typed.Transaction("t1")
	typed.CreateIn(tx, order)
	poly.InsertIn(tx, abstractions.PolyWrite[event]{Key: pkey("t1", "e1"), Item: &noted{Text: "placed"}})
	ft.Inject(faults.LoseResponse, faults.Transactions, 1)
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit after a lost response: %v", err)
	}
	stored, _ := f.row("Shop", "t1", "o1")
	if order.ETag == "" || order.ETag != stored.ETag {
		t.Errorf("the entity's ETag %q is not the stored one %q", order.ETag, stored.ETag)
	}

	next := &item{Entity: abstractions.Entity{ID: "t1|o2"}, Name: "placed"}
	tx = typed.Transaction("t1")
	typed.CreateIn(tx, next)
	ft.Inject(faults.ServerBusy, faults.Transactions, 10)
	err := tx.Commit(ctx)
	ft.Clear()
	if !errors.Is(err, abstractions.ErrUnavailable) || next.ETag != "" {
		t.Fatalf("Commit against a busy service: %v (entity ETag %q)", err, next.ETag)
	}
	if _, ok := f.row("Shop", "t1", "o2"); ok {
		t.Error("the busy service applied the transaction")
	}
}

// A polymorphic page reads a partition in key order, a page at a time, with a cursor bound
// to its query; a row-key range and a prefix bound it, and a typed row of a shared table
// takes its place in a page without being returned.
func TestPolyPage(t *testing.T) {
	ctx := context.Background()
	typed, poly, _, f := sharedStores(t)
	var ws []abstractions.PolyWrite[event]
	for i := range 250 {
		ws = append(ws, abstractions.PolyWrite[event]{Key: pkey("t1", fmt.Sprintf("e%04d", i)), Item: &noted{Text: fmt.Sprint(i)}})
	}
	if err := poly.InsertBatch(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := typed.Create(ctx, &item{Entity: abstractions.Entity{ID: "t1|e0100x"}}); err != nil {
		t.Fatal(err)
	}
	type q = abstractions.Query[abstractions.PolyEntry[event]]
	var got []string
	cur, pages := "", 0
	for {
		p, err := poly.Page(ctx, q{Partition: "t1", Take: 37, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) > 37 {
			t.Fatalf("a page of %d rows", len(p.Items))
		}
		for _, e := range p.Items {
			got = append(got, e.Key.RowKey)
		}
		pages++
		if !p.HasMore() {
			break
		}
		cur = p.Cursor
	}
	if len(got) != 250 || got[0] != "e0000" || got[249] != "e0249" || pages != 7 {
		t.Fatalf("%d rows in %d pages, from %v", len(got), pages, got[:3])
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("rows out of order or repeated at %d: %s after %s", i, got[i], got[i-1])
		}
	}
	p, err := poly.Page(ctx, q{Partition: "t1", Take: 37})
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, func() error { _, err := poly.Page(ctx, q{Partition: "t1", Take: 36, Cursor: p.Cursor}); return err }(), abstractions.ErrInvalidArgument)
	wantKind(t, func() error {
		_, err := typed.Page(ctx, abstractions.Query[item]{Partition: "t1", Take: 37, Cursor: p.Cursor})
		return err
	}(), abstractions.ErrInvalidArgument)

	rk := abstractions.Field(func(e *abstractions.PolyEntry[event]) *string { return &e.Key.RowKey })
	r, err := poly.Page(ctx, q{Partition: "t1", Where: abstractions.And(rk.Ge("e0098"), rk.Lt("e0102")), Take: 10})
	if err != nil {
		t.Fatal(err)
	}
	if keys := entryKeys(r.Items); keys != "e0098 e0099 e0100 e0101" || r.HasMore() {
		t.Fatalf("the range read %q (more: %v)", keys, r.HasMore())
	}
	r, err = poly.Page(ctx, q{Partition: "t1", RowKeyPrefix: "e024", Take: 3})
	if err != nil || entryKeys(r.Items) != "e0240 e0241 e0242" || !r.HasMore() {
		t.Fatalf("the prefix read %q, %v", entryKeys(r.Items), err)
	}

	f.resetCalls()
	name := abstractions.Field(func(e *abstractions.PolyEntry[event]) *string { return &e.TypeName })
	for _, bad := range []q{
		{Partition: "t1", Where: name.Eq("Noted")},
		{Partition: "t1", Where: abstractions.Or(rk.Eq("a"), rk.Eq("b"))},
		{Partition: "t1", Select: []abstractions.Selector[abstractions.PolyEntry[event]]{rk}},
		{RowKeyPrefix: "e"},
	} {
		_, err := poly.Page(ctx, bad)
		wantKind(t, err, abstractions.ErrNotSupported)
	}
	_, err = poly.Page(ctx, q{Partition: "t1", Take: 1001})
	wantKind(t, err, abstractions.ErrInvalidArgument)
	_, err = poly.Page(ctx, q{Partition: "a/b"})
	wantKind(t, err, abstractions.ErrInvalidKey)
	if len(f.calls) != 0 {
		t.Errorf("refused pages sent %v", f.calls)
	}
}

func entryKeys(es []*abstractions.PolyEntry[event]) string {
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.Key.RowKey
	}
	return strings.Join(keys, " ")
}

// Commit reports every refused write at once, each naming its row, and sends nothing; a
// polymorphic write whose key leaves the partition empty is in the transaction's.
func TestTransactionReportsEveryRefusal(t *testing.T) {
	ctx := context.Background()
	typed, poly, _, f := sharedStores(t)
	tx := typed.Transaction("t1")
	typed.CreateIn(tx, &item{Entity: abstractions.Entity{ID: "t2|elsewhere"}})
	poly.InsertIn(tx, abstractions.PolyWrite[event]{Key: abstractions.TableKey{RowKey: "evt-1"}, Item: &noted{Text: "kept"}})
	typed.UpdateIn(tx, &item{Entity: abstractions.Entity{ID: "t1|noetag"}}, abstractions.Strict)
	f.resetCalls()
	err := tx.Commit(ctx)
	if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "t2") || !strings.Contains(err.Error(), "noetag") {
		t.Fatalf("Commit: %v, want both refusals", err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 2 {
		t.Errorf("%d errors joined, want 2", n)
	}
	if len(f.calls) != 0 {
		t.Errorf("a refused transaction sent %v", f.calls)
	}
	tx = typed.Transaction("t1")
	poly.InsertIn(tx, abstractions.PolyWrite[event]{Key: abstractions.TableKey{RowKey: "evt-1"}, Item: &noted{Text: "kept"}})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.row("Shop", "t1", "evt-1"); !ok {
		t.Error("the write with an empty partition is not in the transaction's partition")
	}
}

// A typed store's transaction normalises its partition; a polymorphic write, whose keys are
// used as written, lands in the transaction's partition only when the caller named it as
// stored, and is refused otherwise, so no write reaches a partition the caller did not name.
func TestTransactionPolyWriteKeepsItsPartitionAsWritten(t *testing.T) {
	ctx := context.Background()
	typed, poly, _, f := sharedStores(t)
	tx := typed.Transaction("T1")
	poly.InsertIn(tx, abstractions.PolyWrite[event]{Key: abstractions.TableKey{RowKey: "evt-1"}, Item: &noted{Text: "x"}})
	f.resetCalls()
	err := tx.Commit(ctx)
	wantKind(t, err, abstractions.ErrInvalidArgument)
	if err == nil || !strings.Contains(err.Error(), "normalised") || len(f.calls) != 0 {
		t.Fatalf("Commit: %v, calls %v", err, f.calls)
	}
	if _, ok := f.row("Shop", "t1", "evt-1"); ok {
		t.Error("the write reached the normalised partition")
	}
}
