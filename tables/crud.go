package tables

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// prepared is an entity ready to be written: a copy of it with the id and times the write
// will store, and its row. The caller's entity is updated from the copy only on success.
type prepared[T any] struct {
	copy T
	write
}

// write is a prepared entity as the code that writes rows sees it, whatever its type.
type write struct {
	v      any                  // the copy: a *T
	base   *abstractions.Entity // the Entity inside v
	pk, rk string
	row    service.Row
	// layout and logical are a split-aware entity's rows and its cells as one row (large
	// values whole), the form the read cache keeps.
	layout  *largevalue.Layout
	logical service.Row
	// fixed, values and files are a split-aware entity's ordinary cells, large values and
	// files, kept to plan its rows once its files are hashed; uploaded are the blobs this
	// write has uploaded (or touched) so far.
	fixed    []service.Property
	values   []largevalue.Value
	files    []fileValue
	uploaded map[string]bool
}

// prepare copies v, resolves its id, stamps the times (CreatedAt only when zero) and
// encodes the row.
func (s *Store[T]) prepare(op string, v *T, now time.Time) (*prepared[T], error) {
	if v == nil {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.table, Message: "the entity is nil"}
	}
	p := &prepared[T]{copy: *v}
	p.v = &p.copy
	b := s.entity(&p.copy)
	p.base = b
	id, pk, rk, err := s.resolveID(op, b.ID)
	if err != nil {
		return nil, err
	}
	p.pk, p.rk = pk, rk
	b.ID = id
	if b.CreatedAt.IsZero() {
		b.CreatedAt = now
	}
	b.UpdatedAt = now
	if s.split {
		if err := s.prepareLarge(op, &p.write); err != nil {
			return nil, err
		}
		return p, nil
	}
	row, err := codec.EncodeRow(p.v, pk, rk, &s.acct.codec)
	if err != nil {
		return nil, rowError(op, s.table, pk, rk, "the entity cannot be stored; nothing was sent", err)
	}
	p.row = row
	return p, nil
}

// commit copies the written entity back to the caller's, with the service's version.
func (p *prepared[T]) commit(dst *T, w service.Written) {
	p.base.ETag, p.base.Timestamp = w.ETag, w.Timestamp
	*dst = p.copy
}

// writeLargeOf writes a split-aware entity and, when it committed, copies it to v.
func (s *Store[T]) writeLargeOf(ctx context.Context, op string, v *T, p *prepared[T], mode writeMode, etag string) error {
	w, err := s.writeLarge(ctx, op, &p.write, mode, etag)
	if err == nil {
		p.commit(v, w)
	}
	return err
}

// write runs one action for a prepared entity. The read cache keeps the version it wrote
// (see readCache for when it may).
func (s *Store[T]) write(ctx context.Context, op string, p *prepared[T], a service.Action) (service.Written, error) {
	a.Row = p.row
	keys := s.writeKeys([2]string{p.pk, p.rk})
	s.beginWrite(keys)
	w, err := s.acct.tables.Write(ctx, s.table, a)
	s.endWrite(keys, err, &p.row, w)
	return w, s.translate(op, p.pk, p.rk, err)
}

// Create inserts a new row; see [abstractions.Storage.Create].
func (s *Store[T]) Create(ctx context.Context, v *T) (err error) {
	ctx, c := s.beginEntity(ctx, "create", v)
	defer c.Finish(&err)
	p, err := s.prepare("create", v, s.acct.now())
	if err != nil {
		return err
	}
	if s.split {
		return s.writeLargeOf(ctx, "create", v, p, modeCreate, "")
	}
	w, err := s.write(ctx, "create", p, service.Action{Op: service.OpInsert})
	if err != nil {
		return err
	}
	p.commit(v, w)
	return nil
}

// Upsert inserts or replaces the row in one round trip; see [abstractions.Storage.Upsert].
func (s *Store[T]) Upsert(ctx context.Context, v *T) (err error) {
	ctx, c := s.beginEntity(ctx, "upsert", v)
	defer c.Finish(&err)
	p, err := s.prepare("upsert", v, s.acct.now())
	if err != nil {
		return err
	}
	if s.split {
		return s.writeLargeOf(ctx, "upsert", v, p, modeUpsert, "")
	}
	// Protected fields are checked here (protect.go); batch writes are trusted paths.
	w, err := s.writeGuarded(ctx, "upsert", p, service.Action{Op: service.OpUpsertReplace})
	if err != nil {
		return err
	}
	p.commit(v, w)
	return nil
}

// Update replaces a stored row under mode; see [abstractions.Storage.Update].
func (s *Store[T]) Update(ctx context.Context, v *T, mode abstractions.ConcurrencyMode) (err error) {
	ctx, c := s.beginEntity(ctx, "update", v)
	defer c.Finish(&err)
	if v == nil {
		return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.table, Message: "the entity is nil"}
	}
	mode, etag, err := s.updateCondition(v, mode)
	if err != nil {
		return err
	}
	p, err := s.prepare("update", v, s.acct.now())
	if err != nil {
		return err
	}
	if s.split {
		if mode == abstractions.Strict {
			return s.writeLargeOf(ctx, "update", v, p, modeStrict, etag)
		}
		return s.writeLargeOf(ctx, "update", v, p, modeReplace, "")
	}
	ifMatch := service.ETagAny
	if mode == abstractions.Strict {
		ifMatch = etag
	}
	// Protected fields are checked here (protect.go).
	w, err := s.writeGuarded(ctx, "update", p, service.Action{Op: service.OpReplace, IfMatch: ifMatch})
	if err != nil {
		return err
	}
	p.commit(v, w)
	return nil
}

// updateCondition resolves Update's concurrency mode for v: Strict or LastWriterWins, and
// the ETag a Strict update is conditional on. What it refuses is refused before sending.
func (s *Store[T]) updateCondition(v *T, mode abstractions.ConcurrencyMode) (abstractions.ConcurrencyMode, string, error) {
	etag := s.entity(v).ETag
	// Refusals below name the row the entity addresses, as the service errors do.
	pk, rk := abstractions.SplitID(s.entity(v).ID)
	switch mode {
	case abstractions.Auto:
		switch {
		case etag != "":
			mode = abstractions.Strict
		case s.acct.cfg.implicitLastWriterWins:
			mode = abstractions.LastWriterWins
			args := []any{"table", s.table}
			if s.acct.cfg.recordKeys {
				args = append(args, "id", s.entity(v).ID)
			}
			s.acct.logger().Warn("unified tables: Update in Auto mode without an ETag overwrites the stored row (implicit last-writer-wins)", args...)
		default:
			return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.table, PartitionKey: pk, RowKey: rk,
				Message: "the entity carries no ETag, so Auto mode cannot tell which version it overwrites; update the entity One returned, " +
					"say Strict or LastWriterWins explicitly, or enable Options.ImplicitLastWriterWins; nothing was sent"}
		}
	case abstractions.Strict:
		if etag == "" {
			return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.table, PartitionKey: pk, RowKey: rk,
				Message: "Strict mode needs the entity's ETag (the version it was read as); nothing was sent"}
		}
	case abstractions.LastWriterWins:
		etag = ""
	default:
		return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.table, PartitionKey: pk, RowKey: rk, Message: fmt.Sprintf("unknown concurrency mode %v", mode)}
	}
	if etag != "" && !wire.IsEntityTag(etag) {
		return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.table, PartitionKey: pk, RowKey: rk,
			Message: badETag(etag)}
	}
	return mode, etag, nil
}

// Delete deletes the row, unconditionally or at the version ifMatch names, and reports
// whether it did; see [abstractions.Storage.Delete].
func (s *Store[T]) Delete(ctx context.Context, id, ifMatch string) (_ bool, err error) {
	ctx, c := s.beginID(ctx, "delete", id)
	defer c.Finish(&err)
	_, pk, rk, err := s.resolveID("delete", id)
	if err != nil {
		return false, err
	}
	if ifMatch != "" && !wire.IsEntityTag(ifMatch) {
		return false, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "delete", Table: s.table, PartitionKey: pk, RowKey: rk,
			Message: badETag(ifMatch)}
	}
	if s.split {
		return s.deleteLarge(ctx, pk, rk, ifMatch)
	}
	cond := service.ETagAny
	if ifMatch != "" {
		cond = ifMatch
	}
	keys := s.writeKeys([2]string{pk, rk})
	s.beginWrite(keys)
	_, err = s.acct.tables.Write(ctx, s.table, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: cond})
	s.endWrite(keys, err, nil, service.Written{})
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return false, nil
	}
	if abstractions.HasStatus(err, http.StatusPreconditionFailed, "") {
		return false, s.deleteConflict(pk, rk, err)
	}
	if err != nil {
		return false, s.translate("delete", pk, rk, err)
	}
	return true, nil
}

// deleteConflict is the error of a delete whose row is at another version than ifMatch.
func (s *core) deleteConflict(pk, rk string, err error) error {
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: "delete", Table: s.table, PartitionKey: pk, RowKey: rk, Err: err,
		Message: "the row changed since the version this delete was based on, and was not deleted; read it again to decide"}
}

// One returns the row with the id; a missing row fails with an error matching
// abstractions.ErrNotFound. See [abstractions.Storage.One].
func (s *Store[T]) One(ctx context.Context, id string) (_ *T, err error) {
	ctx, c := s.beginID(ctx, "read", id)
	defer c.Finish(&err)
	_, pk, rk, err := s.resolveReadID("read", id)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var key string // the cache's key, needed only when the store caches
	if s.policy.enabled() {
		key = s.entityKey(pk, rk)
	}
	cached, hit := s.cachedRow(key)
	s.countCache(ctx, hit)
	if hit {
		return s.decode(cached)
	}
	var row service.Row
	s.readThrough(key, func() *cache.Entry {
		if s.split {
			row, err = s.readLarge(ctx, "read", pk, rk, nil)
		} else {
			row, err = s.acct.tables.GetRow(ctx, s.table, pk, rk, nil)
		}
		if err != nil {
			return nil
		}
		if largevalue.IsContinuation(&row) {
			err = &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "read", Table: s.table, PartitionKey: pk, RowKey: rk,
				Message: "no row has this key (the row there is a continuation row of a split entity)"}
			return nil
		}
		if s.foreign(&row) {
			err = &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "read", Table: s.table, PartitionKey: pk, RowKey: rk,
				Message: "no row of this store has this key (the row there is a polymorphic row of the shared table)"}
			return nil
		}
		if !s.policy.enabled() {
			return nil // no cache keeps the row: it needs no copy of its own
		}
		return &cache.Entry{Row: row.Clone()}
	})
	if err != nil {
		return nil, s.translate("read", pk, rk, err)
	}
	return s.decode(&row)
}

// badETag says why an ETag cannot be a write's condition. The value is quoted with %q, so
// control characters cannot reach a log line as they are.
func badETag(etag string) string {
	if etag == service.ETagAny {
		return "the ETag \"*\" names no version; to act on whatever version is stored, leave the condition out " +
			"(LastWriterWins for Update, no WithETag for a patch, \"\" for Delete and MergeColumns); nothing was sent"
	}
	return fmt.Sprintf("the ETag %q is not an entity tag (a quoted string such as W/\"datetime'…'\", as a read returns it); nothing was sent", etag)
}

// decode decodes a row of the store's table. A type that is not split-aware first
// reassembles a value another type stored split on the row (largevalue.AssembleMain); one
// that continues on continuation rows, or does not verify, fails with ErrIntegrity.
func (s *Store[T]) decode(row *service.Row) (*T, error) {
	if !s.split && len(s.plain) > 0 {
		r, err := largevalue.AssembleMain(*row, s.plain)
		if err != nil {
			return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "read", Table: s.table,
				PartitionKey: row.PartitionKey, RowKey: row.RowKey, Err: err,
				Message: "the row holds a value stored split, which does not reassemble here; nothing was returned"}
		}
		row = &r
	}
	v, err := codec.Decode[T](row, &s.acct.codec)
	if err != nil {
		return nil, rowError("read", s.table, row.PartitionKey, row.RowKey, "the stored row does not decode into this type", err)
	}
	if len(s.files) > 0 {
		if err := s.bindFiles(v, row); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// keysOnly is the projection of a read that needs no property.
var keysOnly = []string{}

// ofOnly is the projection of a read that needs only to tell a continuation row (which
// carries _SplitOf) from an entity.
var ofOnly = []string{largevalue.OfColumn}

// Exists reports whether a row with the id exists; see [abstractions.Storage.Exists].
func (s *Store[T]) Exists(ctx context.Context, id string) (_ bool, err error) {
	ctx, c := s.beginID(ctx, "exists", id)
	defer c.Finish(&err)
	_, pk, rk, err := s.resolveReadID("exists", id)
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	_, hit := s.cachedRow(s.entityKey(pk, rk))
	s.countCache(ctx, hit)
	if hit {
		return true, nil
	}
	row, err := s.acct.tables.GetRow(ctx, s.table, pk, rk, s.sharedSel(ofOnly))
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return false, nil
	}
	if err != nil {
		return false, s.translate("exists", pk, rk, err)
	}
	// A continuation row is not an entity of its own, nor, in a shared table, a polymorphic row.
	return !largevalue.IsContinuation(&row) && !s.foreign(&row), nil
}

// foreign reports a row that a store sharing its table (StoreOptions.SharedTable) leaves
// to the polymorphic stores: one that carries the discriminator column.
func (s *core) foreign(r *service.Row) bool {
	if !s.shared {
		return false
	}
	_, ok := r.Get(codec.TypeNameColumn)
	return ok
}

// sharedSel is the projection sel, with the discriminator column when the store shares its
// table, so that foreign can tell the rows it skips. A nil projection reads every column.
func (s *core) sharedSel(sel []string) []string {
	if !s.shared || sel == nil {
		return sel
	}
	return append(sel[:len(sel):len(sel)], codec.TypeNameColumn)
}
