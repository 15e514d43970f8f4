// Package uniquewrite owns the writes of a type with unique indexes (tables' unique= tags):
// the entity's row is written first, as the type's own write writes it (with its partition
// indexes), then each unique value it now holds is claimed and each it no longer holds
// released (the claim rules are the engine's, engine/unique.go, over abstractions/claims).
// When a value is another entity's, the write is undone (the row deleted, or put back as
// it was, on condition of the version this write stored) and the call fails with
// ErrDuplicateKey. The store hands it its own single-row writes (Writes); it refuses
// nothing itself beyond a value no claim can hold.
package uniquewrite

import (
	"context"
	"errors"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/service"
)

// Writes runs the writes of one store whose type T has unique indexes, over the store's own
// single-row writes.
type Writes[T any] struct {
	Core *engine.Table
	// The store's own writes and reads of one row, which keep its partition indexes, read
	// cache and feed as every write of the store does.
	CreateRow   func(ctx context.Context, v *T) error
	UpsertRow   func(ctx context.Context, v *T) error
	UpdateRow   func(ctx context.Context, v *T, mode abstractions.ConcurrencyMode) error
	DeleteRow   func(ctx context.Context, id, ifMatch string) (bool, error)
	DecodeRow   func(r *service.Row) (*T, error)
	EntityOf    func(v *T) *abstractions.Entity
	ConditionOf func(v *T, mode abstractions.ConcurrencyMode) (abstractions.ConcurrencyMode, string, error)
}

// uniqueValues returns the claim partitions of the unique values a row's cells hold, one
// per unique index ("" where it holds none).
func (s *Writes[T]) uniqueValues(r *service.Row) ([]string, []service.Value, error) {
	cpks := make([]string, len(s.Core.Uniques))
	vals := make([]service.Value, len(s.Core.Uniques))
	for i := range s.Core.Uniques {
		cpk, v, err := engine.UniqueValue(&s.Core.Uniques[i], r)
		if err != nil {
			return nil, nil, err
		}
		cpks[i], vals[i] = cpk, v
	}
	return cpks, vals, nil
}

// uniqueCells returns the cells of v's unique columns, as a write stores them. A unique
// index's column is its field's own (indexes refuse JSON-stored fields, whose cell has a
// suffix), so it names the field for EncodeColumns.
func (s *Writes[T]) uniqueCells(op string, v *T) (*service.Row, error) {
	names := make([]string, len(s.Core.Uniques))
	for i, sp := range s.Core.Uniques {
		names[i] = sp.Column
	}
	cells, err := codec.EncodeColumns(v, names, &s.Core.Acct.Codec)
	if err != nil {
		return nil, engine.RowError(op, s.Core.Name, "", "", "the entity cannot be stored; nothing was sent", err)
	}
	return &service.Row{Properties: cells}, nil
}

// checkUnique refuses, before anything is sent, a value no claim can hold (too long).
func (s *Writes[T]) checkUnique(op string, v *T) (*service.Row, error) {
	r, err := s.uniqueCells(op, v)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.uniqueValues(r); err != nil {
		pk, rk := abstractions.SplitID(s.EntityOf(v).ID)
		return nil, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.Core.Name, PartitionKey: pk, RowKey: rk,
			Message: err.Error() + "; nothing was sent"}
	}
	return r, nil
}

// claimChanged claims the values of now for the owner pk, rk; a value before (the row the
// write replaced) holds too is claimed again (claims.Index.Reclaim says why). On a failure
// it runs undo (when set), which puts the row back, then releases the claims it made (of
// values before did not hold), and returns the error: a release leaves the claim of a value
// the owner's row still holds, so the row goes back first.
func (s *Writes[T]) claimChanged(ctx context.Context, op, pk, rk string, now, before *service.Row, undo func()) error {
	cpks, vals, err := s.uniqueValues(now)
	if err != nil {
		return err
	}
	var old []string
	if before != nil {
		if old, _, err = s.uniqueValues(before); err != nil {
			old = nil // a stored value no claim can hold: claim the new ones all the same
		}
	}
	var made []int
	for i, cpk := range cpks {
		if cpk == "" {
			continue
		}
		again := old != nil && old[i] == cpk
		if err := s.Core.Claim(ctx, op, &s.Core.Uniques[i], cpk, vals[i], pk, rk, again); err != nil {
			if undo != nil {
				undo()
			}
			s.releaseMade(ctx, made, cpks, pk, rk)
			return err
		}
		if !again {
			made = append(made, i)
		}
	}
	return nil
}

// releaseMade releases the claims made (indexes into cpks) of a write that failed.
func (s *Writes[T]) releaseMade(ctx context.Context, made []int, cpks []string, pk, rk string) {
	for _, m := range made {
		_ = s.Core.Release(context.WithoutCancel(ctx), &s.Core.Uniques[m], cpks[m], pk, rk)
	}
}

// releaseChanged releases the claims of the values of before that now does not hold (now
// nil: all of them). A release that fails leaves a stale claim, which lookups treat as
// absent and the next claim of the value takes over.
func (s *Writes[T]) releaseChanged(ctx context.Context, pk, rk string, before, now *service.Row) {
	old, _, err := s.uniqueValues(before)
	if err != nil {
		return
	}
	var cur []string
	if now != nil {
		if cur, _, err = s.uniqueValues(now); err != nil {
			return
		}
	}
	for i, cpk := range old {
		if cpk != "" && (cur == nil || cur[i] != cpk) {
			_ = s.Core.Release(ctx, &s.Core.Uniques[i], cpk, pk, rk)
		}
	}
}

// storedRow reads the row at pk, rk whole; nil when there is none.
func (s *Writes[T]) storedRow(ctx context.Context, op, pk, rk string) (*service.Row, error) {
	r, err := s.Core.Acct.Tables.GetRow(ctx, s.Core.Name, pk, rk, nil)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return nil, nil
	}
	if err != nil {
		return nil, s.Core.Translate(op, pk, rk, err)
	}
	if s.Core.Foreign(&r) {
		return nil, nil
	}
	return &r, nil
}

// Create writes v's row, then claims its values.
func (s *Writes[T]) Create(ctx context.Context, v *T) error {
	if v == nil {
		return s.CreateRow(ctx, v)
	}
	now, err := s.checkUnique("create", v)
	if err != nil {
		return err
	}
	w := *v
	if err := s.CreateRow(ctx, &w); err != nil {
		return err
	}
	pk, rk := abstractions.SplitID(s.EntityOf(&w).ID)
	if err := s.claimChanged(ctx, "create", pk, rk, now, nil, func() { s.undo(ctx, &w, now, nil) }); err != nil {
		return err
	}
	*v = w
	return nil
}

// Upsert writes v over the stored row, or creates it, then claims and releases (replace).
func (s *Writes[T]) Upsert(ctx context.Context, v *T) error {
	return s.replace(ctx, "upsert", v, abstractions.LastWriterWins, true)
}

// Update writes v over the stored row in mode, then claims and releases (replace).
func (s *Writes[T]) Update(ctx context.Context, v *T, mode abstractions.ConcurrencyMode) error {
	if v == nil {
		return s.UpdateRow(ctx, v, mode)
	}
	mode, etag, err := s.ConditionOf(v, mode)
	if err != nil {
		return err
	}
	if mode == abstractions.Strict && etag != s.EntityOf(v).ETag {
		return s.UpdateRow(ctx, v, mode) // cannot happen: a Strict update's ETag is v's
	}
	return s.replace(ctx, "update", v, mode, false)
}

// replace writes v over the stored row: the stored row is read, the write is made
// conditional on its version (Strict: v's ETag, which must be it), the new values claimed
// and the old ones released. A lost race with another writer is retried (but for Strict),
// SplitAttempts in all. With create set a missing row is created (Upsert); otherwise it is
// ErrNotFound. v is updated only on success.
func (s *Writes[T]) replace(ctx context.Context, op string, v *T, mode abstractions.ConcurrencyMode, create bool) error {
	if v == nil {
		return s.UpsertRow(ctx, v)
	}
	now, err := s.checkUnique(op, v)
	if err != nil {
		return err
	}
	_, pk, rk, err := s.Core.ResolveID(op, s.EntityOf(v).ID)
	if err != nil {
		return err
	}
	var lastErr error
	for attempt := 1; attempt <= engine.SplitAttempts; attempt++ {
		if err := engine.SplitRetry.Wait(ctx, attempt); err != nil {
			return err
		}
		old, err := s.storedRow(ctx, op, pk, rk)
		if err != nil {
			return err
		}
		w := *v
		switch {
		case old == nil && create:
			err = s.CreateRow(ctx, &w)
			if errors.Is(err, abstractions.ErrDuplicateKey) {
				lastErr = err
				continue // created meanwhile: read it again
			}
		case old == nil:
			return &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.Core.Name, PartitionKey: pk, RowKey: rk,
				Message: "no row has this key; Create or Upsert it"}
		case mode == abstractions.Strict && old.ETag != s.EntityOf(v).ETag:
			return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Core.Name, PartitionKey: pk, RowKey: rk,
				Message: "the row changed since the version this write was based on; read it again and retry (Mutate does that for you)"}
		default:
			s.EntityOf(&w).ETag = old.ETag
			err = s.UpdateRow(ctx, &w, abstractions.Strict)
			if errors.Is(err, abstractions.ErrConcurrencyConflict) || errors.Is(err, abstractions.ErrNotFound) {
				if mode == abstractions.Strict {
					return err
				}
				lastErr = err
				continue // another writer won: read again
			}
		}
		if err != nil {
			return err
		}
		if err := s.claimChanged(ctx, op, pk, rk, now, old, func() { s.undo(ctx, &w, now, old) }); err != nil {
			return err
		}
		if old != nil {
			s.releaseChanged(ctx, pk, rk, old, now)
		}
		*v = w
		return nil
	}
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Core.Name, PartitionKey: pk, RowKey: rk, Err: lastErr,
		Message: "other writers changed the row during each attempt; retry, or serialize the writes of this row"}
}

// undo puts back what a write whose claim failed replaced: the stored row old (deleted
// when there was none), on condition of the version the write stored. When another writer
// changed the row meanwhile, its write stands, but not the refused values: repair takes
// them out of whatever the row now is.
func (s *Writes[T]) undo(ctx context.Context, written *T, now, old *service.Row) {
	ctx = context.WithoutCancel(ctx)
	id, etag := s.EntityOf(written).ID, s.EntityOf(written).ETag
	var err error
	if old == nil {
		_, err = s.DeleteRow(ctx, id, etag)
	} else {
		prev, derr := s.DecodeRow(old)
		if derr != nil {
			return
		}
		s.EntityOf(prev).ETag = etag
		err = s.UpdateRow(ctx, prev, abstractions.Strict)
	}
	pk, rk := abstractions.SplitID(id)
	switch {
	case errors.Is(err, abstractions.ErrConcurrencyConflict):
		s.repair(ctx, pk, rk, now, old, old == nil)
	case err == nil && old != nil:
		// The values put back may have been taken over while the row held the refused
		// ones: claim them again, and take out those another entity holds now.
		cpks, vals, err := s.uniqueValues(old)
		if err != nil {
			return
		}
		lost := old.Clone()
		lost.Properties = nil
		for i, cpk := range cpks {
			if cpk == "" {
				continue
			}
			col := s.Core.Uniques[i].Column
			if lostClaim(s.Core.Claim(ctx, "undo", &s.Core.Uniques[i], cpk, vals[i], pk, rk, true)) {
				lost.Properties = append(lost.Properties, service.Property{Name: col, Value: vals[i]})
			}
		}
		if len(lost.Properties) > 0 {
			s.repair(ctx, pk, rk, &lost, nil, false)
		}
	}
}

// repair runs when the undo of a refused write lost to another writer of the same entity
// (one that built on the refused version, as a patch of other fields or another refused
// write's undo does), and when values an undo put back were taken over meanwhile: while the
// row holds a value of now (refused), it claims it for the row; when another entity's live
// claim holds it, it deletes the row when the refused write created it (created), and
// otherwise puts back the cell of old (the row before the refused write; without one, the
// cell goes) and claims what it put back, on condition of the version read. The other
// writer's other changes stand.
func (s *Writes[T]) repair(ctx context.Context, pk, rk string, now, old *service.Row, created bool) {
	refused, _, err := s.uniqueValues(now)
	if err != nil {
		return
	}
	for attempt := 1; attempt <= engine.SplitAttempts; attempt++ {
		if engine.SplitRetry.Wait(ctx, attempt) != nil {
			return
		}
		cur, err := s.storedRow(ctx, "undo", pk, rk)
		if err != nil || cur == nil {
			return
		}
		held, _, err := s.uniqueValues(cur)
		if err != nil {
			return
		}
		fixed := cur.Clone()
		changed := false
		for i, cpk := range held {
			if cpk == "" || cpk != refused[i] {
				continue
			}
			// The row holds a refused value: it keeps it only with the value's claim
			// (confirmed, or taken over when stale or missing); a value another entity's
			// live claim holds comes out. Leaving it unclaimed would let a third entity
			// claim it while this row still holds it.
			sp := &s.Core.Uniques[i]
			err := s.Core.Claim(ctx, "undo", sp, cpk, mustGet(cur, sp.Column), pk, rk, true)
			switch {
			case lostClaim(err):
				setCell(&fixed, sp.Column, old)
				changed = true
			case err != nil:
				return
			}
		}
		if !changed {
			return
		}
		if created {
			_, err := s.DeleteRow(ctx, pk+abstractions.IDSeparator+rk, cur.ETag)
			if errors.Is(err, abstractions.ErrConcurrencyConflict) {
				continue
			}
			return
		}
		v, err := s.DecodeRow(&fixed)
		if err != nil {
			return
		}
		s.EntityOf(v).ETag = cur.ETag
		err = s.UpdateRow(ctx, v, abstractions.Strict)
		if errors.Is(err, abstractions.ErrConcurrencyConflict) || errors.Is(err, abstractions.ErrNotFound) {
			continue // changed again: look again
		}
		if err != nil {
			return
		}
		if s.claimChanged(ctx, "undo", pk, rk, &fixed, cur, nil) == nil {
			return
		}
		// What was put back was taken over meanwhile: take it out too.
		if refused, _, err = s.uniqueValues(&fixed); err != nil {
			return
		}
		old = nil
	}
}

// lostClaim reports whether the claim of a value an undo or a repair puts back, or finds
// in the row, failed such that the row must not keep the value: another entity holds it,
// or its claim row kept changing (a claim that cannot be confirmed is not kept unclaimed).
func lostClaim(err error) bool {
	return errors.Is(err, abstractions.ErrDuplicateKey) || errors.Is(err, abstractions.ErrConcurrencyConflict)
}

// mustGet returns the cell name of r (the caller checked that it has one).
func mustGet(r *service.Row, name string) service.Value {
	v, _ := r.Get(name)
	return v
}

// setCell makes the cell name of r what it is in from: the same value, or none.
func setCell(r *service.Row, name string, from *service.Row) {
	props := r.Properties[:0:0]
	for _, p := range r.Properties {
		if p.Name != name {
			props = append(props, p)
		}
	}
	if from != nil {
		if v, ok := from.Get(name); ok {
			props = append(props, service.Property{Name: name, Value: v})
		}
	}
	r.Properties = props
}

// Delete deletes the row id, on condition of the version read (or ifMatch), then releases
// its claims.
func (s *Writes[T]) Delete(ctx context.Context, id, ifMatch string) (bool, error) {
	_, pk, rk, err := s.Core.ResolveID("delete", id)
	if err != nil {
		return s.DeleteRow(ctx, id, ifMatch)
	}
	var lastErr error
	for attempt := 1; attempt <= engine.SplitAttempts; attempt++ {
		if err := engine.SplitRetry.Wait(ctx, attempt); err != nil {
			return false, err
		}
		old, err := s.storedRow(ctx, "delete", pk, rk)
		if err != nil {
			return false, err
		}
		if old == nil {
			return s.DeleteRow(ctx, id, ifMatch)
		}
		cond := ifMatch
		if cond == "" {
			cond = old.ETag // so that the values released are the ones deleted
		}
		deleted, err := s.DeleteRow(ctx, id, cond)
		if errors.Is(err, abstractions.ErrConcurrencyConflict) && ifMatch == "" {
			lastErr = err
			continue
		}
		if err != nil || !deleted {
			return deleted, err
		}
		s.releaseChanged(ctx, pk, rk, old, nil)
		return true, nil
	}
	return false, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: "delete", Table: s.Core.Name, PartitionKey: pk, RowKey: rk, Err: lastErr,
		Message: "other writers changed the row during each attempt; retry"}
}
