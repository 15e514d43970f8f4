// Writes of split-aware entities: the actions of each entity, sent in one transaction,
// retried when another writer changed the entity since it was read.

package engine

import (
	"cmp"
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

// WriteMode is what a split-aware write of one entity means.
type WriteMode uint8

const (
	ModeCreate  WriteMode = iota // insert; an existing row is ErrDuplicateKey
	ModeUpsert                   // insert or replace whatever is stored
	ModeReplace                  // replace whatever is stored; a missing row is ErrNotFound
	ModeStrict                   // replace the version etag names
)

// ActionRef says which entity's which row an action of a transaction writes.
type ActionRef struct {
	Unit int
	Key  string
	Main bool
}

// UnitActions returns the actions that write p's layout over the rows st describes.
func (s *Table) UnitActions(p *Write, mode WriteMode, etag string, st *Stored) []service.Action {
	rows := p.Layout.Rows
	acts := make([]service.Action, 0, len(rows)+max(st.Parts-len(rows), 0)+len(st.Leftovers))
	main := service.Action{Op: service.OpInsert, Row: rows[0]}
	switch {
	case mode == ModeStrict:
		main = service.Action{Op: service.OpReplace, Row: rows[0], IfMatch: etag}
	case st.Found:
		main = service.Action{Op: service.OpReplace, Row: rows[0], IfMatch: st.ETag}
	}
	acts = append(acts, main)
	used := map[string]bool{}
	for i := 1; i < len(rows); i++ {
		r := rows[i]
		switch tag, left := st.Leftovers[r.RowKey]; {
		case left:
			acts = append(acts, service.Action{Op: service.OpReplace, Row: r, IfMatch: tag})
			used[r.RowKey] = true
		case st.Found && i < st.Parts:
			acts = append(acts, service.Action{Op: service.OpUpsertReplace, Row: r})
		default:
			acts = append(acts, service.Action{Op: service.OpInsert, Row: r})
		}
	}
	if st.Found {
		for i := len(rows); i < st.Parts; i++ {
			k := largevalue.ContinuationKey(p.RK, i)
			if !st.Gone[k] && !used[k] {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: p.PK, RowKey: k}, IfMatch: service.ETagAny})
				used[k] = true
			}
		}
	}
	for k, tag := range st.Leftovers {
		if !used[k] {
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: p.PK, RowKey: k}, IfMatch: tag})
		}
	}
	acts = append(acts, IndexActions(p, st)...)
	if s.Feed != nil {
		acts = append(acts, s.FeedRecord(p.PK, p.RK, FeedKind(mode), st, &acts[0]))
	}
	return acts
}

// A SplitUnit is one entity of a split-aware write.
type SplitUnit struct {
	P    *Write
	Mode WriteMode
	ETag string // modeStrict's version
	St   Stored
	Read bool // st is current for this attempt
	Fs   *FileSources
}

// LostRace is the error of a write that kept losing its condition.
func (s *Table) LostRace(op, pk, rk string, last error) error {
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Err: last,
		Message: fmt.Sprintf("other writers changed the row during each of %d attempts; retry, or serialize the writes of this row", SplitAttempts)}
}

// LostAttempt logs, at Debug, an attempt of a split-aware write or read that another writer
// made it repeat (the verbs' own lost attempts are logged by verbSpan.Event, in the same
// style). The keys are logged only when the account records keys; err is logged as its kind.
func (s *Table) LostAttempt(ctx context.Context, op, pk, rk string, attempt int, reason string, err error) {
	l := s.Acct.Logger()
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	args := []any{"op", op, "table", s.Name}
	if s.Acct.Cfg.RecordKeys {
		args = append(args, "partition", pk, "row", rk)
	}
	args = append(args, "attempt", attempt, "attempts", SplitAttempts, "reason", reason, "error", callerr.KindName(err))
	msg := "unified tables: a split-aware call lost its race; retrying"
	if attempt >= SplitAttempts {
		msg = "unified tables: a split-aware call lost its race on its last attempt; giving up"
	}
	l.Debug(msg, args...)
}

// WriteLarge writes one split-aware entity (see WriteUnits) and returns the version written.
// The blobs the write released are deleted once it committed.
func (s *Table) WriteLarge(ctx context.Context, op string, p *Write, mode WriteMode, etag string) (service.Written, error) {
	fs := &FileSources{}
	defer fs.Release()
	if err := s.ResolveFiles(ctx, op, p, fs); err != nil {
		return service.Written{}, err
	}
	u := &SplitUnit{P: p, Mode: mode, ETag: etag, Fs: fs}
	w, err := s.WriteUnits(ctx, op, []*SplitUnit{u})
	if err != nil {
		return service.Written{}, err
	}
	if u.St.Found {
		s.Cleanup(ctx, w.Timestamp, s.Released(p.PK, p.RK, u.St.Refs, p.Layout.Blobs))
	}
	return w, nil
}

// WriteUnits writes entities of one partition in one transaction (or one action, when that
// is all they need), reading and retrying as the modes require. It returns the version of
// the first unit's main row, as the write's response reports it (zero when it does not).
func (s *Table) WriteUnits(ctx context.Context, op string, units []*SplitUnit) (service.Written, error) {
	prot := s.ProtectedFields()
	for _, u := range units {
		if err := s.MarkExpiry(ctx, op, u.P); err != nil {
			return service.Written{}, err
		}
	}
	var lastErr error
	for attempt := 1; attempt <= SplitAttempts; attempt++ {
		if err := SplitRetry.Wait(ctx, attempt); err != nil {
			return service.Written{}, err
		}
		var acts []service.Action
		var refs []ActionRef
		for ui, u := range units {
			if u.Mode == ModeStrict && !u.Read && !s.Split && s.Expiry == nil && s.Feed == nil && len(prot) == 0 {
				// An indexed entity at a version this store read or wrote: its index keys
				// are known, and the write is conditional on that version anyway. (A row
				// that expires is read: the version may have expired since.)
				if keys, ok := s.Seen.Known(u.P.PK, u.P.RK, u.ETag); ok {
					u.St, u.Read = Stored{Found: true, ETag: u.ETag, Parts: 1, Ix: keys}, true
				}
			}
			if u.Mode != ModeCreate && !u.Read {
				var err error
				var full service.Row
				if len(prot) > 0 {
					full, u.St, err = s.ReadFullState(ctx, u.P.PK, u.P.RK)
				} else {
					u.St, err = s.ReadState(ctx, u.P.PK, u.P.RK)
				}
				if err != nil {
					if errors.Is(err, abstractions.ErrIntegrity) {
						return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.Name,
							PartitionKey: u.P.PK, RowKey: u.P.RK, Err: err,
							Message: "the stored row's part count cannot be read, so the write cannot tell which continuation rows it replaces; delete the entity and create it again"}
					}
					return service.Written{}, s.Translate(op, u.P.PK, u.P.RK, err)
				}
				u.Read = true
				switch {
				case !u.St.Found && (u.Mode == ModeReplace || u.Mode == ModeStrict):
					return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.Name,
						PartitionKey: u.P.PK, RowKey: u.P.RK, Message: "no row has this key; Create or Upsert it"}
				case u.St.Expired && (u.Mode == ModeReplace || u.Mode == ModeStrict):
					return service.Written{}, s.expiredError(op, u.P.PK, u.P.RK)
				case u.Mode == ModeStrict && u.St.ETag != u.ETag:
					return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Name,
						PartitionKey: u.P.PK, RowKey: u.P.RK,
						Message: "the row changed since the version this write was based on; read it again and retry (Mutate does that for you)"}
				}
				if len(prot) > 0 && u.St.Found {
					if err := s.CheckProtected(ctx, op, u.P, &full, prot); err != nil {
						return service.Written{}, err
					}
				}
			}
			if err := s.UploadBlobs(ctx, op, u.P, u.Fs); err != nil {
				return service.Written{}, err
			}
			ua := s.UnitActions(u.P, u.Mode, u.ETag, &u.St)
			if err := u.P.Layout.Fit(ua); err != nil {
				return service.Written{}, RowError(op, s.Name, u.P.PK, u.P.RK, "the entity cannot be stored; nothing was stored", err)
			}
			if err := s.FeedFit(op, u.P.PK, u.P.RK, ua); err != nil {
				return service.Written{}, err
			}
			for _, a := range ua {
				refs = append(refs, ActionRef{Unit: ui, Key: a.Row.RowKey, Main: a.Row.RowKey == u.P.RK})
			}
			acts = append(acts, ua...)
		}
		if err := s.MarkFeed(ctx, op, units[0].P.PK); err != nil {
			return service.Written{}, err
		}
		keys := make([][2]string, 0, len(units))
		for _, u := range units {
			keys = append(keys, [2]string{u.P.PK, u.P.RK})
		}
		var w service.Written
		var ws []service.Written
		var err error
		if len(acts) == 1 {
			u := units[0]
			tracked := s.WriteKeys(keys...)
			s.BeginWrite(tracked)
			w, err = s.Acct.Tables.Write(ctx, s.Name, acts[0])
			s.EndWrite(tracked, err, &u.P.Logical, w)
		} else {
			// The entity is not cached: the cache keeps what one row's write reports.
			tracked := s.WriteKeys(keys...)
			s.BeginWrite(tracked)
			ws, err = s.Acct.Tables.Transact(ctx, s.Name, acts)
			if err == nil && len(ws) == len(acts) {
				w = ws[0] // the first unit's main row
			}
			s.EndWrite(tracked, err, nil, service.Written{})
		}
		if err == nil {
			for _, u := range units {
				s.ReleasedBlobs(op, u.P.PK, u.P.RK, u.St.Blobs)
			}
			if s.Seen != nil {
				s.rememberWritten(units, refs, acts, ws, w)
			}
			return w, nil
		}
		idx := 0
		var te *service.TransactionError
		if errors.As(err, &te) && te.Index >= 0 && te.Index < len(acts) {
			idx = te.Index
		} else if len(acts) > 1 {
			return service.Written{}, s.TranslateTx(op, acts, err)
		}
		ref, a := refs[idx], acts[idx]
		u := units[ref.Unit]
		lastErr = s.Translate(op, u.P.PK, a.Row.RowKey, err)
		switch {
		case ref.Main && u.Mode == ModeCreate && abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists"):
			if s.Expiry == nil {
				return service.Written{}, s.Translate(op, u.P.PK, u.P.RK, err)
			}
			// The row there may have expired: the create then replaces it on condition
			// of the version read (createOver).
			if over, rerr := s.createOver(ctx, u); rerr != nil || !over {
				return service.Written{}, cmp.Or(rerr, s.Translate(op, u.P.PK, u.P.RK, err))
			}
			s.LostAttempt(ctx, op, u.P.PK, u.P.RK, attempt, "the row there expired; replacing it", lastErr)
		case ref.Main && u.Mode == ModeStrict:
			return service.Written{}, s.Translate(op, u.P.PK, u.P.RK, err)
		case ref.Main && (abstractions.HasStatus(err, http.StatusPreconditionFailed, "") ||
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") ||
			abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists")):
			// Another writer changed the row since it was read: read it again. (A create
			// over an expired row inserts again: the row it would replace changed.)
			u.Read = false
			if u.Mode == ModeCreate {
				u.St = Stored{}
			}
			s.LostAttempt(ctx, op, u.P.PK, u.P.RK, attempt, "the row changed since it was read", lastErr)
		case !ref.Main && a.Op == service.OpDelete && a.IfMatch == service.ETagAny &&
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound"):
			// A stale continuation row is gone already.
			if u.St.Gone == nil {
				u.St.Gone = map[string]bool{}
			}
			u.St.Gone[a.Row.RowKey] = true
			attempt--
		case !ref.Main && (a.Op == service.OpInsert && abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists") ||
			a.Op == service.OpReplace || a.Op == service.OpDelete):
			// A continuation key is taken, or a leftover changed: look at the entity's keys.
			own, foreign, lerr := s.ContinuationRows(ctx, u.P.PK, u.P.RK, 0, ContSelect)
			if lerr != nil {
				return service.Written{}, s.Translate(op, u.P.PK, u.P.RK, lerr)
			}
			needed := map[string]bool{}
			for _, r := range u.P.Layout.Rows[1:] {
				needed[r.RowKey] = true
			}
			for _, r := range foreign {
				if needed[r.RowKey] {
					return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrInvalidKey, Op: op, Table: s.Name,
						PartitionKey: u.P.PK, RowKey: u.P.RK,
						Message: fmt.Sprintf("the entity needs the continuation key %q, which a row that is not one of its continuation rows holds; "+
							"nothing was stored: remove that row, or store the entity under another key", r.RowKey)}
				}
			}
			u.St.Leftovers = map[string]string{}
			for _, r := range own {
				if i, _ := largevalue.BelongsTo(&r, u.P.RK); !u.St.Found || i >= u.St.Parts {
					u.St.Leftovers[r.RowKey] = r.ETag
				}
			}
			if u.Mode != ModeCreate {
				u.Read = false
			}
			s.LostAttempt(ctx, op, u.P.PK, u.P.RK, attempt, "a continuation key was taken or a leftover continuation row changed", lastErr)
		default:
			return service.Written{}, lastErr
		}
	}
	u := units[0]
	return service.Written{}, s.LostRace(op, u.P.PK, u.P.RK, lastErr)
}

// ReleasedBlobs logs the blob references (of the columns blobs) that a committed write or
// delete of the row pk, rk replaced on an account without blob offload: nothing here may
// delete their blobs (the account has no offload container), so they are left to an orphan
// sweep by an account that has. With offload configured, the cleanup after the commit and
// the sweeps take care of them, and nothing is logged.
func (s *Table) ReleasedBlobs(op, pk, rk string, blobs []string) {
	if len(blobs) == 0 || s.Acct.Off != nil {
		return
	}
	args := []any{"op", op, "table", s.Name, "columns", blobs}
	if s.Acct.Cfg.RecordKeys {
		args = append(args, "partition", pk, "row", rk)
	}
	s.Acct.Logger().Warn("unified tables: the write replaced values held in blobs, which an account without blob offload does not delete; "+
		"an orphan sweep from an account with blob offload configured (or by the library that offloaded them) removes them", args...)
}

// rememberWritten records the index keys of the versions a committed write of indexed
// entities stored: w for a write of one action, else each main row's entry of ws.
func (s *Table) rememberWritten(units []*SplitUnit, refs []ActionRef, acts []service.Action, ws []service.Written, w service.Written) {
	if len(acts) == 1 {
		u := units[0]
		s.Seen.Remember(u.P.PK, u.P.RK, w.ETag, u.P.Ix)
		return
	}
	if len(ws) != len(acts) {
		return
	}
	for i, ref := range refs {
		if ref.Main && acts[i].Op != service.OpDelete {
			u := units[ref.Unit]
			s.Seen.Remember(u.P.PK, u.P.RK, ws[i].ETag, u.P.Ix)
		}
	}
}
