package tables

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Large values.
//
// A split-aware type (codec.Plan.LargeValues) stores each entity as a main row and, when its
// split values need them, continuation rows (package largevalue has the layout). The store
// keeps an entity's rows consistent:
//
//   - Writes that may replace rows (Upsert, Update, Delete, UpsertBatch) read the main row
//     first (its part count and ETag) and write on condition of that version, the new rows
//     and the deletes of the stale continuation rows in one entity-group transaction. A
//     write that loses its condition to another writer reads again and retries: splitAttempts
//     in all, pausing as splitRetry says, then ErrConcurrencyConflict. A Strict update,
//     or a Delete with an ifMatch, that finds another version is a conflict at once.
//   - Create and CreateBatch read nothing first. A continuation key already held by a
//     leftover continuation row of the same entity (a row whose _SplitOf names it, left by
//     a writer that did not know continuation rows) is taken back in the same transaction,
//     with the entity's other leftovers deleted; a key held by any other row is refused.
//   - Reads fetch the main row, then its continuation rows, and verify every value. When a
//     value does not reassemble, the main row is read again: the same version means the
//     stored value is damaged (ErrIntegrity); another version means a writer replaced it
//     meanwhile, and the read starts again, splitAttempts in all, then ErrConcurrencyConflict
//     saying nothing is damaged. No read combines two versions.
//   - Rows carrying _SplitOf are continuation rows: reads and queries never return them (of
//     any type) and the split-aware type does not count them.
const splitAttempts = 5

// splitRetry paces the retries of split-aware writes and reads: 5 to 10 ms before the second
// attempt, doubling each time (at most 150 ms in all over five attempts).
var splitRetry = abstractions.RetryOptions{Backoff: 10_000_000}

// contSelect is the projection of a look at continuation keys.
var contSelect = []string{largevalue.OfColumn, largevalue.IndexColumn}

// Bounds of the projection of the read before a split-aware write: beyond them the read
// fetches the whole row, to stay within the 255 properties the service projects and the
// request-URL limit of the service and the emulator.
const (
	maxStateColumns   = 200  // large-value columns named
	maxStateSelectLen = 2000 // characters of the URL-encoded $select
)

// stateProjection returns the projection of the read before a split-aware write (see
// readState): the part count, the continuation marker and the blob reference cell of each
// large-value column and each file field, aliases included; or nil, the whole row, when
// that names more than maxStateColumns columns or is longer than maxStateSelectLen
// characters URL-encoded.
func stateProjection(cols []largevalue.Column, files []*codec.Field) []string {
	sel := []string{largevalue.PartsColumn, largevalue.OfColumn}
	for _, c := range cols {
		sel = append(sel, c.Name+largevalue.BlobSuffix)
	}
	for _, f := range files {
		for _, name := range fileColumns(f) {
			sel = append(sel, name+largevalue.BlobSuffix)
		}
	}
	if len(sel)-2 > maxStateColumns || len(url.QueryEscape(strings.Join(sel, ","))) > maxStateSelectLen {
		return nil
	}
	return sel
}

// largeColumns returns the large-value columns of a plan as a read reassembles them: each
// large field's column, then its aliases (files are not among them: see fileFields). With
// offloaded set (the account configures blob offload), the reader fetches values held in
// blobs itself (fetchBlobs); otherwise reassembling such a value fails.
func largeColumns(pl *codec.Plan, offloaded bool) []largevalue.Column {
	var out []largevalue.Column
	fields := pl.Fields()
	for i := range fields {
		if f := &fields[i]; f.Large && !f.File {
			out = appendColumns(out, f)
		}
	}
	for i := range out {
		out[i].ReadsBlob = offloaded
	}
	return out
}

// plainColumns returns the columns of a type that is not split-aware that may hold a value
// another type stored split (strings, bytes and JSON-stored values, with their aliases):
// such a reader reassembles the value when it is on the main row (largevalue.AssembleMain).
func plainColumns(pl *codec.Plan) []largevalue.Column {
	var out []largevalue.Column
	fields := pl.Fields()
	for i := range fields {
		f := &fields[i]
		if f.Role == codec.RoleColumn && (f.JSON || f.Kind == service.KindString || f.Kind == service.KindBinary) {
			out = appendColumns(out, f)
		}
	}
	return out
}

// appendColumns appends the column of f and of each of its aliases.
func appendColumns(out []largevalue.Column, f *codec.Field) []largevalue.Column {
	binary := f.Kind == service.KindBinary && !f.JSON
	out = append(out, largevalue.Column{Name: f.Name, Cell: f.Cell, Binary: binary})
	suffix := strings.TrimPrefix(f.Cell, f.Name) // "__Json" for a JSON-stored field
	for _, a := range f.Aliases {
		out = append(out, largevalue.Column{Name: a, Cell: a + suffix, Binary: binary, AliasOf: f.Name})
	}
	return out
}

// fileFields returns the file fields of a plan.
func fileFields(pl *codec.Plan) []*codec.Field {
	var out []*codec.Field
	fields := pl.Fields()
	for i := range fields {
		if fields[i].File {
			out = append(out, &fields[i])
		}
	}
	return out
}

// fileColumns returns the names a file field's reference cell may have, the field's own
// first: its column, then its aliases (the columns of rows written before a rename).
func fileColumns(f *codec.Field) []string {
	return append([]string{f.Name}, f.Aliases...)
}

// prepareLarge checks the keys of a split-aware entity and plans its rows.
func (s *Store[T]) prepareLarge(op string, p *prepared[T]) error {
	if _, _, ok := largevalue.IsContinuationKey(p.rk); ok {
		return keyError(op, s.table, p.pk, p.rk, "row key",
			"ends with '~' and four digits, the shape of a continuation row's key, which a split-aware type reserves")
	}
	if n := service.UTF16Len(p.rk); n > largevalue.MaxSplitRowKeyLength {
		return keyError(op, s.table, p.pk, p.rk, "row key",
			fmt.Sprintf("is %d UTF-16 code units long; a split-aware type allows %d, to leave room for continuation keys", n, largevalue.MaxSplitRowKeyLength))
	}
	fixed, large, err := codec.EncodeLarge(&p.v, &s.acct.codec)
	if err != nil {
		return rowError(op, s.table, p.pk, p.rk, "the entity cannot be stored; nothing was sent", err)
	}
	p.fixed = fixed
	p.values = make([]largevalue.Value, len(large))
	p.files = nil
	for i, lv := range large {
		if lv.File != nil {
			p.values[i] = largevalue.Value{Column: lv.Field.Name, Cell: lv.Cell}
			p.files = append(p.files, fileValue{field: lv.Field, file: lv.File, value: i})
			continue
		}
		p.values[i] = largevalue.Value{Column: lv.Field.Name, Cell: lv.Cell, Value: lv.Value, Encoding: lv.Field.Encoding,
			Offload: s.offloadable(lv.Field)}
	}
	if len(p.files) > 0 {
		// Planned once the files are hashed (resolveFiles), which takes a context.
		return nil
	}
	return s.planLarge(op, p)
}

// offloadable reports whether a large field may go to a blob: its own offload= option wins
// over the type-level one, and only offload=never forbids it.
func (s *Store[T]) offloadable(f *codec.Field) bool {
	if f.Offload != "" {
		return f.Offload != codec.OffloadNever
	}
	return s.plan.Offload() != codec.OffloadNever
}

// stored is what a split-aware write knows of the rows at an entity's keys.
type stored struct {
	found bool
	etag  string
	// parts is how many rows the stored main row declares (1: none but itself).
	parts int
	// leftovers are continuation rows of the entity that the stored main row does not
	// declare, found at keys the write needs: key → ETag.
	leftovers map[string]string
	// gone are declared continuation rows another writer already removed.
	gone map[string]bool
	// refs are the blob references the stored main row holds (see stateProjection), which
	// the cleanup after a committed write or delete may delete.
	refs []largevalue.BlobRef
	// blobs are, on an account without blob offload, the large-value and file columns
	// (aliases included) whose value the stored row holds in a blob, which the write
	// replaces: they are logged (releasedBlobs), as nothing here deletes their blobs.
	blobs []string
}

// storedState is what the stored main row r tells a write.
func (s *Store[T]) storedState(r *service.Row) (stored, error) {
	st := stored{found: true, etag: r.ETag, refs: blobRefs(r)}
	if s.acct.off == nil {
		for _, c := range s.large {
			if _, ok := r.Get(c.Name + largevalue.BlobSuffix); ok {
				st.blobs = append(st.blobs, c.Name)
			}
		}
		for _, f := range s.files {
			for _, name := range fileColumns(f) {
				if _, ok := r.Get(name + largevalue.BlobSuffix); ok {
					st.blobs = append(st.blobs, name)
				}
			}
		}
	}
	parts, err := largevalue.Parts(r)
	if err != nil {
		return st, err
	}
	st.parts = parts
	return st, nil
}

// readState reads the main row's part count and version.
func (s *Store[T]) readState(ctx context.Context, pk, rk string) (stored, error) {
	row, err := s.acct.tables.GetRow(ctx, s.table, pk, rk, s.stateSel)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return stored{}, nil
	}
	if err != nil {
		return stored{}, err
	}
	return s.storedState(&row)
}

// continuationRows returns the rows at rk's continuation keys that are its continuation
// rows (their _SplitOf names rk), with the given projection (nil: whole rows). last bounds
// the indices looked at (0: every possible one).
func (s *Store[T]) continuationRows(ctx context.Context, pk, rk string, last int, sel []string) ([]service.Row, []service.Row, error) {
	hi := largevalue.ContinuationKey(rk, 9999)
	if last > 0 {
		hi = largevalue.ContinuationKey(rk, last)
	}
	filter := partitionFilter(pk) + " and RowKey ge " + service.QuoteString(largevalue.ContinuationKey(rk, 1)) +
		" and RowKey le " + service.QuoteString(hi)
	var own, foreign []service.Row
	err := s.scan(ctx, service.Query{Filter: filter, Select: sel}, func(r *service.Row) error {
		if _, _, ok := largevalue.IsContinuationKey(r.RowKey); !ok {
			return nil
		}
		if _, ok := largevalue.BelongsTo(r, rk); ok {
			own = append(own, r.Clone())
		} else if main, _, _ := largevalue.IsContinuationKey(r.RowKey); main == rk {
			foreign = append(foreign, r.Clone())
		}
		return nil
	})
	return own, foreign, err
}

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
func (s *Store[T]) unitActions(p *prepared[T], mode writeMode, etag string, st *stored) []service.Action {
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
type splitUnit[T any] struct {
	p    *prepared[T]
	mode writeMode
	etag string // modeStrict's version
	st   stored
	read bool // st is current for this attempt
	fs   *fileSources
}

// lostRace is the error of a write that kept losing its condition.
func (s *Store[T]) lostRace(op, pk, rk string, last error) error {
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.table, PartitionKey: pk, RowKey: rk, Err: last,
		Message: fmt.Sprintf("other writers changed the row during each of %d attempts; retry, or serialize the writes of this row", splitAttempts)}
}

// lostAttempt logs, at Debug, an attempt of a split-aware write or read that another writer
// made it repeat (the verbs' own lost attempts are logged by verbSpan.Event, in the same
// style). The keys are logged only when the account records keys; err is logged as its kind.
func (s *Store[T]) lostAttempt(ctx context.Context, op, pk, rk string, attempt int, reason string, err error) {
	l := s.acct.logger()
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	args := []any{"op", op, "table", s.table}
	if s.acct.opts.RecordKeys {
		args = append(args, "partition", pk, "row", rk)
	}
	args = append(args, "attempt", attempt, "attempts", splitAttempts, "reason", reason, "error", errorKind(err))
	msg := "unified tables: a split-aware call lost its race; retrying"
	if attempt >= splitAttempts {
		msg = "unified tables: a split-aware call lost its race on its last attempt; giving up"
	}
	l.Debug(msg, args...)
}

// writeLarge writes one split-aware entity; see writeUnits.
func (s *Store[T]) writeLarge(ctx context.Context, op string, v *T, p *prepared[T], mode writeMode, etag string) error {
	fs := &fileSources{}
	defer fs.release()
	if err := s.resolveFiles(ctx, op, p, fs); err != nil {
		return err
	}
	u := &splitUnit[T]{p: p, mode: mode, etag: etag, fs: fs}
	w, err := s.writeUnits(ctx, op, []*splitUnit[T]{u})
	if err != nil {
		return err
	}
	p.commit(v, w)
	if u.st.found {
		s.cleanup(ctx, w.Timestamp, s.released(p.pk, p.rk, u.st.refs, p.layout.Blobs))
	}
	return nil
}

// writeUnits writes entities of one partition in one transaction (or one action, when that
// is all they need), reading and retrying as the modes require. It returns the version of
// the first unit's main row, as the write's response reports it (zero when it does not).
func (s *Store[T]) writeUnits(ctx context.Context, op string, units []*splitUnit[T]) (service.Written, error) {
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
func (s *Store[T]) releasedBlobs(op, pk, rk string, blobs []string) {
	if len(blobs) == 0 || s.acct.off != nil {
		return
	}
	args := []any{"op", op, "table", s.table, "columns", blobs}
	if s.acct.opts.RecordKeys {
		args = append(args, "partition", pk, "row", rk)
	}
	s.acct.logger().Warn("unified tables: the write replaced values held in blobs, which an account without blob offload does not delete; "+
		"an orphan sweep from an account with blob offload configured (or by the library that offloaded them) removes them", args...)
}

// readFullState is readState for a type with protected fields: it reads the whole main row,
// which the protected-field check compares.
func (s *Store[T]) readFullState(ctx context.Context, pk, rk string) (service.Row, stored, error) {
	row, err := s.acct.tables.GetRow(ctx, s.table, pk, rk, nil)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return service.Row{}, stored{}, nil
	}
	if err != nil {
		return service.Row{}, stored{}, err
	}
	st, err := s.storedState(&row)
	return row, st, err
}

// deleteLarge deletes a split-aware entity with its continuation rows, on condition of the
// version read, which must be ifMatch unless that is "". It reports whether it deleted the
// main row. An id of a continuation row's shape deletes nothing; an id with no main row
// removes the leftover continuation rows that name it.
func (s *Store[T]) deleteLarge(ctx context.Context, pk, rk, ifMatch string) (bool, error) {
	const op = "delete"
	if _, _, ok := largevalue.IsContinuationKey(rk); ok {
		return false, nil
	}
	var lastErr error
	for attempt := 1; attempt <= splitAttempts; attempt++ {
		if err := splitRetry.Wait(ctx, attempt); err != nil {
			return false, err
		}
		st, err := s.readState(ctx, pk, rk)
		unreadable := errors.Is(err, abstractions.ErrIntegrity)
		if err != nil && !unreadable {
			return false, s.translate(op, pk, rk, err)
		}
		if ifMatch != "" && st.found && st.etag != ifMatch {
			return false, s.deleteConflict(pk, rk, nil)
		}
		acts := []service.Action{}
		if st.found {
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: st.etag})
		}
		if !st.found || unreadable {
			// No main row, or one whose part count cannot be read: delete what is there.
			own, _, err := s.continuationRows(ctx, pk, rk, 0, contSelect)
			if err != nil {
				return false, s.translate(op, pk, rk, err)
			}
			for _, r := range own {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: r.RowKey}, IfMatch: r.ETag})
			}
		} else {
			for i := 1; i < st.parts; i++ {
				acts = append(acts, service.Action{Op: service.OpDelete,
					Row: service.Row{PartitionKey: pk, RowKey: largevalue.ContinuationKey(rk, i)}, IfMatch: service.ETagAny})
			}
		}
		if len(acts) == 0 {
			return false, nil
		}
		tracked := s.writeKeys([2]string{pk, rk})
		s.beginWrite(tracked)
		for len(acts) > 0 {
			if len(acts) == 1 {
				_, err = s.acct.tables.Write(ctx, s.table, acts[0])
			} else {
				_, err = s.acct.tables.Transact(ctx, s.table, acts)
			}
			if err == nil {
				break
			}
			var te *service.TransactionError
			idx := 0
			if errors.As(err, &te) {
				idx = te.Index
			}
			gone := abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound")
			changed := abstractions.HasStatus(err, http.StatusPreconditionFailed, "")
			removable := idx >= 0 && idx < len(acts) &&
				(!st.found && (gone || changed) || st.found && idx > 0 && (gone || unreadable && changed))
			if !removable {
				break
			}
			// A continuation row is gone already (or, without a main row, any row
			// that changed): leave it and delete the rest.
			acts = append(acts[:idx:idx], acts[idx+1:]...)
			err = nil
		}
		s.endWrite(tracked, err, nil, service.Written{})
		switch {
		case err == nil:
			if st.found {
				s.cleanup(ctx, time.Time{}, s.released(pk, rk, st.refs, nil))
			}
			s.releasedBlobs(op, pk, rk, st.blobs)
			return st.found, nil
		case st.found && (abstractions.HasStatus(err, http.StatusPreconditionFailed, "") ||
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound")):
			// Another writer changed or deleted the row since it was read: read it again
			// (with ifMatch, the next read finds the conflict or the missing row).
			lastErr = s.translate(op, pk, rk, err)
			s.lostAttempt(ctx, op, pk, rk, attempt, "the row changed since it was read", lastErr)
		default:
			return false, s.translate(op, pk, rk, err)
		}
	}
	return false, s.lostRace(op, pk, rk, lastErr)
}

// readLarge reads a split-aware entity whole: the main row, its continuation rows, every
// value verified. first, when not nil, is a main row already read (by a query). A missing
// row (or a continuation row's key) is ErrNotFound.
func (s *Store[T]) readLarge(ctx context.Context, op, pk, rk string, first *service.Row) (service.Row, error) {
	var lastErr error
	for attempt := 1; attempt <= splitAttempts; attempt++ {
		if err := splitRetry.Wait(ctx, attempt); err != nil {
			return service.Row{}, err
		}
		var main service.Row
		if first != nil {
			main, first = *first, nil
		} else {
			var err error
			if main, err = s.acct.tables.GetRow(ctx, s.table, pk, rk, nil); err != nil {
				return service.Row{}, s.translate(op, pk, rk, err)
			}
		}
		if largevalue.IsContinuation(&main) {
			return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.table, PartitionKey: pk, RowKey: rk,
				Message: "no row has this key (the row there is a continuation row of another entity)"}
		}
		parts, err := largevalue.Parts(&main)
		var conts []service.Row
		if err == nil && parts > 1 {
			conts, _, err = s.continuationRows(ctx, pk, rk, parts-1, nil)
			if err != nil && !errors.Is(err, abstractions.ErrIntegrity) {
				return service.Row{}, s.translate(op, pk, rk, err)
			}
		}
		if err == nil {
			var logical service.Row
			if logical, err = largevalue.Assemble(main, conts, s.large); err == nil {
				if logical, err = s.fetchBlobs(ctx, op, logical); err == nil {
					return logical, nil
				}
				if !errors.Is(err, abstractions.ErrIntegrity) {
					return service.Row{}, s.translate(op, pk, rk, err)
				}
			}
			if errors.Is(err, abstractions.ErrBlobOffloadNotConfigured) {
				return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrBlobOffloadNotConfigured, Op: op, Table: s.table,
					PartitionKey: pk, RowKey: rk, Err: err, Message: "nothing was returned"}
			}
		}
		// The value does not reassemble: damaged, or replaced while it was read?
		now, rerr := s.acct.tables.GetRow(ctx, s.table, pk, rk, keysOnly)
		switch {
		case abstractions.HasStatus(rerr, http.StatusNotFound, "ResourceNotFound"):
			return service.Row{}, s.translate(op, pk, rk, rerr)
		case rerr != nil:
			return service.Row{}, s.translate(op, pk, rk, rerr)
		case now.ETag == main.ETag:
			return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.table, PartitionKey: pk, RowKey: rk, Err: err,
				Message: "the stored entity does not reassemble (a chunk or continuation row is missing or does not match its checksum); nothing was returned; Delete removes it"}
		}
		lastErr = err
		s.lostAttempt(ctx, op, pk, rk, attempt, "the row was replaced while it was read", lastErr)
	}
	return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.table, PartitionKey: pk, RowKey: rk, Err: lastErr,
		Message: fmt.Sprintf("the read did not complete: the row changed during each of its %d attempts. Nothing stored is damaged; the read can be repeated", splitAttempts)}
}

// materialize turns a row a query or list returned into the row to decode. skip reports a
// row that is not an entity of its own (a continuation row) or that vanished meanwhile.
func (s *Store[T]) materialize(ctx context.Context, op string, r *service.Row) (row service.Row, skip bool, err error) {
	if largevalue.IsContinuation(r) {
		return service.Row{}, true, nil
	}
	if !s.split {
		return *r, false, nil
	}
	logical, err := s.readLarge(ctx, op, r.PartitionKey, r.RowKey, r)
	if errors.Is(err, abstractions.ErrNotFound) {
		return service.Row{}, true, nil
	}
	return logical, false, err
}
