package tables

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
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
// An account whose Options name a MeterProvider records the instruments below through one
// Meter of it (docs/production.md lists them for users). Without one, the account has no
// *meters: every hook is a method of a nil *meters that returns at once, so a store call
// neither reads the clock nor builds an attribute (BenchmarkMetrics measures both sides, and
// TestMetricsOffAllocatesNothing checks the hooks allocate nothing). Built with the
// udtables_nometrics tag the hooks compile to nothing at all, which is what the benchmark
// compares against.
//
// Attributes are few and bounded: the operation and the table (names the program chose),
// the outcome (a sentinel's name, errorKind), the HTTP status of a busy answer. Each
// combination's attribute set is built once and kept (attrs), so that a measurement with
// metrics on allocates nothing either beyond what the SDK does.

// Instrument names and attribute keys.
const (
	metricCalls         = "udtables.calls"
	metricCallDuration  = "udtables.call.duration"
	metricRetries       = "udtables.retries"
	metricBusy          = "udtables.busy_answers"
	metricLostRaces     = "udtables.verb.lost_races"
	metricExhausted     = "udtables.verb.exhausted"
	metricOwnEchoes     = "udtables.own_echoes"
	metricCacheHits     = "udtables.cache.hits"
	metricCacheMisses   = "udtables.cache.misses"
	metricCacheEvicted  = "udtables.cache.evictions"
	metricBatchInFlight = "udtables.batch.transactions.active"
	metricOffloaded     = "udtables.offload.bytes"

	attrOutcome = "udtables.outcome"          // "ok" or errorKind's name
	attrStatus  = "http.response.status_code" // of a busy answer
)

// durationBuckets are the call duration histogram's bucket bounds in seconds, from the
// in-memory backend's microseconds to the retries of a throttled service.
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// maxAttrSets bounds the attribute sets a meters keeps; past it (a program with very many
// tables), a measurement builds its set each time.
const maxAttrSets = 4096

// meters are an account's instruments. A nil *meters records nothing.
type meters struct {
	calls     metric.Int64Counter
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

	mu   sync.Mutex                        // serialises additions to sets
	sets atomic.Pointer[map[attrKey]*opts] // copied on write, read without a lock
	none *opts                             // the empty set
}

// attrKey names one attribute set; "" and 0 leave an attribute out.
type attrKey struct {
	table, op, outcome string
	status             int
}

// opts are an attribute set as the instruments' variadic options take it.
type opts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// newMeters returns the instruments of p, nil when p is nil or the API's no-op provider.
// An instrument the provider refuses is logged and records nothing.
func newMeters(p metric.MeterProvider, log *slog.Logger) *meters {
	if !metricsCompiled || p == nil {
		return nil
	}
	if _, ok := p.(noop.MeterProvider); ok {
		return nil
	}
	mt := p.Meter(tracerModule, metric.WithInstrumentationVersion(tracerVersion))
	m := &meters{}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := mt.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	m.calls = counter(metricCalls, "{call}", "Store and outcome verb calls, by operation, table and outcome.")
	m.retries = counter(metricRetries, "{retry}", "Requests the account's retry policy sent again.")
	m.busy = counter(metricBusy, "{answer}", "Busy answers of the table service (429, 503, 500 OperationTimedOut).")
	m.lost = counter(metricLostRaces, "{attempt}", "Attempts of the outcome verbs that lost their race to another writer.")
	m.exhausted = counter(metricExhausted, "{call}", "Outcome verb calls whose every attempt lost its race.")
	m.echoes = counter(metricOwnEchoes, "{write}", "Failed writes found to be the echo of their own applied earlier try, reported as applied.")
	m.hits = counter(metricCacheHits, "{lookup}", "Read cache lookups that found the row or list.")
	m.misses = counter(metricCacheMisses, "{lookup}", "Read cache lookups that did not, and read the table.")
	m.evictions = counter(metricCacheEvicted, "{entry}", "Read cache entries removed before a write replaced them.")
	m.offloaded = counter(metricOffloaded, "By", "Bytes uploaded to blobs by blob offload (large values and files).")
	var err error
	m.duration, err = mt.Float64Histogram(metricCallDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of store and outcome verb calls, by operation, table and outcome."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	errs = append(errs, err)
	m.inFlight, err = mt.Int64UpDownCounter(metricBatchInFlight, metric.WithUnit("{transaction}"),
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
func (m *meters) attrs(k attrKey) *opts {
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
	kvs := make([]otelattr.KeyValue, 0, 4)
	if k.op != "" {
		kvs = append(kvs, otelattr.String(attrOperation, k.op))
	}
	if k.table != "" {
		kvs = append(kvs, otelattr.String(attrTable, k.table))
	}
	if k.outcome != "" {
		kvs = append(kvs, otelattr.String(attrOutcome, k.outcome))
	}
	if k.status != 0 {
		kvs = append(kvs, otelattr.Int(attrStatus, k.status))
	}
	set := metric.WithAttributeSet(otelattr.NewSet(kvs...))
	return &opts{add: []metric.AddOption{set}, rec: []metric.RecordOption{set}}
}

// on reports whether m records: false for nil, and always false when built with the
// udtables_nometrics tag, so that the compiler drops every hook's body.
func (m *meters) on() bool { return metricsCompiled && m != nil }

// called records a store or verb call that started at start and returned err.
func (m *meters) called(ctx context.Context, table, op string, start time.Time, err error) {
	if !m.on() {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = errorKind(err)
	}
	o := m.attrs(attrKey{table: table, op: op, outcome: outcome})
	m.calls.Add(ctx, 1, o.add...)
	m.duration.Record(ctx, time.Since(start).Seconds(), o.rec...)
}

// retried records a request sent again by the account's retry policy (the Azure SDK's, in
// its pipeline; the account's own, over another service).
func (m *meters) retried(ctx context.Context) {
	if !m.on() {
		return
	}
	m.retries.Add(ctx, 1, m.none.add...)
}

// busyAnswer records a busy answer of the table service with its HTTP status.
func (m *meters) busyAnswer(ctx context.Context, status int) {
	if !m.on() {
		return
	}
	m.busy.Add(ctx, 1, m.attrs(attrKey{status: status}).add...)
}

// busyStatus is the HTTP status of a busy answer err holds (see isBusy).
func busyStatus(err error) int {
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		return se.StatusCode
	}
	return http.StatusServiceUnavailable
}

// lostRace records an attempt of an outcome verb that lost its race; last says it was the
// call's last attempt, which makes the call exhausted too.
func (m *meters) lostRace(ctx context.Context, table, op string, last bool) {
	if !m.on() {
		return
	}
	o := m.attrs(attrKey{table: table, op: op})
	m.lost.Add(ctx, 1, o.add...)
	if last {
		m.exhausted.Add(ctx, 1, o.add...)
	}
}

// ownEcho records a failed write (op "insert", "replace", …, "transaction": see
// actionName) that turned out to be the answer to a resend of a try the service had
// applied.
func (m *meters) ownEcho(ctx context.Context, table, op string) {
	if !m.on() {
		return
	}
	m.echoes.Add(ctx, 1, m.attrs(attrKey{table: table, op: op}).add...)
}

// actionNames are the names of the service's write operations on instruments, by Op.
var actionNames = [...]string{"", "insert", "replace", "merge", "upsert_replace", "upsert_merge", "delete"}

// actionName is the name of a write operation on instruments.
func actionName(op service.Op) string {
	if int(op) < len(actionNames) && op != 0 {
		return actionNames[op]
	}
	return "write"
}

// cacheLookup records a read cache lookup of a store that caches.
func (m *meters) cacheLookup(ctx context.Context, table string, hit bool) {
	if !m.on() {
		return
	}
	o := m.attrs(attrKey{table: table})
	if hit {
		m.hits.Add(ctx, 1, o.add...)
	} else {
		m.misses.Add(ctx, 1, o.add...)
	}
}

// cacheEvicted records one read cache entry removed for want of room or because it
// expired: not a write's drop, which keeps the cache coherent rather than small. The cache
// calls it; the entry's table is not known there, so it has no attribute.
func (m *meters) cacheEvicted() {
	if !m.on() {
		return
	}
	m.evictions.Add(context.Background(), 1, m.none.add...)
}

// batchInFlight counts a batch call's transaction out (n = 1) and back (n = -1), so that
// the up-down counter is the parallelism in use.
func (m *meters) batchInFlight(ctx context.Context, table string, n int64) {
	if !m.on() {
		return
	}
	m.inFlight.Add(ctx, n, m.attrs(attrKey{table: table}).add...)
}

// offload records n bytes uploaded to a blob by a write of the table.
func (m *meters) offload(ctx context.Context, table string, n int64) {
	if !m.on() {
		return
	}
	m.offloaded.Add(ctx, n, m.attrs(attrKey{table: table}).add...)
}

// countCache records a lookup of the read cache when the store caches (a store whose
// policy is Disabled does not look).
func (s *Store[T]) countCache(ctx context.Context, hit bool) {
	if s.policy.enabled() {
		s.acct.meters.cacheLookup(ctx, s.table, hit)
	}
}
