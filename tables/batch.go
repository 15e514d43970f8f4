package tables

import (
	"context"
	"errors"

	"github.com/unified-data/gotables/tables/internal/indexrow"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// prepareAll prepares every entity before anything is sent, so a batch with one entity that
// cannot be written sends nothing.
func (s *Store[T]) prepareAll(op string, vs []*T) ([]*prepared[T], error) {
	now := s.core.Acct.Now()
	ps := make([]*prepared[T], len(vs))
	for i, v := range vs {
		p, err := s.prepare(op, v, now)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

// CreateBatch inserts the entities in per-partition transactions; see
// [abstractions.Storage.CreateBatch].
func (s *Store[T]) CreateBatch(ctx context.Context, vs []*T) (err error) {
	if err := s.noUniqueBatch("create batch"); err != nil {
		return err
	}
	ctx, c := s.core.Acct.Tel.BeginBatch(ctx, s.core.Name, "create", len(vs))
	defer c.Finish(&err)
	ps, err := s.prepareAll("create batch", vs)
	if err != nil {
		return err
	}
	seen := make(map[[2]string]bool, len(ps))
	for _, p := range ps {
		k := [2]string{p.PK, p.RK}
		if seen[k] {
			return &abstractions.StoreError{Kind: abstractions.ErrDuplicateKey, Op: "create batch", Table: s.core.Name, PartitionKey: p.PK, RowKey: p.RK,
				Message: "the batch names this key more than once; nothing was sent"}
		}
		seen[k] = true
	}
	if s.core.Units() {
		ws := writes(ps)
		_, err = s.core.BatchLarge(ctx, "create batch", engine.ModeCreate, ws, engine.LastOccurrences(ws), commitTo(vs, ps))
		return err
	}
	_, err = s.batch(ctx, "create batch", service.OpInsert, vs, ps)
	return err
}

// UpsertBatch inserts or replaces the entities in per-partition transactions; see
// [abstractions.Storage.UpsertBatch].
func (s *Store[T]) UpsertBatch(ctx context.Context, vs []*T) (_ int, err error) {
	if err := s.noUniqueBatch("upsert batch"); err != nil {
		return 0, err
	}
	ctx, c := s.core.Acct.Tel.BeginBatch(ctx, s.core.Name, "upsert", len(vs))
	defer c.Finish(&err)
	ps, err := s.prepareAll("upsert batch", vs)
	if err != nil {
		return 0, err
	}
	if s.core.Units() {
		// A repeated key is written once, as its last occurrence, and counts as passed.
		ws := writes(ps)
		order := engine.LastOccurrences(ws)
		n, err := s.core.BatchLarge(ctx, "upsert batch", engine.ModeUpsert, ws, order, commitTo(vs, ps))
		if err != nil {
			return n, err
		}
		for i := range ps {
			ps[i].commit(vs[i], service.Written{})
		}
		return len(vs), nil
	}
	return s.batch(ctx, "upsert batch", service.OpUpsertReplace, vs, ps)
}

// batch writes prepared entities with one operation and copies each committed one back to
// the caller's entity. A batch reports no versions, so ETag and Timestamp are cleared.
func (s *Store[T]) batch(ctx context.Context, op string, kind service.Op, vs []*T, ps []*prepared[T]) (int, error) {
	p := &engine.Plan{Actions: make([]service.Action, len(ps))}
	for i, pp := range ps {
		p.Actions[i] = service.Action{Op: kind, Row: pp.Row}
	}
	return s.core.RunBatch(ctx, op, p, commitTo(vs, ps))
}

// writes returns the row parts of prepared entities.
func writes[T any](ps []*prepared[T]) []*engine.Write {
	ws := make([]*engine.Write, len(ps))
	for i, p := range ps {
		ws[i] = &p.Write
	}
	return ws
}

// commitTo copies committed entities back to the caller's. A batch reports no versions (see
// abstractions.Storage.CreateBatch), so ETag and Timestamp are cleared.
func commitTo[T any](vs []*T, ps []*prepared[T]) func(indices []int) {
	return func(indices []int) {
		for _, i := range indices {
			ps[i].commit(vs[i], service.Written{})
		}
	}
}

// DeletePartition deletes every row of a partition; see [abstractions.Storage.DeletePartition].
func (s *Store[T]) DeletePartition(ctx context.Context, partition string) (_ int, err error) {
	ctx, c := s.core.BeginPartition(ctx, "delete partition", partition)
	defer c.Finish(&err)
	pk, err := s.core.CheckPartition("delete partition", partition)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, s.core.Unsent("delete partition", pk, "", err)
	}
	if s.core.Feed != nil {
		return s.core.DeletePartitionFed(ctx, pk)
	}
	if s.core.Split {
		return s.core.DeletePartitionLarge(ctx, pk)
	}
	p := &engine.Plan{SkipGone: true}
	// The rows of the store's partition indexes go after the entities (a stop between the
	// two leaves index rows without an entity, which lookups skip), and are not counted.
	var ixRows []service.Action
	err = s.core.Scan(ctx, service.Query{Filter: odata.Partition(pk), Select: s.core.SharedSel(engine.KeysOnly)}, func(r *service.Row) error {
		del := service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: r.PartitionKey, RowKey: r.RowKey}, IfMatch: service.ETagAny}
		switch {
		case indexrow.IsKey(r.RowKey):
			if len(s.core.Indexes) > 0 {
				ixRows = append(ixRows, del)
			}
		case s.core.Foreign(r):
			// a polymorphic row of a shared table is not this store's
		default:
			p.Actions = append(p.Actions, del)
		}
		return nil
	})
	if err != nil {
		return 0, s.core.Translate("delete partition", pk, "", err)
	}
	entities := len(p.Actions)
	p.Actions = append(p.Actions, ixRows...)
	n, err := s.core.RunBatch(ctx, "delete partition", p, nil)
	n = min(n, entities)
	// One partition: its own error says it all (the count says what was deleted).
	var be *abstractions.BatchError
	if errors.As(err, &be) && len(be.Partitions) == 1 {
		err = be.Partitions[0].Err
	}
	if err != nil {
		// Rows in the transactions that were never sent are still there, but the caller
		// asked for them gone: drop them all so the next read asks the table.
		keys := make([][2]string, len(p.Actions))
		for i, a := range p.Actions {
			keys[i] = [2]string{a.Row.PartitionKey, a.Row.RowKey}
		}
		s.core.Acct.Cache.Drop(s.core.WriteKeys(keys...))
	}
	return n, err
}

// noUniqueBatch refuses a batch of a type with unique indexes: each entity's claims are
// rows of other partitions, written after it one by one.
func (s *Store[T]) noUniqueBatch(op string) error {
	if len(s.core.Uniques) == 0 {
		return nil
	}
	return &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: op, Table: s.core.Name,
		Message: "the type has unique indexes, whose claims are written after each entity; write the entities one by one (Create, Upsert); nothing was sent"}
}
