// Writes of split-aware entities: the actions of each entity, sent in one transaction,
// retried when another writer changed the entity since it was read.

package tables

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/unified-data/gotables/tables/internal/callerr"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// writeMode is what a split-aware write of one entity means.
type writeMode uint8

const (
	modeCreate  writeMode = iota // insert; an existing row is ErrDuplicateKey
	modeUpsert                   // insert or replace whatever is stored
	modeReplace                  // replace whatever is stored; a missing row is ErrNotFound
	modeStrict                   // replace the version etag names
)

// actionRef says which entity's which row an action of a transaction writes.
type actionRef struct {
	unit int
	key  string
	main bool
}

// unitActions returns the actions that write p's layout over the rows st describes.
func (s *core) unitActions(p *write, mode writeMode, etag string, st *stored) []service.Action {
	rows := p.layout.Rows
	acts := make([]service.Action, 0, len(rows)+max(st.parts-len(rows), 0)+len(st.leftovers))
	main := service.Action{Op: service.OpInsert, Row: rows[0]}
	switch {
	case mode == modeStrict:
		main = service.Action{Op: service.OpReplace, Row: rows[0], IfMatch: etag}
	case st.found:
		main = service.Action{Op: service.OpReplace, Row: rows[0], IfMatch: st.etag}
	}
	acts = append(acts, main)
	used := map[string]bool{}
	for i := 1; i < len(rows); i++ {
		r := rows[i]
		switch tag, left := st.leftovers[r.RowKey]; {
		case left:
			acts = append(acts, service.Action{Op: service.OpReplace, Row: r, IfMatch: tag})
			used[r.RowKey] = true
		case st.found && i < st.parts:
			acts = append(acts, service.Action{Op: service.OpUpsertReplace, Row: r})
		default:
			acts = append(acts, service.Action{Op: service.OpInsert, Row: r})
		}
	}
	if st.found {
		for i := len(rows); i < st.parts; i++ {
			k := largevalue.ContinuationKey(p.rk, i)
			if !st.gone[k] && !used[k] {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: p.pk, RowKey: k}, IfMatch: service.ETagAny})
				used[k] = true
			}
		}
	}
	for k, tag := range st.leftovers {
		if !used[k] {
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: p.pk, RowKey: k}, IfMatch: tag})
		}
	}
	return acts
}

// A splitUnit is one entity of a split-aware write.
type splitUnit struct {
	p    *write
	mode writeMode
	etag string // modeStrict's version
	st   stored
	read bool // st is current for this attempt
	fs   *fileSources
}

// lostRace is the error of a write that kept losing its condition.
func (s *core) lostRace(op, pk, rk string, last error) error {
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.table, PartitionKey: pk, RowKey: rk, Err: last,
		Message: fmt.Sprintf("other writers changed the row during each of %d attempts; retry, or serialize the writes of this row", splitAttempts)}
}

// lostAttempt logs, at Debug, an attempt of a split-aware write or read that another writer
// made it repeat (the verbs' own lost attempts are logged by verbSpan.Event, in the same
// style). The keys are logged only when the account records keys; err is logged as its kind.
func (s *core) lostAttempt(ctx context.Context, op, pk, rk string, attempt int, reason string, err error) {
	l := s.acct.logger()
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	args := []any{"op", op, "table", s.table}
	if s.acct.cfg.recordKeys {
		args = append(args, "partition", pk, "row", rk)
	}
	args = append(args, "attempt", attempt, "attempts", splitAttempts, "reason", reason, "error", callerr.KindName(err))
	msg := "unified tables: a split-aware call lost its race; retrying"
	if attempt >= splitAttempts {
		msg = "unified tables: a split-aware call lost its race on its last attempt; giving up"
	}
	l.Debug(msg, args...)
}

// writeLarge writes one split-aware entity (see writeUnits) and returns the version written.
// The blobs the write released are deleted once it committed.
func (s *core) writeLarge(ctx context.Context, op string, p *write, mode writeMode, etag string) (service.Written, error) {
	fs := &fileSources{}
	defer fs.release()
	if err := s.resolveFiles(ctx, op, p, fs); err != nil {
		return service.Written{}, err
	}
	u := &splitUnit{p: p, mode: mode, etag: etag, fs: fs}
	w, err := s.writeUnits(ctx, op, []*splitUnit{u})
	if err != nil {
		return service.Written{}, err
	}
	if u.st.found {
		s.cleanup(ctx, w.Timestamp, s.released(p.pk, p.rk, u.st.refs, p.layout.Blobs))
	}
	return w, nil
}

// writeUnits writes entities of one partition in one transaction (or one action, when that
// is all they need), reading and retrying as the modes require. It returns the version of
// the first unit's main row, as the write's response reports it (zero when it does not).
func (s *core) writeUnits(ctx context.Context, op string, units []*splitUnit) (service.Written, error) {
	prot := s.protectedFields()
	var lastErr error
	for attempt := 1; attempt <= splitAttempts; attempt++ {
		if err := splitRetry.Wait(ctx, attempt); err != nil {
			return service.Written{}, err
		}
		var acts []service.Action
		var refs []actionRef
		for ui, u := range units {
			if u.mode != modeCreate && !u.read {
				var err error
				var full service.Row
				if len(prot) > 0 && u.mode != modeStrict {
					full, u.st, err = s.readFullState(ctx, u.p.pk, u.p.rk)
				} else {
					u.st, err = s.readState(ctx, u.p.pk, u.p.rk)
				}
				if err != nil {
					if errors.Is(err, abstractions.ErrIntegrity) {
						return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.table,
							PartitionKey: u.p.pk, RowKey: u.p.rk, Err: err,
							Message: "the stored row's part count cannot be read, so the write cannot tell which continuation rows it replaces; delete the entity and create it again"}
					}
					return service.Written{}, s.translate(op, u.p.pk, u.p.rk, err)
				}
				u.read = true
				switch {
				case !u.st.found && (u.mode == modeReplace || u.mode == modeStrict):
					return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.table,
						PartitionKey: u.p.pk, RowKey: u.p.rk, Message: "no row has this key; Create or Upsert it"}
				case u.mode == modeStrict && u.st.etag != u.etag:
					return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.table,
						PartitionKey: u.p.pk, RowKey: u.p.rk,
						Message: "the row changed since the version this write was based on; read it again and retry (Mutate does that for you)"}
				}
				if len(prot) > 0 && u.st.found && u.mode != modeStrict {
					if err := s.checkProtected(ctx, op, u.p, &full, prot); err != nil {
						return service.Written{}, err
					}
				}
			}
			if err := s.uploadBlobs(ctx, op, u.p, u.fs); err != nil {
				return service.Written{}, err
			}
			ua := s.unitActions(u.p, u.mode, u.etag, &u.st)
			if err := u.p.layout.Fit(ua); err != nil {
				return service.Written{}, rowError(op, s.table, u.p.pk, u.p.rk, "the entity cannot be stored; nothing was stored", err)
			}
			for _, a := range ua {
				refs = append(refs, actionRef{unit: ui, key: a.Row.RowKey, main: a.Row.RowKey == u.p.rk})
			}
			acts = append(acts, ua...)
		}
		keys := make([][2]string, 0, len(units))
		for _, u := range units {
			keys = append(keys, [2]string{u.p.pk, u.p.rk})
		}
		var w service.Written
		var err error
		if len(acts) == 1 {
			u := units[0]
			tracked := s.writeKeys(keys...)
			s.beginWrite(tracked)
			w, err = s.acct.tables.Write(ctx, s.table, acts[0])
			s.endWrite(tracked, err, &u.p.logical, w)
		} else {
			// The entity is not cached: the cache keeps what one row's write reports.
			tracked := s.writeKeys(keys...)
			s.beginWrite(tracked)
			var ws []service.Written
			ws, err = s.acct.tables.Transact(ctx, s.table, acts)
			if err == nil && len(ws) == len(acts) {
				w = ws[0] // the first unit's main row
			}
			s.endWrite(tracked, err, nil, service.Written{})
		}
		if err == nil {
			for _, u := range units {
				s.releasedBlobs(op, u.p.pk, u.p.rk, u.st.blobs)
			}
			return w, nil
		}
		idx := 0
		var te *service.TransactionError
		if errors.As(err, &te) && te.Index >= 0 && te.Index < len(acts) {
			idx = te.Index
		} else if len(acts) > 1 {
			return service.Written{}, s.translateTx(op, acts, err)
		}
		ref, a := refs[idx], acts[idx]
		u := units[ref.unit]
		lastErr = s.translate(op, u.p.pk, a.Row.RowKey, err)
		switch {
		case ref.main && u.mode == modeCreate && abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists"):
			return service.Written{}, s.translate(op, u.p.pk, u.p.rk, err)
		case ref.main && u.mode == modeStrict:
			return service.Written{}, s.translate(op, u.p.pk, u.p.rk, err)
		case ref.main && (abstractions.HasStatus(err, http.StatusPreconditionFailed, "") ||
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") ||
			abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists")):
			// Another writer changed the row since it was read: read it again.
			u.read = false
			s.lostAttempt(ctx, op, u.p.pk, u.p.rk, attempt, "the row changed since it was read", lastErr)
		case !ref.main && a.Op == service.OpDelete && a.IfMatch == service.ETagAny &&
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound"):
			// A stale continuation row is gone already.
			if u.st.gone == nil {
				u.st.gone = map[string]bool{}
			}
			u.st.gone[a.Row.RowKey] = true
			attempt--
		case !ref.main && (a.Op == service.OpInsert && abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists") ||
			a.Op == service.OpReplace || a.Op == service.OpDelete):
			// A continuation key is taken, or a leftover changed: look at the entity's keys.
			own, foreign, lerr := s.continuationRows(ctx, u.p.pk, u.p.rk, 0, contSelect)
			if lerr != nil {
				return service.Written{}, s.translate(op, u.p.pk, u.p.rk, lerr)
			}
			needed := map[string]bool{}
			for _, r := range u.p.layout.Rows[1:] {
				needed[r.RowKey] = true
			}
			for _, r := range foreign {
				if needed[r.RowKey] {
					return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrInvalidKey, Op: op, Table: s.table,
						PartitionKey: u.p.pk, RowKey: u.p.rk,
						Message: fmt.Sprintf("the entity needs the continuation key %q, which a row that is not one of its continuation rows holds; "+
							"nothing was stored: remove that row, or store the entity under another key", r.RowKey)}
				}
			}
			u.st.leftovers = map[string]string{}
			for _, r := range own {
				if i, _ := largevalue.BelongsTo(&r, u.p.rk); !u.st.found || i >= u.st.parts {
					u.st.leftovers[r.RowKey] = r.ETag
				}
			}
			if u.mode != modeCreate {
				u.read = false
			}
			s.lostAttempt(ctx, op, u.p.pk, u.p.rk, attempt, "a continuation key was taken or a leftover continuation row changed", lastErr)
		default:
			return service.Written{}, lastErr
		}
	}
	u := units[0]
	return service.Written{}, s.lostRace(op, u.p.pk, u.p.rk, lastErr)
}

// releasedBlobs logs the blob references (of the columns blobs) that a committed write or
// delete of the row pk, rk replaced on an account without blob offload: nothing here may
// delete their blobs (the account has no offload container), so they are left to an orphan
// sweep by an account that has. With offload configured, the cleanup after the commit and
// the sweeps take care of them, and nothing is logged.
func (s *core) releasedBlobs(op, pk, rk string, blobs []string) {
	if len(blobs) == 0 || s.acct.off != nil {
		return
	}
	args := []any{"op", op, "table", s.table, "columns", blobs}
	if s.acct.cfg.recordKeys {
		args = append(args, "partition", pk, "row", rk)
	}
	s.acct.logger().Warn("unified tables: the write replaced values held in blobs, which an account without blob offload does not delete; "+
		"an orphan sweep from an account with blob offload configured (or by the library that offloaded them) removes them", args...)
}
