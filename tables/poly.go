package tables

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/telemetry"
	"github.com/unified-data/gotables/tables/service"
)

// PolyStore is the storage of many item types in one table, read back through the base B,
// an interface every item type's pointer implements. It implements
// abstractions.PolyStorage[B] and is safe for concurrent use.
//
// Rows carry the discriminator column _TypeName, holding the name the item's type is
// registered under in the store's abstractions.TypeRegistry. A write refuses an item whose
// type is not registered, or that the codec cannot map; a read creates only the type the
// registry (or its explicit fallback) resolves the name to, and only when a pointer to it
// implements B. That check runs on
// every read and has no switch: a name stored in a row is data, and letting it choose any
// type would let stored bytes decide what code runs.
//
// Keys are used as written (TableKey), never normalised, whatever the account's IDMode.
// Marker rows hold system columns only; see abstractions.PolyWrite.
//
// What a polymorphic store does not do: it keeps nothing in the account's read cache (it
// does keep the cache coherent for the other stores of its table, as every write does); it
// has no filters beyond the row-key bounds of Page, no projections, update builders,
// concurrency modes other than IfMatch, or protected properties; and it writes no split or
// offloaded large value. A StoreOptions.Cache that enables caching, a query that asks for
// more, and an item type with a protected, split or offload tag, are refused with
// abstractions.ErrNotSupported.
//
// A polymorphic store may have a change feed (package tables/feed, Enable): its writes then
// append their records in their transactions, as a typed store's do, and its reads skip the
// feed's rows.
//
// The store owns its table unless StoreOptions.SharedTable says otherwise: there is no
// server-side type filter, so List sees every row of the partition, and another store
// pointed at the same table sees this one's rows. With SharedTable every row the store
// writes carries the discriminator (a marker's is empty), and reads skip the rows without
// it, which belong to the typed stores of the table; see StoreOptions.SharedTable.
type PolyStore[B any] struct {
	// handle gives the packages built on a store (tables/feed) its engine table, the host.
	handle
	// host carries the engine's per-table machinery (table creation, error translation,
	// transaction chunking, cache coherence); it is a store of a row type with no columns
	// of its own and caching disabled, and is never used to read or write entities.
	host  *engine.Table
	acct  *Account
	types *abstractions.TypeRegistry
	base  reflect.Type
	codec codec.Options
	// shared: the table is shared with typed stores (StoreOptions.SharedTable), so every
	// row written carries the discriminator and reads skip the rows without it.
	shared bool
}

// polyHost is the row type of a PolyStore's host store.
type polyHost struct{ abstractions.Entity }

var _ abstractions.PolyStorage[any] = (*PolyStore[any])(nil)

// PolyFor returns the polymorphic store of base B in the account. B is an interface every
// item type's pointer implements: directly, or through a base struct the item types embed.
// types names the item types ([abstractions.TypeRegistry], filled with
// [abstractions.RegisterType] where the types are defined); stores over both backends given
// the same registry write the same discriminators. Keys are used exactly as written
// ([abstractions.TableKey]). The table is opts.Table, or B's name when that is empty, and is
// created by the first write that finds it missing.
//
// Refused with abstractions.ErrInvalidArgument: a nil or zero account, a nil registry, a B
// that is not an interface, a table name the service would refuse. Refused with
// abstractions.ErrNotSupported: an opts.Cache that enables caching. A polymorphic store has
// no filters beyond Page's row-key bounds, update builders, concurrency modes beyond a
// write's IfMatch, or protected properties (an item type with a protected, split or offload
// field is refused when written). With opts.SharedTable the store shares its table with
// typed stores; see StoreOptions.SharedTable.
func PolyFor[B any](a *Account, types *abstractions.TypeRegistry, opts *StoreOptions) (*PolyStore[B], error) {
	base := reflect.TypeFor[B]()
	if base.Kind() != reflect.Interface {
		return nil, fmt.Errorf("%w: the base of a polymorphic store is an interface its item types implement (or that a base struct they embed implements); %v is not one (store a single type with For)",
			abstractions.ErrInvalidArgument, base)
	}
	if types == nil {
		return nil, fmt.Errorf("%w: a polymorphic store of %v needs an abstractions.TypeRegistry naming its item types", abstractions.ErrInvalidArgument, base)
	}
	cfg := StoreOptions{}
	if opts != nil {
		cfg = *opts
	}
	if cfg.Cache.enabled() {
		return nil, fmt.Errorf("%w: a polymorphic store keeps no read cache; leave StoreOptions.Cache unset", abstractions.ErrNotSupported)
	}
	if cfg.Table == "" {
		cfg.Table = base.Name()
	}
	if err := service.CheckTableName(cfg.Table); err != nil {
		return nil, fmt.Errorf("polymorphic store of %v: %w (name the table with StoreOptions.Table)", base, err)
	}
	host, err := For[polyHost](a, &StoreOptions{Table: cfg.Table, Cache: Disabled, TableScans: cfg.TableScans})
	if err != nil {
		return nil, err
	}
	return &PolyStore[B]{handle: engine.NewHandle(host.core, nil), host: host.core, acct: a, types: types, base: base, shared: cfg.SharedTable,
		codec: codec.Options{Oversized: codec.OversizedPolicy(a.opts.Oversized), WriteTypeName: true, Types: types}}, nil
}

// Table returns the name of the store's table.
func (s *PolyStore[B]) Table() string { return s.host.Name }

// Account returns the store's account.
func (s *PolyStore[B]) Account() *Account { return s.acct }

// EnsureCreated creates the table if it does not exist yet, as Store.EnsureCreated does:
// call it at start-up to fail fast. With Options.NeverCreateTables it only checks that the
// table exists, and a missing table fails with an error matching abstractions.ErrNotFound.
func (s *PolyStore[B]) EnsureCreated(ctx context.Context) error { return s.host.EnsureCreated(ctx) }

// begin starts the telemetry of a call of the store about the row key names (a partition
// alone, or nothing, for calls about more).
func (s *PolyStore[B]) begin(ctx context.Context, op string, key abstractions.TableKey) (context.Context, telemetry.Call) {
	ctx, c := s.host.Acct.Tel.Begin(ctx, s.host.Name, op)
	if c.Traced() && key.PartitionKey != "" {
		c.Keys(key.PartitionKey, key.RowKey)
	}
	return ctx, c
}

// One reads one row; see abstractions.PolyStorage.
func (s *PolyStore[B]) One(ctx context.Context, key abstractions.TableKey) (_ *abstractions.PolyEntry[B], err error) {
	ctx, c := s.begin(ctx, "read", key)
	defer c.Finish(&err)
	pk, rk := key.PartitionKey, key.RowKey
	if err := s.checkKeys("read", pk, rk); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, s.translate("read", pk, rk, err)
	}
	row, err := s.host.Acct.Tables.GetRow(ctx, s.host.Name, pk, rk, nil)
	if err != nil {
		return nil, s.translate("read", pk, rk, err)
	}
	if s.foreign(&row) {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "read", Table: s.host.Name, PartitionKey: pk, RowKey: rk,
			Message: "no row of this store has this key (the row there carries no discriminator: it is a typed row of the shared table)"}
	}
	return s.entry("read", &row)
}

// List reads every row of one partition; see abstractions.PolyStorage.
func (s *PolyStore[B]) List(ctx context.Context, partition string) (_ []*abstractions.PolyEntry[B], err error) {
	ctx, c := s.begin(ctx, "list", abstractions.TableKey{PartitionKey: partition})
	defer c.Finish(&err)
	if reason := engine.CheckKey(partition); reason != "" {
		return nil, engine.KeyError("list", s.host.Name, partition, "", "partition key", reason)
	}
	if err := s.host.Planned(&c, "list", odata.Partition(partition), false); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, s.translate("list", partition, "", err)
	}
	var out []*abstractions.PolyEntry[B]
	err = s.host.Scan(ctx, service.Query{Filter: odata.Partition(partition)}, func(r *service.Row) error {
		if s.foreign(r) {
			return nil
		}
		e, err := s.entry("list", r)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, s.translate("list", partition, "", err)
	}
	if s.host.Acct.Unordered() {
		slices.SortFunc(out, func(a, b *abstractions.PolyEntry[B]) int { return service.CompareUTF16(a.Key.RowKey, b.Key.RowKey) })
	}
	return out, nil
}

// Delete deletes the row, unconditionally or at the version ifMatch names, and reports
// whether it did; see abstractions.PolyStorage.
func (s *PolyStore[B]) Delete(ctx context.Context, key abstractions.TableKey, ifMatch string) (_ bool, err error) {
	ctx, c := s.begin(ctx, "delete", key)
	defer c.Finish(&err)
	pk, rk := key.PartitionKey, key.RowKey
	if err := s.checkKeys("delete", pk, rk); err != nil {
		return false, err
	}
	switch {
	case ifMatch == "":
		ifMatch = service.ETagAny
	case !wire.IsEntityTag(ifMatch):
		return false, s.refuse("delete", pk, rk, abstractions.ErrInvalidArgument, engine.BadETag(ifMatch))
	}
	if s.host.Feed != nil {
		if err := ctx.Err(); err != nil {
			return false, s.host.Unsent("delete", pk, rk, err)
		}
		// Read first, as a typed store with a feed deletes: the record needs the
		// entity's change number.
		if ifMatch == service.ETagAny {
			ifMatch = ""
		}
		deleted, err := s.host.DeleteLarge(ctx, pk, rk, ifMatch)
		return deleted, s.retell(err)
	}
	_, err = s.send(ctx, "delete", service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: ifMatch})
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return false, nil
	}
	return err == nil, err
}

// entry turns a row into an entry: a marker when it carries no discriminator or an empty
// one, else the item its registered type decodes.
func (s *PolyStore[B]) entry(op string, row *service.Row) (*abstractions.PolyEntry[B], error) {
	e := &abstractions.PolyEntry[B]{Key: abstractions.TableKey{PartitionKey: row.PartitionKey, RowKey: row.RowKey},
		ETag: row.ETag, Timestamp: row.Timestamp}
	for _, p := range row.Properties {
		if p.Name == codec.TypeNameColumn {
			if p.Value.Kind() == service.KindString {
				e.TypeName = p.Value.Str()
			}
			continue
		}
		if !isSystemColumn(p.Name) || p.Name == feedrow.SeqColumn || p.Name == feedrow.VerColumn {
			continue // the feed's cells are the store's, as the discriminator is
		}
		if e.Columns == nil {
			e.Columns = map[string]any{}
		}
		e.Columns[p.Name] = engine.GoValue(p.Value)
	}
	if tn, ok := row.Get(codec.TypeNameColumn); !ok || (tn.Kind() == service.KindString && tn.Str() == "") {
		// No discriminator, or the empty one of a marker in a shared table.
		for _, p := range row.Properties {
			if !isSystemColumn(p.Name) {
				return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.host.Name, PartitionKey: row.PartitionKey, RowKey: row.RowKey,
					Message: fmt.Sprintf("the row carries no %s discriminator yet holds the data column %q, so it is neither an item nor a marker row (was it written by another kind of store?)",
						codec.TypeNameColumn, p.Name)}
			}
		}
		return e, nil
	}
	// An item type writes no split value here, but reads one another store wrote on the
	// main row, as every reader that is not split-aware does.
	if t, ok := s.types.Lookup(e.TypeName); ok && largevalue.HasManifest(row) {
		if pl, err := codec.PlanOf(t); err == nil {
			r, err := largevalue.AssembleMain(*row, engine.PlainColumns(pl))
			if err != nil {
				return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.host.Name,
					PartitionKey: row.PartitionKey, RowKey: row.RowKey, Err: err,
					Message: "the row holds a value stored split, which does not reassemble here; nothing was returned"}
			}
			row = &r
		}
	}
	item, err := codec.DecodeAs[B](row, s.types, &s.codec)
	if err != nil {
		if errors.Is(err, abstractions.ErrIntegrity) {
			return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.host.Name, PartitionKey: row.PartitionKey, RowKey: row.RowKey,
				Message: fmt.Sprintf("the row's discriminator %.200q does not name a registered type that implements %v, so it is not read "+
					"(register its type with abstractions.RegisterType, or map a legacy name with TypeRegistry.SetFallback)", e.TypeName, s.base),
				Err: err}
		}
		return nil, engine.RowError(op, s.host.Name, row.PartitionKey, row.RowKey, "the stored row does not decode into its registered type", err)
	}
	e.Item = item
	return e, nil
}

// foreign reports a row that a store sharing its table leaves to the typed stores (one
// without the discriminator column), and a row of a change feed (a record, a dead letter),
// which no store returns.
func (s *PolyStore[B]) foreign(r *service.Row) bool {
	if feedrow.IsKey(r.RowKey) || feedrow.IsPartition(r.PartitionKey) {
		return true
	}
	if !s.shared {
		return false
	}
	_, ok := r.Get(codec.TypeNameColumn)
	return !ok
}

// checkKeys refuses keys the service would refuse, as written, and the keys reserved for
// the rows of change feeds.
func (s *PolyStore[B]) checkKeys(op, pk, rk string) error {
	if reason := engine.CheckKey(pk); reason != "" {
		return engine.KeyError(op, s.host.Name, pk, rk, "partition key", reason)
	}
	if reason := engine.CheckKey(rk); reason != "" {
		return engine.KeyError(op, s.host.Name, pk, rk, "row key", reason)
	}
	for _, k := range [...]struct{ which, key string }{{"partition key", pk}, {"row key", rk}} {
		if feedrow.IsKey(k.key) {
			return engine.KeyError(op, s.host.Name, pk, rk, k.which,
				fmt.Sprintf("starts with %q, which marks the rows of change feeds; give the row another key", feedrow.Prefix))
		}
	}
	return nil
}

// refuse is a refusal of the caller's input, before anything is sent.
func (s *PolyStore[B]) refuse(op, pk, rk string, kind error, msg string) error {
	return &abstractions.StoreError{Kind: kind, Op: op, Table: s.host.Name, PartitionKey: pk, RowKey: rk,
		Message: strings.TrimSuffix(msg, "; nothing was sent") + "; nothing was sent"}
}

// translate is the host store's translation, with the advice for a lost condition that
// fits a polymorphic store.
func (s *PolyStore[B]) translate(op, pk, rk string, err error) error {
	return s.retell(s.host.Translate(op, pk, rk, err))
}

// retell rewrites the advice of a concurrency conflict (the host's names Mutate, which does
// not apply here).
func (s *PolyStore[B]) retell(err error) error {
	return withConflictAdvice(err, "the row is no longer at the version the write's ETag names (another writer changed it); read it again and decide whether to retry")
}

// withConflictAdvice returns err with msg as its message when it is a concurrency conflict,
// and err itself otherwise.
func withConflictAdvice(err error, msg string) error {
	var se *abstractions.StoreError
	if errors.As(err, &se) && se.Kind == abstractions.ErrConcurrencyConflict {
		c := *se
		c.Message = msg
		return &c
	}
	return err
}
