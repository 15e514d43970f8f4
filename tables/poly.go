package tables

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
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
// The store owns its table unless StoreOptions.SharedTable says otherwise: there is no
// server-side type filter, so List sees every row of the partition, and another store
// pointed at the same table sees this one's rows. With SharedTable every row the store
// writes carries the discriminator (a marker's is empty), and reads skip the rows without
// it, which belong to the typed stores of the table; see StoreOptions.SharedTable.
type PolyStore[B any] struct {
	// host carries the engine's per-table machinery (table creation, error translation,
	// transaction chunking, cache coherence); it is a store of a row type with no columns
	// of its own and caching disabled, and is never used to read or write entities.
	host  *core
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
	host, err := For[polyHost](a, &StoreOptions{Table: cfg.Table, Cache: Disabled})
	if err != nil {
		return nil, err
	}
	return &PolyStore[B]{host: host.core, acct: a, types: types, base: base, shared: cfg.SharedTable,
		codec: codec.Options{Oversized: a.opts.Oversized, WriteTypeName: true, Types: types}}, nil
}

// Table returns the name of the store's table.
func (s *PolyStore[B]) Table() string { return s.host.table }

// Account returns the store's account.
func (s *PolyStore[B]) Account() *Account { return s.acct }

// Types returns the store's type registry.
func (s *PolyStore[B]) Types() *abstractions.TypeRegistry { return s.types }

// EnsureCreated creates the table if it does not exist yet, as Store.EnsureCreated does:
// call it at start-up to fail fast. With Options.NeverCreateTables it only checks that the
// table exists, and a missing table fails with an error matching abstractions.ErrNotFound.
func (s *PolyStore[B]) EnsureCreated(ctx context.Context) error { return s.host.ensureCreated(ctx) }

// Insert writes a new row, or with w.IfMatch replaces the row at that version; see
// abstractions.PolyStorage.
func (s *PolyStore[B]) Insert(ctx context.Context, w abstractions.PolyWrite[B]) (_ string, err error) {
	ctx, c := s.begin(ctx, "insert", w.Key)
	defer c.Finish(&err)
	return s.writeOne(ctx, "insert", service.OpInsert, &w)
}

// Upsert writes the row whether or not one exists, or with w.IfMatch replaces the row at
// that version; see abstractions.PolyStorage.
func (s *PolyStore[B]) Upsert(ctx context.Context, w abstractions.PolyWrite[B]) (_ string, err error) {
	ctx, c := s.begin(ctx, "upsert", w.Key)
	defer c.Finish(&err)
	return s.writeOne(ctx, "upsert", service.OpUpsertReplace, &w)
}

// InsertBatch writes the rows as Insert does, in per-partition transactions; see
// abstractions.PolyStorage.
func (s *PolyStore[B]) InsertBatch(ctx context.Context, ws []abstractions.PolyWrite[B]) (err error) {
	ctx, c := s.begin(ctx, "insert batch", abstractions.TableKey{})
	defer c.Finish(&err)
	return s.batch(ctx, "insert batch", service.OpInsert, ws)
}

// UpsertBatch writes the rows as Upsert does, in per-partition transactions; see
// abstractions.PolyStorage.
func (s *PolyStore[B]) UpsertBatch(ctx context.Context, ws []abstractions.PolyWrite[B]) (err error) {
	ctx, c := s.begin(ctx, "upsert batch", abstractions.TableKey{})
	defer c.Finish(&err)
	return s.batch(ctx, "upsert batch", service.OpUpsertReplace, ws)
}

// begin starts the telemetry of a call of the store about the row key names (a partition
// alone, or nothing, for calls about more).
func (s *PolyStore[B]) begin(ctx context.Context, op string, key abstractions.TableKey) (context.Context, telemetry.Call) {
	ctx, c := s.host.acct.tel.Begin(ctx, s.host.table, op)
	if c.Traced() && key.PartitionKey != "" {
		c.Keys(key.PartitionKey, key.RowKey)
	}
	return ctx, c
}

// writeOne sends one write alone.
func (s *PolyStore[B]) writeOne(ctx context.Context, op string, kind service.Op, w *abstractions.PolyWrite[B]) (string, error) {
	a, err := s.action(op, kind, w)
	if err != nil {
		return "", err
	}
	return s.send(ctx, op, a)
}

// send runs one row action, announcing it to the account's read cache so that stores of
// other types on the table drop what it changes.
func (s *PolyStore[B]) send(ctx context.Context, op string, a service.Action) (string, error) {
	pk, rk := a.Row.PartitionKey, a.Row.RowKey
	if err := ctx.Err(); err != nil {
		return "", s.translate(op, pk, rk, err)
	}
	keys := s.host.writeKeys([2]string{pk, rk})
	s.host.beginWrite(keys)
	w, err := s.host.acct.tables.Write(ctx, s.host.table, a)
	s.host.endWrite(keys, err, nil, service.Written{})
	if err != nil {
		return "", s.translate(op, pk, rk, err)
	}
	return w.ETag, nil
}

// batch checks every write, then sends them as transactions of one partition each.
func (s *PolyStore[B]) batch(ctx context.Context, op string, kind service.Op, ws []abstractions.PolyWrite[B]) error {
	if len(ws) == 0 {
		return nil
	}
	p := &plan{actions: make([]service.Action, len(ws))}
	seen := make(map[abstractions.TableKey]bool, len(ws))
	conditional := false
	for i := range ws {
		a, err := s.action(op, kind, &ws[i])
		if err != nil {
			return err
		}
		k := ws[i].Key
		if seen[k] {
			return &abstractions.StoreError{Kind: abstractions.ErrDuplicateKey, Op: op, Table: s.host.table, PartitionKey: k.PartitionKey, RowKey: k.RowKey,
				Message: "the batch names this key more than once; a transaction writes each row once; nothing was sent"}
		}
		seen[k] = true
		if a.Op != service.OpInsert && hasQuote(k) {
			// The Go SDK writes the keys of a batched replace or upsert into the action's URL
			// without doubling the quote, so the service would act on another row.
			return &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: op, Table: s.host.table, PartitionKey: k.PartitionKey, RowKey: k.RowKey,
				Message: "a key containing ' cannot be replaced or upserted in a batch (the Azure SDK does not escape it); write that row on its own; nothing was sent"}
		}
		conditional = conditional || a.IfMatch != ""
		p.actions[i] = a
	}
	if conditional {
		if n := len(p.chunks()); n > 1 {
			return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.host.table, PartitionKey: ws[0].Key.PartitionKey,
				Message: fmt.Sprintf("the batch holds a write conditional on an ETag but needs %d transactions (one partition, at most %d rows and 4 MiB each), so the condition would guard only part of it; split the batch so each conditional write travels with exactly the rows it guards; nothing was sent",
					n, service.MaxTransactionActions)}
		}
	}
	_, err := s.host.runBatch(ctx, op, p, nil)
	var be *abstractions.BatchError
	if errors.As(err, &be) {
		for i := range be.Partitions {
			be.Partitions[i].Err = s.retell(be.Partitions[i].Err)
		}
		return be
	}
	if err != nil {
		var se *abstractions.StoreError
		if !errors.As(err, &se) {
			pk := ws[0].Key.PartitionKey
			return s.translate(op, pk, "", err)
		}
		return s.retell(err)
	}
	return nil
}

func hasQuote(k abstractions.TableKey) bool {
	return strings.ContainsRune(k.PartitionKey, '\'') || strings.ContainsRune(k.RowKey, '\'')
}

// action checks one write and builds its row action: kind, or a replace conditional on
// w.IfMatch.
func (s *PolyStore[B]) action(op string, kind service.Op, w *abstractions.PolyWrite[B]) (service.Action, error) {
	pk, rk := w.Key.PartitionKey, w.Key.RowKey
	if err := s.checkKeys(op, pk, rk); err != nil {
		return service.Action{}, err
	}
	cols, err := s.columns(op, pk, rk, w.Columns)
	if err != nil {
		return service.Action{}, err
	}
	a := service.Action{Op: kind, Row: service.Row{PartitionKey: pk, RowKey: rk}}
	if w.IfMatch != "" {
		if !wire.IsEntityTag(w.IfMatch) {
			return service.Action{}, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument, badETag(w.IfMatch))
		}
		a.Op, a.IfMatch = service.OpReplace, w.IfMatch
	}
	if item := any(w.Item); item != nil {
		props, err := s.encodeItem(op, pk, rk, item)
		if err != nil {
			return service.Action{}, err
		}
		a.Row.Properties = append(props, cols...)
	} else {
		a.Row.Properties = cols
		if s.shared {
			// In a shared table a marker is told from a typed row by its empty
			// discriminator.
			a.Row.Properties = append([]service.Property{{Name: codec.TypeNameColumn, Value: service.String("")}}, cols...)
		}
	}
	return a, nil
}

// encodeItem encodes an item with its discriminator, after checking that its type is one
// the store may write.
func (s *PolyStore[B]) encodeItem(op, pk, rk string, item any) ([]service.Property, error) {
	v := reflect.ValueOf(item)
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
				fmt.Sprintf("the item is a nil %v; leave Item nil (abstractions.Marker) to write a marker row", t))
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
			fmt.Sprintf("the item is a %v; items of a polymorphic store are structs (or pointers to them)", v.Type()))
	}
	if _, ok := s.types.NameOf(t); !ok {
		return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
			fmt.Sprintf("the item's type %v is not registered, so a read could not create it again; register it with abstractions.RegisterType before writing", t))
	}
	if reason := polyItemRefusal(t); reason != "" {
		return nil, s.refuse(op, pk, rk, abstractions.ErrNotSupported, reason)
	}
	props, err := codec.Encode(item, &s.codec)
	if err != nil {
		return nil, rowError(op, s.host.table, pk, rk, "the item cannot be stored; nothing was sent", err)
	}
	return props, nil
}

// polyItemRefusal says why a polymorphic store refuses to write items of struct type t, or
// returns "". Plans are cached, so this costs a scan of the fields.
func polyItemRefusal(t reflect.Type) string {
	pl, err := codec.PlanOf(t)
	if err != nil {
		return err.Error()
	}
	if pl.Split() != "" || pl.Offload() != "" {
		return fmt.Sprintf("%v declares a type-level split or offload option; polymorphic stores write no split or offloaded values, so store it with For", t)
	}
	for _, f := range pl.Fields() {
		switch {
		case len(f.Protected) > 0:
			return fmt.Sprintf("%v.%s is protected; polymorphic stores do not check protected properties, so store the type with For", t, f.Path)
		case f.Split != "" || f.Offload != "":
			return fmt.Sprintf("%v.%s has a split or offload option; polymorphic stores write no split or offloaded values, so store the type with For", t, f.Path)
		}
	}
	return ""
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
	row, err := s.host.acct.tables.GetRow(ctx, s.host.table, pk, rk, nil)
	if err != nil {
		return nil, s.translate("read", pk, rk, err)
	}
	if s.foreign(&row) {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "read", Table: s.host.table, PartitionKey: pk, RowKey: rk,
			Message: "no row of this store has this key (the row there carries no discriminator: it is a typed row of the shared table)"}
	}
	return s.entry("read", &row)
}

// List reads every row of one partition; see abstractions.PolyStorage.
func (s *PolyStore[B]) List(ctx context.Context, partition string) (_ []*abstractions.PolyEntry[B], err error) {
	ctx, c := s.begin(ctx, "list", abstractions.TableKey{PartitionKey: partition})
	defer c.Finish(&err)
	if reason := checkKey(partition); reason != "" {
		return nil, keyError("list", s.host.table, partition, "", "partition key", reason)
	}
	if err := ctx.Err(); err != nil {
		return nil, s.translate("list", partition, "", err)
	}
	var out []*abstractions.PolyEntry[B]
	err = s.host.scan(ctx, service.Query{Filter: odata.Partition(partition)}, func(r *service.Row) error {
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
		return false, s.refuse("delete", pk, rk, abstractions.ErrInvalidArgument, badETag(ifMatch))
	}
	_, err = s.send(ctx, "delete", service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: ifMatch})
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return false, nil
	}
	return err == nil, err
}

// MergeColumns writes system columns into an existing row; see abstractions.PolyStorage.
func (s *PolyStore[B]) MergeColumns(ctx context.Context, key abstractions.TableKey, columns map[string]any, ifMatch string) (_ string, err error) {
	const op = "merge columns"
	ctx, c := s.begin(ctx, op, key)
	defer c.Finish(&err)
	pk, rk := key.PartitionKey, key.RowKey
	if err := s.checkKeys(op, pk, rk); err != nil {
		return "", err
	}
	if len(columns) == 0 {
		return "", s.refuse(op, pk, rk, abstractions.ErrInvalidArgument, "no columns to merge")
	}
	cols, err := s.columns(op, pk, rk, columns)
	if err != nil {
		return "", err
	}
	switch {
	case ifMatch == "":
		ifMatch = service.ETagAny
	case !wire.IsEntityTag(ifMatch):
		return "", s.refuse(op, pk, rk, abstractions.ErrInvalidArgument, badETag(ifMatch))
	}
	return s.send(ctx, op, service.Action{Op: service.OpMerge, Row: service.Row{PartitionKey: pk, RowKey: rk, Properties: cols}, IfMatch: ifMatch})
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
		if !isSystemColumn(p.Name) {
			continue
		}
		if e.Columns == nil {
			e.Columns = map[string]any{}
		}
		e.Columns[p.Name] = goValue(p.Value)
	}
	if tn, ok := row.Get(codec.TypeNameColumn); !ok || (tn.Kind() == service.KindString && tn.Str() == "") {
		// No discriminator, or the empty one of a marker in a shared table.
		for _, p := range row.Properties {
			if !isSystemColumn(p.Name) {
				return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.host.table, PartitionKey: row.PartitionKey, RowKey: row.RowKey,
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
			r, err := largevalue.AssembleMain(*row, plainColumns(pl))
			if err != nil {
				return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.host.table,
					PartitionKey: row.PartitionKey, RowKey: row.RowKey, Err: err,
					Message: "the row holds a value stored split, which does not reassemble here; nothing was returned"}
			}
			row = &r
		}
	}
	item, err := codec.DecodeAs[B](row, s.types, &s.codec)
	if err != nil {
		if errors.Is(err, abstractions.ErrIntegrity) {
			return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.host.table, PartitionKey: row.PartitionKey, RowKey: row.RowKey,
				Message: fmt.Sprintf("the row's discriminator %.200q does not name a registered type that implements %v, so it is not read "+
					"(register its type with abstractions.RegisterType, or map a legacy name with TypeRegistry.SetFallback)", e.TypeName, s.base),
				Err: err}
		}
		return nil, rowError(op, s.host.table, row.PartitionKey, row.RowKey, "the stored row does not decode into its registered type", err)
	}
	e.Item = item
	return e, nil
}

// foreign reports a row that a store sharing its table leaves to the typed stores: one
// without the discriminator column.
func (s *PolyStore[B]) foreign(r *service.Row) bool {
	if !s.shared {
		return false
	}
	_, ok := r.Get(codec.TypeNameColumn)
	return !ok
}

// checkKeys refuses keys the service would refuse, as written.
func (s *PolyStore[B]) checkKeys(op, pk, rk string) error {
	if reason := checkKey(pk); reason != "" {
		return keyError(op, s.host.table, pk, rk, "partition key", reason)
	}
	if reason := checkKey(rk); reason != "" {
		return keyError(op, s.host.table, pk, rk, "row key", reason)
	}
	return nil
}

// refuse is a refusal of the caller's input, before anything is sent.
func (s *PolyStore[B]) refuse(op, pk, rk string, kind error, msg string) error {
	return &abstractions.StoreError{Kind: kind, Op: op, Table: s.host.table, PartitionKey: pk, RowKey: rk,
		Message: strings.TrimSuffix(msg, "; nothing was sent") + "; nothing was sent"}
}

// translate is the host store's translation, with the advice for a lost condition that
// fits a polymorphic store.
func (s *PolyStore[B]) translate(op, pk, rk string, err error) error {
	return s.retell(s.host.translate(op, pk, rk, err))
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
