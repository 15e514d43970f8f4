package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables/service"
)

// A cancelled context fails a read even when the cache could answer it.
func TestCacheHitHonoursContext(t *testing.T) {
	ctx := context.Background()
	s, _ := cachedStore(t, inmemory.Sliding(time.Minute))
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.One(cctx, "p|a"); !errors.Is(err, context.Canceled) {
		t.Errorf("One: %v", err)
	}
	if _, err := s.Exists(cctx, "p|a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Exists: %v", err)
	}
	if _, err := s.List(cctx, "p"); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v", err)
	}
}

// Patching a cached row keeps the Absolute deadline of the entry: a write by another
// process is seen once the entry's time is up, however often this process patches it.
func TestCacheAbsoluteDeadlineSurvivesPatches(t *testing.T) {
	ctx := context.Background()
	svc := newGate()
	primary := inmemory.NewAccountOver(svc, nil, &inmemory.Options{Cache: inmemory.Absolute(150 * time.Millisecond)})
	other := inmemory.NewAccountOver(svc, nil, nil)
	a, _ := inmemory.For[Doc](primary, nil)
	b, _ := inmemory.For[Doc](other, nil)
	if err := a.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|x"}, Tags: []string{"alice"}}); err != nil {
		t.Fatal(err)
	}
	d, err := b.One(ctx, "p|x")
	if err != nil {
		t.Fatal(err)
	}
	d.Tags = []string{"bob"}
	if err := b.Update(ctx, d, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(600 * time.Millisecond)
	for i := 1; time.Now().Before(deadline); i++ {
		if _, err := a.Patch(ctx, "p|x", abstractions.Set(abstractions.NewPatch[Doc](), func(d *Doc) *int { return &d.N }, i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, err := a.One(ctx, "p|x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Tags[0] != "bob" {
		t.Fatalf("after 600 ms of patches under Absolute(150ms) the cache still hides another account's write: %q", got.Tags)
	}
}

// A batch copies the written state only into the entities whose own transaction committed.
func TestBatchCommitsOnlyWhatWasSent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := newGate()
	s, _ := inmemory.For[Doc](inmemory.NewAccountOver(&cancelAfterTx{gate: g, cancel: cancel}, nil, nil), nil)
	vs := []*Doc{{Entity: abstractions.Entity{ID: "p|dup"}}}
	for i := 1; i < 100; i++ {
		vs = append(vs, &Doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%03d", i)}})
	}
	vs = append(vs, &Doc{Entity: abstractions.Entity{ID: "P|DUP"}}) // the same row, in the next transaction
	n, err := s.UpsertBatch(ctx, vs)
	if n != 100 || !errors.Is(err, context.Canceled) {
		t.Fatalf("UpsertBatch: %d, %v", n, err)
	}
	if vs[0].ID != "p|dup" || vs[100].ID != "P|DUP" || !vs[100].UpdatedAt.IsZero() {
		t.Fatalf("entity 100 was never sent but was updated: %+v", vs[100].Entity)
	}
}

// cancelAfterTx cancels the caller's context once the first transaction has committed.
type cancelAfterTx struct {
	*gate
	cancel func()
}

func (c *cancelAfterTx) Transact(ctx context.Context, table string, actions []service.Action) error {
	err := c.gate.Transact(ctx, table, actions)
	c.cancel()
	return err
}

// A key with a quote cannot be sent in a batched upsert through the Azure SDK, so neither
// backend sends it.
func TestUpsertBatchRefusesQuotedKeys(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, inmemory.Disabled)
	_, err := s.UpsertBatch(ctx, []*Doc{{Entity: abstractions.Entity{ID: "p|a"}}, {Entity: abstractions.Entity{ID: "p|o'brien"}}})
	if !errors.Is(err, abstractions.ErrNotSupported) || g.txs.Load() != 0 {
		t.Fatalf("UpsertBatch: %v (transactions sent: %d)", err, g.txs.Load())
	}
	if err := s.Upsert(ctx, &Doc{Entity: abstractions.Entity{ID: "p|o'brien"}}); err != nil {
		t.Fatalf("a single upsert of the same key: %v", err)
	}
}

// upper is stored as its plain string: it marshals to text but cannot be read from it, so
// the codec (and therefore the filter) treat it by its kind.
type upper string

func (u upper) MarshalText() ([]byte, error) { return []byte(strings.ToUpper(string(u))), nil }

type Coded struct {
	abstractions.Entity
	Code upper
}

func TestFilterUsesTheStoredFormOfTextTypes(t *testing.T) {
	ctx := context.Background()
	s, err := inmemory.For[Coded](inmemory.NewAccount(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &Coded{Entity: abstractions.Entity{ID: "p|1"}, Code: "abc"}); err != nil {
		t.Fatal(err)
	}
	code := abstractions.Field(func(c *Coded) *upper { return &c.Code })
	got, err := s.Query(ctx, abstractions.Query[Coded]{Partition: "p", Where: code.Eq("abc")})
	if err != nil || len(got) != 1 {
		t.Fatalf("Eq on the stored form: %d rows, %v", len(got), err)
	}
}

// level is an enum whose zero value cannot be written.
type level int

func (l level) MarshalText() ([]byte, error) {
	if l == 0 {
		return nil, errors.New("level 0 is not a level")
	}
	return []byte(fmt.Sprint(int(l))), nil
}

func (l *level) UnmarshalText(b []byte) error {
	_, err := fmt.Sscan(string(b), (*int)(l))
	return err
}

type Ticket struct {
	abstractions.Entity
	Level level
	Title string
}

// A patch looks only at the fields it sets: another field's unstorable zero value does not
// stop it.
func TestPatchIgnoresOtherFields(t *testing.T) {
	ctx := context.Background()
	s, err := inmemory.For[Ticket](inmemory.NewAccount(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &Ticket{Entity: abstractions.Entity{ID: "p|1"}, Level: 2, Title: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Patch(ctx, "p|1", abstractions.Set(abstractions.NewPatch[Ticket](), func(x *Ticket) *string { return &x.Title }, "b")); err != nil {
		t.Fatal(err)
	}
	got, err := s.One(ctx, "p|1")
	if err != nil || got.Title != "b" || got.Level != 2 {
		t.Fatalf("after the patch: %+v, %v", got, err)
	}
}

// deleteFirst deletes one row behind the store's back just before the first transaction.
type deleteFirst struct {
	*gate
	row   string
	armed atomic.Bool
	once  sync.Once
}

func (d *deleteFirst) Transact(ctx context.Context, table string, actions []service.Action) error {
	if d.armed.Load() {
		d.once.Do(func() {
			d.gate.Tables.Write(ctx, table, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: "p", RowKey: d.row}})
		})
	}
	return d.gate.Transact(ctx, table, actions)
}

// A row deleted by someone else while DeletePartition runs is skipped, not an error.
func TestDeletePartitionSkipsRowsDeletedMeanwhile(t *testing.T) {
	ctx := context.Background()
	w := &deleteFirst{gate: newGate(), row: "050"}
	s, _ := inmemory.For[Doc](inmemory.NewAccountOver(w, nil, nil), nil)
	var docs []*Doc
	for i := 0; i < 100; i++ {
		docs = append(docs, &Doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%03d", i)}})
	}
	if _, err := s.UpsertBatch(ctx, docs); err != nil {
		t.Fatal(err)
	}
	w.armed.Store(true)
	n, err := s.DeletePartition(ctx, "p")
	if err != nil || n != 99 {
		t.Fatalf("DeletePartition: %d, %v", n, err)
	}
	if left, err := s.Count(ctx, "p"); err != nil || left != 0 {
		t.Fatalf("rows left: %d, %v", left, err)
	}
}

// A filter too long for a request URL is refused before anything is sent.
func TestLongFilterIsRefused(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, inmemory.Disabled)
	name := abstractions.Field(func(d *Doc) *int { return &d.N })
	where := abstractions.Or(name.Eq(1), abstractions.Field(func(d *Doc) *string { return &d.Place.City }).Eq(strings.Repeat("x", 9000)))
	before := g.queries.Load()
	_, err := s.Query(ctx, abstractions.Query[Doc]{Partition: "p", Where: where})
	if !errors.Is(err, abstractions.ErrNotSupported) {
		t.Fatalf("Query: %v", err)
	}
	if g.queries.Load() != before {
		t.Fatal("a refused query sent requests")
	}
}
