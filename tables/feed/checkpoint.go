package feed

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/service"
)

// After delivery: what a relay writes once a handler returned — the checkpoint of delivered
// records, the count of a failed delivery or its move to the dead letters, and the clearing
// of a drained partition's mark.

// failed counts a failed delivery of rec on the record, or, at the last one allowed, moves
// it to the dead letters. It reports whether it did.
func (r *Relay) failed(ctx context.Context, rec *service.Row, herr error) (bool, error) {
	n := record(rec).Failures + 1
	pk := rec.PartitionKey
	if n < r.o.MaxFailures {
		_, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpMerge, IfMatch: rec.ETag,
			Row: service.Row{PartitionKey: pk, RowKey: rec.RowKey, Properties: []service.Property{{Name: feedrow.TriesColumn, Value: service.Int64(int64(n))}}}})
		if err != nil && !gone(err) {
			return false, r.core.Translate("feed relay", pk, rec.RowKey, err)
		}
		return false, nil
	}
	dead := rec.Clone()
	dead.RowKey = feedrow.DeadKey(rec.RowKey)
	props := dead.Properties[:0:0]
	for _, p := range rec.Properties {
		if p.Name != feedrow.TriesColumn && p.Name != feedrow.ErrorColumn {
			props = append(props, p)
		}
	}
	msg := herr.Error()
	if len(msg) > 1000 {
		msg = msg[:1000]
	}
	// Listed first, so that a dead letter is never without its listing.
	if _, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpUpsertMerge, Row: service.Row{PartitionKey: feedrow.DeadPartition, RowKey: pk,
		Properties: []service.Property{{Name: feedrow.MarkColumn, Value: service.DateTime(r.core.Acct.Now())}}}}); err != nil {
		return false, r.core.Translate("feed relay", feedrow.DeadPartition, pk, err)
	}
	dead.Properties = append(props, service.Property{Name: feedrow.TriesColumn, Value: service.Int64(int64(n))},
		service.Property{Name: feedrow.ErrorColumn, Value: service.String(msg)})
	_, err := r.core.Acct.Tables.Transact(ctx, r.core.Name, []service.Action{
		{Op: service.OpUpsertReplace, Row: dead},
		{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rec.RowKey}, IfMatch: rec.ETag},
	})
	if err != nil && !gone(err) {
		return false, r.core.Translate("feed relay", pk, rec.RowKey, err)
	}
	r.core.Acct.Logger().Warn("unified tables: a feed record kept failing and was moved to the dead letters", "table", r.core.Name, "failures", n, "error", msg)
	return true, nil
}

// gone reports a condition that another relay's work explains: the row is gone or changed.
func gone(err error) bool {
	return abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") ||
		abstractions.HasStatus(err, http.StatusPreconditionFailed, "")
}

// checkpoint deletes (or, with Keep, moves to the delivered rows) the delivered records,
// in transactions planned within the account's limits (Account.TxBudget: 100 actions, and
// 2 MB of body on Cosmos DB for Table): a record's move, its copy and its delete, is never
// divided between two. A record another relay removed already is skipped.
func (r *Relay) checkpoint(ctx context.Context, pk string, done []service.Row) error {
	if r.o.Keep > 0 {
		if _, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpUpsertMerge,
			Row: service.Row{PartitionKey: feedrow.KeptPartition, RowKey: pk, Properties: []service.Property{{Name: feedrow.MarkColumn, Value: service.DateTime(r.core.Acct.Now())}}}}); err != nil {
			return r.core.Translate("feed relay", feedrow.KeptPartition, pk, err)
		}
	}
	for len(done) > 0 {
		budget := r.core.Acct.TxBudget()
		var acts []service.Action
		n := 0
		for ; n < len(done); n++ {
			rec := &done[n]
			unit := make([]service.Action, 0, 2)
			if r.o.Keep > 0 {
				kept := rec.Clone()
				kept.RowKey = feedrow.DeliveredKey(rec.RowKey)
				unit = append(unit, service.Action{Op: service.OpUpsertReplace, Row: kept})
			}
			unit = append(unit, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rec.RowKey}, IfMatch: service.ETagAny})
			// A move that does not fit with the others starts the next transaction; one
			// that fits none alone (a record is at most a row, so it does) goes alone.
			if budget.Add(nil, unit) != "" {
				if n == 0 {
					acts, n = unit, 1
				}
				break
			}
			acts = append(acts, unit...)
		}
		if err := r.send(ctx, acts); err != nil {
			return r.core.TranslateTx("feed relay", acts, err)
		}
		done = done[n:]
	}
	return nil
}

// send sends actions as one transaction; when a delete meets a row gone already (another
// relay's, or an earlier try whose answer was lost), it sends the rest again without it.
func (r *Relay) send(ctx context.Context, acts []service.Action) error {
	for len(acts) > 0 {
		var err error
		if len(acts) == 1 {
			_, err = r.core.Acct.Tables.Write(ctx, r.core.Name, acts[0])
		} else {
			_, err = r.core.Acct.Tables.Transact(ctx, r.core.Name, acts)
		}
		if err == nil || !abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			return err
		}
		idx := 0
		var te *service.TransactionError
		if errors.As(err, &te) && te.Index >= 0 && te.Index < len(acts) {
			idx = te.Index
		}
		if acts[idx].Op != service.OpDelete {
			return err
		}
		acts = append(acts[:idx:idx], acts[idx+1:]...)
		if r.o.Keep > 0 && idx > 0 && acts[idx-1].Op == service.OpUpsertReplace {
			acts = append(acts[:idx-1:idx-1], acts[idx:]...) // its copy: another relay moved it
		}
	}
	return nil
}

// clear removes the mark m of a drained partition, on condition of the version read and
// only once this relay has seen that version stand for the hold (so a writer that marked
// has sent its transaction), then looks again: a record that arrived between the last read
// and the clearing marks the partition again.
func (r *Relay) clear(ctx context.Context, m service.Row) (bool, error) {
	pk := m.RowKey
	if r.unchangedFor(feedrow.RegistryPartition, pk, m.ETag) < r.hold() {
		return false, nil
	}
	r.forget(feedrow.RegistryPartition, pk)
	_, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpDelete,
		Row: service.Row{PartitionKey: feedrow.RegistryPartition, RowKey: pk}, IfMatch: m.ETag})
	if gone(err) {
		return false, nil // a writer marked it again: the next pass comes back
	}
	if err != nil {
		return false, r.core.Translate("feed relay", feedrow.RegistryPartition, pk, err)
	}
	r.core.Feed.ForgetMark(pk)
	recs, err := r.pending(ctx, pk, 1)
	if err != nil {
		return true, err
	}
	if len(recs) > 0 {
		if _, err := r.core.Acct.Tables.Write(ctx, r.core.Name, service.Action{Op: service.OpUpsertMerge, Row: feedrow.Mark(pk, r.core.Acct.Now())}); err != nil {
			return true, r.core.Translate("feed relay", feedrow.RegistryPartition, pk, err)
		}
		return false, nil
	}
	return true, nil
}

func (r *Relay) hold() time.Duration {
	if r.core.Feed.Hold > 0 {
		return r.core.Feed.Hold
	}
	return engine.DefaultHold
}
