package tables

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Store is the repository of entity type T in one table of an account. It implements
// abstractions.Storage[T] and is safe for concurrent use.
type Store[T any] struct {
	// verbHooks queue the outcome verbs on the account's rows (turn), trace them
	// (startSpan) and say whether the store caches reads (driver.CachesReads); it has no
	// exported member, so it adds nothing to the store's API.
	verbHooks
	acct       *Account
	table      string
	cacheTable string // the table's name as cache keys hold it
	keys       cacheKeys
	plan       *codec.Plan
	policy     CachePolicy
	// split reports a split-aware type (codec.Plan.LargeValues); large are its large-value
	// columns as reads reassemble them, aliases included (see large.go); files are its
	// file fields; stateSel is the projection of the read before a split-aware write (nil:
	// the whole row). A type that is not split-aware reads split values on the main row of
	// its columns plain (plainColumns).
	split    bool
	large    []largevalue.Column
	files    []*codec.Field
	stateSel []string
	plain    []largevalue.Column
	// shared: the table is shared with polymorphic stores (StoreOptions.SharedTable), so
	// reads skip the rows that carry a discriminator.
	shared bool
	// entity returns the Entity base of a *T: P(v).Base() for the P of New, so the
	// compiler, not a run-time assertion, guarantees every T has one.
	entity func(*T) *abstractions.Entity
}

var _ abstractions.Storage[struct{ abstractions.Entity }] = (*Store[struct{ abstractions.Entity }])(nil)

// verbHooks names driver.Hooks unexported, so that the field Store embeds is unexported.
type verbHooks = driver.Hooks

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
	if a == nil || a.tables == nil {
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
	if cfg.SharedTable && plan.LargeValues() {
		return nil, fmt.Errorf("%w: store of %v: a split-aware type (a split or offload option) cannot share its table with polymorphic stores; give it a table of its own",
			abstractions.ErrNotSupported, t)
	}
	if plan.LargeValues() && a.off != nil {
		if a.offErr != nil {
			return nil, fmt.Errorf("store of %v: %w", t, a.offErr)
		}
		if a.blobs == nil {
			return nil, fmt.Errorf("%w: store of %v: the account configures blob offload and has no blob service; give it one (Options.Blobs = azblobs.Connect)",
				abstractions.ErrInvalidArgument, t)
		}
	}
	s := &Store[T]{acct: a, table: cfg.Table, cacheTable: strings.ToLower(cfg.Table), keys: newCacheKeys(strings.ToLower(cfg.Table)), plan: plan, policy: policy,
		split: plan.LargeValues(), shared: cfg.SharedTable,
		entity: func(v *T) *abstractions.Entity { return P(v).Base() }}
	s.verbHooks = driver.NewHooks(s.turn, s.startSpan, policy.enabled())
	if s.split {
		s.large = largeColumns(plan, a.off != nil)
		s.files = fileFields(plan)
		s.stateSel = stateProjection(s.large, s.files)
	} else {
		s.plain = plainColumns(plan)
	}
	return s, nil
}

// Table returns the name of the store's table.
func (s *Store[T]) Table() string { return s.table }

// Account returns the store's account.
func (s *Store[T]) Account() *Account { return s.acct }

// EnsureCreated creates the table if it does not exist yet. With Options.NeverCreateTables
// it only checks that the table exists, reading at most one row (which a table SAS
// allows), and a missing table fails with an error matching abstractions.ErrNotFound.
func (s *Store[T]) EnsureCreated(ctx context.Context) (err error) {
	ctx, c := s.begin(ctx, "create table")
	defer c.Finish(&err)
	if err := ctx.Err(); err != nil {
		return s.translate("create table", "", "", err)
	}
	if s.acct.opts.NeverCreateTables {
		_, err := s.acct.tables.Tables.Query(ctx, s.table, service.Query{Select: keysOnly, Top: 1}) // without the stores' rules: a missing table must fail
		if err == nil {
			s.acct.knowTable(s.table)
		}
		return s.translate("create table", "", "", err)
	}
	return s.translate("create table", "", "", s.acct.ensureTable(ctx, s.table))
}

// send sends the actions of one partition: one alone, several as one transaction. Table
// creation and the check of a write's echo happen below it, in the account's storeTables
// (tableaccess.go, echo.go), as for every call a store makes.
func (s *Store[T]) send(ctx context.Context, acts []service.Action) error {
	if len(acts) == 1 {
		_, err := s.acct.tables.Write(ctx, s.table, acts[0])
		return err
	}
	_, err := s.acct.tables.Transact(ctx, s.table, acts)
	return err
}

// translate turns a failure of a call about one row (or, with rk "", one partition, or with
// both keys "", the table) into a *abstractions.StoreError that names it and matches the
// sentinel of the condition:
//
//   - 409 EntityAlreadyExists: ErrDuplicateKey; 412: ErrConcurrencyConflict; 404
//     ResourceNotFound or TableNotFound: ErrNotFound;
//   - a 400 answer to a single-row write conditioned on an ETag that the service did not
//     recognise (refusedETag): ErrInvalidArgument;
//   - a 5xx answer (left after the SDK's retries), a transport failure (refused connection,
//     DNS, reset, timeout) or the call's deadline passing: ErrUnavailable;
//   - the call's context cancelled: context.Canceled;
//   - any other answer of the service: no sentinel, the *StatusError in the chain says what.
//
// The rules are the same for the table and the blob service (blob offload and files go
// through translate too). Only the message of a write without an answer says that it may
// or may not have been applied (see requestOf). An error that already is a StoreError, or
// that matches one of the library's own sentinels (an integrity or configuration error from
// the service layer), keeps its kind.
func (s *Store[T]) translate(op, pk, rk string, err error) error {
	return translate(op, s.table, pk, rk, err)
}

// translate is Store.translate for a call that may not be about a table (table is then "").
func translate(op, table, pk, rk string, err error) error {
	if err == nil {
		return nil
	}
	var already *abstractions.StoreError
	if errors.As(err, &already) {
		return err
	}
	e := &abstractions.StoreError{Op: op, Table: table, PartitionKey: pk, RowKey: rk, Err: err}
	var se *abstractions.StatusError
	req := requestOf(op)
	ended, isEnded := callerr.Ended(err, req)
	var tag *refusedETag
	switch {
	case errors.As(err, &tag):
		e.Kind = abstractions.ErrInvalidArgument
		e.Message = fmt.Sprintf("the service refused the ETag %q: it is not one the service issued; "+
			"use the ETag a read or write of the row returned", tag.etag)
	case errors.As(err, &se):
		switch {
		case se.StatusCode == http.StatusConflict && se.ErrorCode == "EntityAlreadyExists":
			e.Kind = abstractions.ErrDuplicateKey
			e.Message = "a row with this key already exists; use Upsert or Update to change it"
		case se.StatusCode == http.StatusPreconditionFailed:
			e.Kind = abstractions.ErrConcurrencyConflict
			e.Message = "the row changed since the version this write was based on; read it again and retry (Mutate does that for you)"
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "ResourceNotFound":
			e.Kind = abstractions.ErrNotFound
			e.Message = "no row has this key"
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "TableNotFound":
			e.Kind = abstractions.ErrNotFound
			e.Message = "the table does not exist under this name; name a table in one case everywhere " +
				"(the Azurite emulator finds a table only under the case it was created with)"
			if errors.As(err, new(*notCreated)) {
				e.Message = "the table does not exist, and an account with Options.NeverCreateTables does not create it: " +
					"create it with an administrative credential"
			}
		default:
			f := callerr.Answered(se, req, "the table service refused the request")
			e.Kind, e.Message = f.Kind, f.Message
		}
	case isEnded:
		e.Kind, e.Message = ended.Kind, ended.Message
	case ownError(err):
		return err
	default:
		f := callerr.Unreachable(req)
		e.Kind, e.Message = f.Kind, f.Message
	}
	return e
}

// requestOf tells the store operations that only read (the verbs' own ops) from the ones
// that may write. Any op not named here counts as a write, whose failure without an answer
// may have been applied; that includes a read a write makes first, since the write as a
// whole is what the caller asked for.
func requestOf(op string) callerr.Request {
	switch op {
	case "read", "exists", "list", "count", "query", "stream", "any", "page", "ping", "open file", "read file":
		return callerr.Read
	}
	return callerr.Write
}

// librarySentinels are the errors the service layer may wrap itself (a stored value that
// fails to decode, a blob service that is not configured, a request the SDK cannot send).
// The codec's errors keep their own types too (ownError).
var librarySentinels = []error{
	abstractions.ErrIntegrity, abstractions.ErrBlobOffloadNotConfigured, abstractions.ErrNotSupported,
	abstractions.ErrInvalidArgument, abstractions.ErrInvalidKey, abstractions.ErrOversizedCell,
	abstractions.ErrOversizedValue,
}

func ownError(err error) bool {
	for _, s := range librarySentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	// A stored value that does not fit its field, met while a scan decodes what it reads,
	// is not a failure to reach the service.
	var ve *codec.ValueError
	var pe *codec.PlanError
	return errors.As(err, &ve) || errors.As(err, &pe)
}
