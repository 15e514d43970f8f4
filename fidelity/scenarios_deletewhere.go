package fidelity

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// cancellingTables cancels a context after its first committed transaction, as an
// operator's Ctrl-C in the middle of a DeleteWhere.
type cancellingTables struct {
	service.Tables
	cancel context.CancelFunc
	txs    atomic.Int64
}

func (c *cancellingTables) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	w, err := c.Tables.Transact(ctx, table, acts)
	if err == nil && c.txs.Add(1) == 1 {
		c.cancel()
	}
	return w, err
}

var deleteWhereScenarios = []Scenario{
	{
		Name: "store/delete-where",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[itemRow](e, nil)
			var seed []*itemRow
			for i := range 250 {
				name := "keep"
				if i%2 == 0 {
					name = "drop"
				}
				seed = append(seed, &itemRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%03d", i)}, Name: name, Count: int32(i)})
			}
			for i := range 5 {
				seed = append(seed, &itemRow{Entity: abstractions.Entity{ID: fmt.Sprintf("q|%03d", i)}, Name: "drop", Count: int32(i)})
			}
			e.OK("seed", s.CreateBatch(ctx, seed))

			_, err := s.DeleteWhere(ctx, abstractions.Query[itemRow]{}, nil)
			e.Is("a whole-table delete needs AllRows", err, abstractions.ErrInvalidArgument)
			n, err := s.DeleteWhere(ctx, abstractions.Query[itemRow]{Where: fName.Eq("drop")}, &tables.DeleteOptions{DryRun: true})
			e.OK("dry run", err)
			e.Equal("dry run counts the matches", n, 130)
			all, err := s.CountAll(ctx)
			e.OK("count", err)
			e.Equal("a dry run deletes nothing", all, 255)

			n, err = s.DeleteWhere(ctx, abstractions.Query[itemRow]{Partition: "q", Where: fCount.Lt(2)}, nil)
			e.OK("partition and filter", err)
			e.Equal("deleted in q", n, 2)

			// Cancelled after its first transaction, then run again: the second run deletes
			// exactly what the first left.
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			ct := &cancellingTables{Tables: e.Tables, cancel: cancel}
			cut, err := tables.For[itemRow](e.NewAccount(ct, e.Blobs, &tables.Options{Now: storeClock}),
				&tables.StoreOptions{Table: e.Table, TableScans: tables.AllowTableScans})
			e.OK("store", err)
			var progress []int
			first, err := cut.DeleteWhere(cctx, abstractions.Query[itemRow]{Partition: "p", Where: fName.Eq("drop")},
				&tables.DeleteOptions{Progress: func(n int) { progress = append(progress, n) }})
			e.Is("cancelled", err, context.Canceled)
			e.Equal("the first run deleted one transaction", first, 100)
			second, err := cut.DeleteWhere(ctx, abstractions.Query[itemRow]{Partition: "p", Where: fName.Eq("drop")},
				&tables.DeleteOptions{Progress: func(n int) { progress = append(progress, n) }})
			e.OK("resumed", err)
			e.Equal("the second run deleted the rest", second, 25)
			e.Observe("progress", progress)

			left, err := s.Query(ctx, abstractions.Query[itemRow]{Partition: "p"})
			e.OK("query", err)
			e.Equal("what is left in p", len(left), 125)
			for _, it := range left {
				if it.Name != "keep" {
					e.Errorf("%s (%s) should have gone", it.ID, it.Name)
				}
			}
			inQ, err := s.List(ctx, "q")
			e.OK("list q", err)
			e.Observe("left in q", ids(inQ))

			n, err = s.DeleteWhere(ctx, abstractions.Query[itemRow]{}, &tables.DeleteOptions{AllRows: true})
			e.OK("every row", err)
			e.Equal("the rest", n, 128)
			all, err = s.CountAll(ctx)
			e.OK("count", err)
			e.Equal("empty", all, 0)
		},
	},
	{
		Name: "store/delete-where-large",
		Run: func(ctx context.Context, e *Env) {
			s, c := offStore(e, noGrace)
			for i, size := range []int{10, 600_000, 600_000, 50} {
				d := &offDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}, Title: []string{"keep", "drop"}[i%2],
					Body: strings.Repeat("b", size), Notes: strings.Repeat("n", size)}
				e.OK("create", s.Create(ctx, d))
			}
			e.observeOffRows(ctx, "before")
			e.observeBlobs(ctx, c, "blobs before")
			e.nextSecond(ctx)
			title := abstractions.Field(func(d *offDoc) *string { return &d.Title })
			n, err := s.DeleteWhere(ctx, abstractions.Query[offDoc]{Partition: "p", Where: title.Eq("drop")}, nil)
			e.OK("delete where", err)
			e.Equal("deleted", n, 2)
			rows := e.observeOffRows(ctx, "after: the entities with their continuation rows are gone")
			for _, r := range rows {
				if !strings.HasPrefix(r.RowKey, "0") && !strings.HasPrefix(r.RowKey, "2") {
					e.Errorf("row %s is left", r.RowKey)
				}
			}
			e.observeBlobs(ctx, c, "blobs after: the deleted entities' blobs are gone")
			left, err := s.List(ctx, "p")
			e.OK("list", err)
			e.Observe("left", ids(left))
			e.nextSecond(ctx)
			n, err = s.DeleteWhere(ctx, abstractions.Query[offDoc]{}, &tables.DeleteOptions{AllRows: true})
			e.OK("delete the rest", err)
			e.Equal("the rest", n, 2)
			e.observeBlobs(ctx, c, "no blob is left")
		},
	},
	{
		Name: "store/delete-where-indexed",
		Run: func(ctx context.Context, e *Env) {
			s := ixStore(e)
			var batch []*ixOrder
			for i := range 6 {
				batch = append(batch, &ixOrder{Entity: abstractions.Entity{ID: fmt.Sprintf("t1|o%d", i)}, Number: int64(i),
					Status: []string{"open", "paid"}[i%2], Placed: time.Date(2026, 12, 1, 10, i, 0, 0, time.UTC)})
			}
			e.OK("create batch", s.CreateBatch(ctx, batch))
			ixCheck(ctx, e, s, "before", "t1")
			status := abstractions.Field(func(o *ixOrder) *string { return &o.Status })
			n, err := s.DeleteWhere(ctx, abstractions.Query[ixOrder]{Partition: "t1", Where: status.Eq("paid")}, nil)
			e.OK("delete where", err)
			e.Equal("deleted", n, 3)
			ixCheck(ctx, e, s, "after: the deleted entities' index rows are gone with them", "t1")
			left, err := s.List(ctx, "t1")
			e.OK("list", err)
			e.Observe("left", ids(left))
			e.clearTable(ctx)
		},
	},
}
