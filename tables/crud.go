package tables

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/indexrow"

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
	engine.Write
}

// prepare copies v, resolves its id, stamps the times (CreatedAt only when zero) and
// encodes the row.
func (s *Store[T]) prepare(op string, v *T, now time.Time) (*prepared[T], error) {
	if v == nil {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.core.Name, Message: "the entity is nil"}
	}
	p, _ := s.written.Get().(*prepared[T])
	var cells []service.Property
	if p == nil {
		p = &prepared[T]{copy: *v}
	} else {
		cells = p.Row.Properties
		*p = prepared[T]{copy: *v}
	}
	p.V = &p.copy
	b := s.entity(&p.copy)
	p.Base = b
	id, pk, rk, err := s.core.ResolveID(op, b.ID)
	if err != nil {
		return nil, err
	}
	p.PK, p.RK = pk, rk
	b.ID = id
	if b.CreatedAt.IsZero() {
		b.CreatedAt = now
	}
	b.UpdatedAt = now
	s.core.StampExpiry(p.V, now)
	if s.core.Split {
		if err := s.core.PrepareLarge(op, &p.Write); err != nil {
			return nil, err
		}
		return p, nil
	}
	row, err := codec.EncodeRowAt(s.core.Plan, cells, &p.copy, pk, rk, &s.core.Acct.Codec)
	if err != nil {
		return nil, engine.RowError(op, s.core.Name, pk, rk, "the entity cannot be stored; nothing was sent", err)
	}
	p.Row = row
	if s.core.Units() {
		if err := s.core.PrepareIndexed(op, &p.Write); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// commit copies the written entity back to the caller's, with the service's version.
func (p *prepared[T]) commit(dst *T, w service.Written) {
	p.Base.ETag, p.Base.Timestamp = w.ETag, w.Timestamp
	*dst = p.copy
}

// recycle keeps p for the next write's prepare. Only a single-row write that succeeded
// recycles: its row went to the service, which copies what it keeps (service.Tables), and
// to the read cache, which keeps a clone (cache.Written), and the caller's entity was
// copied out of p by commit, so nothing refers to p any more. The copy and the cells are
// cleared first, so that p holds on to no value of the entity it wrote.
func (s *Store[T]) recycle(p *prepared[T]) {
	cells := p.Row.Properties
	clear(cells[:cap(cells)])
	*p = prepared[T]{}
	p.Row.Properties = cells[:0]
	s.written.Put(p)
}

// writeLargeOf writes a split-aware entity and, when it committed, copies it to v.
func (s *Store[T]) writeLargeOf(ctx context.Context, op string, v *T, p *prepared[T], mode engine.WriteMode, etag string) error {
	w, err := s.core.WriteLarge(ctx, op, &p.Write, mode, etag)
	if err == nil {
		p.commit(v, w)
	}
	return err
}

// write runs one action for a prepared entity. The read cache keeps the version it wrote
// (see package cache for when it may).
func (s *Store[T]) write(ctx context.Context, op string, p *prepared[T], a service.Action) (service.Written, error) {
	if err := ctx.Err(); err != nil {
		return service.Written{}, s.core.Unsent(op, p.PK, p.RK, err)
	}
	a.Row = p.Row
	keys, announced := s.core.BeginRowWrite(p.PK, p.RK)
	w, err := s.core.Acct.Tables.Write(ctx, s.core.Name, a)
	s.core.EndRowWrite(&keys, announced, p.PK, p.RK, err, &p.Row, w)
	return w, s.core.Translate(op, p.PK, p.RK, err)
}

// Create inserts a new row; see [abstractions.Creator.Create]. A type with unique indexes
// claims its values after the row is written, and deletes the row again when a value is
// another entity's (ErrDuplicateKey); see package tables/index.
func (s *Store[T]) Create(ctx context.Context, v *T) error {
	if len(s.core.Uniques) > 0 {
		return s.unique.Create(ctx, v)
	}
	return s.create(ctx, v)
}

func (s *Store[T]) create(ctx context.Context, v *T) (err error) {
	ctx, c := s.beginEntity(ctx, "create", v)
	defer c.Finish(&err)
	p, err := s.prepare("create", v, s.core.Acct.Now())
	if err != nil {
		return err
	}
	if s.core.Units() {
		return s.writeLargeOf(ctx, "create", v, p, engine.ModeCreate, "")
	}
	w, err := s.write(ctx, "create", p, service.Action{Op: service.OpInsert})
	if err != nil {
		return err
	}
	p.commit(v, w)
	s.recycle(p)
	return nil
}

// Upsert inserts or replaces the row in one round trip; see [abstractions.Storage.Upsert].
// A type with unique indexes reads the row first and claims its new values after the write
// (see package tables/index).
func (s *Store[T]) Upsert(ctx context.Context, v *T) error {
	if len(s.core.Uniques) > 0 {
		return s.unique.Upsert(ctx, v)
	}
	return s.upsert(ctx, v)
}

func (s *Store[T]) upsert(ctx context.Context, v *T) (err error) {
	ctx, c := s.beginEntity(ctx, "upsert", v)
	defer c.Finish(&err)
	p, err := s.prepare("upsert", v, s.core.Acct.Now())
	if err != nil {
		return err
	}
	if s.core.Units() {
		return s.writeLargeOf(ctx, "upsert", v, p, engine.ModeUpsert, "")
	}
	// Protected fields are checked here (protect.go); batch writes are trusted paths.
	w, err := s.writeGuarded(ctx, "upsert", p, service.Action{Op: service.OpUpsertReplace})
	if err != nil {
		return err
	}
	p.commit(v, w)
	s.recycle(p)
	return nil
}

// Update replaces a stored row under mode; see [abstractions.ReadWriter.Update].
func (s *Store[T]) Update(ctx context.Context, v *T, mode abstractions.ConcurrencyMode) error {
	if len(s.core.Uniques) > 0 {
		return s.unique.Update(ctx, v, mode)
	}
	return s.update(ctx, v, mode)
}

func (s *Store[T]) update(ctx context.Context, v *T, mode abstractions.ConcurrencyMode) (err error) {
	ctx, c := s.beginEntity(ctx, "update", v)
	defer c.Finish(&err)
	if v == nil {
		return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.core.Name, Message: "the entity is nil"}
	}
	mode, etag, err := s.updateCondition(v, mode)
	if err != nil {
		return err
	}
	p, err := s.prepare("update", v, s.core.Acct.Now())
	if err != nil {
		return err
	}
	if s.core.Units() {
		if mode == abstractions.Strict {
			return s.writeLargeOf(ctx, "update", v, p, engine.ModeStrict, etag)
		}
		return s.writeLargeOf(ctx, "update", v, p, engine.ModeReplace, "")
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
	s.recycle(p)
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
		case s.core.Acct.Cfg.ImplicitLastWriterWins:
			mode = abstractions.LastWriterWins
			args := []any{"table", s.core.Name}
			if s.core.Acct.Cfg.RecordKeys {
				args = append(args, "id", s.entity(v).ID)
			}
			s.core.Acct.Logger().Warn("unified tables: Update in Auto mode without an ETag overwrites the stored row (implicit last-writer-wins)", args...)
		default:
			return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.core.Name, PartitionKey: pk, RowKey: rk,
				Message: "the entity carries no ETag, so Auto mode cannot tell which version it overwrites; update the entity One returned, " +
					"say Strict or LastWriterWins explicitly, or enable Options.ImplicitLastWriterWins; nothing was sent"}
		}
	case abstractions.Strict:
		if etag == "" {
			return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.core.Name, PartitionKey: pk, RowKey: rk,
				Message: "Strict mode needs the entity's ETag (the version it was read as); nothing was sent"}
		}
	case abstractions.LastWriterWins:
		etag = ""
	default:
		return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.core.Name, PartitionKey: pk, RowKey: rk, Message: fmt.Sprintf("unknown concurrency mode %v", mode)}
	}
	if etag != "" && !wire.IsEntityTag(etag) {
		return 0, "", &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "update", Table: s.core.Name, PartitionKey: pk, RowKey: rk,
			Message: engine.BadETag(etag)}
	}
	return mode, etag, nil
}

// Delete deletes the row, unconditionally or at the version ifMatch names, and reports
// whether it did; see [abstractions.Storage.Delete].
func (s *Store[T]) Delete(ctx context.Context, id, ifMatch string) (bool, error) {
	if len(s.core.Uniques) > 0 {
		return s.unique.Delete(ctx, id, ifMatch)
	}
	return s.delete(ctx, id, ifMatch)
}

func (s *Store[T]) delete(ctx context.Context, id, ifMatch string) (_ bool, err error) {
	ctx, c := s.core.BeginID(ctx, "delete", id)
	defer c.Finish(&err)
	_, pk, rk, err := s.core.ResolveID("delete", id)
	if err != nil {
		return false, err
	}
	if ifMatch != "" && !wire.IsEntityTag(ifMatch) {
		return false, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "delete", Table: s.core.Name, PartitionKey: pk, RowKey: rk,
			Message: engine.BadETag(ifMatch)}
	}
	if err := ctx.Err(); err != nil {
		return false, s.core.Unsent("delete", pk, rk, err)
	}
	if s.core.Units() {
		return s.core.DeleteLarge(ctx, pk, rk, ifMatch)
	}
	cond := service.ETagAny
	if ifMatch != "" {
		cond = ifMatch
	}
	keys, announced := s.core.BeginRowWrite(pk, rk)
	_, err = s.core.Acct.Tables.Write(ctx, s.core.Name, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: cond})
	s.core.EndRowWrite(&keys, announced, pk, rk, err, nil, service.Written{})
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return false, nil
	}
	if abstractions.HasStatus(err, http.StatusPreconditionFailed, "") {
		return false, s.core.DeleteConflict(pk, rk, err)
	}
	if err != nil {
		return false, s.core.Translate("delete", pk, rk, err)
	}
	return true, nil
}

// One returns the row with the id; a missing row fails with an error matching
// abstractions.ErrNotFound. See [abstractions.ReadWriter.One].
func (s *Store[T]) One(ctx context.Context, id string) (_ *T, err error) {
	ctx, c := s.core.BeginID(ctx, "read", id)
	defer c.Finish(&err)
	_, pk, rk, err := s.core.ResolveReadID("read", id)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, s.core.Unsent("read", pk, rk, err)
	}
	var key string // the cache's key, needed only when the store caches
	if s.core.Policy.Enabled() {
		key = s.core.EntityKey(pk, rk)
	}
	cached, hit := s.core.CachedRow(key)
	s.core.CountCache(ctx, hit)
	if hit && !s.core.Expired(cached) {
		s.rememberIndexed(cached)
		return s.decode(cached)
	}
	if hit {
		return nil, expiredRead(s.core.Name, pk, rk)
	}
	var row service.Row
	s.core.ReadThrough(key, func() *cache.Entry {
		if s.core.Split {
			row, err = s.core.ReadLarge(ctx, "read", pk, rk, nil)
		} else {
			row, err = s.core.Acct.Tables.GetRow(ctx, s.core.Name, pk, rk, nil)
		}
		if err != nil {
			return nil
		}
		if largevalue.IsContinuation(&row) {
			err = &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "read", Table: s.core.Name, PartitionKey: pk, RowKey: rk,
				Message: "no row has this key (the row there is a continuation row of a split entity)"}
			return nil
		}
		if s.core.Foreign(&row) {
			msg := "no row of this store has this key (the row there is a polymorphic row of the shared table)"
			if indexrow.IsKey(rk) {
				msg = "no entity has this key (the row there is a partition index's row)"
			}
			err = &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "read", Table: s.core.Name, PartitionKey: pk, RowKey: rk, Message: msg}
			return nil
		}
		if s.core.Expired(&row) {
			err = expiredRead(s.core.Name, pk, rk)
			return nil
		}
		if !s.core.Policy.Enabled() {
			return nil // no cache keeps the row: it needs no copy of its own
		}
		return &cache.Entry{Row: row.Clone()}
	})
	if err != nil {
		return nil, s.core.Translate("read", pk, rk, err)
	}
	s.rememberIndexed(&row)
	return s.decode(&row)
}

// rememberIndexed records the index keys of a row of an indexed store read whole (see
// engine.IxSeen), so that a Strict update of the entity needs no read first.
func (s *Store[T]) rememberIndexed(row *service.Row) {
	if s.core.Seen != nil {
		s.core.Seen.Remember(row.PartitionKey, row.RowKey, row.ETag, indexrow.Stored(row))
	}
}

// decode decodes a row of the store's table. A type that is not split-aware first
// reassembles a value another type stored split on the row (largevalue.AssembleMain); one
// that continues on continuation rows, or does not verify, fails with ErrIntegrity.
func (s *Store[T]) decode(row *service.Row) (*T, error) {
	v := new(T)
	if err := s.decodeAt(row, v); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeAt is decode into *v, which holds T's zero value (an element of a page's array).
func (s *Store[T]) decodeAt(row *service.Row, v *T) error {
	if !s.core.Split && len(s.core.Plain) > 0 {
		r, err := largevalue.AssembleMain(*row, s.core.Plain)
		if err != nil {
			return &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "read", Table: s.core.Name,
				PartitionKey: row.PartitionKey, RowKey: row.RowKey, Err: err,
				Message: "the row holds a value stored split, which does not reassemble here; nothing was returned"}
		}
		row = &r
	}
	if err := codec.DecodeAt(s.core.Plan, row, v); err != nil {
		return engine.RowError("read", s.core.Name, row.PartitionKey, row.RowKey, "the stored row does not decode into this type", err)
	}
	if len(s.core.Files) > 0 {
		if err := s.bindFiles(v, row); err != nil {
			return err
		}
	}
	return nil
}

// Exists reports whether a row with the id exists; see [abstractions.Storage.Exists].
func (s *Store[T]) Exists(ctx context.Context, id string) (_ bool, err error) {
	ctx, c := s.core.BeginID(ctx, "exists", id)
	defer c.Finish(&err)
	_, pk, rk, err := s.core.ResolveReadID("exists", id)
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, s.core.Unsent("exists", pk, rk, err)
	}
	cached, hit := s.core.CachedRow(s.core.EntityKey(pk, rk))
	s.core.CountCache(ctx, hit)
	if hit {
		return !s.core.Expired(cached), nil
	}
	row, err := s.core.Acct.Tables.GetRow(ctx, s.core.Name, pk, rk, s.core.SharedSel(engine.OfOnly))
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return false, nil
	}
	if err != nil {
		return false, s.core.Translate("exists", pk, rk, err)
	}
	// A continuation row is not an entity of its own, nor, in a shared table, a polymorphic row.
	return !largevalue.IsContinuation(&row) && !s.core.Hidden(&row), nil
}

// expiredRead is the error of a read that finds a row whose expiry time has come.
func expiredRead(table, pk, rk string) error {
	return &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "read", Table: table, PartitionKey: pk, RowKey: rk,
		Message: "no row has this key (the row there expired)"}
}
