// Writes of stores with partition indexes in a transaction: each carries its index rows,
// which Commit adds once it knows the stored index keys.

package tables

import (
	"context"
	"errors"
	"slices"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/service"
)

// ixWrite is a write of an indexed store in a transaction: its main action is acts[at];
// Commit learns the stored index keys (the version the store saw for a Strict update or a
// create, else one read), makes the action conditional on that version and adds the index
// rows' actions (see resolveIndexed).
type ixWrite struct {
	at   int
	core *engine.Table
	w    *engine.Write // nil for a delete
	mode engine.WriteMode
	etag string // a Strict update's or a conditional delete's version
	del  bool
	// over is set when the last resolution of a create found an expired row and made the
	// write a replace of it, on condition of the version read.
	over bool
}

// maxOverAttempts bounds how often Commit puts a transaction together again when the
// expired row one of its creates replaces changed before the commit.
const maxOverAttempts = 3

// overChanged reports a failure of the transaction that blames a create over an expired
// row, whose row another writer (a sweep, another creator) deleted or replaced since it was
// read: nothing was written, and a fresh read decides again.
func (tx *Transaction) overChanged(err error) bool {
	var te *service.TransactionError
	if !errors.As(err, &te) || !(errors.Is(err, abstractions.ErrNotFound) || errors.Is(err, abstractions.ErrConcurrencyConflict)) {
		return false
	}
	for _, x := range tx.indexed {
		if x.over && x.at == te.Index {
			return true
		}
	}
	return false
}

// acceptIndexed adds the write of an indexed store (see ixWrite).
func (tx *Transaction) acceptIndexed(acct *engine.Account, table, op string, a service.Action, t *txTyped, x *ixWrite) {
	n := len(tx.acts)
	tx.accept(acct, table, op, a, t)
	if len(tx.acts) > n {
		x.at = n
		tx.indexed = append(tx.indexed, x)
	}
}

// publish adds an application event as a record of the feed of the store s (package
// tables/feed, Publish); Commit marks the partition first.
func (tx *Transaction) publish(s *engine.Table, typ string, data []byte) {
	if s.Feed == nil {
		tx.refuse(abstractions.ErrInvalidArgument, "", "the event's store has no change feed; enable one with feed.Enable")
		return
	}
	a, err := s.EventRecord(tx.pk, typ, data)
	if err != nil {
		tx.refused(err)
		return
	}
	n := len(tx.acts)
	tx.accept(s.Acct, s.Name, "publish", a, nil)
	if len(tx.acts) > n {
		tx.feeds(s)
	}
}

// feeds notes that the transaction carries a record of the store s's feed.
func (tx *Transaction) feeds(s *engine.Table) {
	if !slices.Contains(tx.fed, s) {
		tx.fed = append(tx.fed, s)
	}
}

// resolveIndexed completes the writes of indexed stores: each main action becomes
// conditional on the version whose index keys are known, and the index rows' actions are
// added. A row found missing or at another version than a condition names is refused here,
// as the service would refuse the transaction.
func (tx *Transaction) resolveIndexed(ctx context.Context) error {
	for _, x := range tx.indexed {
		a := &tx.acts[x.at]
		pk, rk := a.Row.PartitionKey, a.Row.RowKey
		st := engine.Stored{}
		x.over = false
		switch {
		case x.mode == engine.ModeCreate && x.core.Expiry == nil:
		case x.mode == engine.ModeCreate:
			// A create of an expiring type reads the row: an expired one is replaced on
			// condition of its version, with its index rows; a live one is left to the
			// service, which refuses the insert (ErrDuplicateKey).
			var err error
			if st, err = x.core.ReadState(ctx, pk, rk); err != nil {
				return x.core.Translate("transaction", pk, rk, err)
			}
			if !st.Found || !st.Expired {
				st = engine.Stored{}
			}
			x.over = st.Found
		case x.etag != "" && !x.del:
			if keys, ok := x.core.Seen.Known(pk, rk, x.etag); ok && x.core.Expiry == nil && x.core.Feed == nil {
				st = engine.Stored{Found: true, ETag: x.etag, Parts: 1, Ix: keys}
				break
			}
			fallthrough
		default:
			var err error
			if st, err = x.core.ReadState(ctx, pk, rk); err != nil {
				return x.core.Translate("transaction", pk, rk, err)
			}
			switch {
			case st.Expired && !x.del && x.mode != engine.ModeUpsert:
				return &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "transaction", Table: x.core.Name, PartitionKey: pk, RowKey: rk,
					Message: "no row has this key (the row there expired), so the write finds it missing; nothing was sent"}
			case !st.Found && (x.del || x.mode != engine.ModeUpsert):
				return &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "transaction", Table: x.core.Name, PartitionKey: pk, RowKey: rk,
					Message: "no row has this key, so the transaction would fail; nothing was sent"}
			case x.etag != "" && st.ETag != x.etag:
				return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: "transaction", Table: x.core.Name, PartitionKey: pk, RowKey: rk,
					Message: "the row changed since the version the write is based on, so the transaction would fail; read it again and retry; nothing was sent"}
			}
		}
		switch {
		case x.del:
			a.IfMatch = st.ETag
		case st.Found:
			a.Op, a.IfMatch = service.OpReplace, st.ETag
		default:
			a.Op, a.IfMatch = service.OpInsert, ""
		}
		w := x.w
		if w == nil {
			w = &engine.Write{PK: pk, RK: rk}
		} else if err := x.core.MarkExpiry(ctx, "transaction", w); err != nil {
			return err
		}
		for _, ia := range engine.IndexActions(w, &st) {
			tx.acts = append(tx.acts, ia)
			tx.typed = append(tx.typed, nil)
		}
		if x.core.Feed != nil {
			var main *service.Action
			kind := feedrow.Deleted
			if !x.del {
				main, kind = a, engine.FeedKind(x.mode)
			}
			if x.del && !st.Found {
				continue
			}
			rec := x.core.FeedRecord(pk, rk, kind, &st, main)
			if err := x.core.FeedFit("transaction", pk, rk, []service.Action{*a, rec}); err != nil {
				return err
			}
			tx.acts = append(tx.acts, rec)
			tx.typed = append(tx.typed, nil)
			tx.feeds(x.core)
		}
	}
	return nil
}
