package index_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type item struct {
	abstractions.Entity
	Rank  int32     `table:",index=rank|rankDesc:desc"`
	Label *string   `table:",index=label"`
	At    time.Time `table:",index=at"`
}

func store(t *testing.T) *tables.Store[item] {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("ix%d", time.Now().UnixNano())
	s, err := tables.For[item](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), name) })
	return s
}

func ids(items []*item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func TestFindCountPage(t *testing.T) {
	ctx := context.Background()
	s := store(t)
	label := "x"
	for i, r := range []int32{5, -3, 5, 100, 0} {
		it := &item{Entity: abstractions.Entity{ID: fmt.Sprintf("p|r%d", i)}, Rank: r, At: time.Unix(int64(1000-i), 0)}
		if i%2 == 0 {
			it.Label = &label
		}
		if err := s.Create(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	rank, err := index.On(s, "rank")
	if err != nil {
		t.Fatal(err)
	}
	// An untyped constant and another integer type convert to the field's int32.
	got, err := rank.Find(ctx, "p", 5)
	if err != nil || fmt.Sprint(ids(got)) != "[p|r0 p|r2]" {
		t.Fatalf("Find(5) = %v, %v", ids(got), err)
	}
	if n, err := rank.Count(ctx, "p", int64(5)); err != nil || n != 2 {
		t.Fatalf("Count(5) = %d, %v", n, err)
	}
	// A pointer field takes its element type.
	lab, _ := index.On(s, "label")
	if n, err := lab.Count(ctx, "p", "x"); err != nil || n != 3 {
		t.Fatalf("Count(label x) = %d, %v", n, err)
	}
	// Pages of two, in order, across cursors; descending and bounded.
	walk := func(ix *index.Index[item], r index.Range) []string {
		var out []string
		cursor := ""
		for {
			p, err := ix.Page(ctx, r, abstractions.Query[item]{Partition: "p", Take: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ids(p.Items)...)
			if !p.HasMore() {
				return out
			}
			cursor = p.Cursor
		}
	}
	if got := fmt.Sprint(walk(rank, index.Range{})); got != "[p|r1 p|r4 p|r0 p|r2 p|r3]" {
		t.Fatalf("ascending: %s", got)
	}
	desc, _ := index.On(s, "rankDesc")
	if got := fmt.Sprint(walk(desc, index.Range{})); got != "[p|r3 p|r0 p|r2 p|r4 p|r1]" {
		t.Fatalf("descending: %s", got)
	}
	if got := fmt.Sprint(walk(desc, index.Range{From: 5, To: -3})); got != "[p|r0 p|r2 p|r4]" {
		t.Fatalf("descending 5 down to above -3: %s", got)
	}
	at, _ := index.On(s, "at")
	if got := fmt.Sprint(walk(at, index.Range{From: time.Unix(997, 0)})); got != "[p|r3 p|r2 p|r1 p|r0]" {
		t.Fatalf("times from 997: %s", got)
	}
	// A cursor of one range does not continue another.
	p, err := rank.Page(ctx, index.Range{}, abstractions.Query[item]{Partition: "p", Take: 2})
	if err != nil || p.Cursor == "" {
		t.Fatalf("first page: %v", err)
	}
	if _, err := rank.Page(ctx, index.Range{From: 0}, abstractions.Query[item]{Partition: "p", Take: 2, Cursor: p.Cursor}); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Fatalf("cursor of another range: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	s := store(t)
	if _, err := index.On(s, "missing"); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Fatalf("On(missing) = %v", err)
	}
	rank, _ := index.On(s, "rank")
	for _, v := range []any{"five", nil, 1.5 + 0i} {
		if _, err := rank.Find(ctx, "p", v); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("Find(%v) = %v", v, err)
		}
	}
	if _, err := rank.Page(ctx, index.Range{}, abstractions.Query[item]{Partition: "p", Take: 1001}); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Fatalf("take 1001: %v", err)
	}
	if _, err := rank.Find(ctx, "a|b", 1); !errors.Is(err, abstractions.ErrInvalidKey) {
		t.Fatalf("a partition with the id separator: %v", err)
	}
}

// counting counts the calls a store makes of its table service.
type counting struct {
	service.Tables
	calls atomic.Int64
}

func (c *counting) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	c.calls.Add(1)
	return c.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (c *counting) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	c.calls.Add(1)
	return c.Tables.Write(ctx, table, a)
}

func (c *counting) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	c.calls.Add(1)
	return c.Tables.Transact(ctx, table, acts)
}

func (c *counting) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	c.calls.Add(1)
	return c.Tables.Query(ctx, table, q)
}

// TestRoundTrips: an indexed Create, and a Strict update of a version the store read or
// wrote, are one request each; a last-writer-wins update reads the index keys first.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	conn := azuritetest.ConnectionString(t)
	svc, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{Tables: svc}
	acct := tables.NewAccountOver("azurite", c, nil, nil)
	name := fmt.Sprintf("ixrt%d", time.Now().UnixNano())
	s, err := tables.For[item](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureCreated(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.DeleteTable(context.Background(), name) })
	step := func(what string, want int64, f func() error) {
		t.Helper()
		before := c.calls.Load()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := c.calls.Load() - before; got != want {
			t.Errorf("%s: %d requests, want %d", what, got, want)
		}
	}
	it := &item{Entity: abstractions.Entity{ID: "p|a"}, Rank: 1}
	step("create", 1, func() error { return s.Create(ctx, it) })
	it.Rank = 2
	step("strict update of the version written", 1, func() error { return s.Update(ctx, it, abstractions.Strict) })
	var read *item
	step("read", 1, func() (err error) { read, err = s.One(ctx, "p|a"); return err })
	read.Rank = 3
	step("strict update of the version read", 1, func() error { return s.Update(ctx, read, abstractions.Strict) })
	lww := &item{Entity: abstractions.Entity{ID: "p|a"}, Rank: 4}
	step("last-writer-wins update", 2, func() error { return s.Update(ctx, lww, abstractions.LastWriterWins) })
	rank, _ := index.On(s, "rank")
	got, err := rank.Find(ctx, "p", 4)
	if err != nil || len(got) != 1 {
		t.Fatalf("Find(4) = %v, %v", ids(got), err)
	}
	for _, old := range []int{1, 2, 3} {
		if n, err := rank.Count(ctx, "p", old); err != nil || n != 0 {
			t.Fatalf("Count(%d) = %d, %v: an old index row is left", old, n, err)
		}
	}
}
