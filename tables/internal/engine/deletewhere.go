package engine

import (
	"context"

	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// DeleteWhere deletes the store's rows filter selects (a partition's filter, the service
// filter of a query), a page of the query at a time, and returns how many entities it
// deleted (with dryRun, how many it would delete, deleting nothing). progress, when not
// nil, is called after each page with the count so far.
//
// A plain type's rows go in entity-group transactions of at most 100 deletes of one
// partition (RunBatch); a row deleted meanwhile by another writer is skipped. A
// split-aware or indexed entity goes by DeleteLarge, with its continuation rows and index
// rows in one transaction, and the blobs of each partition it touched are then swept as after DeletePartition
// (CleanupPartition: those older than the grace that no row references). A run that stops
// part-way (an error, a cancelled context) leaves the rows it did not reach: running it again
// deletes them, since the deleted rows no longer match.
func (s *Table) DeleteWhere(ctx context.Context, op, filter string, dryRun bool, progress func(int)) (int, error) {
	sel := KeysOnly
	if s.Split {
		sel = OfOnly
	}
	q := service.Query{Filter: filter, Select: s.SharedSel(sel), Top: MaxPage}
	n := 0
	touched := map[string]bool{}
	var order []string
	defer func() {
		for _, pk := range order {
			s.CleanupPartition(ctx, pk)
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return n, s.Translate(op, "", "", err)
		}
		page, err := s.Acct.Tables.Query(ctx, s.Name, q)
		if err != nil {
			return n, s.Translate(op, "", "", err)
		}
		p := &Plan{SkipGone: true}
		for i := range page.Rows {
			r := &page.Rows[i]
			if largevalue.IsContinuation(r) || s.Foreign(r) {
				continue
			}
			switch {
			case dryRun:
				n++
			case s.Units():
				if !touched[r.PartitionKey] {
					touched[r.PartitionKey] = true
					order = append(order, r.PartitionKey)
				}
				ok, err := s.DeleteLarge(ctx, r.PartitionKey, r.RowKey, "")
				if err != nil {
					return n, err
				}
				if ok {
					n++
				}
			default:
				p.Actions = append(p.Actions, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: r.PartitionKey, RowKey: r.RowKey}, IfMatch: service.ETagAny})
			}
		}
		if len(p.Actions) > 0 {
			done, err := s.RunBatch(ctx, op, p, nil)
			n += done
			if err != nil {
				keys := make([][2]string, len(p.Actions))
				for i, a := range p.Actions {
					keys[i] = [2]string{a.Row.PartitionKey, a.Row.RowKey}
				}
				s.Acct.Cache.Drop(s.WriteKeys(keys...))
				return n, err
			}
		}
		if progress != nil {
			progress(n)
		}
		if page.Next == nil {
			return n, nil
		}
		q.Continuation = page.Next
	}
}
