package tables

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/uniquewrite"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Store is the repository of entity type T in one table of an account. It implements
// abstractions.Storage[T] and is safe for concurrent use.
type Store[T any] struct {
	// verbHooks queue the outcome verbs on the account's rows (turn), trace them
	// (startSpan) and say whether the store caches reads (driver.CachesReads); it has no
	// exported member, so it adds nothing to the store's API.
	verbHooks
	// handle gives the packages built on a store (tables/index) its engine table; it has
	// no exported member either.
	handle
	core    *engine.Table
	account *Account
	// entity returns the Entity base of a *T: P(v).Base() for the P of New, so the
	// compiler, not a run-time assertion, guarantees every T has one.
	entity func(*T) *abstractions.Entity
	// written holds the *prepared[T] of single-row writes that succeeded (recycle), so
	// that the next write reuses the copy and the cells' array.
	written sync.Pool
	// unique runs the writes of a type with unique indexes (nil without them).
	unique *uniquewrite.Writes[T]
}

var _ abstractions.Storage[struct{ abstractions.Entity }] = (*Store[struct{ abstractions.Entity }])(nil)

// verbHooks names driver.Hooks unexported, so that the field Store embeds is unexported.
type verbHooks = driver.Hooks

// handle names engine.Handle unexported, as verbHooks does driver.Hooks.
type handle = engine.Handle

// StoreOptions configure one store. A nil *StoreOptions, like the zero value, means the
// defaults.
type StoreOptions struct {
	// Table is the name of the store's table; "" names it after the type (the type's Go
	// name, which must then be a valid table name: name generic or short types here).
	Table string
	// Cache is the store's read-cache policy. The zero CachePolicy keeps the account's
	// Options.Cache; Disabled, Sliding and Absolute override it for this store only.
	Cache CachePolicy
	// SharedTable opts the store into a table it shares with stores of other kinds: typed
	// stores (For) and polymorphic ones (PolyFor) of the same table, each of which reads
	// only its own rows. Every store of a shared table must set it.
	//
	// A typed store that shares its table skips every row carrying the polymorphic
	// discriminator column _TypeName, as it skips continuation rows: One and Exists find no
	// row there (ErrNotFound, false), and List, ListAll, Query, Stream, Any, Page, Count,
	// CountAll and DeletePartition see, count and delete only the rows without it. A
	// skipped row still takes its place in a Page, which may then hold fewer items than
	// its size. A split-aware type (large values) cannot share a table.
	//
	// A polymorphic store that shares its table writes the discriminator on every row,
	// markers included (a marker's is empty), and reads only the rows that carry it: its
	// One finds no row at the key of a typed row (ErrNotFound) and its List and Page skip
	// typed rows. A marker written without the option carries no discriminator and is
	// therefore not seen by a store with it: a table changes to shared only with its
	// markers written again.
	//
	// Without the option every store owns its table: a polymorphic store refuses a row
	// without a discriminator that holds data columns with ErrIntegrity. Keys are the
	// application's to keep apart: a write addresses its row whoever wrote it.
	SharedTable bool
	// TableScans overrides Options.TableScans for this store unless it is zero.
	TableScans TableScanPolicy
}

// For returns the store of entity type T in the account: T is a struct that embeds
// [abstractions.Entity] (the constraint on P, [abstractions.EntityPtr], makes the compiler
// check it; write For[Customer](acct, nil)). The table is named after the type unless opts.Table names it,
// and is created by the first write that finds it missing (or by EnsureCreated), never by a
// read. A nil or zero account, and a table name
// the service would refuse (3–63 letters and digits, starting with a letter: name generic
// or short types with StoreOptions.Table), fail with [abstractions.ErrInvalidArgument]; a
// field the serializer cannot map fails with [abstractions.ErrNotSupported], naming the
// field.
func For[T any, P abstractions.EntityPtr[T]](a *Account, opts *StoreOptions) (*Store[T], error) {
	if a == nil || a.e == nil || a.e.Tables == nil {
		return nil, fmt.Errorf("%w: the account is nil or zero; build it with NewAccount, NewAccountWithCredential or inmemory.NewAccount", abstractions.ErrInvalidArgument)
	}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %v cannot be stored: a stored type is a struct that embeds abstractions.Entity", abstractions.ErrInvalidArgument, t)
	}
	plan, err := codec.PlanOf(t)
	if err != nil {
		return nil, err
	}
	cfg := StoreOptions{}
	if opts != nil {
		cfg = *opts
	}
	if cfg.Table == "" {
		cfg.Table = t.Name()
	}
	policy := a.opts.Cache
	if cfg.Cache.set {
		policy = cfg.Cache
	}
	if err := service.CheckTableName(cfg.Table); err != nil {
		return nil, fmt.Errorf("store of %v: %w (name the table with StoreOptions.Table)", t, err)
	}
	specs, err := indexrow.Specs(plan)
	if err != nil {
		return nil, fmt.Errorf("%w: store of %v: %w", abstractions.ErrInvalidArgument, t, err)
	}
	exp, err := engine.ExpiryOf(plan)
	if err != nil {
		return nil, fmt.Errorf("%w: store of %v: %w", abstractions.ErrInvalidArgument, t, err)
	}
	if cfg.SharedTable && plan.LargeValues() {
		return nil, fmt.Errorf("%w: store of %v: a split-aware type (a split or offload option) cannot share its table with polymorphic stores; give it a table of its own",
			abstractions.ErrNotSupported, t)
	}
	if plan.LargeValues() && a.e.Off != nil {
		if a.e.OffErr != nil {
			return nil, fmt.Errorf("store of %v: %w", t, a.e.OffErr)
		}
		if a.e.Blobs == nil {
			return nil, fmt.Errorf("%w: store of %v: the account configures blob offload and has no blob service; give it one (Options.Blobs = azblobs.Connect)",
				abstractions.ErrInvalidArgument, t)
		}
	}
	cacheTable := a.tableKey(cfg.Table)
	s := &Store[T]{account: a, core: &engine.Table{Acct: a.e, Name: cfg.Table, CacheTable: cacheTable, Keys: cache.NewKeys(cacheTable), Plan: plan, Policy: policy.rule(),
		Split: plan.LargeValues(), Shared: cfg.SharedTable, Scans: scanPolicy(a.opts.TableScans, cfg.TableScans)},
		entity: func(v *T) *abstractions.Entity { return P(v).Base() }}
	if s.core.Policy.Enabled() {
		a.e.Cache.Announce() // from now on every write of the account announces its keys
	}
	s.handle = engine.NewHandle(s.core, func(r *service.Row) (any, error) { return s.decode(r) })
	s.verbHooks = driver.NewHooks(s.turn, s.startSpan, policy.enabled())
	for _, sp := range specs {
		if sp.Unique {
			s.core.Uniques = append(s.core.Uniques, sp)
		} else {
			s.core.Indexes = append(s.core.Indexes, sp)
		}
	}
	if len(s.core.Uniques) > 0 {
		s.unique = &uniquewrite.Writes[T]{Core: s.core, CreateRow: s.create, UpsertRow: s.upsert, UpdateRow: s.update, DeleteRow: s.delete,
			DecodeRow: s.decode, EntityOf: s.entity, ConditionOf: s.updateCondition}
	}
	if len(s.core.Uniques) > 0 && plan.LargeValues() {
		return nil, fmt.Errorf("%w: store of %v: a split-aware type (a split or offload option) cannot have unique indexes yet",
			abstractions.ErrNotSupported, t)
	}
	if exp != nil {
		// The expiry index, which the sweep reads (see engine.ExpirySpec).
		s.core.Indexes = append(s.core.Indexes, engine.ExpirySpec(exp.Column, exp.Path))
	}
	indexed := len(s.core.Indexes) > 0
	if s.core.Split {
		s.core.Large = engine.LargeColumns(plan, a.e.Off != nil)
		s.core.Files = engine.FileFields(plan)
		s.core.StateSel = engine.StateProjection(s.core.Large, s.core.Files)
		if indexed && s.core.StateSel != nil {
			s.core.StateSel = append(s.core.StateSel, indexrow.Column)
		}
	} else {
		s.core.Plain = engine.PlainColumns(plan)
		if indexed {
			// The read before a write that may replace the row: its version and index keys.
			s.core.StateSel = []string{indexrow.Column}
			s.core.Seen = &engine.IxSeen{}
		}
	}
	if exp != nil {
		// The read before a write tells an expired row (engine.Stored.Expired).
		s.core.Expiry = exp
		if s.core.StateSel != nil || !s.core.Split {
			s.core.StateSel = append(s.core.StateSel, exp.Column)
		}
	}
	return s, nil
}

// Table returns the name of the store's table.
func (s *Store[T]) Table() string { return s.core.Name }

// Account returns the store's account.
func (s *Store[T]) Account() *Account { return s.account }

// EnsureCreated creates the table if it does not exist yet. With Options.NeverCreateTables
// it only checks that the table exists, reading at most one row (which a table SAS
// allows), and a missing table fails with an error matching abstractions.ErrNotFound.
func (s *Store[T]) EnsureCreated(ctx context.Context) error { return s.core.EnsureCreated(ctx) }
