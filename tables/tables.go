// Package tables is the Azure backend of Unified Data Tables: accounts reached through the
// Azure SDK for Go, and the stores of entity types in them.
//
//	acct, err := tables.NewAccount(os.Getenv("STORAGE_CONNECTION_STRING"), nil)
//	customers, err := tables.For[Customer](acct, nil)
//	err = customers.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|alice"}})
//
// A store implements [abstractions.Storage], whose methods document every call, and the
// generic verbs of package abstractions ([abstractions.Mutate], [abstractions.TryTransition],
// [abstractions.GetOrCreate], …) take it as they take any Storage. The in-memory backend
// (module inmemory) runs the same engine over an in-memory service, so code and tests
// written against abstractions.Storage behave the same on both.
//
// # Accounts
//
// An [Account] is one storage account. Build it once per process with [NewAccount] (from a
// connection string) or [NewAccountWithCredential] (from an endpoint and a token
// credential) and share it: its stores share its read cache and what it knows of its
// tables. Both constructors take one *[Options], where nil means the defaults; the Azure
// SDK's client options (transport, retries, pipeline policies, tracing) go in
// Options.ClientOptions and apply to every client the account builds.
//
// # Stores
//
// [For] returns the [Store] of one entity type, a struct that embeds [abstractions.Entity],
// in a table named after the type unless its [StoreOptions] name one. The table is created
// by the first write that can create a row (Create, Upsert, a batch insert or upsert) and
// finds it missing (never by a read, a Delete, an Update or a Patch: those find no row); call EnsureCreated at start-up to fail fast instead. A credential that may not
// create tables (a table SAS) needs Options.NeverCreateTables.
//
// # Errors
//
// Errors match the sentinels of package abstractions with errors.Is, as its documentation
// describes; a call about one row returns an [*abstractions.StoreError] naming the table and
// the key. A failure the service reported holds an [*abstractions.StatusError] with its
// status and code, and the SDK's *azcore.ResponseError behind it. A connection string,
// endpoint or option the constructors cannot use fails with
// [abstractions.ErrInvalidArgument], and no error repeats a key or a signature.
//
// # Read cache
//
// Each account has a read cache, off by default: [CachePolicy] says what it serves and what
// it promises, and [Options].Cache and [StoreOptions].Cache turn it on.
//
// # Blob support
//
// An account has no blob service unless its options name one: blob features link the blob
// SDK, which a program that stores only table rows does not need. Import package
// tables/azblobs and set Options.Blobs to azblobs.Connect to opt in. Blob offload (large values
// and *abstractions.File fields stored in blobs) needs it too, with Options.BlobOffload; see
// [BlobOffloadOptions], [Store.SweepOrphanBlobs] and [RunOrphanSweep].
package tables

//go:generate go run ./internal/genstore -engine ./engine -contract ../abstractions -pkg tables -type Store -out store_gen.go
//go:generate go run ./internal/genstore -engine ./engine -contract ../abstractions -pkg tables -type PolyStore -out polystore_gen.go
//go:generate go run ./internal/genstore -engine ./engine -contract ../abstractions -pkg tables -type Account -out account_gen.go

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/codec"
	"github.com/unified-data/gotables/tables/engine"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// Options configure an Azure account and every store of it. A nil *Options, like the zero
// value, means the defaults.
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
	// cache entries expire. nil means time.Now.
	Now func() time.Time
	// Cache is the read-cache policy of the account's stores: Disabled (the default),
	// Sliding or Absolute. StoreOptions.Cache overrides it for one store. See [CachePolicy]
	// for what each promises.
	Cache CachePolicy
	// Authorizer decides who may change protected fields through Update and Upsert; nil
	// refuses every such change. See [abstractions.Authorizer].
	Authorizer abstractions.Authorizer
	// RecordKeys lets spans carry row keys and error texts, and log lines carry key values.
	// Off by default, because keys often hold personal data; partition keys are always on
	// spans, and no log line above Debug holds a key unless this is set.
	RecordKeys bool
	// BatchParallelism is the most transactions of different partitions one batch call
	// (CreateBatch, UpsertBatch, a polymorphic batch) has out at once: 0 means
	// engine.DefaultBatchParallelism, 1 sends them one after another in the order of the
	// input. A partition's own transactions always go one after another, in order. When
	// the service answers busy (503 ServerBusy, 500 OperationTimedOut) the account sends
	// fewer at once, growing back as transactions commit, while the SDK's retry policy
	// (ClientOptions.Retry) backs off and retries the refused request.
	BatchParallelism int
	// NeverCreateTables stops the account from ever creating a table: for a least-privilege
	// credential (a table SAS with read, add, update and delete permissions, no create)
	// whose tables an administrator creates. A Create, Upsert or batch insert or upsert
	// into a missing table then fails with an error matching abstractions.ErrNotFound, and
	// EnsureCreated only checks that the table exists. Off by default: the first such write
	// that finds its table missing creates it. Reads, Delete, Update, the Patcher's writes
	// and DeletePartition never create tables, with or without this option: a Delete of a
	// row in a missing table succeeds, an Update or Patch fails with ErrNotFound.
	NeverCreateTables bool

	// ClientOptions are the Azure SDK's client options, applied to every client the account
	// builds (the table client, and the blob client when Blobs is set), with the library's
	// own policy added after the per-call ones:
	//
	//   - Retry: the SDK retries a failed request 3 times by default (4 tries, waiting
	//     from 800 ms and doubling between them, a try having no time limit of its own),
	//     so an unreachable endpoint takes seconds to fail. To fail fast, set Retry.MaxRetries to
	//     -1 (no retry) and Retry.TryTimeout to a few seconds, and give each call a context
	//     deadline: the deadline always wins, ending the call, its retries and its backoff
	//     with an error matching abstractions.ErrUnavailable (and context.DeadlineExceeded).
	//   - Transport: nil means the library's shared transport, which keeps
	//     DefaultMaxIdleConnsPerHost idle connections per host (the SDK's default keeps 10).
	//   - TracingProvider: set it (for OpenTelemetry, with the SDK's azotel adapter) and
	//     every store call and outcome verb call becomes a span, parent of the SDK's HTTP
	//     spans; the zero value traces nothing and costs nothing.
	//   - Logging: the SDK's own request logs (package azcore/log) are off unless you
	//     listen; they redact query parameters such as a SAS signature except the ones
	//     AllowedQueryParams names, so never allow "sig" there. A policy the library adds
	//     after the per-retry ones takes the query off the URL of a failed try's transport
	//     error, which the SDK's retry policy logs as it is.
	ClientOptions azcore.ClientOptions
	// Blobs connects the account's blob service, which blob features need. nil leaves the
	// account without one (and the blob SDK out of the program); set it to azblobs.Connect
	// (package tables/azblobs) to opt in.
	Blobs BlobConnector
	// BlobOffload turns blob offload on: large values above the threshold, and every file
	// (*abstractions.File), are stored in blobs of the account's offload container. It needs
	// Blobs. nil leaves it off. See [BlobOffloadOptions].
	BlobOffload *BlobOffloadOptions
}

// engine returns the options every backend shares.
func (o *Options) engine() *engine.Options {
	if o == nil {
		return nil
	}
	return &engine.Options{
		IDs: o.IDs, ImplicitLastWriterWins: o.ImplicitLastWriterWins, Oversized: o.Oversized,
		Logger: o.Logger, Now: o.Now, Cache: o.Cache, Authorizer: o.Authorizer,
		RecordKeys: o.RecordKeys, Tracer: newTracer(o.ClientOptions.TracingProvider),
		BlobOffload:       o.BlobOffload,
		BatchParallelism:  o.BatchParallelism,
		NeverCreateTables: o.NeverCreateTables,
	}
}

// checkOffload refuses blob offload options out of range, or without a blob service.
func (o *Options) checkOffload() error {
	if o == nil || o.BlobOffload == nil {
		return nil
	}
	if o.Blobs == nil {
		return fmt.Errorf("%w: Options.BlobOffload needs a blob service: set Options.Blobs to azblobs.Connect (package tables/azblobs)",
			abstractions.ErrInvalidArgument)
	}
	return o.BlobOffload.Check()
}

// clientOptions are the SDK client options of every client the account builds.
func (o *Options) clientOptions() azcore.ClientOptions {
	if o == nil {
		return withDefaults(azcore.ClientOptions{})
	}
	return withDefaults(o.ClientOptions)
}

// azure is the options of the table adapter, with busy's policy after the caller's per-try
// ones (the caller's slice is not changed).
func (o *Options) azure(busy *busySignal) *azservice.Options {
	co := o.clientOptions()
	co.PerRetryPolicies = append(co.PerRetryPolicies[:len(co.PerRetryPolicies):len(co.PerRetryPolicies)], busy)
	return &azservice.Options{ClientOptions: co}
}

// A BlobConnector builds an account's blob service from what the account's constructor was
// given. azblobs.Connect is the one a program uses; a test can pass its own.
type BlobConnector func(BlobEndpoint) (service.Blobs, error)

// BlobEndpoint is where an account's blob service is and how to reach it. Exactly one of
// the credentials is set. Its String method, and slog through LogValue, never show the key
// or the signature.
type BlobEndpoint struct {
	// URL is the blob service endpoint, such as "https://myaccount.blob.core.windows.net",
	// without a query.
	URL string
	// AccountName and AccountKey are the account's shared key, when it uses one.
	AccountName, AccountKey string
	// SAS is the shared access signature, without its "?", when the account uses one.
	SAS string
	// Credential is the token credential, when the account uses one.
	Credential azcore.TokenCredential
	// ClientOptions are the account's Options.ClientOptions.
	ClientOptions azcore.ClientOptions
}

// String describes the endpoint without its secrets.
func (e BlobEndpoint) String() string {
	auth := "no credential"
	switch {
	case e.Credential != nil:
		auth = "a token credential"
	case e.AccountKey != "":
		auth = "the shared key of " + e.AccountName
	case e.SAS != "":
		auth = "a shared access signature"
	}
	return e.URL + " with " + auth
}

// GoString is String, so that %#v does not print the secrets either.
func (e BlobEndpoint) GoString() string { return "tables.BlobEndpoint(" + e.String() + ")" }

// LogValue is String, for log/slog.
func (e BlobEndpoint) LogValue() slog.Value { return slog.StringValue(e.String()) }

// Account is one storage account: its table service, its blob service when the options
// connect one, and the options its stores share. Build it with NewAccount or
// NewAccountWithCredential, once per process and account, and share it: stores of one
// account share its read cache and what it knows of its tables. It is safe for concurrent
// use. A zero Account is not usable: For refuses it.
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

// Store is the repository of one entity type T in one table: the Azure implementation of
// [abstractions.Storage], whose methods document each call (Create, Upsert, Update, Delete,
// One, Exists, List, Count, the batches, DeletePartition, Patch, Query, Stream, Page, Any).
// Beyond Storage it has Account, which returns the store's account. The generic verbs of
// package abstractions (Mutate, TryTransition, GetOrCreate, …) take a Store as they take
// any Storage; the store is an [abstractions.Turnstile], so the verbs' calls on one row
// through one account take turns instead of racing each other. It is safe for concurrent
// use; make one per type with For and keep it.
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
// StoreOptions.Cache the account's policy.
//
// The cache is one per account, shared by every store of it. It serves One, Exists, List and
// ListAll; queries, streams, pages and counts always ask the table. Within one process it
// promises:
//
//   - Once a write or delete made through any store of the account has returned, no read
//     answers an older version. A read that overlaps a write of the same row may return what
//     it fetched, but does not leave it cached; overlapping writes of one row leave nothing
//     cached.
//   - A write that fails or is cancelled drops the row and its partition's lists; a call
//     refused before anything was sent drops nothing. A batch drops what it touches, and
//     DeletePartition every row it listed, also when it fails part-way.
//   - A Patch keeps a cached entity, with the patched values, only when that is exact: the
//     entity was cached when the patch was sent, nothing replaced it since, and every patched
//     field is a top-level plain column that reads back as the value set. The entry takes the
//     patch's ETag only when the patch was conditional on the cached version (otherwise a
//     Strict write of it meets a conflict rather than overwrite a change it has not seen).
//     Any other patch drops the entity.
//   - Entries hold rows, not values: every hit decodes a fresh copy, so no caller can change
//     what another gets.
//   - Stores whose own policy is Disabled keep it coherent too.
//   - The outcome verbs' calls on one row take turns (see [abstractions.Turnstile]), so a
//     Mutate reads, cached, the version the previous call of the process wrote. Its attempt
//     fails only when another process wrote since; the failed write drops the entry, and the
//     next attempt reads the table.
//
// Writes made through another account or by another process are seen only when an entry
// expires: use Disabled in secondary processes, and Absolute with a short time in the
// primary one. The cache is an in-process map and cannot fail: a store call's error is
// always the storage error.
type CachePolicy = engine.CachePolicy

// Disabled keeps nothing in the read cache: every read goes to the table. It is the
// default, because a row another process writes is seen only when a cached entry expires.
var Disabled = engine.Disabled

// Sliding keeps a read or written row until it has not been read for d; d <= 0 means
// Disabled. Use it only when this process is the table's only writer: another process's
// writes are never seen while the entry keeps being read.
func Sliding(d time.Duration) CachePolicy { return engine.Sliding(d) }

// Absolute keeps a read or written row for d after it was stored, however often it is
// read: the bound on how stale a write by another process can be. d <= 0 means Disabled.
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

// The oversized-value policies.
const (
	// OversizedRefuse refuses a string above the cell limit with an error matching
	// abstractions.ErrOversizedCell (JSON-stored values are still compressed, which is their
	// format). The default.
	OversizedRefuse = codec.OversizedRefuse
	// OversizedCompress stores a string above the cell limit gzip-compressed, in a binary
	// column a read inflates; one too large even compressed is refused.
	OversizedCompress = codec.OversizedCompress
	// OversizedTrim compresses, and when that is not enough keeps the longest prefix that
	// fits. Data is lost silently: use it only for disposable values.
	OversizedTrim = codec.OversizedTrim
	// OversizedTrimWithMarker is OversizedTrim, ending a trimmed string with a marker so a
	// reader can tell it was cut.
	OversizedTrimWithMarker = codec.OversizedTrimWithMarker
)

// NewAccount returns the account a connection string names: one with an AccountKey or a
// SharedAccessSignature, or "UseDevelopmentStorage=true" for the Azurite emulator on its
// default loopback ports (an emulator on other ports needs the full connection string, with
// its TableEndpoint and BlobEndpoint). A nil opts means the defaults. A connection string it
// cannot use fails with an error matching [abstractions.ErrInvalidArgument] that says which
// setting is wrong and never repeats a key or a signature; so does a string without a blob
// endpoint when opts.Blobs is set. A shared key sent over plain HTTP to a host that is not
// a loopback one is logged as a warning (Options.Logger): the requests it signs can be read
// and replayed on the way.
func NewAccount(connectionString string, opts *Options) (*Account, error) {
	if err := opts.checkOffload(); err != nil {
		return nil, err
	}
	busy := &busySignal{}
	svc, err := azservice.NewFromConnectionString(connectionString, opts.azure(busy))
	if err != nil {
		return nil, err
	}
	var blobs service.Blobs
	if opts != nil && opts.Blobs != nil {
		cs, err := azconn.Parse(connectionString)
		if err != nil {
			return nil, err
		}
		if cs.BlobURL == "" {
			return nil, azconn.NoEndpoint("blob")
		}
		ep := BlobEndpoint{URL: cs.BlobURL, AccountName: cs.AccountName, AccountKey: cs.AccountKey, SAS: cs.SAS, ClientOptions: opts.clientOptions()}
		if blobs, err = opts.Blobs(ep); err != nil {
			return nil, fmt.Errorf("tables: connecting the blob service: %w", err)
		}
	}
	a := engine.NewAccount(svc.Endpoint(), svc, blobs, opts.engine())
	busy.acct.Store(a)
	warnKeyInClear(a, connectionString, blobs != nil)
	return &Account{a}, nil
}

// NewAccountWithCredential returns the account at tableURL (such as
// "https://myaccount.table.core.windows.net") authenticated with a token credential, for
// example one of package azidentity. blobURL is the blob endpoint, needed only when
// opts.Blobs is set ("" otherwise). A nil credential, or an endpoint that is not an http(s)
// URL with a host, or that carries user information or a query, fails with an error
// matching [abstractions.ErrInvalidArgument].
func NewAccountWithCredential(tableURL, blobURL string, cred azcore.TokenCredential, opts *Options) (*Account, error) {
	if err := opts.checkOffload(); err != nil {
		return nil, err
	}
	busy := &busySignal{}
	svc, err := azservice.NewWithCredential(tableURL, cred, opts.azure(busy))
	if err != nil {
		return nil, err
	}
	var blobs service.Blobs
	if opts != nil && opts.Blobs != nil {
		if err := azservice.CheckEndpoint("blob", blobURL); err != nil {
			return nil, err
		}
		if blobs, err = opts.Blobs(BlobEndpoint{URL: blobURL, Credential: cred, ClientOptions: opts.clientOptions()}); err != nil {
			return nil, fmt.Errorf("tables: connecting the blob service: %w", err)
		}
	}
	a := engine.NewAccount(svc.Endpoint(), svc, blobs, opts.engine())
	busy.acct.Store(a)
	return &Account{a}, nil
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
	s, err := engine.New[T, P](a.engine(), opts)
	if err != nil {
		return nil, err
	}
	return &Store[T]{s: s, acct: a}, nil
}

// PolyStore is the storage of many item types in one table, read back through the base
// interface B with each item's concrete type: an event stream, a command log, an outbox. It
// implements [abstractions.PolyStorage], whose methods document each call, and runs the same code as
// inmemory.PolyStore. Make one per table with PolyFor.
type PolyStore[B any] struct {
	s    *engine.PolyStore[B]
	acct *Account
}

// PolyFor returns the polymorphic store of base B in the account. B is an interface every
// item type's pointer implements: directly, or through a base struct the item types embed.
// types names the item types ([codec.NewTypeRegistry], [codec.Register]); pass the same
// registry to the in-memory backend in tests, so both write the same discriminators. Keys
// are used exactly as written ([abstractions.TableKey]). The table is opts.Table, or B's
// name when that is empty, and is created by the first write that finds it missing.
//
// Refused with abstractions.ErrInvalidArgument: a nil or zero account, a nil registry, a B
// that is not an interface, a table name the service would refuse. Refused with
// abstractions.ErrNotSupported: an opts.Cache that enables caching. A polymorphic store has
// no filters, page cursors, update builders, concurrency modes beyond a write's IfMatch, or
// protected properties (an item type with a protected, split or offload field is refused
// when written).
func PolyFor[B any](a *Account, types *codec.TypeRegistry, opts *StoreOptions) (*PolyStore[B], error) {
	s, err := engine.NewPoly[B](a.engine(), types, opts)
	if err != nil {
		return nil, err
	}
	return &PolyStore[B]{s: s, acct: a}, nil
}

// BlobOffloadOptions configure blob offload for every store of an account (Options.BlobOffload,
// which needs Options.Blobs): large values above the threshold, and every file, are stored in
// blobs of one container. It is an alias of engine.BlobOffloadOptions, whose fields are:
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
// The account's constructors refuse options out of range, or offload without Options.Blobs,
// with [abstractions.ErrInvalidArgument]. [Account.BlobOffload] returns the options in force.
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
