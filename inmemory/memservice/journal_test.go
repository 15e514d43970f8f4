package memservice

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// A log that keeps the changes it is given, and fails Sync when told to.
type memLog struct {
	mu      sync.Mutex
	changes []journal.Change
	fail    error
}

func (l *memLog) Append(c *journal.Change) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	cp := *c
	cp.Rows = slices.Clone(c.Rows)
	l.changes = append(l.changes, cp)
	return uint64(len(l.changes))
}

func (l *memLog) Sync(uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fail
}

// Every committed change reaches the log, one record per write, transaction and table
// change, with the ETag and Timestamp the caller was given; replaying the log into a new
// service, or restoring a dump, gives the same rows, whose ETags still condition writes; a
// failed Sync fails the call.
func TestJournal(t *testing.T) {
	ctx := context.Background()
	s, clk := newTable(t)
	log := &memLog{}
	journal.Attach(s, log)
	row := func(rk string, n int32) service.Row {
		return service.Row{PartitionKey: "p", RowKey: rk, Properties: []service.Property{{Name: "N", Value: service.Int32(n)}}}
	}
	w1, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpInsert, Row: row("a", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpInsert, Row: row("a", 9)}); err == nil {
		t.Fatal("a second insert succeeded")
	}
	if _, err := s.Transact(ctx, "Tab1", []service.Action{
		{Op: service.OpInsert, Row: row("b", 2)}, {Op: service.OpMerge, Row: row("a", 3), IfMatch: w1.ETag}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpDelete, Row: row("b", 0), IfMatch: "*"}); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.CreateTable(ctx, "Gone"), s.DeleteTable(ctx, "gone"), s.CreateTable(ctx, "Tab2")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := len(log.changes); got != 6 {
		t.Fatalf("%d changes logged, want 6 (a refused write logs nothing)", got)
	}
	if c := log.changes[1]; c.Kind != journal.Rows || len(c.Rows) != 2 || c.Rows[1].Row.ETag == w1.ETag {
		t.Errorf("the transaction is logged as %+v", c)
	}

	want, _ := s.GetRow(ctx, "Tab1", "p", "a", nil)
	replayed := New(WithClock(clk.now))
	if err := replayed.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	for i := range log.changes {
		journal.Restore(replayed, &log.changes[i])
	}
	restored := New(WithClock(clk.now))
	if err := journal.Dump(s, func(c *journal.Change) error { journal.Restore(restored, c); return nil }); err != nil {
		t.Fatal(err)
	}
	for name, svc := range map[string]*Service{"replayed": replayed, "restored": restored} {
		got, err := svc.GetRow(ctx, "Tab1", "p", "a", nil)
		if err != nil {
			t.Fatal(name, err)
		}
		same := got.ETag == want.ETag && got.Timestamp.Equal(want.Timestamp) && len(got.Properties) == len(want.Properties)
		for i := 0; same && i < len(got.Properties); i++ {
			same = got.Properties[i].Name == want.Properties[i].Name && got.Properties[i].Value.Equal(want.Properties[i].Value)
		}
		if !same {
			t.Errorf("%s row %+v, want %+v", name, got, want)
		}
		if _, err := svc.GetRow(ctx, "Tab1", "p", "b", nil); err == nil {
			t.Errorf("%s: the deleted row is back", name)
		}
		names, _ := svc.TableNames(ctx)
		if !slices.Equal(names, []string{"Tab1", "Tab2"}) {
			t.Errorf("%s tables %q", name, names)
		}
		// The clock has not moved: a new write is stamped after the restored rows all the same.
		w, err := svc.Write(ctx, "Tab1", service.Action{Op: service.OpReplace, Row: row("a", 4), IfMatch: want.ETag})
		if err != nil || !w.Timestamp.After(want.Timestamp) {
			t.Errorf("%s: a write with the restored ETag: %v %v", name, w, err)
		}
	}

	log.fail = errors.New("disk full")
	if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpUpsertReplace, Row: row("c", 5)}); !errors.Is(err, log.fail) {
		t.Errorf("a write whose log fails: %v", err)
	}
	if err := s.CreateTable(ctx, "Tab3"); !errors.Is(err, log.fail) {
		t.Errorf("a table whose log fails: %v", err)
	}
}
