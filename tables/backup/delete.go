package backup

import (
	"context"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/service"
)

// Delete deletes the entities of table whose main row filter selects (the service's OData
// filter text; "" selects every row), whatever wrote them, and returns what it deleted:
// Stats.Entities and Rows. It is what `udtables delete` and `udtables clear` run; a
// program that knows its entity type calls tables.Store.DeleteWhere instead, which also
// sweeps the entities' blobs.
//
// An entity goes whole: its main row, its continuation rows and the partition-index rows
// it lists in one entity-group transaction, several entities of a partition in one transaction of at most 100 deletes,
// each row on condition of the version read. An entity changed or deleted by another
// writer meanwhile is left (and not counted). Blobs the deleted entities referenced are
// left to the orphan sweep of the program that owns the table, which removes them once
// they are older than its cleanup grace.
//
// A table with a change feed (package tables/feed): a filter never selects the feed's rows,
// and the entities deleted here get no change record (a store's DeleteWhere writes them);
// "" deletes every row, the feed's too.
//
// With opts.DryRun it counts what it would delete and deletes nothing. A run that fails or
// is cancelled has deleted what its Stats say; running it again deletes the rest, since
// deleted rows no longer match. Progress is reported as for a backup.
func Delete(ctx context.Context, acct *tables.Account, table, filter string, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	if acct == nil || acct.Tables() == nil {
		return Stats{}, fmt.Errorf("%w: delete needs an account with a table service", abstractions.ErrInvalidArgument)
	}
	if err := service.CheckTableName(table); err != nil {
		return Stats{}, err
	}
	src := &source{tbl: acct.Tables(), table: table, r: newRetrier(opts.logger())}
	prog := newProgress(opts.Progress)
	var st Stats
	var pack []service.Action // the deletes of the entities in ents, one partition
	var ents [][]service.Action
	send := func(acts []service.Action) error {
		return src.r.do(ctx, "delete", func() error {
			if len(acts) == 1 {
				_, err := src.tbl.Write(ctx, table, acts[0])
				return err
			}
			_, err := src.tbl.Transact(ctx, table, acts)
			return err
		})
	}
	changed := func(err error) bool {
		return abstractions.HasStatus(err, http.StatusPreconditionFailed, "") || abstractions.HasStatus(err, http.StatusNotFound, "")
	}
	flush := func() error {
		if len(pack) == 0 {
			return nil
		}
		defer func() { pack, ents = nil, nil }()
		err := send(pack)
		if err == nil {
			st.Entities += int64(len(ents))
			st.Rows += int64(len(pack))
			prog.report(&st, false)
			return nil
		}
		if !changed(err) {
			return serviceError("delete", table, pack[0].Row.PartitionKey, callerr.Write, err)
		}
		// Another writer changed or deleted one of them: each on its own, leaving those.
		for _, acts := range ents {
			err := send(acts)
			switch {
			case err == nil:
				st.Entities++
				st.Rows += int64(len(acts))
			case !changed(err):
				return serviceError("delete", table, acts[0].Row.PartitionKey, callerr.Write, err)
			}
		}
		prog.report(&st, false)
		return nil
	}
	var failed error
	err := src.scan(ctx, segment{filter: filter}, func(ent entity) bool {
		ixRow := indexrow.IsKey(ent.rows[0].RowKey) ||
			feedrow.IsKey(ent.rows[0].RowKey) || feedrow.IsPartition(ent.rows[0].PartitionKey)
		if ixRow && filter != "" {
			// An index row goes with the entity that lists it; a change feed's rows (records,
			// marks, leases) are the relays', and a filter never selects them.
			return ctx.Err() == nil
		}
		if opts.DryRun {
			if !ixRow {
				st.Entities++
			}
			st.Rows += int64(len(ent.rows))
			prog.report(&st, false)
			return ctx.Err() == nil
		}
		acts := make([]service.Action, len(ent.rows))
		for i, r := range ent.rows {
			acts[i] = service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: r.PartitionKey, RowKey: r.RowKey}, IfMatch: r.ETag}
		}
		if filter != "" {
			// The partition-index rows the main row lists go with it (a filter that selects
			// every row reaches them on its own).
			for _, k := range indexrow.Stored(&ent.rows[0]) {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: ent.rows[0].PartitionKey, RowKey: k}, IfMatch: service.ETagAny})
			}
		}
		if len(pack) > 0 && (pack[0].Row.PartitionKey != acts[0].Row.PartitionKey || len(pack)+len(acts) > service.MaxTransactionActions) {
			if failed = flush(); failed != nil {
				return false
			}
		}
		pack = append(pack, acts...)
		if !ixRow {
			ents = append(ents, acts) // an index row of a cleared table is a row, not an entity
		}
		return ctx.Err() == nil
	})
	if failed == nil && err == nil {
		failed = flush()
	}
	if failed == nil {
		failed = err
	}
	prog.report(&st, true)
	return st, failed
}
