package tables

import (
	"context"

	"github.com/unified-data/gotables/abstractions"
)

// DeleteOptions configure DeleteWhere. A nil *DeleteOptions means the defaults.
type DeleteOptions struct {
	// DryRun counts the entities the call would delete and deletes nothing.
	DryRun bool
	// Progress, when set, is called after each page of the query (up to 1,000 rows) with
	// the number of entities deleted (or, with DryRun, counted) so far.
	Progress func(deleted int)
	// AllRows lets a query with neither a partition nor a filter delete every row of the
	// store's table; without it such a query is refused.
	AllRows bool
}

// DeleteWhere deletes the entities q selects (its Partition, RowKeyPrefix and Where) and
// returns how many it deleted. Rows go in entity-group transactions of at most 100 deletes
// of one partition; a split-aware entity goes with its continuation rows and an indexed one
// with its index rows, in one transaction, and blobs are swept once they are older than the
// cleanup grace, as after DeletePartition. Like DeletePartition it leaves the claims of
// unique indexes: stale claims, which lookups treat as absent and SweepClaims removes. A
// row another writer deletes meanwhile is not counted. In a shared table only this store's rows go.
//
// The query is checked as Query checks it, and its plan is subject to the store's
// table-scan policy. Take, Select and Cursor are refused with ErrInvalidArgument, and so is a
// query with no partition and no filter unless opts.AllRows is set.
//
// A call that fails or is cancelled part-way has deleted what it reports and left the rest:
// call it again with the same query to finish, since deleted rows no longer match. Entities
// written meanwhile that match are deleted too. With opts.DryRun it only counts.
func (s *Store[T]) DeleteWhere(ctx context.Context, q abstractions.Query[T], opts *DeleteOptions) (_ int, err error) {
	const op = "delete where"
	ctx, c := s.core.BeginPartition(ctx, op, q.Partition)
	defer c.Finish(&err)
	o := DeleteOptions{}
	if opts != nil {
		o = *opts
	}
	switch {
	case q.Take != 0 || q.Select != nil || q.Cursor != "":
		return 0, s.core.QueryError(op, abstractions.ErrInvalidArgument, "DeleteWhere takes a Partition, a RowKeyPrefix and a Where only; clear Take, Select and Cursor")
	case q.Partition == "" && q.Where.IsZero() && !o.AllRows:
		return 0, s.core.QueryError(op, abstractions.ErrInvalidArgument,
			"the query has no partition and no filter, so it would delete every row of the table; name a partition or a filter, or set DeleteOptions.AllRows")
	}
	p, err := s.prepareQuery(op, &q)
	if err != nil {
		return 0, err
	}
	if err := s.core.Planned(&c, op, p.Filter, q.Partition == "" && q.Where.IsZero()); err != nil {
		return 0, err
	}
	return s.core.DeleteWhere(ctx, op, p.Filter, o.DryRun, o.Progress)
}
