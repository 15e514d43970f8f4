// Package inmemory is the in-memory backend of Unified Data Tables: stores that run the same
// engine as the Azure backend over an in-memory table and blob service (package memservice)
// that succeeds and fails where the Azure service does. Use it in tests and in offline or
// development hosts; it needs no emulator and no network, and links no Azure SDK.
//
//	acct := inmemory.NewAccount(nil)
//	customers, err := inmemory.For[Customer](acct, nil)
//
// A store implements [abstractions.Storage], whose methods document every call, and the
// generic verbs of package abstractions ([abstractions.Mutate], [abstractions.TryTransition],
// …) take it as they take any Storage. The examples of this package run them.
//
// # Accounts
//
// [NewAccount] returns a new, empty account. Accounts share nothing, so each test can take
// its own. [NewAccountOver] builds one over services you provide: a memory service with a
// pinned clock or a throttling model (memservice.WithThrottling), or a wrapper that counts,
// delays or fails calls. Requests answered with a transient failure (503 ServerBusy, …) are
// retried as the Azure SDK retries them ([Options].Retry). Stores, their options and
// the read cache are those of package tables, with the same meaning: [Store],
// [StoreOptions] and [CachePolicy] are the same types as there.
//
// # Fidelity
//
// The memory service follows the real Azure service, not its emulator: status and error
// codes, key, property and size limits, atomic entity-group transactions, ETags in the
// service's shape, keys ordered by UTF-16 code units, and paged queries that parse the filter
// text the engine sends. The fidelity suite (module fidelity) runs every scenario on Azurite
// and on the memory service and requires the same observations, except for a short, tested
// list of known Azurite deviations.
//
// # Errors
//
// Errors are those of the Azure backend: they match the sentinels of package abstractions
// with errors.Is, and a failure the service reported holds an [*abstractions.StatusError]
// with the status and code Azure would answer (and no SDK error behind it).
package inmemory

//go:generate go run ../tables/internal/genstore -engine ../tables/engine -contract ../abstractions -pkg inmemory -type Store -out store_gen.go
//go:generate go run ../tables/internal/genstore -engine ../tables/engine -contract ../abstractions -pkg inmemory -type PolyStore -out polystore_gen.go
//go:generate go run ../tables/internal/genstore -engine ../tables/engine -contract ../abstractions -pkg inmemory -type Account -out account_gen.go

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/codec"
	"github.com/unified-data/gotables/tables/engine"
	"github.com/unified-data/gotables/tables/service"
)

// Options configure an in-memory account and every store of it. A nil *Options, like the
// zero value, means the defaults. They are the settings of tables.Options that do not
// concern the Azure SDK, with the same meaning.
type Options struct {
	// IDs says whether ids are normalised before use (NormalizeIDs, the default: trimmed,
	// spaces as "-", lower case, see [abstractions.NormalizeID]) or used as written
	// (IDsAsWritten).
	IDs IDMode
	// ImplicitLastWriterWins lets Update in Auto mode overwrite a row when the entity carries
	// no ETag, logging a warning each time. Off by default: such an update is refused,
	// because it could silently overwrite a change the caller never saw.
	ImplicitLastWriterWins bool
	// Oversized is what a write does with a string or JSON value too large for one cell:
	// refuse it (the default), compress it, or trim it. See [OversizedPolicy].
	Oversized OversizedPolicy
	// Logger receives the library's warnings; nil means slog.Default().
	Logger *slog.Logger
	// Now is the account's clock: it stamps CreatedAt and UpdatedAt and decides when read
	// cache entries expire. nil means time.Now. (The memory service's own clock, which
	// stamps ETags and Timestamps, is set on the service: see memservice.)
	Now func() time.Time
	// Cache is the read-cache policy of the account's stores: Disabled (the default),
	// Sliding or Absolute. StoreOptions.Cache overrides it for one store. See [CachePolicy]
	// for what each promises.
	Cache CachePolicy
	// Authorizer decides who may change protected fields through Update and Upsert; nil
	// refuses every such change. See [abstractions.Authorizer].
	Authorizer abstractions.Authorizer
	// RecordKeys lets spans carry row keys and error texts, and log lines carry key values.
	// Off by default, because keys often hold personal data.
	RecordKeys bool
	// NeverCreateTables stops the account from ever creating a table: for a least-privilege
	// credential (a table SAS with read, add, update and delete permissions, no create)
	// whose tables an administrator creates. A write to a missing table then fails with an
	// error matching abstractions.ErrNotFound, and EnsureCreated only checks that the table
	// exists. Off by default: the first write that finds its table missing creates it.
	// Reads never create tables.
	NeverCreateTables bool
	// Tracer receives a span per store call and per outcome verb call, as the Azure
	// backend's tracing provider does; nil traces nothing. Tests use it to check what a
	// program traces without a service.
	Tracer engine.Tracer
	// BlobOffload turns blob offload on, in the account's memory blob service: see
	// [BlobOffloadOptions]. nil leaves it off. Options out of range make the stores of
	// types with large values fail (For) with [abstractions.ErrInvalidArgument].
	BlobOffload *BlobOffloadOptions
	// BatchParallelism is the most transactions of different partitions one batch call has
	// out at once, as tables.Options.BatchParallelism: 0 means
	// engine.DefaultBatchParallelism, 1 one after another in the order of the input.
	BatchParallelism int
	// Retry is how a request the service answers with a transient failure (503 ServerBusy
	// from a throttling model, see memservice.WithThrottling, or an error a wrapping test
	// service injects) is retried: the Azure SDK's policy, with its defaults (3 retries,
	// from 800 ms, doubling) for the zero value, so both backends back off alike. Set
	// MaxRetries to -1 for none, or a short RetryDelay in tests. It does not apply over a
	// service that retries like the SDK itself (see [NewAccountOver]).
	Retry RetryPolicy
}

// RetryPolicy is how an in-memory account (Options.Retry) retries a request its service
// answered with a transient status (408, 429, 500, 502, 503 or 504; the memory service answers
// 503 ServerBusy under memservice.WithThrottling): the Azure SDK's retry policy
// (azcore/policy.RetryOptions) with the fields that apply without HTTP, the same defaults and
// the same delays, so that both backends back off alike. The zero value means the defaults,
// and no value is refused. It is an alias of engine.RetryPolicy, whose fields are:
//
//   - MaxRetries int: the retries after the first try; 0 means 3, a negative value none.
//   - RetryDelay time.Duration: the base delay: retry n waits (2^n − 1) × RetryDelay, times
//     a random factor in [0.8, 1.3), at most MaxRetryDelay. 0 means 800 ms; a negative
//     value retries at once.
//   - MaxRetryDelay time.Duration: the cap on one wait; 0 means 60 s, a negative value no
//     cap.
//
// A context that ends during a wait ends the call with the context's error. Every busy
// answer, retried or not, also makes batch calls send fewer transactions at once for a while
// (see [Account.NoteBusy]).
type RetryPolicy = engine.RetryPolicy

func (o *Options) engine() *engine.Options {
	if o == nil {
		return &engine.Options{Retry: &RetryPolicy{}}
	}
	retry := o.Retry
	return &engine.Options{
		IDs: o.IDs, ImplicitLastWriterWins: o.ImplicitLastWriterWins, Oversized: o.Oversized,
		Logger: o.Logger, Now: o.Now, Cache: o.Cache, Authorizer: o.Authorizer,
		RecordKeys: o.RecordKeys, Tracer: o.Tracer, BlobOffload: o.BlobOffload,
		BatchParallelism: o.BatchParallelism, Retry: &retry,
		NeverCreateTables: o.NeverCreateTables,
	}
}

// Account is one in-memory storage account: its table and blob services and the options its
// stores share. Accounts share nothing: two of them are two storage accounts. Stores of one
// account share its read cache. It is safe for concurrent use. A zero Account is not usable:
// For refuses it.
//
// Its methods forward to the engine's account (account_gen.go is generated: go generate).
type Account struct{ s *engine.Account }

// engine returns the engine's account, nil for a nil or zero Account (which the engine
// refuses).
func (a *Account) engine() *engine.Account {
	if a == nil {
		return nil
	}
	return a.s
}

// Store is the repository of one entity type T in one table: the in-memory implementation of
// [abstractions.Storage], whose methods document each call. It runs the same code as
// tables.Store. Beyond Storage it has Account, which returns the store's account; like
// tables.Store it is an [abstractions.Turnstile], so the verbs' calls on one row through one
// account take turns. It is safe for concurrent use; make one per type with For and keep it.
//
// Its methods forward to the engine both backends run (store_gen.go is generated from it:
// go generate).
type Store[T any] struct {
	s    *engine.Store[T]
	acct *Account
}

// StoreOptions configure one store ([For], [PolyFor]). A nil *StoreOptions, like the zero
// value, means the defaults. It is an alias of engine.StoreOptions, whose fields are:
//
//   - Table string: the name of the store's table. "" names it after the type (T's Go name
//     for For, the base interface's for PolyFor), which must then be a valid table name:
//     name generic or short types here. A name the service would refuse (3 to 63 letters and
//     digits, starting with a letter, not "tables") fails For and PolyFor with
//     [abstractions.ErrInvalidArgument].
//   - Cache CachePolicy: the store's read-cache policy. The zero value keeps the account's
//     Options.Cache; [Disabled], [Sliding] or [Absolute] override it for this store only.
//     PolyFor refuses a policy that caches with [abstractions.ErrNotSupported] (polymorphic
//     stores keep no cache).
type StoreOptions = engine.StoreOptions

// CachePolicy is a read-cache policy: [Disabled] (the default), [Sliding] or [Absolute].
// The zero value means "not set": for Options.Cache that is Disabled, for
// StoreOptions.Cache the account's policy. It is the type of tables.CachePolicy, whose
// documentation says what the cache serves and what it promises; the in-memory backend keeps
// the same promises, by the same code.
type CachePolicy = engine.CachePolicy

// Disabled keeps nothing in the read cache: every read goes to the table. It is the
// default.
var Disabled = engine.Disabled

// Sliding keeps a read or written row until it has not been read for d; d <= 0 means
// Disabled. Use it only when this process is the table's only writer.
func Sliding(d time.Duration) CachePolicy { return engine.Sliding(d) }

// Absolute keeps a read or written row for d after it was stored, however often it is
// read; d <= 0 means Disabled.
func Absolute(d time.Duration) CachePolicy { return engine.Absolute(d) }

// IDMode says whether stores normalise ids (Options.IDs).
type IDMode = engine.IDMode

// The ID modes.
const (
	// NormalizeIDs trims ids, replaces inner spaces by "-" and lower-cases them before use
	// (abstractions.NormalizeID). The default.
	NormalizeIDs = engine.NormalizeIDs
	// IDsAsWritten uses ids exactly as given.
	IDsAsWritten = engine.IDsAsWritten
)

// OversizedPolicy is what a write does with a string or JSON value too large for one
// table cell (Options.Oversized).
type OversizedPolicy = codec.OversizedPolicy

// The oversized-value policies of [Options].Oversized, as for the Azure backend.
const (
	// OversizedRefuse refuses a string above the cell limit (the default).
	OversizedRefuse = codec.OversizedRefuse
	// OversizedCompress stores a string above the cell limit gzip-compressed.
	OversizedCompress = codec.OversizedCompress
	// OversizedTrim compresses and, when that is not enough, keeps the longest prefix
	// that fits (data is lost silently).
	OversizedTrim = codec.OversizedTrim
	// OversizedTrimWithMarker is OversizedTrim with a marker at the end of a cut string.
	OversizedTrimWithMarker = codec.OversizedTrimWithMarker
)

var accounts atomic.Int64

// NewAccount returns a new, empty in-memory account. A nil opts means the defaults.
func NewAccount(opts *Options) *Account {
	svc := memservice.New()
	return NewAccountOver(svc, svc, opts)
}

// NewAccountOver returns an account over services you provide: a memory service you
// configured yourself (a pinned clock, injected empty pages), or a wrapper around one that
// counts, delays or fails calls in a test. blobs may be nil when no blob feature is used;
// tables must not be (the stores of such an account are refused).
//
// A tables service that retries like the Azure SDK itself ([service.SDKRetrier], such as
// faults.Tables) is not retried again: Options.Retry is ignored over it, so each call makes
// the SDK's number of tries, not that number squared.
func NewAccountOver(tables service.Tables, blobs service.Blobs, opts *Options) *Account {
	name := fmt.Sprintf("memory://account-%d", accounts.Add(1))
	eo := opts.engine()
	if r, ok := tables.(service.SDKRetrier); ok && r.RetriesLikeSDK() {
		eo.Retry = nil
	}
	return &Account{engine.NewAccount(name, tables, blobs, eo)}
}

// For returns the store of entity type T in the account: T is a struct that embeds
// [abstractions.Entity] (the constraint on P, [abstractions.EntityPtr], makes the compiler
// check it; write For[Customer](acct, nil)). The table is named after the type unless opts.Table names it.
// A nil or zero account, and a table name the service would refuse (3–63 letters and
// digits, starting with a letter), fail with [abstractions.ErrInvalidArgument]; a field the
// serializer cannot map fails with [abstractions.ErrNotSupported], naming the field.
func For[T any, P abstractions.EntityPtr[T]](a *Account, opts *StoreOptions) (*Store[T], error) {
	s, err := engine.New[T, P](a.engine(), opts)
	if err != nil {
		return nil, err
	}
	return &Store[T]{s: s, acct: a}, nil
}

// PolyStore is the storage of many item types in one table, read back through the base
// interface B with each item's concrete type. It implements [abstractions.PolyStorage], and runs
// the same code as tables.PolyStore. Make one per table with PolyFor.
type PolyStore[B any] struct {
	s    *engine.PolyStore[B]
	acct *Account
}

// PolyFor returns the polymorphic store of base B in the account, as tables.PolyFor does for
// the Azure backend and with the same refusals. Pass it the registry production uses
// ([codec.TypeRegistry]): the discriminators a test sees are then the ones Azure stores,
// and a duplicate key names the same table.
func PolyFor[B any](a *Account, types *codec.TypeRegistry, opts *StoreOptions) (*PolyStore[B], error) {
	s, err := engine.NewPoly[B](a.engine(), types, opts)
	if err != nil {
		return nil, err
	}
	return &PolyStore[B]{s: s, acct: a}, nil
}

// BlobOffloadOptions configure blob offload for every store of an account
// (Options.BlobOffload): large values above the threshold, and every file, are stored in
// blobs of one container of the account's blob service. It is an alias of
// engine.BlobOffloadOptions, whose fields are:
//
//   - Container string: the offload container, created on first use; "" means
//     "unified-tables-values". It belongs to offload alone: the orphan sweeps list all of a
//     table's prefix in it (and delete only names of the offload shape). A name the blob
//     service would refuse (3 to 63 lower-case letters, digits and single hyphens, starting
//     and ending with a letter or digit) is refused.
//   - ThresholdBytes int: the most stored bytes a large value keeps in the table; a split
//     value whose stored (encoded) bytes exceed it goes to a blob instead. 0 means 3,145,728;
//     it may be 1 to 4,194,304, and is refused outside that range.
//   - CleanupGrace time.Duration: how old a blob a replace or delete released must be (since
//     it was last written or touched, on the blob service's clock) to be deleted at once;
//     younger ones are left to the orphan sweep. 0 means [DefaultCleanupGrace] (5 minutes);
//     [NoCleanup] turns the cleanup after writes and deletes off (every released blob waits
//     for the sweep); a negative grace means none beyond the clock's one-second resolution
//     (for tests only: a blob released in the second it was written waits for the sweep). A blob's last-modified
//     time has one-second resolution, so a grace below a second protects nothing: a blob
//     another writer touched in the second of the commit could be deleted under it.
//
// Options out of range make [For] fail, for types with large values, with
// [abstractions.ErrInvalidArgument]. [Account.BlobOffload] returns the options in force.
type BlobOffloadOptions = engine.BlobOffloadOptions

// DefaultCleanupGrace and NoCleanup are the default cleanup grace and the grace that turns
// the cleanup after writes and deletes off.
const (
	DefaultCleanupGrace = engine.DefaultCleanupGrace
	NoCleanup           = engine.NoCleanup
)

// SweepOptions configure [RunOrphanSweep]. A nil *SweepOptions, like the zero value, means
// the defaults. It is an alias of engine.SweepOptions, whose fields are:
//
//   - Interval time.Duration: the pause between the end of one round and the start of the
//     next; 0 means one hour.
//   - OlderThan time.Duration: the age a blob must have to be swept. It must exceed the
//     longest write, since a younger blob may belong to a write still in progress; 0 means
//     one hour.
//   - InitialDelay time.Duration: the pause before the first round; 0 means one minute, a
//     negative value none.
//   - Logger *slog.Logger: receives each round's failures (at Error) and counts (at Debug);
//     nil means slog.Default().
//
// A negative Interval or OlderThan makes RunOrphanSweep fail with
// [abstractions.ErrInvalidArgument] before anything runs.
type SweepOptions = engine.SweepOptions

// SweepError reports the blobs (or partitions) a sweep could not delete after trying all
// of them; it unwraps to the joined failures.
type SweepError = engine.SweepError

// OrphanSweeper is what [RunOrphanSweep] sweeps: a [Store] of a type with large values.
type OrphanSweeper = engine.OrphanSweeper

// RunOrphanSweep runs the table-wide orphan blob sweep of each store on a schedule until ctx
// ends, and returns ctx's error; see [engine.RunOrphanSweep]. Run it on a goroutine of your
// own: it starts none.
func RunOrphanSweep(ctx context.Context, opts *SweepOptions, stores ...OrphanSweeper) error {
	return engine.RunOrphanSweep(ctx, opts, stores...)
}
