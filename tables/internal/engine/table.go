package engine

import (
	"context"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/telemetry"
	"github.com/unified-data/gotables/tables/service"
)

// Table is what a store of a table is whatever its entity type: the table, its cache keys,
// the type's plan and large-value columns, and the methods that work on rows.
type Table struct {
	Acct       *Account
	Name       string
	CacheTable string // the table's name as cache keys hold it
	Keys       cache.Keys
	Plan       *codec.Plan
	Policy     Policy
	// Split reports a split-aware type (codec.Plan.LargeValues); large are its large-value
	// columns as reads reassemble them, aliases included (see large.go); files are its
	// file fields; StateSel is the projection of the read before a split-aware write (nil:
	// the whole row). A type that is not split-aware reads split values on the main row of
	// its columns plain (PlainColumns).
	Split    bool
	Large    []largevalue.Column
	Files    []*codec.Field
	StateSel []string
	Plain    []largevalue.Column
	// Shared: the table is shared with polymorphic stores (StoreOptions.SharedTable), so
	// reads skip the rows that carry a discriminator.
	Shared bool
	// Indexes are the type's partition indexes (package indexrow). A store with indexes
	// writes through the unit path (WriteUnits, BatchLarge, DeleteLarge), which reads the
	// stored row's index keys first where the write may replace it, and writes the index
	// rows in the entity's transaction.
	Indexes []indexrow.Spec
	// Uniques are the type's unique indexes (claims: unique.go).
	Uniques []indexrow.Spec
	// Seen remembers the index keys of versions the store read whole or wrote (nil
	// without indexes).
	Seen *IxSeen
	// Scans is what the store does with a table scan (Options.TableScans, or the store's own).
	Scans ScanPolicy
	// Expiry is the type's expiry declaration (expiry.go), nil when its rows never expire.
	// A store with one writes through the unit path, whose read of the stored row tells an
	// expired row from a live one.
	Expiry *Expiry
	// Feed is the store's change feed (feed.go; nil without one): its writes go through
	// the unit path and send their records in their transactions.
	Feed *Feed
}

// Units reports whether the store's writes go through the unit path: a split-aware type's,
// an indexed one's, one whose rows expire, or one with a feed, whose rows beyond the main
// row are written in its transaction.
func (s *Table) Units() bool {
	return s.Split || len(s.Indexes) > 0 || s.Expiry != nil || s.Feed != nil
}

// EnsureCreated is Store.EnsureCreated and PolyStore.EnsureCreated: it creates the table
// unless the account knows it exists, or with NeverCreateTables only checks that it does.
func (s *Table) EnsureCreated(ctx context.Context) (err error) {
	ctx, c := s.Begin(ctx, "create table")
	defer c.Finish(&err)
	if err := ctx.Err(); err != nil {
		return s.Unsent("create table", "", "", err)
	}
	if s.Acct.Cfg.NeverCreateTables {
		_, err := s.Acct.Tables.Tables.Query(ctx, s.Name, service.Query{Select: KeysOnly, Top: 1}) // without the stores' rules: a missing table must fail
		if err == nil {
			s.Acct.Tables.Know(s.Name)
		}
		return s.Translate("create table", "", "", err)
	}
	return s.Translate("create table", "", "", s.Acct.Tables.Ensure(ctx, s.Name))
}

// Send sends the actions of one partition: one alone, several as one transaction. Table
// creation and the check of a write's echo happen below it, in the account's tables
// (package access), as for every call a store makes.
func (s *Table) Send(ctx context.Context, acts []service.Action) error {
	if len(acts) == 1 {
		_, err := s.Acct.Tables.Write(ctx, s.Name, acts[0])
		return err
	}
	_, err := s.Acct.Tables.Transact(ctx, s.Name, acts)
	return err
}

// Translate turns a failure of a call about one row of the store's table (or, with rk "",
// one partition, or with both keys "", the table) into a *abstractions.StoreError that
// names it and matches the sentinel of the condition: see callerr.Table.
func (s *Table) Translate(op, pk, rk string, err error) error {
	return callerr.Table(op, s.Name, pk, rk, err)
}

// Unsent is the failure of a call whose context ended before it sent anything: a
// *abstractions.StoreError that matches context.Canceled, or ErrUnavailable and
// context.DeadlineExceeded, and says that nothing was applied (Translate would say, of a
// write, that it may or may not have been).
func (s *Table) Unsent(op, pk, rk string, err error) error {
	e := &abstractions.StoreError{Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Err: err}
	f, _ := callerr.Ended(err, callerr.Read)
	e.Kind, e.Message = f.Kind, f.Message+" before anything was sent; nothing was applied"
	if f.Kind == nil {
		e.Message = "the call ended before anything was sent; nothing was applied"
	}
	return e
}

// Begin starts the telemetry of a store call.
func (s *Table) Begin(ctx context.Context, op string) (context.Context, telemetry.Call) {
	return s.Acct.Tel.Begin(ctx, s.Name, op)
}

// BeginID starts the telemetry of a call about the row with the id, with its keys as a
// store resolves them.
func (s *Table) BeginID(ctx context.Context, op, id string) (context.Context, telemetry.Call) {
	ctx, c := s.Begin(ctx, op)
	if c.Traced() {
		c.Keys(abstractions.SplitID(s.NormalID(id)))
	}
	return ctx, c
}

// BeginPartition starts the telemetry of a call about one partition ("" for the whole
// table).
func (s *Table) BeginPartition(ctx context.Context, op, partition string) (context.Context, telemetry.Call) {
	ctx, c := s.Begin(ctx, op)
	if c.Traced() && partition != "" {
		c.Keys(s.NormalPartition(partition), "")
	}
	return ctx, c
}

// CountCache records a lookup of the read cache when the store caches (a store whose
// policy is Disabled does not look).
func (s *Table) CountCache(ctx context.Context, hit bool) {
	if s.Policy.Enabled() {
		s.Acct.Tel.Meters.CacheLookup(ctx, s.Name, hit)
	}
}

// Scan runs q to its end, page by page, handing each row to fn. Pages may be empty and
// still continue (the real service does that), so only a missing continuation ends it.
func (s *Table) Scan(ctx context.Context, q service.Query, fn func(*service.Row) error) error {
	for {
		page, err := s.Acct.Tables.Query(ctx, s.Name, q)
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

// Count counts the rows of the filter (a partition's, or the table's), skipping the rows a
// store of this type does not own, reading keys only.
func (s *Table) Count(ctx context.Context, pk, filter string) (int, error) {
	n := 0
	sel := KeysOnly
	if s.Split {
		// The split-aware type counts entities, not their continuation rows.
		sel = OfOnly
	}
	err := s.Scan(ctx, service.Query{Filter: s.EntityFilter(filter), Select: s.SharedSel(sel)}, func(r *service.Row) error {
		if !largevalue.IsContinuation(r) && !s.Hidden(r) {
			n++
		}
		return nil
	})
	if err != nil {
		return 0, s.Translate("count", pk, "", err)
	}
	return n, nil
}
