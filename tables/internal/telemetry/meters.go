package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	otelattr "go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Metrics.
//
// Meters are an account's instruments, recorded through one Meter of the MeterProvider its
// Options name. Without one the account has no *Meters: every hook is a method of a nil
// *Meters that returns at once, so a call neither reads the clock nor builds an attribute
// (the tables package's BenchmarkMetrics measures both sides, and
// TestMetricsOffAllocatesNothing checks the hooks allocate nothing). Built with the
// udtables_nometrics tag the hooks compile to nothing at all, which is what the benchmark
// compares against.
//
// A call's duration is OpenTelemetry's db.client.operation.duration, with the conventions'
// attributes and bucket boundaries; its count is the number of calls, so no counter of calls
// repeats it. The other instruments are the library's own (udtables.*): the conventions have
// no name for what they count.
//
// Attributes are few and bounded: the account's (Endpoint), the operation and the table
// (names the program chose), the error type (a sentinel's name, callerr.Kind) and the
// service's status of a failed call, the HTTP status of a busy answer. Each combination's
// attribute set is built once and kept (attrs), so that a measurement with metrics on
// allocates nothing either beyond what the SDK does.

// Instrument names.
const (
	MetricOperationDuration = "db.client.operation.duration" // the conventions'
	MetricRetries           = "udtables.retries"
	MetricBusy              = "udtables.busy_answers"
	MetricLostRaces         = "udtables.verb.lost_races"
	MetricExhausted         = "udtables.verb.exhausted"
	MetricOwnEchoes         = "udtables.own_echoes"
	MetricCacheHits         = "udtables.cache.hits"
	MetricCacheMisses       = "udtables.cache.misses"
	MetricCacheEvicted      = "udtables.cache.evictions"
	MetricBatchInFlight     = "udtables.batch.transactions.active"
	MetricOffloaded         = "udtables.offload.bytes"
	MetricExpiredFound      = "udtables.expiry.expired"
	MetricExpiredSwept      = "udtables.expiry.swept"
	MetricExpiryOldest      = "udtables.expiry.oldest_unswept_age"
	MetricFeedDeliveries    = "udtables.feed.deliveries"
	MetricFeedRedeliveries  = "udtables.feed.redeliveries"
	MetricFeedFailures      = "udtables.feed.failures"
	MetricFeedDeadLetters   = "udtables.feed.dead_letters"
	MetricFeedPending       = "udtables.feed.pending"
	MetricFeedPartitions    = "udtables.feed.partitions"
	MetricFeedOldest        = "udtables.feed.oldest_pending_age"

	AttrHTTPStatus = "http.response.status_code" // of a busy answer
)

// DurationBuckets are the bucket boundaries in seconds the conventions give
// db.client.operation.duration.
var DurationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// maxAttrSets bounds the attribute sets a Meters keeps; past it (a program with very many
// tables), a measurement builds its set each time.
const maxAttrSets = 4096

// Meters are an account's instruments. A nil *Meters records nothing.
type Meters struct {
	duration  metric.Float64Histogram
	retries   metric.Int64Counter
	busy      metric.Int64Counter
	lost      metric.Int64Counter
	exhausted metric.Int64Counter
	echoes    metric.Int64Counter
	hits      metric.Int64Counter
	misses    metric.Int64Counter
	evictions metric.Int64Counter
	inFlight  metric.Int64UpDownCounter
	offloaded metric.Int64Counter
	expired   metric.Int64Counter
	swept     metric.Int64Counter
	oldest    metric.Float64Gauge // of the expired rows a sweep left
	// The change feed's (package tables/feed).
	feedDelivered, feedRedelivered, feedFailed, feedDead metric.Int64Counter
	feedPending, feedPartitions                          metric.Int64Gauge
	feedOldest                                           metric.Float64Gauge

	mu   sync.Mutex                        // serialises additions to sets
	sets atomic.Pointer[map[attrKey]*opts] // copied on write, read without a lock
	none *opts                             // the empty set
}

// attrKey names one attribute set; nil, "" and 0 leave an attribute out. With ep, the set
// is a call's (status is db.response.status_code); without, status is a busy answer's.
type attrKey struct {
	ep                 *Endpoint
	table, op, errType string
	plan               string // a query's class (package plan), db.client.operation.duration only
	status             int
}

// opts are an attribute set as the instruments' variadic options take it.
type opts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// NewMeters returns the instruments of p, nil when p is nil or the API's no-op provider.
// An instrument the provider refuses is logged and records nothing.
func NewMeters(p metric.MeterProvider, log *slog.Logger) *Meters {
	if !MetricsCompiled || p == nil {
		return nil
	}
	if _, ok := p.(noop.MeterProvider); ok {
		return nil
	}
	mt := p.Meter(Module, metric.WithInstrumentationVersion(Version))
	m := &Meters{}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := mt.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	m.retries = counter(MetricRetries, "{retry}", "Requests the account's retry policy sent again.")
	m.busy = counter(MetricBusy, "{answer}", "Busy answers of the table service (429, 503, 500 OperationTimedOut).")
	m.lost = counter(MetricLostRaces, "{attempt}", "Attempts of the outcome verbs that lost their race to another writer.")
	m.exhausted = counter(MetricExhausted, "{call}", "Outcome verb calls whose every attempt lost its race.")
	m.echoes = counter(MetricOwnEchoes, "{write}", "Failed writes found to be the echo of their own applied earlier try, reported as applied.")
	m.hits = counter(MetricCacheHits, "{lookup}", "Read cache lookups that found the row or list.")
	m.misses = counter(MetricCacheMisses, "{lookup}", "Read cache lookups that did not, and read the table.")
	m.evictions = counter(MetricCacheEvicted, "{entry}", "Read cache entries removed before a write replaced them.")
	m.offloaded = counter(MetricOffloaded, "By", "Bytes uploaded to blobs by blob offload (large values and files).")
	m.expired = counter(MetricExpiredFound, "{row}", "Expired rows the sweeps of expired rows found.")
	m.swept = counter(MetricExpiredSwept, "{row}", "Expired rows the sweeps of expired rows deleted.")
	m.feedDelivered = counter(MetricFeedDeliveries, "{record}", "Change records a feed relay's handler accepted.")
	m.feedRedelivered = counter(MetricFeedRedeliveries, "{record}", "Accepted change records that had failed before (a subset of the deliveries).")
	m.feedFailed = counter(MetricFeedFailures, "{delivery}", "Deliveries of change records whose handler failed or panicked.")
	m.feedDead = counter(MetricFeedDeadLetters, "{record}", "Change records moved to the dead letters after failing too often.")
	var err error
	m.feedPending, err = mt.Int64Gauge(MetricFeedPending, metric.WithUnit("{record}"),
		metric.WithDescription("Change records pending when a relay pass read them (at most a page per partition)."))
	errs = append(errs, err)
	m.feedPartitions, err = mt.Int64Gauge(MetricFeedPartitions, metric.WithUnit("{partition}"),
		metric.WithDescription("Partitions marked as having pending change records when a relay pass began."))
	errs = append(errs, err)
	m.oldest, err = mt.Float64Gauge(MetricExpiryOldest, metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest expired row a sweep of expired rows left, when it ended (0: none due)."))
	errs = append(errs, err)
	m.feedOldest, err = mt.Float64Gauge(MetricFeedOldest, metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest pending change record a relay pass found."))
	errs = append(errs, err)
	m.duration, err = mt.Float64Histogram(MetricOperationDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of database client operations."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	errs = append(errs, err)
	m.inFlight, err = mt.Int64UpDownCounter(MetricBatchInFlight, metric.WithUnit("{transaction}"),
		metric.WithDescription("Transactions of batch calls out at once (the parallelism in use)."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		if log == nil {
			log = slog.Default()
		}
		log.Warn("unified tables: the meter provider refused an instrument; it records nothing", "error", err)
	}
	m.sets.Store(&map[attrKey]*opts{})
	m.none = newOpts(attrKey{})
	return m
}

// attrs returns the options of an attribute set, built once per set.
func (m *Meters) attrs(k attrKey) *opts {
	if o, ok := (*m.sets.Load())[k]; ok {
		return o
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.sets.Load()
	if o, ok := old[k]; ok {
		return o
	}
	o := newOpts(k)
	if len(old) < maxAttrSets {
		next := make(map[attrKey]*opts, len(old)+1)
		for k, v := range old {
			next[k] = v
		}
		next[k] = o
		m.sets.Store(&next)
	}
	return o
}

func newOpts(k attrKey) *opts {
	kvs := make([]otelattr.KeyValue, 0, 8)
	if k.ep != nil {
		kvs = append(kvs, k.ep.kvs...)
	}
	if k.op != "" {
		kvs = append(kvs, otelattr.String(AttrOperation, k.op))
	}
	if k.table != "" {
		kvs = append(kvs, otelattr.String(AttrTable, k.table))
	}
	if k.errType != "" {
		kvs = append(kvs, otelattr.String(AttrErrorType, k.errType))
	}
	if k.plan != "" {
		kvs = append(kvs, otelattr.String(AttrQueryPlan, k.plan))
	}
	switch {
	case k.status == 0:
	case k.ep != nil:
		kvs = append(kvs, otelattr.String(AttrStatusCode, strconv.Itoa(k.status)))
	default:
		kvs = append(kvs, otelattr.Int(AttrHTTPStatus, k.status))
	}
	set := metric.WithAttributeSet(otelattr.NewSet(kvs...))
	return &opts{add: []metric.AddOption{set}, rec: []metric.RecordOption{set}}
}

// On reports whether m records: false for nil, and always false when built with the
// udtables_nometrics tag, so that the compiler drops every hook's body.
func (m *Meters) On() bool { return MetricsCompiled && m != nil }

// called records a store or verb call of the service ep that started at start and
// returned err.
func (m *Meters) called(ctx context.Context, ep *Endpoint, table, op, plan string, start time.Time, err error) {
	if !m.On() {
		return
	}
	k := attrKey{ep: ep, table: table, op: op, plan: plan}
	if err != nil {
		k.errType = ErrorType(err)
		var se *abstractions.StatusError
		if errors.As(err, &se) {
			k.status = se.StatusCode
		}
	}
	m.duration.Record(ctx, time.Since(start).Seconds(), m.attrs(k).rec...)
}

// Retried records a request sent again by the account's retry policy (the Azure SDK's, in
// its pipeline; the account's own, over another service).
func (m *Meters) Retried(ctx context.Context) {
	if !m.On() {
		return
	}
	m.retries.Add(ctx, 1, m.none.add...)
}

// BusyAnswer records a busy answer of the table service with its HTTP status.
func (m *Meters) BusyAnswer(ctx context.Context, status int) {
	if !m.On() {
		return
	}
	m.busy.Add(ctx, 1, m.attrs(attrKey{status: status}).add...)
}

// BusyStatus is the HTTP status of a busy answer err holds (see the tables package's isBusy).
func BusyStatus(err error) int {
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		return se.StatusCode
	}
	return http.StatusServiceUnavailable
}

// LostRace records an attempt of an outcome verb that lost its race; last says it was the
// call's last attempt, which makes the call exhausted too.
func (m *Meters) LostRace(ctx context.Context, table, op string, last bool) {
	if !m.On() {
		return
	}
	o := m.attrs(attrKey{table: table, op: op})
	m.lost.Add(ctx, 1, o.add...)
	if last {
		m.exhausted.Add(ctx, 1, o.add...)
	}
}

// OwnEcho records a failed write (op "insert", "replace", …, "transaction": see
// ActionName) that turned out to be the answer to a resend of a try the service had
// applied.
func (m *Meters) OwnEcho(ctx context.Context, table, op string) {
	if !m.On() {
		return
	}
	m.echoes.Add(ctx, 1, m.attrs(attrKey{table: table, op: op}).add...)
}

// actionNames are the names of the service's write operations on instruments, by Op.
var actionNames = [...]string{"", "insert", "replace", "merge", "upsert_replace", "upsert_merge", "delete"}

// ActionName is the name of a write operation on instruments.
func ActionName(op service.Op) string {
	if int(op) < len(actionNames) && op != 0 {
		return actionNames[op]
	}
	return "write"
}

// CacheLookup records a read cache lookup of a store that caches.
func (m *Meters) CacheLookup(ctx context.Context, table string, hit bool) {
	if !m.On() {
		return
	}
	o := m.attrs(attrKey{table: table})
	if hit {
		m.hits.Add(ctx, 1, o.add...)
	} else {
		m.misses.Add(ctx, 1, o.add...)
	}
}

// CacheEvicted records one read cache entry removed for want of room or because it
// expired: not a write's drop, which keeps the cache coherent rather than small. The cache
// calls it; the entry's table is not known there, so it has no attribute.
func (m *Meters) CacheEvicted() {
	if !m.On() {
		return
	}
	m.evictions.Add(context.Background(), 1, m.none.add...)
}

// BatchInFlight counts a batch call's transaction out (n = 1) and back (n = -1), so that
// the up-down counter is the parallelism in use.
func (m *Meters) BatchInFlight(ctx context.Context, table string, n int64) {
	if !m.On() {
		return
	}
	m.inFlight.Add(ctx, n, m.attrs(attrKey{table: table}).add...)
}

// Offload records n bytes uploaded to a blob by a write of the table.
func (m *Meters) Offload(ctx context.Context, table string, n int64) {
	if !m.On() {
		return
	}
	m.offloaded.Add(ctx, n, m.attrs(attrKey{table: table}).add...)
}

// Swept records what a sweep of expired rows of the table found (expired) and deleted
// (swept) in one partition.
func (m *Meters) Swept(ctx context.Context, table string, expired, swept int64) {
	if !m.On() {
		return
	}
	a := m.attrs(attrKey{table: table}).add
	m.expired.Add(ctx, expired, a...)
	m.swept.Add(ctx, swept, a...)
}

// ExpiryBacklog records, when a sweep of expired rows of the table ends, how long ago the
// oldest expired row it left expired (0: it left none that was due).
func (m *Meters) ExpiryBacklog(ctx context.Context, table string, oldest time.Duration) {
	if !m.On() {
		return
	}
	m.oldest.Record(ctx, oldest.Seconds(), m.attrs(attrKey{table: table}).rec...)
}

// FeedDelivered counts a change record a relay's handler accepted; redelivery says it had
// failed before.
func (m *Meters) FeedDelivered(ctx context.Context, table string, redelivery bool) {
	if !m.On() {
		return
	}
	o := m.attrs(attrKey{table: table}).add
	m.feedDelivered.Add(ctx, 1, o...)
	if redelivery {
		m.feedRedelivered.Add(ctx, 1, o...)
	}
}

// FeedFailed counts a failed delivery; dead says the record went to the dead letters.
func (m *Meters) FeedFailed(ctx context.Context, table string, dead bool) {
	if !m.On() {
		return
	}
	o := m.attrs(attrKey{table: table}).add
	m.feedFailed.Add(ctx, 1, o...)
	if dead {
		m.feedDead.Add(ctx, 1, o...)
	}
}

// FeedBacklog records what a relay pass found: pending records, marked partitions and the
// age of the oldest pending record.
func (m *Meters) FeedBacklog(ctx context.Context, table string, pending, partitions int64, oldest time.Duration) {
	if !m.On() {
		return
	}
	o := m.attrs(attrKey{table: table}).rec
	m.feedPending.Record(ctx, pending, o...)
	m.feedPartitions.Record(ctx, partitions, o...)
	m.feedOldest.Record(ctx, oldest.Seconds(), o...)
}
