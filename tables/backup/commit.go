package backup

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/attempt"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/echo"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/odata"
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
			service.TransactionEnvelopeSize+curSize+size > rs.maxWire) {
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
		if err := rs.transact(ctx, acts); err != nil {
			return err
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
		Filter: odata.Partition(pack[0].pk) + " and RowKey ge " + service.QuoteString(first) + " and RowKey le " + service.QuoteString(last),
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
			return nil, serviceError("restore: reading", rs.table, pack[0].pk, callerr.Read, err)
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

// transact sends one transaction and settles a failure that leaves its outcome unknown.
//
// A transaction whose answer is lost (a connection reset while the response was on its
// way, which the Azure SDK does not resend for a batch; a 5xx answer left after the SDK's
// retries) may or may not have been applied, and a resend of one that was applied is
// refused when it deletes a row (404: the first try deleted it). As the stores do for their
// writes (package tables/internal/echo), the rows are then read back: a table that holds every row as
// the transaction writes it (and none it deletes) has it applied, whichever try did it, and
// the transaction succeeds; one that does not has nothing of it (a transaction is atomic),
// so it is sent again after a pause. Only when the rows cannot be read either, until the
// attempts run out or ctx ends, does the failure match ErrUnavailable and say that the
// transaction may or may not have been applied.
func (rs *restorer) transact(ctx context.Context, acts []service.Action) error {
	pk := acts[0].Row.PartitionKey
	fail := func(err error, msg string) error {
		e := serviceError("restore: writing", rs.table, pk, callerr.Write, err)
		var se *abstractions.StoreError
		if msg != "" && errors.As(e, &se) && se.Kind != nil {
			se.Message = msg
		}
		return e
	}
	unknown := false // whether a try may have been applied, unsettled
	for try := 1; ; try++ {
		tctx, tries := attempt.WithAttempts(ctx)
		_, err := rs.tbl.Transact(tctx, rs.table, acts)
		if err == nil {
			return nil
		}
		lost := unreachable(err) || serverFailed(err)
		echo := (try > 1 || tries.Retried()) && echoRefusal(err, acts)
		if !lost && !echo && !transient(err) {
			return fail(err, "")
		}
		last := try == maxAttempts || ctx.Err() != nil
		unknown = unknown || lost
		if (lost || echo || last) && ctx.Err() == nil {
			held, rerr := rs.holds(ctx, acts)
			switch {
			case rerr == nil && held:
				rs.r.log.Debug("backup: a restore transaction failed without a usable answer; its rows read back as written, so it was applied",
					"table", rs.table, "partition", pk, "from", acts[0].Row.RowKey, "error", err)
				return nil
			case rerr == nil && echo && !lost:
				return fail(err, "") // a real refusal: the rows do not hold what an applied try wrote
			case rerr == nil:
				unknown = false
			}
		}
		if last {
			if unknown {
				return fail(err, "the service did not answer the transaction and its rows could not be read back: "+
					"it may or may not have been applied; restore again with Existing Replace (--existing replace) once the service answers")
			}
			return fail(err, fmt.Sprintf("the service did not take the transaction in %d attempts, and it was not applied; try again later", try))
		}
		if werr := rs.r.wait(ctx, "transaction", try, err); werr != nil {
			if unknown {
				return fail(werr, "")
			}
			return fail(werr, "the restore ended while it waited to send a transaction again, which was not applied")
		}
	}
}

// serverFailed reports a 5xx answer other than 503 (which the service sends before it
// does anything): the request may have been applied.
func serverFailed(err error) bool {
	var se *abstractions.StatusError
	return errors.As(err, &se) && se.StatusCode >= 500 && se.StatusCode != http.StatusServiceUnavailable && !isTxError(err)
}

func isTxError(err error) bool {
	var te *service.TransactionError
	return errors.As(err, &te)
}

// echoRefusal reports the refusal a resend of an applied transaction meets: 404
// ResourceNotFound for a delete the first try performed. (Every other action of a restore
// is an upsert, which a resend repeats to the same effect.)
func echoRefusal(err error, acts []service.Action) bool {
	var te *service.TransactionError
	if !errors.As(err, &te) || te.Index < 0 || te.Index >= len(acts) {
		return false
	}
	return acts[te.Index].Op == service.OpDelete && abstractions.HasStatus(te.Err, http.StatusNotFound, "ResourceNotFound")
}

// holds reads back the rows of a transaction and reports whether the table holds each row
// as an upsert wrote it (every cell, no other) and none of the rows it deletes.
func (rs *restorer) holds(ctx context.Context, acts []service.Action) (bool, error) {
	pk := acts[0].Row.PartitionKey
	lo, hi := acts[0].Row.RowKey, acts[0].Row.RowKey
	want := make(map[string]*service.Action, len(acts))
	for i := range acts {
		rk := acts[i].Row.RowKey
		if service.CompareUTF16(rk, lo) < 0 {
			lo = rk
		}
		if service.CompareUTF16(rk, hi) > 0 {
			hi = rk
		}
		want[rk] = &acts[i]
	}
	q := service.Query{
		Filter: odata.Partition(pk) + " and RowKey ge " + service.QuoteString(lo) + " and RowKey le " + service.QuoteString(hi),
		Top:    pageSize,
	}
	found := 0
	for {
		// One try: the caller's loop is the one that waits and tries again.
		page, err := rs.tbl.Query(ctx, rs.table, q)
		if err != nil {
			return false, err
		}
		for i := range page.Rows {
			a, ok := want[page.Rows[i].RowKey]
			if !ok {
				continue
			}
			if a.Op == service.OpDelete || !echo.Holds(&page.Rows[i], a.Row.Properties, true) {
				return false, nil
			}
			found++
		}
		if page.Next == nil {
			break
		}
		q.Continuation = page.Next
	}
	upserts := 0
	for i := range acts {
		if acts[i].Op != service.OpDelete {
			upserts++
		}
	}
	return found == upserts, nil
}
