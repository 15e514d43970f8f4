package tables

import (
	"context"

	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// list reads every row filter selects, through the read cache under key.
func (s *Store[T]) list(ctx context.Context, op, pk, key, filter string) ([]*T, error) {
	if err := ctx.Err(); err != nil {
		return nil, s.core.Unsent(op, pk, "", err)
	}
	var rows []service.Row
	cached := false
	if s.core.Policy.Enabled() {
		if e, ok := s.core.Acct.Cache.Get(key); ok && e.IsList {
			rows, cached = e.Rows, true
		}
		s.core.CountCache(ctx, cached)
	}
	if !cached {
		var err error
		s.core.ReadThrough(key, func() *cache.Entry {
			err = s.core.Scan(ctx, service.Query{Filter: s.core.EntityFilter(filter)}, func(r *service.Row) error {
				// The cache keeps whole entities: continuation rows are left out and a
				// split-aware entity is kept reassembled.
				row, skip, err := s.core.Materialize(ctx, op, r)
				if err == nil && !skip {
					rows = append(rows, row)
				}
				return err
			})
			if err != nil {
				return nil
			}
			if s.core.Acct.Unordered() {
				engine.SortRows(rows)
			}
			return &cache.Entry{Rows: rows, IsList: true}
		})
		if err != nil {
			return nil, s.core.Translate(op, pk, "", err)
		}
	}
	out := make([]*T, 0, len(rows))
	var values slab[T]
	for i := range rows {
		if s.core.Expired(&rows[i]) {
			continue // the list was read (or cached) before the row expired
		}
		v := values.next()
		if err := s.decodeAt(&rows[i], v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// List returns every row of one partition; see [abstractions.Storage.List].
func (s *Store[T]) List(ctx context.Context, partition string) (_ []*T, err error) {
	ctx, c := s.core.BeginPartition(ctx, "list", partition)
	defer c.Finish(&err)
	pk, err := s.core.CheckPartition("list", partition)
	if err != nil {
		return nil, err
	}
	if err := s.core.Planned(&c, "list", odata.Partition(pk), false); err != nil {
		return nil, err
	}
	return s.list(ctx, "list", pk, s.core.PartitionKey(pk), odata.Partition(pk))
}

// ListAll returns every row of the table; see [abstractions.Storage.ListAll].
func (s *Store[T]) ListAll(ctx context.Context) (_ []*T, err error) {
	ctx, c := s.core.Begin(ctx, "list")
	defer c.Finish(&err)
	if err := s.core.Planned(&c, "list", "", true); err != nil {
		return nil, err
	}
	return s.list(ctx, "list", "", s.core.TableKey(), "")
}

// Count counts the rows of one partition, reading keys only; see [abstractions.Storage.Count].
func (s *Store[T]) Count(ctx context.Context, partition string) (_ int, err error) {
	ctx, c := s.core.BeginPartition(ctx, "count", partition)
	defer c.Finish(&err)
	pk, err := s.core.CheckPartition("count", partition)
	if err != nil {
		return 0, err
	}
	if err := s.core.Planned(&c, "count", odata.Partition(pk), false); err != nil {
		return 0, err
	}
	return s.core.Count(ctx, pk, odata.Partition(pk))
}

// CountAll counts the rows of the table, reading keys only; see [abstractions.Storage.CountAll].
func (s *Store[T]) CountAll(ctx context.Context) (_ int, err error) {
	ctx, c := s.core.Begin(ctx, "count")
	defer c.Finish(&err)
	if err := s.core.Planned(&c, "count", "", true); err != nil {
		return 0, err
	}
	return s.core.Count(ctx, "", "")
}
