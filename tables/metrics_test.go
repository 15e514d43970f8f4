package tables

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/telemetry"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	otelattr "go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// metered is a meter provider whose instruments the test reads.
type metered struct {
	*sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
}

func newMetered(t testing.TB) metered {
	t.Helper()
	if !telemetry.MetricsCompiled {
		t.Skip("built with the udtables_nometrics tag: no metrics")
	}
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return metered{mp, r}
}

// points returns every data point collected so far, as "name{k=v,…}" (attributes in key
// order) → value: a sum's value, a histogram's count.
func (m metered) points(t testing.TB) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	key := func(name string, set otelattr.Set) string {
		return name + "{" + set.Encoded(otelattr.DefaultEncoder()) + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.Module {
			t.Errorf("instrumentation scope %q, want %q", sm.Scope.Name, telemetry.Module)
		}
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(mt.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				if mt.Unit != "s" {
					t.Errorf("%s: unit %q, want s", mt.Name, mt.Unit)
				}
				for _, p := range d.DataPoints {
					if !slices.Equal(p.Bounds, telemetry.DurationBuckets) {
						t.Errorf("%s: bucket boundaries %v, want %v", mt.Name, p.Bounds, telemetry.DurationBuckets)
					}
					out[key(mt.Name, p.Attributes)] = float64(p.Count)
				}
			default:
				t.Errorf("%s: unexpected data %T", mt.Name, mt.Data)
			}
		}
	}
	return out
}

// only returns the points of the named instrument.
func only(points map[string]float64, name string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range points {
		if strings.HasPrefix(k, name+"{") {
			out[k] = v
		}
	}
	return out
}

func wantPoints(t *testing.T, got map[string]float64, name string, want map[string]float64) {
	t.Helper()
	if g := only(got, name); !maps.Equal(g, want) {
		t.Errorf("%s:\n got %v\nwant %v", name, fmtPoints(g), fmtPoints(want))
	}
}

func fmtPoints(p map[string]float64) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		lines = append(lines, fmt.Sprintf("%s=%g", k, p[k]))
	}
	return strings.Join(lines, " ")
}

// Every store call is counted once by operation, table and outcome, with one duration.
func TestMetricsCountCallsByOutcome(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	s, _ := newStore[item](t, &Options{MeterProvider: m})
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}), abstractions.ErrDuplicateKey)
	if _, err := s.One(ctx, "p|a"); err != nil {
		t.Fatal(err)
	}
	_, err := s.One(ctx, "p|missing")
	wantKind(t, err, abstractions.ErrNotFound)
	_, err = s.One(ctx, "")
	wantKind(t, err, abstractions.ErrInvalidKey)
	if _, err := abstractions.Mutate(ctx, s, "p|a", func(v *item) error { v.N++; return nil }, nil); err != nil {
		t.Fatal(err)
	}

	// The call count is the duration histogram's count: there is no counter of calls.
	const sys = "db.system.name=azure.tables"
	want := map[string]float64{
		"db.client.operation.duration{db.collection.name=Items,db.operation.name=create," + sys + "}":                                                      1,
		"db.client.operation.duration{db.collection.name=Items,db.operation.name=create,db.response.status_code=409," + sys + ",error.type=duplicate_key}": 1,
		"db.client.operation.duration{db.collection.name=Items,db.operation.name=read," + sys + "}":                                                        2, // one by Mutate
		"db.client.operation.duration{db.collection.name=Items,db.operation.name=read,db.response.status_code=404," + sys + ",error.type=not_found}":       1,
		"db.client.operation.duration{db.collection.name=Items,db.operation.name=read," + sys + ",error.type=invalid_key}":                                 1, // refused before sending: no status
		"db.client.operation.duration{db.collection.name=Items,db.operation.name=mutate," + sys + "}":                                                      1,
		"db.client.operation.duration{db.collection.name=Items,db.operation.name=update," + sys + "}":                                                      1, // by Mutate
	}
	got := m.points(t)
	wantPoints(t, got, telemetry.MetricOperationDuration, want)
	for k := range got {
		if !strings.HasPrefix(k, telemetry.MetricOperationDuration+"{") {
			t.Errorf("unexpected point %s", k)
		}
	}
}

// The read cache counts a hit or a miss per lookup of a store that caches, and nothing for
// one that does not.
func TestMetricsCountCacheLookups(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	s, _ := newStore[item](t, &Options{MeterProvider: m, Cache: Absolute(time.Minute)})
	uncached, err := For[item](s.account, &StoreOptions{Table: "Items", Cache: Disabled})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"p|a", "p|b", "p|b"} { // the write cached a; b is missing twice
		_, _ = s.One(ctx, id)
	}
	if ok, err := s.Exists(ctx, "p|a"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for range 2 {
		if _, err := s.List(ctx, "p"); err != nil { // a miss, then a hit
			t.Fatal(err)
		}
	}
	_, _ = uncached.One(ctx, "p|a")
	_, _ = uncached.List(ctx, "p")

	got := m.points(t)
	wantPoints(t, got, telemetry.MetricCacheHits, map[string]float64{"udtables.cache.hits{db.collection.name=Items}": 3})
	wantPoints(t, got, telemetry.MetricCacheMisses, map[string]float64{"udtables.cache.misses{db.collection.name=Items}": 3})
}

// The account's own retries (over a service that does not retry) count each resend, and
// every busy answer by its status.
func TestMetricsCountRetriesAndBusyAnswers(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	f := newFake()
	f.tables["items"] = map[fakeKey]service.Row{}
	answers := []error{fakeStatus(http.StatusServiceUnavailable, "ServerBusy"), fakeStatus(http.StatusTooManyRequests, "TooManyRequests"),
		fakeStatus(http.StatusBadGateway, "BadGateway")}
	f.before = func(call string) error {
		if call != "GetRow" || len(answers) == 0 {
			return nil
		}
		err := answers[0]
		answers = answers[1:]
		return err
	}
	acct := NewAccountOver("test", f, nil, &Options{MeterProvider: m, ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{RetryDelay: -1}}})
	s, err := For[item](acct, &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.One(ctx, "p|a") // three failed tries, then the answer
	wantKind(t, err, abstractions.ErrNotFound)

	got := m.points(t)
	wantPoints(t, got, telemetry.MetricRetries, map[string]float64{"udtables.retries{}": 3})
	wantPoints(t, got, telemetry.MetricBusy, map[string]float64{
		"udtables.busy_answers{http.response.status_code=429}": 1,
		"udtables.busy_answers{http.response.status_code=503}": 1,
	})
}

// Each attempt of an outcome verb that lost its race counts once, and a call whose every
// attempt lost is exhausted.
func TestMetricsCountLostRaces(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	s, f := newStore[item](t, &Options{MeterProvider: m})
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	other := func(losses int) func(string) error {
		return func(call string) error {
			if call == "Write" && losses > 0 {
				losses--
				f.put("Items", service.Row{PartitionKey: "p", RowKey: "a"}) // another writer's version
			}
			return nil
		}
	}
	inc := func(v *item) error { v.N++; return nil }
	f.before = other(1)
	if _, err := abstractions.Mutate(ctx, s, "p|a", inc, &abstractions.RetryOptions{Backoff: -1}); err != nil {
		t.Fatal(err)
	}
	f.before = other(3)
	if out, err := abstractions.TryMutate(ctx, s, "p|a", inc, &abstractions.RetryOptions{Attempts: 3, Backoff: -1}); err != nil || out.Status != abstractions.OutcomeConflicted {
		t.Fatalf("TryMutate: %v, %v; want OutcomeConflicted", out.Status, err)
	}
	// GetOrCreate's create loses to another caller's.
	f.before = func(call string) error {
		if call == "Write" {
			f.before = nil
			f.put("Items", service.Row{PartitionKey: "p", RowKey: "b"})
		}
		return nil
	}
	if _, created, err := abstractions.GetOrCreate(ctx, s, "p|b", func() *item { return &item{} }); err != nil || created {
		t.Fatal(created, err)
	}

	got := m.points(t)
	wantPoints(t, got, telemetry.MetricLostRaces, map[string]float64{
		"udtables.verb.lost_races{db.collection.name=Items,db.operation.name=mutate}":        1,
		"udtables.verb.lost_races{db.collection.name=Items,db.operation.name=try mutate}":    3,
		"udtables.verb.lost_races{db.collection.name=Items,db.operation.name=get or create}": 1,
	})
	wantPoints(t, got, telemetry.MetricExhausted, map[string]float64{
		"udtables.verb.exhausted{db.collection.name=Items,db.operation.name=try mutate}": 1,
	})
}

// A write whose resend met its own applied first try counts as an own echo, by the
// action it sent.
func TestMetricsCountOwnEchoes(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	f := newFake()
	f.tables["items"] = map[fakeKey]service.Row{}
	ft := faults.NewTables(f)
	s, err := For[item](testAccount("test", ft, nil, &Options{MeterProvider: m, Now: func() time.Time { return testNow }}), &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	ft.Inject(faults.LoseResponse, faults.Writes, 1)
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	ft.Inject(faults.LoseResponse, faults.Transactions, 1)
	if err := s.CreateBatch(ctx, items("q", 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|b"}}); err != nil { // no fault, no echo
		t.Fatal(err)
	}
	wantPoints(t, m.points(t), telemetry.MetricOwnEchoes, map[string]float64{
		"udtables.own_echoes{db.collection.name=Items,db.operation.name=insert}":      1,
		"udtables.own_echoes{db.collection.name=Items,db.operation.name=transaction}": 1,
	})
}

// The batch transactions out at once are what the up-down counter holds while they are
// out, and it is back at zero when the batch returned.
func TestMetricsCountBatchTransactionsInFlight(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	const parts = 3
	s, f := newStore[item](t, &Options{MeterProvider: m, BatchParallelism: parts})
	var (
		mu      sync.Mutex
		arrived int
		all     = make(chan struct{})
		seen    []float64
	)
	f.before = func(call string) error {
		if call != "Transact" {
			return nil
		}
		mu.Lock()
		arrived++
		if arrived == parts {
			seen = append(seen, only(m.points(t), telemetry.MetricBatchInFlight)["udtables.batch.transactions.active{db.collection.name=Items}"])
			close(all)
		}
		mu.Unlock()
		select { // every partition's transaction is out before any returns
		case <-all:
		case <-time.After(10 * time.Second):
			return errors.New("the batch did not send its partitions at once")
		}
		return nil
	}
	var vs []*item
	for i := range parts {
		vs = append(vs, items(fmt.Sprintf("p%d", i), 2)...)
	}
	if err := s.CreateBatch(ctx, vs); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []float64{parts}) {
		t.Errorf("transactions in flight while all were out: %v, want %d", seen, parts)
	}
	wantPoints(t, m.points(t), telemetry.MetricBatchInFlight, map[string]float64{"udtables.batch.transactions.active{db.collection.name=Items}": 0})
}

// An entry the bounded cache evicts on its own counts once; a write's drop does not.
func TestMetricsCountCacheEvictions(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	s, _ := newStore[item](t, &Options{MeterProvider: m, Cache: Absolute(time.Minute), CacheSize: 2})
	for i := range 6 {
		if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Delete(ctx, "p|5", ""); err != nil {
		t.Fatal(err)
	}
	entriesOf(s).CleanUp()
	n := s.core.Acct.Cache.Evictions()
	if n < 3 {
		t.Fatalf("%d evictions from a cache of 2 after 6 writes; want at least 3", n)
	}
	wantPoints(t, m.points(t), telemetry.MetricCacheEvicted, map[string]float64{"udtables.cache.evictions{}": float64(n)})
}

// Without a meter provider, or with the API's no-op one, an account has no meters.
func TestMetricsOffWithoutProvider(t *testing.T) {
	for _, p := range []*Options{nil, {}, {MeterProvider: noop.NewMeterProvider()}} {
		if cfg := p.config(nil); cfg.meters != nil {
			t.Errorf("options %+v: metrics on", p)
		}
	}
}

// With metrics off the hooks allocate nothing: a store call's measurement, the cache's, the
// verbs', the retries', the batches' and the offload's. (Allocation counts only hold
// without the race detector.)
func TestMetricsOffAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ctx := context.Background()
	s, _ := newStore[item](t, &Options{Cache: Absolute(time.Minute)})
	var err error
	_, vs := s.startSpan(ctx, "mutate", "p|a")
	attempt := []any{"attempt", 1} // the verb's own arguments, built by the verb

	allocs := testing.AllocsPerRun(100, func() {
		_, c := s.core.BeginID(ctx, "read", "p|a")
		s.core.CountCache(ctx, true)
		c.Finish(&err)
		vs.Event(driver.EventAttemptLost, attempt...)
		m := s.core.Acct.Tel.Meters
		m.Retried(ctx)
		m.BusyAnswer(ctx, http.StatusServiceUnavailable)
		m.OwnEcho(ctx, s.core.Name, "insert")
		m.CacheEvicted()
		m.BatchInFlight(ctx, s.core.Name, 1)
		m.Offload(ctx, s.core.Name, 1)
	})
	if allocs != 0 {
		t.Errorf("the metric hooks allocate %v times with metrics off, want 0", allocs)
	}
}

// BenchmarkMetrics measures store calls with metrics off (no MeterProvider) and on (the
// OpenTelemetry SDK with a manual reader, which aggregates but exports nothing), over the
// in-package fake service. With metrics off, a build without the hooks makes the same
// allocations: compare
//
//	go test -run '^$' -bench BenchmarkMetrics -benchmem ./tables/
//	go test -run '^$' -bench BenchmarkMetrics -benchmem -tags udtables_nometrics ./tables/
//
// (the second build has no metrics: its "on" rows skip).
func BenchmarkMetrics(b *testing.B) {
	ctx := context.Background()
	calls := []struct {
		name string
		run  func(s *Store[item]) error
	}{
		{"One", func(s *Store[item]) error { _, err := s.One(ctx, "p|a"); return err }},
		{"OneCached", func(s *Store[item]) error { _, err := s.One(ctx, "p|c"); return err }},
		{"Upsert", func(s *Store[item]) error {
			return s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a", N: 1})
		}},
	}
	for _, c := range calls {
		for _, on := range []bool{false, true} {
			name := c.name + "/metrics=off"
			if on {
				name = c.name + "/metrics=on"
			}
			b.Run(name, func(b *testing.B) {
				o := &Options{}
				if on {
					o.MeterProvider = newMetered(b)
				}
				s, f := newStore[item](b, o)
				cached, err := For[item](s.account, &StoreOptions{Table: "Items", Cache: Absolute(time.Hour)})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a"}); err != nil {
					b.Fatal(err)
				}
				if err := cached.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|c"}, Name: "c"}); err != nil {
					b.Fatal(err)
				}
				if c.name == "OneCached" {
					s = cached
				}
				benchStoreCalls(b, f, func() error { return c.run(s) })
			})
		}
	}
}

// With metrics on, a call's measurements reuse their telemetry.Attribute sets, so that the
// OpenTelemetry SDK's aggregation adds no allocation to a store call either. (Allocation
// counts only hold without the race detector.)
func TestMetricsOnAddNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ctx := context.Background()
	allocs := func(o *Options) float64 {
		o.Cache = Absolute(time.Hour)
		s, _ := newStore[item](t, o)
		if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(100, func() {
			if _, err := s.One(ctx, "p|a"); err != nil { // a cache hit
				t.Fatal(err)
			}
		})
	}
	off, on := allocs(&Options{}), allocs(&Options{MeterProvider: newMetered(t)})
	if on != off {
		t.Errorf("a cached read allocates %v times with metrics on, %v with them off", on, off)
	}
}

// A query's class is on its duration and on its span; calls that send no query have none.
func TestQueryPlanOnMetricAndSpan(t *testing.T) {
	ctx := context.Background()
	m := newMetered(t)
	tr := &recorder{}
	s, _ := newStore[item](t, &Options{MeterProvider: m, TableScans: AllowTableScans}, withTracer(tr))
	if _, err := s.List(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(ctx, abstractions.Query[item]{Partition: "p", RowKeyPrefix: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CountAll(ctx); err != nil {
		t.Fatal(err)
	}
	const sys = "db.system.name=azure.tables"
	wantPoints(t, m.points(t), telemetry.MetricOperationDuration, map[string]float64{
		"db.client.operation.duration{azure.tables.query.plan=partition_scan,db.collection.name=Items,db.operation.name=list," + sys + "}": 1,
		"db.client.operation.duration{azure.tables.query.plan=row_range,db.collection.name=Items,db.operation.name=query," + sys + "}":     1,
		"db.client.operation.duration{azure.tables.query.plan=table_scan,db.collection.name=Items,db.operation.name=count," + sys + "}":    1,
	})
	for i, want := range []string{"partition_scan", "row_range", "table_scan"} {
		if got := tr.spans[i].attrs[telemetry.AttrQueryPlan]; got != want {
			t.Errorf("span %s: plan %v, want %s", tr.spans[i].name, got, want)
		}
	}
}
