package engine

import (
	"log/slog"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/access"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/retry"
	"github.com/unified-data/gotables/tables/internal/telemetry"
	"github.com/unified-data/gotables/tables/service"
)

// Account is what the engine needs of an account: its services as the stores use them, the
// read cache, the batch window, telemetry, blob offload and the options the row code reads.
type Account struct {
	Tables *access.Tables // the service as the stores use it: given, with retries, with the stores' rules (package access)
	Blobs  service.Blobs
	Codec  codec.Options
	Cache  *cache.Cache // one per account, shared by all its stores

	// Off is the blob offload configuration, nil when off; OffErr refuses split-aware
	// stores when the options are out of range.
	Off      *OffloadConfig
	OffErr   error
	Pressure *retry.Pressure     // how many batch transactions may be out at once
	Tel      telemetry.Telemetry // the account's spans and metrics
	Cfg      Config
	Scans    ScanShapes // the table scans' shapes already logged
	expiry   expiryClock
	// feedClock hands out the times of change records, one clock for every store of the
	// account, so that the records its stores write to one partition (of a shared table)
	// sort in the order they were made.
	feedClock feedrow.Clock
}

// Config are the options the engine reads.
type Config struct {
	NormalizeIDs           bool // Options.IDs is NormalizeIDs
	RecordKeys             bool
	NeverCreateTables      bool
	ImplicitLastWriterWins bool
	Authorizer             abstractions.Authorizer
	Logger                 *slog.Logger
	NowFunc                func() time.Time
	TableScans             ScanPolicy // the stores' table-scan policy unless a store sets its own
	// MaxBody is the largest transaction request body the account's service takes: 0 means
	// service.MaxBodySize (Table Storage's 4 MiB); Cosmos DB for Table takes
	// service.CosmosMaxBodySize.
	MaxBody int
	// Unordered says the service returns query results in no key order (Cosmos DB for
	// Table): reads that promise key order sort what they read (ordered.go).
	Unordered bool
	// Product is the service the account talks to (0: Table Storage), whose count of a
	// row's stored bytes the planners use (service.EntitySizeOn).
	Product service.Product
}

// MaxBody is the largest transaction request body the account's service takes (Config.MaxBody).
func (a *Account) MaxBody() int {
	if a.Cfg.MaxBody > 0 {
		return a.Cfg.MaxBody
	}
	return service.MaxBodySize
}

// TxBudget is an empty transaction, to be filled unit by unit within the account's
// service's limits: 100 actions, a request body within MaxBody (4 MiB on Table Storage,
// 2 MB on Cosmos DB for Table), and rows counted as the service counts them (Product).
// Every path that packs rows into transactions of its own, and the large-value planner,
// plans with it.
func (a *Account) TxBudget() largevalue.Budget {
	return largevalue.Budget{MaxWire: largevalue.WireBudget(a.MaxBody()), Product: a.Cfg.Product}
}

// Logger is the account's logger: Options.Logger, or slog.Default().
func (a *Account) Logger() *slog.Logger {
	if a.Cfg.Logger != nil {
		return a.Cfg.Logger
	}
	return slog.Default()
}

// Now is the time a write stamps, in UTC and at the service's 100 ns precision, so the entity
// a write returns holds the same times a read of the row gives.
func (a *Account) Now() time.Time {
	return a.Clock().UTC().Round(0).Truncate(100 * time.Nanosecond)
}

// Clock is the account's clock as given (see Options.Now).
func (a *Account) Clock() time.Time {
	if a.Cfg.NowFunc != nil {
		return a.Cfg.NowFunc()
	}
	return time.Now()
}
