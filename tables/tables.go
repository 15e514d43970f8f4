package tables

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/unified-data/gotables/tables/blobconn"

	"github.com/unified-data/gotables/tables/internal/retry"
	"github.com/unified-data/gotables/tables/internal/telemetry"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"go.opentelemetry.io/otel/metric"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/azservice"
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
	// Now is the account's clock: it stamps CreatedAt and UpdatedAt, decides when read
	// cache entries expire and which rows expired (package tables/expiry). nil means
	// time.Now.
	Now func() time.Time
	// Cache is the read-cache policy of the account's stores: Disabled (the default),
	// Sliding or Absolute. StoreOptions.Cache overrides it for one store. See [CachePolicy]
	// for what each promises.
	Cache CachePolicy
	// CacheSize bounds the account's read cache: the most rows it holds, a cached list
	// counting one per row it holds. When it is full, the entries least likely to be read
	// again are evicted (W-TinyLFU), and an evicted entry is a miss: the next read asks the
	// table. 0 means 10,000 rows; a negative size leaves the cache unbounded, with entries
	// ending only by time and writes.
	CacheSize int
	// Authorizer decides who may change protected fields through Update and Upsert; nil
	// refuses every such change. See [abstractions.Authorizer].
	Authorizer abstractions.Authorizer
	// RecordKeys lets spans carry row keys and error texts, and log lines carry key values.
	// Off by default, because keys often hold personal data; partition keys are always on
	// spans, and no log line above Debug holds a key unless this is set.
	RecordKeys bool
	// BatchParallelism is the most transactions of different partitions one batch call
	// (CreateBatch, UpsertBatch, a polymorphic batch) has out at once: 0 means 8, 1 sends them
	// one after another in the order of the input. A partition's own transactions always go one
	// after another, in order. When the service answers busy (503 ServerBusy, 500
	// OperationTimedOut) the account sends fewer at once, growing back as transactions commit,
	// while the SDK's retry policy (ClientOptions.Retry) backs off and retries the refused
	// request.
	BatchParallelism int
	// NeverCreateTables stops the account from ever creating a table: for a least-privilege
	// credential (a table SAS with read, add, update and delete permissions, no create)
	// whose tables an administrator creates. A Create, Upsert or batch insert or upsert
	// into a missing table then fails with an error matching abstractions.ErrNotFound, and
	// EnsureCreated only checks that the table exists. Off by default: the first such write
	// that finds its table missing creates it. Reads, Delete, Update, Patch
	// and DeletePartition never create tables, with or without this option: a Delete of a
	// row in a missing table succeeds with deleted=false, an Update or Patch fails with
	// ErrNotFound.
	NeverCreateTables bool
	// MeterProvider turns the account's OpenTelemetry metrics on: the duration of every call
	// as the database conventions' db.client.operation.duration (its count is the number of
	// calls), by operation, table and error type, request retries and busy answers, the
	// outcome verbs' lost races and exhausted calls, writes that met their own echo, read
	// cache hits, misses and evictions, the batch transactions out at once and the bytes
	// offloaded to blobs. nil
	// (or the API's no-op provider) turns them off, and then no call records or allocates
	// anything for them. The production guide (docs/production.md, "Metrics") lists every
	// instrument with its unit and attributes.
	MeterProvider metric.MeterProvider
	// TableScans is what the account's stores do with a query that the service answers by
	// reading the whole table: log it once per query shape (the zero policy, the default),
	// send it silently (AllowTableScans) or refuse it (RefuseTableScans).
	// StoreOptions.TableScans overrides it for one store; Store.Explain tells a query's
	// plan without sending it. See docs/queries.md, "Query plans".
	TableScans TableScanPolicy
	// Service is the table service the account talks to: service.Storage (Azure Table
	// Storage, Azurite) or service.Cosmos (Azure Cosmos DB for Table). The zero value tells
	// it from the endpoint (a host *.table.cosmos.azure.com, or a sovereign cloud's
	// equivalent, is Cosmos DB); set it for an endpoint that does not say, such as a proxy
	// or a custom domain. On Cosmos DB the account refuses, before sending, what Cosmos DB
	// would refuse where Table Storage would not, and plans transactions within its 2 MB.
	// See [Account.Service] and docs/cosmos.md.
	Service service.Product

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
	//     128 idle connections per host (the SDK's default keeps 10).
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
	// (package tables/azblobs) to opt in, or to azblobs.ConnectTo for another account's
	// blob service (an Azure Cosmos DB for Table account has none of its own).
	Blobs blobconn.Connector
	// BlobOffload turns blob offload on: large values above the threshold, and every file
	// (*abstractions.File), are stored in blobs of the account's offload container. It needs
	// Blobs. nil leaves it off. See [BlobOffloadOptions].
	BlobOffload *BlobOffloadOptions
}

// config returns what the account's stores share. rp is the request retry the account
// adds itself (nil over the Azure SDK, whose pipeline retries).
func (o *Options) config(rp *retry.Policy) config {
	c := config{Retry: rp}
	if o != nil {
		c.Options = *o
		c.Tracer = newTracer(o.ClientOptions.TracingProvider)
		c.meters = telemetry.NewMeters(o.MeterProvider, o.Logger)
	}
	return c
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
	return o.BlobOffload.check()
}

// clientOptions are the SDK client options of every client the account builds.
func (o *Options) clientOptions() azcore.ClientOptions {
	if o == nil {
		return azconn.WithDefaultTransport(azcore.ClientOptions{})
	}
	return azconn.WithDefaultTransport(o.ClientOptions)
}

// azure is the options of the table adapter, with busy's policy after the caller's per-try
// ones (the caller's slice is not changed), and with metrics on a per-call policy that
// lets busy tell a request's retries from its first try.
func (o *Options) azure(busy *retry.Signal) *azservice.Options {
	co := o.clientOptions()
	co.PerRetryPolicies = append(co.PerRetryPolicies[:len(co.PerRetryPolicies):len(co.PerRetryPolicies)], busy)
	if busy.Meters != nil {
		co.PerCallPolicies = append(co.PerCallPolicies[:len(co.PerCallPolicies):len(co.PerCallPolicies)], retry.CountTries{})
	}
	return &azservice.Options{ClientOptions: co}
}

// OversizedPolicy is what a write does with a string or JSON value too large for one
// table cell (Options.Oversized).
type OversizedPolicy uint8

// The oversized-value policies.
const (
	// OversizedRefuse refuses a string above the cell limit with an error matching
	// abstractions.ErrOversizedCell (JSON-stored values are still compressed, which is their
	// format). The default.
	OversizedRefuse OversizedPolicy = iota
	// OversizedCompress stores a string above the cell limit gzip-compressed, in a binary
	// column a read inflates; one too large even compressed is refused.
	OversizedCompress
	// OversizedTrim compresses, and when that is not enough keeps the longest prefix that
	// fits. Data is lost silently: use it only for disposable values.
	OversizedTrim
	// OversizedTrimWithMarker is OversizedTrim, ending a trimmed string with a marker so a
	// reader can tell it was cut.
	OversizedTrimWithMarker
)

// NewAccount returns the account a connection string names: one with an AccountKey or a
// SharedAccessSignature, or "UseDevelopmentStorage=true" for the Azurite emulator on its
// default loopback ports (an emulator on other ports needs the full connection string, with
// its TableEndpoint and BlobEndpoint). A nil opts means the defaults. A connection string it
// cannot use fails with an error matching [abstractions.ErrInvalidArgument] that says which
// setting is wrong and never repeats a key or a signature; so does a string without a blob
// endpoint when opts.Blobs is azblobs.Connect (an Azure Cosmos DB for Table account has no
// blob service: give it another account's with azblobs.ConnectTo). A shared key sent over plain HTTP to a host that is not
// a loopback one is logged as a warning (Options.Logger): the requests it signs can be read
// and replayed on the way.
func NewAccount(connectionString string, opts *Options) (*Account, error) {
	if err := opts.checkOffload(); err != nil {
		return nil, err
	}
	cfg := opts.config(nil)
	busy := &retry.Signal{Pressure: retry.NewPressure(opts.batchParallelism()), Meters: cfg.meters}
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
		ep := blobconn.Endpoint{URL: cs.BlobURL, AccountName: cs.AccountName, AccountKey: cs.AccountKey, SAS: cs.SAS, ClientOptions: opts.clientOptions()}
		if blobs, err = opts.Blobs(ep); err != nil {
			return nil, fmt.Errorf("tables: connecting the blob service: %w", err)
		}
		cfg.blobURL = blobEndpoint(cs.BlobURL, blobs)
	}
	a := newAccount(svc.Endpoint(), svc, blobs, cfg, busy.Pressure)
	warnKeyInClear(a, connectionString, cfg.blobURL)
	return a, nil
}

// NewAccountWithCredential returns the account at tableURL (such as
// "https://myaccount.table.core.windows.net") authenticated with a token credential, for
// example one of package azidentity. blobURL is the blob endpoint, needed only when
// opts.Blobs is azblobs.Connect ("" otherwise). A nil credential, or an endpoint that is not an http(s)
// URL with a host, or that carries user information or a query, fails with an error
// matching [abstractions.ErrInvalidArgument].
func NewAccountWithCredential(tableURL, blobURL string, cred azcore.TokenCredential, opts *Options) (*Account, error) {
	if err := opts.checkOffload(); err != nil {
		return nil, err
	}
	cfg := opts.config(nil)
	busy := &retry.Signal{Pressure: retry.NewPressure(opts.batchParallelism()), Meters: cfg.meters}
	svc, err := azservice.NewWithCredential(tableURL, cred, opts.azure(busy))
	if err != nil {
		return nil, err
	}
	var blobs service.Blobs
	if opts != nil && opts.Blobs != nil {
		if blobURL != "" {
			if err := azservice.CheckEndpoint("blob", blobURL); err != nil {
				return nil, err
			}
		}
		if blobs, err = opts.Blobs(blobconn.Endpoint{URL: blobURL, Credential: cred, ClientOptions: opts.clientOptions()}); err != nil {
			return nil, fmt.Errorf("tables: connecting the blob service: %w", err)
		}
		cfg.blobURL = blobEndpoint(blobURL, blobs)
	}
	return newAccount(svc.Endpoint(), svc, blobs, cfg, busy.Pressure), nil
}

// blobEndpoint is the endpoint of the blob service an account was given: the one its
// constructor was told, else the one the service reports (a connector such as
// azblobs.ConnectTo reaches another account's).
func blobEndpoint(given string, blobs service.Blobs) string {
	if u, ok := blobs.(interface{ URL() string }); given == "" && ok {
		return u.URL()
	}
	return given
}

// defaultBatchParallelism is the number of partitions' transactions a batch call has out at
// once when Options.BatchParallelism is 0. Measured on Azurite (one emulator process on a
// 2-core machine; 10,000 new rows over 10 partitions): 6.0 s one after another, 3.6 s at 2,
// 3.4 s at 4, 2.8 s at 8 and 3.3 s at 16. The real service serves partitions on many
// servers and has longer round trips, so each step gains more there; past 8 a batch
// mostly adds load when the service throttles.
const defaultBatchParallelism = 8

// batchParallelism is Options.BatchParallelism, 0 for nil options.
func (o *Options) batchParallelism() int {
	if o == nil || o.BatchParallelism <= 0 {
		return defaultBatchParallelism
	}
	return o.BatchParallelism
}

// NewAccountOver returns an account over table and blob services other than the Azure SDK's:
// the in-memory backend's (inmemory.NewAccount calls it), or a wrapper of one that counts,
// delays or fails calls in a test. blobs may be nil when no blob feature is used; tables must
// not be (the stores of such an account are refused). A nil opts means the defaults, and
// each option means what it means on Azure, with two differences: Blobs is not used (blobs is
// the blob service), and of ClientOptions only Retry and TracingProvider apply. Retry is
// applied by the account itself, as the Azure SDK's pipeline applies it: a request the
// service answers with a transient status (408, 429, 500, 502, 503, 504) is retried with the
// same defaults and delays, unless tables is one of the library's services that retry as
// the SDK does (the Azure adapter, faults.Tables), so that each call makes the SDK's number
// of tries, not its square.
//
// name identifies the account in messages and is what [Account.Name] returns. Options out
// of range make the stores of types with large values fail ([For]) with
// [abstractions.ErrInvalidArgument].
func NewAccountOver(name string, tables service.Tables, blobs service.Blobs, opts *Options) *Account {
	var rp *retry.Policy
	if r, ok := tables.(attempt.SDKRetrier); !ok || !r.RetriesLikeSDK() {
		var ro policy.RetryOptions
		if opts != nil {
			ro = opts.ClientOptions.Retry
		}
		rp = &retry.Policy{MaxRetries: int(ro.MaxRetries), RetryDelay: ro.RetryDelay, MaxRetryDelay: ro.MaxRetryDelay}
	}
	return newAccount(name, tables, blobs, opts.config(rp), retry.NewPressure(opts.batchParallelism()))
}
