package tables

import (
	"context"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/tables/internal/access"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/cosmos"
	"github.com/unified-data/gotables/tables/internal/retry"
	"github.com/unified-data/gotables/tables/internal/telemetry"
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

// config is what an account's stores share: the account's Options as given, and what its
// backend's constructor derived from them.
type config struct {
	Options
	// Tracer receives a span per store call; nil traces nothing (the tracing provider of
	// Options.ClientOptions traces nothing).
	Tracer telemetry.Tracer
	// meters record the account's metrics; nil records nothing (Options.MeterProvider is
	// nil).
	meters *telemetry.Meters
	// blobURL is the blob service's endpoint when the constructor knows it: what blob
	// documents' telemetry reports.
	blobURL string
	// Retry, when not nil, makes the account retry a request its table service answered
	// with a transient failure, as the Azure SDK's retry policy does (package retry). Accounts
	// over the Azure SDK leave it nil: the SDK's pipeline retries.
	Retry *retry.Policy
}

// Account is one storage account: its services and the options every store of it shares.
// It is safe for concurrent use.
type Account struct {
	e       *engine.Account // what the stores' engine needs of the account
	name    string
	product service.Product // the service it talks to (Service)
	given   service.Tables  // the table service as the account was given it
	opts    config
	turns   turnstile // the rows' queues of the outcome verbs (turnstile.go)
	// blobTel is the account's telemetry with the blob service as its endpoint, for blob
	// documents (Blobs).
	blobTel telemetry.Telemetry
}

// newAccount returns an account over the given services. name identifies the account in
// messages (an endpoint URL, say). blobs may be nil when no blob feature is used. tables
// must not be nil: stores of an account without one are refused.
func newAccount(name string, tables service.Tables, blobs service.Blobs, cfg config, p *retry.Pressure) *Account {
	if b, ok := blobs.(accountBlobs); ok {
		blobs = b.Blobs // another account's, as its Blobs hands it out: the service itself
	}
	product := cosmos.Product(name, tables, cfg.Service)
	system := telemetry.SystemTables
	if product == service.Cosmos {
		system = telemetry.SystemCosmos
	}
	tel := telemetry.Telemetry{Tracer: cfg.Tracer, Meters: cfg.meters, RecordKeys: cfg.RecordKeys, Logger: cfg.Logger,
		Endpoint: telemetry.NewEndpoint(name, system)}
	e := &engine.Account{Blobs: blobs, Pressure: p, Tel: tel,
		Cfg: engine.Config{NormalizeIDs: cfg.IDs == NormalizeIDs, RecordKeys: cfg.RecordKeys, NeverCreateTables: cfg.NeverCreateTables,
			ImplicitLastWriterWins: cfg.ImplicitLastWriterWins, Authorizer: cfg.Authorizer, Logger: cfg.Logger, NowFunc: cfg.Now}}
	if product == service.Cosmos {
		e.Cfg.MaxBody, e.Cfg.Unordered, e.Cfg.Product = product.MaxBodySize(), true, product
	}
	a := &Account{e: e, given: tables, name: name, product: product, opts: cfg, blobTel: tel}
	a.blobTel.Endpoint = telemetry.NewEndpoint(cfg.blobURL, telemetry.SystemBlob)
	if tables != nil {
		if product == service.Cosmos {
			tables = cosmos.Tables{Tables: tables}
		}
		if cfg.Retry != nil {
			tables = &retry.Tables{Tables: tables, Policy: cfg.Retry.WithDefaults(), Busy: p.Busy, Meters: e.Tel.Meters}
		}
		e.Tables = access.New(tables, access.Config{NeverCreate: cfg.NeverCreateTables, Logger: cfg.Logger, Meters: cfg.meters,
			CaseSensitive: product == service.Cosmos})
	}
	e.Cache = cache.New(e.Clock, cfg.CacheSize, e.Tel.Meters)
	if o := cfg.BlobOffload; o != nil {
		e.OffErr = o.check()
		e.Off = newOffload(o)
	}
	e.Codec = codec.Options{Oversized: codec.OversizedPolicy(cfg.Oversized)}
	return a
}

// Ping checks that the table service answers and accepts the account's credential, with one
// cheap request that changes nothing (a listing of at most one table). Use it as a
// readiness probe. A service that cannot be reached fails with an error matching
// abstractions.ErrUnavailable; a credential the service refuses (a wrong key, an expired
// SAS) with a *StoreError holding the service's 403 (abstractions.HasStatus(err, 403, "")).
// A SAS scoped to one table cannot list tables: probe such an account with a read of that
// table instead (Store.Exists).
func (a *Account) Ping(ctx context.Context) (err error) {
	ctx, c := a.e.Tel.Begin(ctx, "", "ping")
	defer c.Finish(&err)
	if err := ctx.Err(); err != nil {
		return callerr.Table("ping", "", "", "", err)
	}
	return callerr.Table("ping", "", "", "", a.e.Tables.Ping(ctx))
}

// Name returns what names the account in messages: its table service endpoint URL (such as
// "https://myaccount.table.core.windows.net") for an account on Azure or Azurite,
// "memory://account-N" for an in-memory one, or the name given to [NewAccountOver]. It is
// not the storage account's name.
func (a *Account) Name() string { return a.name }

// Tables returns the account's table service as the backend built it: without the stores'
// rules (its reads of a missing table fail with TableNotFound, its writes neither create
// tables nor check their echo) and without the retries an account over another service adds
// on top ([NewAccountOver]); the Azure backend's retries (Options.ClientOptions.Retry) are in
// its HTTP pipeline and apply here too. Writes
// made through it bypass the stores and their read cache: a row a store cached stays cached
// until it expires. The rows it returns are read-only, as [service.Tables] says: on an
// in-memory account they share the stored rows' properties, so change a Row.Clone instead.
func (a *Account) Tables() service.Tables { return a.given }

// Blobs returns the account's blob service, or nil. Like Tables, it bypasses the stores.
// Blob documents built over it (package tables/blobdocs) are traced and measured with the
// account's options.
func (a *Account) Blobs() service.Blobs {
	if a.e.Blobs == nil {
		return nil
	}
	return accountBlobs{a.e.Blobs, &a.blobTel}
}

// accountBlobs is the blob service as Blobs hands it out: the service, carrying the
// account's telemetry (telemetry.Carrier).
type accountBlobs struct {
	service.Blobs
	tel *telemetry.Telemetry
}

func (b accountBlobs) Telemetry() *telemetry.Telemetry { return b.tel }
