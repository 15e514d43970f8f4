package engine

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/codec"
	"github.com/unified-data/gotables/tables/service"
)

// IDMode says whether stores normalise ids.
type IDMode uint8

const (
	// NormalizeIDs trims ids, replaces inner spaces by "-" and lower-cases them before use
	// (abstractions.NormalizeID). The default.
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
	tables service.Tables // raw with the stores' rules (storeTables)
	raw    service.Tables
	blobs  service.Blobs
	name   string
	opts   Options
	codec  codec.Options

	cache *readCache // one per account, shared by all its stores

	mu      sync.Mutex
	created map[string]bool // tables known to exist, by lower-case name
}

// NewAccount returns an account over the given services. name identifies the account in
// messages (an endpoint URL, say). blobs may be nil when no blob feature is used. A nil opts
// means the defaults. tables must not be nil: stores of an account without one are refused.
func NewAccount(name string, tables service.Tables, blobs service.Blobs, opts *Options) *Account {
	a := &Account{raw: tables, blobs: blobs, name: name, created: map[string]bool{}}
	if tables != nil {
		a.tables = &storeTables{Tables: tables, acct: a}
	}
	if opts != nil {
		a.opts = *opts
	}
	a.cache = newReadCache(a.clock)
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

// Tables returns the account's table service. Writes made through it bypass the stores and
// their read cache: a row a store cached stays cached until it expires.
func (a *Account) Tables() service.Tables { return a.raw }

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
	known := a.created[key]
	a.mu.Unlock()
	if known {
		return nil
	}
	err := a.tables.CreateTable(ctx, table)
	if err != nil && !abstractions.HasStatus(err, http.StatusConflict, "TableAlreadyExists") {
		return err
	}
	a.mu.Lock()
	a.created[key] = true
	a.mu.Unlock()
	return nil
}

// isTableNotFound reports a 404 TableNotFound.
func isTableNotFound(err error) bool {
	return abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound")
}
