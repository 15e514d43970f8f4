package backup

import (
	"context"
	"fmt"

	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// flush hands the queued entities of one partition to the committer, which writes them
// while the next records are read. It fails with the committer's error once it has one.
func (rs *restorer) flush(ctx context.Context) error {
	pack := rs.pack
	rs.pack, rs.packActions, rs.packSize = nil, 0, 0
	if len(pack) == 0 {
		return rs.commitErr()
	}
	select {
	case rs.queue <- pack:
		return nil
	case <-ctx.Done():
		if err := rs.commitErr(); err != nil {
			return err
		}
		return ctx.Err()
	}
}

// startCommitter starts the goroutine that writes the packs in order; the function it
// returns stops it and waits for it, and reports its first error.
func (rs *restorer) startCommitter(ctx context.Context) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	rs.queue = make(chan []unit, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pack := range rs.queue {
			if rs.commitErr() != nil {
				continue
			}
			if err := rs.commit(ctx, pack); err != nil {
				rs.mu.Lock()
				rs.err = err
				rs.mu.Unlock()
				cancel()
			}
		}
	}()
	return func() error {
		close(rs.queue)
		<-done
		cancel()
		return rs.commitErr()
	}
}

func (rs *restorer) commitErr() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.err
}

// commit writes one pack: every row upserted (replaced whole), an entity's rows always in
// one transaction. Under Skip and Replace the destination's rows in the entities' key range
// are read first: Skip leaves out the entities that exist, Replace also deletes their
// continuation rows the archive's entity does not have.
func (rs *restorer) commit(ctx context.Context, pack []unit) error {
	var existing map[string]service.Row
	if rs.existing != Refuse {
		var err error
		if existing, err = rs.existingRows(ctx, pack); err != nil {
			return err
		}
	}
	var txs [][]service.Action
	var cur []service.Action
	curSize := 0
	add := func(acts []service.Action) {
		size := 0
		for i := range acts {
			size += service.ActionBodySize(&acts[i])
		}
		if len(cur) > 0 && (len(cur)+len(acts) > service.MaxTransactionActions ||
			service.TransactionEnvelopeSize+curSize+size > service.MaxTransactionWireBytes) {
			txs = append(txs, cur)
			cur, curSize = nil, 0
		}
		cur = append(cur, acts...)
		curSize += size
	}
	var written, skipped, replaced int64
	for _, u := range pack {
		acts := make([]service.Action, 0, len(u.rows))
		for _, r := range u.rows {
			acts = append(acts, service.Action{Op: service.OpUpsertReplace, Row: r})
		}
		if _, ok := existing[u.rk]; ok {
			if rs.existing == Skip {
				skipped++
				continue
			}
			replaced++
			keep := map[string]bool{}
			for _, r := range u.rows {
				keep[r.RowKey] = true
			}
			var dels []service.Action
			for rk, r := range existing {
				if _, ok := largevalue.BelongsTo(&r, u.rk); ok && !keep[rk] {
					dels = append(dels, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: u.pk, RowKey: rk}, IfMatch: service.ETagAny})
				}
			}
			if len(acts)+len(dels) <= service.MaxTransactionActions {
				acts = append(acts, dels...)
			} else {
				// The stale rows are leftovers the new main row does not declare: they may
				// follow in a transaction of their own.
				add(acts)
				acts = dels
			}
		}
		written++
		add(acts)
	}
	if len(cur) > 0 {
		txs = append(txs, cur)
	}
	for _, acts := range txs {
		err := rs.r.do(ctx, "transaction", func() error {
			_, err := rs.tbl.Transact(ctx, rs.table, acts)
			return err
		})
		if err != nil {
			return fmt.Errorf("restore: writing entities of partition %q from row %q to table %s: %w", pack[0].pk, acts[0].Row.RowKey, rs.table, err)
		}
	}
	rs.mu.Lock()
	rs.written += written
	rs.skipped += skipped
	rs.replaced += replaced
	rs.mu.Unlock()
	return nil
}

// existingRows returns the destination's rows (keys and layout cells only) from the first
// queued entity's key to the last one's continuation rows.
func (rs *restorer) existingRows(ctx context.Context, pack []unit) (map[string]service.Row, error) {
	first, last := pack[0].rk, largevalue.ContinuationKey(pack[len(pack)-1].rk, 9999)
	q := service.Query{
		Filter: partitionFilter(pack[0].pk) + " and RowKey ge " + service.QuoteString(first) + " and RowKey le " + service.QuoteString(last),
		Select: []string{largevalue.OfColumn, largevalue.PartsColumn},
		Top:    pageSize,
	}
	out := map[string]service.Row{}
	for {
		var page service.Page
		err := rs.r.do(ctx, "query", func() (err error) {
			page, err = rs.tbl.Query(ctx, rs.table, q)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("restore: reading table %s: %w", rs.table, err)
		}
		for _, r := range page.Rows {
			out[r.RowKey] = r
		}
		if page.Next == nil {
			return out, nil
		}
		q.Continuation = page.Next
	}
}
