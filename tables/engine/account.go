package engine

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/codec"
	"github.com/unified-data/gotables/tables/service"
)

// IDMode says whether stores normalise ids.
type IDMode uint8

const (
	// NormalizeIDs trims ids, replaces inner spaces by "-" and lower-cases them before use
	// (abstractions.NormalizeID), and a partition given on its own as the partition part of
	// an id (abstractions.NormalizePartition). The default.
	NormalizeIDs IDMode = iota
	// IDsAsWritten uses ids exactly as given.
	IDsAsWritten
)

// Options configure every store of an account. A nil *Options, like the zero value, means
// the defaults. The backends' own options (tables.Options, inmemory.Options) carry these
// settings and add their own.
type Options struct {
	// IDs says whether ids are normalised (the default) or used as written.
	IDs IDMode
	// ImplicitLastWriterWins lets Update in Auto mode overwrite a row when the entity
	// carries no ETag, logging a warning each time. Off by default: such an update is
	// refused, because it could silently overwrite a change the caller never saw.
	ImplicitLastWriterWins bool
	// Oversized is the policy for string and JSON values too large for one cell; the
	// default refuses them (see codec.OversizedPolicy).
	Oversized codec.OversizedPolicy
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
	// Now is the account's clock: it stamps CreatedAt and UpdatedAt and decides when read
	// cache entries expire. nil means time.Now.
	Now func() time.Time
	// Cache is the read-cache policy of the account's stores; the zero value, like
	// Disabled, reads the table every time. A store's StoreOptions.Cache overrides it. See
	// CachePolicy for what each policy promises.
	Cache CachePolicy
	// Authorizer decides who may change protected fields on Update and Upsert; nil refuses
	// every such change (see abstractions.Authorizer).
	Authorizer abstractions.Authorizer
	// Tracer receives a span per store call and per outcome verb call; nil traces nothing.
	Tracer Tracer
	// RecordKeys lets spans carry row keys and logs carry key values. Off by default:
	// keys often hold personal data (an email, a user name). Partition keys are always on
	// spans; no log line above Debug ever holds a key unless this is set.
	RecordKeys bool
	// BlobOffload turns blob offload on (tier 3 of large values, and files): see
	// BlobOffloadOptions. nil leaves it off: large values stay in the table, a value that
	// needs a blob is refused (ErrOversizedValue) and a stored blob reference cannot be
	// read (ErrBlobOffloadNotConfigured). The account needs a blob service.
	BlobOffload *BlobOffloadOptions
	// BatchParallelism is the most transactions of different partitions one batch call
	// (CreateBatch, UpsertBatch, a polymorphic batch) has out at once. 0 means
	// DefaultBatchParallelism; 1 sends them one after another, in the order of the input.
	// The transactions of one partition are always sent one after another, in order. After
	// the service answers busy the account sends fewer at once for a while (see pressure.go).
	BatchParallelism int
	// Retry, when not nil, makes the account retry a request its table service answered
	// with a transient failure (408, 429, 500, 502, 503, 504), with exponential backoff, as
	// the Azure SDK's retry policy does. The Azure backend leaves it nil, because the SDK
	// retries; the memory backend sets it, so both back off alike.
	Retry *RetryPolicy
	// NeverCreateTables stops the account from ever sending Create Table: for a
	// least-privilege credential, such as a table SAS with read, add, update and delete
	// permissions only, whose tables an administrator creates. A write to a missing table
	// then fails with an error matching abstractions.ErrNotFound, and EnsureCreated checks
	// that the table exists instead of creating it. Off by default: the first write to a
	// missing table creates it. Reads never create tables either way.
	NeverCreateTables bool
}

// Account is one storage account: its services and the options every store of it shares.
// It is safe for concurrent use.
type Account struct {
	tables *storeTables // the service as the stores use it: given, with retries, with the stores' rules
	blobs  service.Blobs
	name   string
	opts   Options
	codec  codec.Options

	cache *readCache // one per account, shared by all its stores
	turns turnstile  // the rows' queues of the outcome verbs (turnstile.go)

	// off is the blob offload configuration, nil when off; offErr refuses split-aware
	// stores when the options are out of range.
	off      *offloadConfig
	offErr   error
	given    service.Tables // the table service as NewAccount was given it
	pressure *pressure      // how many batch transactions may be out at once

	mu      sync.Mutex
	created map[string]uint64 // tables known to exist, by lower-case name: the tableGen that made them known
	// tableGen counts what the account learnt of tables (a creation, a write that found one),
	// so that a write can tell a table learnt of after it was sent (recreateTable).
	tableGen atomic.Uint64
}

// NewAccount returns an account over the given services. name identifies the account in
// messages (an endpoint URL, say). blobs may be nil when no blob feature is used. A nil opts
// means the defaults. tables must not be nil: stores of an account without one are refused.
func NewAccount(name string, tables service.Tables, blobs service.Blobs, opts *Options) *Account {
	a := &Account{given: tables, blobs: blobs, name: name, created: map[string]uint64{}}
	if opts != nil {
		a.opts = *opts
	}
	a.pressure = newPressure(a.opts.BatchParallelism)
	if tables != nil {
		if a.opts.Retry != nil {
			tables = &retrying{Tables: tables, policy: a.opts.Retry.withDefaults(), busy: a.pressure.busy}
		}
		a.tables = &storeTables{Tables: tables, acct: a}
	}
	a.cache = newReadCache(a.clock)
	if o := a.opts.BlobOffload; o != nil {
		a.offErr = o.Check()
		a.off = newOffload(o)
	}
	a.codec = codec.Options{Oversized: a.opts.Oversized}
	return a
}

// Ping checks that the table service answers and accepts the account's credential, with one
// cheap request that changes nothing (a listing of at most one table). Use it as a
// readiness probe. A service that cannot be reached fails with an error matching
// abstractions.ErrUnavailable; a credential the service refuses (a wrong key, an expired
// SAS) with a *StoreError holding the service's 403 (abstractions.HasStatus(err, 403, "")).
// A SAS scoped to one table cannot list tables: probe such an account with a read of that
// table instead (Store.Exists).
func (a *Account) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return translate("ping", "", "", "", err)
	}
	return translate("ping", "", "", "", a.tables.Ping(ctx))
}

// Name returns the name the account was created with.
func (a *Account) Name() string { return a.name }

// Tables returns the account's table service as the backend built it: without the stores'
// rules (its reads of a missing table fail with TableNotFound, its writes neither create
// tables nor check their echo) and without the retries the account adds on top, which only
// the in-memory backend has (inmemory.Options.Retry); the Azure backend's retries
// (tables.Options.ClientOptions.Retry) are in its HTTP pipeline and apply here too. Writes
// made through it bypass the stores and their read cache: a row a store cached stays cached
// until it expires.
func (a *Account) Tables() service.Tables { return a.given }

// NoteBusy tells the account that its service answered busy (503 ServerBusy, 500
// OperationTimedOut, 429), whether or not the request is then retried: batch calls then
// send fewer transactions at once for a while, instead of adding to the overload. Both
// backends call it themselves: the Azure backend from its HTTP pipeline, on every try the
// SDK's retry policy (tables.Options.ClientOptions.Retry) makes; the in-memory backend from
// its own retries (inmemory.Options.Retry). It is safe for concurrent use.
func (a *Account) NoteBusy() { a.pressure.busy() }

// Blobs returns the account's blob service, or nil. Like Tables, it bypasses the stores.
func (a *Account) Blobs() service.Blobs { return a.blobs }

func (a *Account) logger() *slog.Logger {
	if a.opts.Logger != nil {
		return a.opts.Logger
	}
	return slog.Default()
}

// now is the time a write stamps, in UTC and at the service's 100 ns precision, so the entity
// a write returns holds the same times a read of the row gives.
func (a *Account) now() time.Time {
	return a.clock().UTC().Round(0).Truncate(100 * time.Nanosecond)
}

// clock is the account's clock as given (see Options.Now).
func (a *Account) clock() time.Time {
	if a.opts.Now != nil {
		return a.opts.Now()
	}
	return time.Now()
}

// ensureTable creates the table unless this account already knows it exists. Concurrent
// first uses of one table may both send the create; the loser's 409 TableAlreadyExists is
// success. A failure is not remembered, so the next call tries again.
func (a *Account) ensureTable(ctx context.Context, table string) error {
	key := strings.ToLower(table)
	a.mu.Lock()
	known := a.created[key] != 0
	a.mu.Unlock()
	if known {
		return nil
	}
	err := a.tables.CreateTable(ctx, table)
	if err != nil && !abstractions.HasStatus(err, http.StatusConflict, "TableAlreadyExists") {
		return err
	}
	a.mu.Lock()
	if a.created[key] == 0 {
		a.created[key] = a.tableGen.Add(1)
	}
	a.mu.Unlock()
	return nil
}

// isTableNotFound reports a 404 TableNotFound.
func isTableNotFound(err error) bool {
	return abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound")
}
