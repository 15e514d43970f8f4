package tables

import (
	"context"

	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// scan runs q to its end, page by page, handing each row to fn. Pages may be empty and
// still continue (the real service does that), so only a missing continuation ends it.
func (s *core) scan(ctx context.Context, q service.Query, fn func(*service.Row) error) error {
	for {
		page, err := s.acct.tables.Query(ctx, s.table, q)
		if err != nil {
			return err
		}
		for i := range page.Rows {
			if err := fn(&page.Rows[i]); err != nil {
				return err
			}
		}
		if page.Next == nil {
			return nil
		}
		q.Continuation = page.Next
	}
}

// list reads every row filter selects, through the read cache under key.
func (s *Store[T]) list(ctx context.Context, op, pk, key, filter string) ([]*T, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rows []service.Row
	cached := false
	if s.policy.enabled() {
		if e, ok := s.acct.cache.Get(key); ok && e.IsList {
			rows, cached = e.Rows, true
		}
		s.countCache(ctx, cached)
	}
	if !cached {
		var err error
		s.readThrough(key, func() *cache.Entry {
			err = s.scan(ctx, service.Query{Filter: filter}, func(r *service.Row) error {
				// The cache keeps whole entities: continuation rows are left out and a
				// split-aware entity is kept reassembled.
				row, skip, err := s.materialize(ctx, op, r)
				if err == nil && !skip {
					rows = append(rows, row)
				}
				return err
			})
			if err != nil {
				return nil
			}
			return &cache.Entry{Rows: rows, IsList: true}
		})
		if err != nil {
			return nil, s.translate(op, pk, "", err)
		}
	}
	out := make([]*T, 0, len(rows))
	for i := range rows {
		v, err := s.decode(&rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// List returns every row of one partition; see [abstractions.Storage.List].
func (s *Store[T]) List(ctx context.Context, partition string) (_ []*T, err error) {
	ctx, c := s.beginPartition(ctx, "list", partition)
	defer c.Finish(&err)
	pk, err := s.checkPartition("list", partition)
	if err != nil {
		return nil, err
	}
	return s.list(ctx, "list", pk, s.partitionKey(pk), odata.Partition(pk))
}

// ListAll returns every row of the table; see [abstractions.Storage.ListAll].
func (s *Store[T]) ListAll(ctx context.Context) (_ []*T, err error) {
	ctx, c := s.begin(ctx, "list")
	defer c.Finish(&err)
	return s.list(ctx, "list", "", s.tableKey(), "")
}

func (s *core) count(ctx context.Context, pk, filter string) (int, error) {
	n := 0
	sel := keysOnly
	if s.split {
		// The split-aware type counts entities, not their continuation rows.
		sel = ofOnly
	}
	err := s.scan(ctx, service.Query{Filter: filter, Select: s.sharedSel(sel)}, func(r *service.Row) error {
		if !largevalue.IsContinuation(r) && !s.foreign(r) {
			n++
		}
		return nil
	})
	if err != nil {
		return 0, s.translate("count", pk, "", err)
	}
	return n, nil
}

// Count counts the rows of one partition, reading keys only; see [abstractions.Storage.Count].
func (s *Store[T]) Count(ctx context.Context, partition string) (_ int, err error) {
	ctx, c := s.beginPartition(ctx, "count", partition)
	defer c.Finish(&err)
	pk, err := s.checkPartition("count", partition)
	if err != nil {
		return 0, err
	}
	return s.count(ctx, pk, odata.Partition(pk))
}

// CountAll counts the rows of the table, reading keys only; see [abstractions.Storage.CountAll].
func (s *Store[T]) CountAll(ctx context.Context) (_ int, err error) {
	ctx, c := s.begin(ctx, "count")
	defer c.Finish(&err)
	return s.count(ctx, "", "")
}
