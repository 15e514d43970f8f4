package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// A batch copies the written state only into the entities whose own transaction committed.
func TestBatchCommitsOnlyWhatWasSent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := newGate()
	s, _ := tables.For[Doc](inmemory.NewAccountOver(&cancelAfterTx{gate: g, cancel: cancel}, nil, nil), nil)
	if err := s.EnsureCreated(ctx); err != nil {
		t.Fatal(err)
	}
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

func (c *cancelAfterTx) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	ws, err := c.gate.Transact(ctx, table, actions)
	c.cancel()
	return ws, err
}

// A key with a quote goes in a batched upsert like any other (on Azure the adapter doubles
// the quote in the action's URL, where the Azure SDK's own transactions do not).
func TestUpsertBatchWritesQuotedKeys(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Disabled)
	n, err := s.UpsertBatch(ctx, []*Doc{{Entity: abstractions.Entity{ID: "p|a"}}, {Entity: abstractions.Entity{ID: "p|o'brien"}}})
	if err != nil || n != 2 || g.txs.Load() != 1 {
		t.Fatalf("UpsertBatch: %d, %v (transactions sent: %d)", n, err, g.txs.Load())
	}
	if _, err := s.One(ctx, "p|o'brien"); err != nil {
		t.Fatalf("the row with a quote: %v", err)
	}
}

// deleteFirst deletes one row behind the store's back just before the first transaction.
type deleteFirst struct {
	*gate
	row   string
	armed atomic.Bool
	once  sync.Once
}

func (d *deleteFirst) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
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
	s, _ := tables.For[Doc](inmemory.NewAccountOver(w, nil, nil), nil)
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

// misreadInTransactions answers 404 to a delete of one row inside a transaction while the
// row stays stored, as Azurite does for keys holding U+2028; a delete alone works.
type misreadInTransactions struct {
	*gate
	row string
}

func (m *misreadInTransactions) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	for i, a := range actions {
		if a.Op == service.OpDelete && a.Row.RowKey == m.row {
			return nil, &service.TransactionError{Index: i, Err: &abstractions.StatusError{StatusCode: http.StatusNotFound, ErrorCode: "ResourceNotFound"}}
		}
	}
	return m.gate.Transact(ctx, table, actions)
}

// A row whose delete inside a transaction answers 404 while it is still stored is deleted
// alone, and counted.
func TestDeletePartitionDeletesMisreadRowsAlone(t *testing.T) {
	ctx := context.Background()
	m := &misreadInTransactions{gate: newGate(), row: "002"}
	s, _ := tables.For[Doc](inmemory.NewAccountOver(m, nil, nil), nil)
	var docs []*Doc
	for i := 0; i < 5; i++ {
		docs = append(docs, &Doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%03d", i)}})
	}
	if err := s.CreateBatch(ctx, docs); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeletePartition(ctx, "p")
	if err != nil || n != 5 {
		t.Fatalf("DeletePartition: %d, %v; want 5", n, err)
	}
	if left, err := s.Count(ctx, "p"); err != nil || left != 0 {
		t.Fatalf("rows left: %d, %v", left, err)
	}
	if w := m.writes.Load(); w != 1 {
		t.Fatalf("%d single writes, want the one delete", w)
	}
}
