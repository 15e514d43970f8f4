package tracing

import (
	"context"
	"crypto/rand"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/blobdocs"
)

// What OpenTelemetry's database client conventions (stable) say of
// db.client.operation.duration and of a database client span.
var (
	convBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	// convAttrs are the conventions' attributes a call may carry, on the metric and the span.
	convAttrs = []string{"db.system.name", "db.namespace", "db.collection.name", "db.operation.name",
		"db.response.status_code", "error.type", "server.address", "server.port"}
	// ownSpanAttrs are the library's own span attributes (row keys only with RecordKeys).
	ownSpanAttrs = []string{"azure.tables.partition_key", "azure.tables.error_code", "azure.tables.query.plan"}
	// queryPlan is the library's own attribute of a call that sends a query, on its
	// duration and span: the query's class.
	queryPlan = map[string]string{"azure.tables.query.plan": "partition_scan"}
)

type Event struct{ Kind string }

type Doc struct{ Title string }

// TestConventions checks, through the OpenTelemetry SDK's in-memory reader and span
// exporter (spans reaching it through the Azure SDK's azotel adapter), that every call kind
// — a typed store, a polymorphic store, a transaction, blob documents and an outcome verb —
// records db.client.operation.duration with the conventions' unit, bucket boundaries and
// attributes, and that a point read, a query, a batch and a failed call are spans named and
// attributed as the conventions say. In memory always; on Azurite too when it is set, where
// the endpoint's address, port and account appear.
func TestConventions(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		checkConventions(t, func(o *tables.Options) (*tables.Account, error) { return inmemory.NewAccount(o), nil }, services{})
	})
	t.Run("azurite", func(t *testing.T) {
		conn := azuritetest.ConnectionString(t)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		checkConventions(t, func(o *tables.Options) (*tables.Account, error) {
			o.ClientOptions.Transport = &http.Client{Transport: tr}
			o.Blobs = azblobs.Connect
			return tables.NewAccount(conn, o)
		}, services{table: endpointOf(t, conn, "TableEndpoint"), blob: endpointOf(t, conn, "BlobEndpoint")})
	})
}

// services are the attributes the account's table and blob calls should carry for their
// service: none in memory.
type services struct{ table, blob map[string]string }

// endpointOf returns the conventions' attributes of the endpoint a connection string names
// under key: its host, its port (the emulator's are not the scheme's) and the account, the
// first segment of its path.
func endpointOf(t *testing.T, conn, key string) map[string]string {
	for _, part := range strings.Split(conn, ";") {
		if v, ok := strings.CutPrefix(part, key+"="); ok {
			u, err := url.Parse(v)
			if err != nil || u.Port() == "" {
				t.Fatalf("%s %q: want a URL with a port", key, v)
			}
			account, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
			return map[string]string{"server.address": u.Hostname(), "server.port": u.Port(), "db.namespace": account}
		}
	}
	t.Fatalf("the connection string has no %s", key)
	return nil
}

func checkConventions(t *testing.T, newAccount func(*tables.Options) (*tables.Account, error), want services) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(ctx) }()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()

	acct, err := newAccount(&tables.Options{ClientOptions: ClientOptions(tp), MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	suffix := strings.ToLower(rand.Text()[:8])
	table, polyTable, container := "conv"+suffix, "convpoly"+suffix, "conv-"+suffix
	defer func() {
		_ = acct.Tables().DeleteTable(context.Background(), table)
		_ = acct.Tables().DeleteTable(context.Background(), polyTable)
		_ = acct.Blobs().DeleteContainer(context.Background(), container)
	}()

	// A typed store: a write, a point read, a query, a batch, a failed write and a verb.
	s, err := tables.For[Counter](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Create(ctx, &Counter{Entity: abstractions.Entity{ID: "p|a"}}))
	_, err = s.One(ctx, "p|a")
	must(err)
	_, err = s.Query(ctx, abstractions.Query[Counter]{Partition: "p"})
	must(err)
	must(s.CreateBatch(ctx, []*Counter{{Entity: abstractions.Entity{ID: "b|1"}}, {Entity: abstractions.Entity{ID: "b|2"}}, {Entity: abstractions.Entity{ID: "b|3"}}}))
	if err := s.Create(ctx, &Counter{Entity: abstractions.Entity{ID: "p|a"}}); !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Fatalf("duplicate create: %v", err)
	}
	_, err = abstractions.Mutate(ctx, s, "p|a", func(c *Counter) error { c.N++; return nil }, nil)
	must(err)
	// A transaction of two upserts.
	tx := s.Transaction("tx")
	s.UpsertIn(tx, &Counter{Entity: abstractions.Entity{ID: "tx|1"}})
	s.UpsertIn(tx, &Counter{Entity: abstractions.Entity{ID: "tx|2"}})
	must(tx.Commit(ctx))
	// A polymorphic store.
	var types abstractions.TypeRegistry
	must(abstractions.RegisterType[Event](&types, "event"))
	events, err := tables.PolyFor[any](acct, &types, &tables.StoreOptions{Table: polyTable})
	must(err)
	_, err = events.Insert(ctx, abstractions.PolyWrite[any]{Key: abstractions.TableKey{PartitionKey: "o", RowKey: "1"}, Item: &Event{Kind: "placed"}})
	must(err)
	// Blob documents.
	must(acct.Blobs().CreateContainer(ctx, container))
	reg, err := blobdocs.New(acct.Blobs(), nil)
	must(err)
	docs, err := blobdocs.Register[Doc](reg, blobdocs.Registration{Container: container,
		BlobName: func(c blobdocs.NameContext) string { return c.ID + ".json" }})
	must(err)
	must(docs.Put(ctx, "d1", &Doc{Title: "one"}))
	// A call of the whole account: no collection.
	must(acct.Ping(ctx))

	// The metric: one histogram of the conventions' name, unit and buckets, a data point per
	// call kind, each with the conventions' attributes and no other.
	var rm metricdata.ResourceMetrics
	must(reader.Collect(ctx, &rm))
	points := map[string]metricdata.HistogramDataPoint[float64]{} // by "<op> <collection>"
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if strings.HasPrefix(m.Name, "udtables.call") {
				t.Errorf("%s: the conventions' histogram replaced it", m.Name)
			}
			if m.Name != "db.client.operation.duration" {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || m.Unit != "s" {
				t.Fatalf("%s: %T in %q, want a float64 histogram in s", m.Name, m.Data, m.Unit)
			}
			for _, p := range h.DataPoints {
				if !slices.Equal(p.Bounds, convBuckets) {
					t.Errorf("bucket boundaries %v, want the conventions' %v", p.Bounds, convBuckets)
				}
				op, _ := p.Attributes.Value("db.operation.name")
				coll, _ := p.Attributes.Value("db.collection.name")
				name := op.AsString() + " " + coll.AsString()
				if failed, _ := p.Attributes.Value("error.type"); failed.AsString() != "" {
					name += " failed"
				}
				points[name] = p
			}
		}
	}
	for _, tc := range []struct {
		call, op, coll string
		blob           bool
		failure        map[string]string
		own            map[string]string // the library's own attributes
	}{
		{"Store.Create", "create", table, false, nil, nil},
		{"Store.One", "read", table, false, nil, nil},
		{"Store.Query", "query", table, false, nil, queryPlan},
		{"Store.CreateBatch", "BATCH create", table, false, nil, nil},
		{"Store.Create, failing", "create", table, false, map[string]string{"error.type": "duplicate_key", "db.response.status_code": "409"}, nil},
		{"Mutate", "mutate", table, false, nil, nil},
		{"Transaction.Commit", "BATCH upsert", table, false, nil, nil},
		{"PolyStore.Insert", "insert", polyTable, false, nil, nil},
		{"blob documents' Put", "put", container, true, nil, nil},
		{"Account.Ping", "ping", "", false, nil, nil},
	} {
		name := tc.op + " " + tc.coll
		if tc.failure != nil {
			name += " failed"
		}
		p, ok := points[name]
		if !ok {
			t.Errorf("%s: no data point %q among %q", tc.call, name, slices.Sorted(maps.Keys(points)))
			continue
		}
		got := map[string]string{}
		for _, kv := range p.Attributes.ToSlice() {
			got[string(kv.Key)] = kv.Value.String()
		}
		wantAttrs := map[string]string{"db.system.name": "azure.tables", "db.operation.name": tc.op, "db.collection.name": tc.coll}
		if tc.coll == "" {
			delete(wantAttrs, "db.collection.name")
		}
		maps.Copy(wantAttrs, tc.failure)
		maps.Copy(wantAttrs, tc.own)
		maps.Copy(wantAttrs, want.table)
		if tc.blob {
			wantAttrs["db.system.name"] = "azure.blob"
			maps.Copy(wantAttrs, want.blob)
		}
		if !maps.Equal(got, wantAttrs) {
			t.Errorf("%s: attributes\n got %v\nwant %v", tc.call, got, wantAttrs)
		}
	}

	// The spans of a point read, a query, a batch and a failed call.
	spans := exp.GetSpans().Snapshots()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range spans {
		byName[sp.Name()] = append(byName[sp.Name()], sp)
	}
	span := func(name string, i int) sdktrace.ReadOnlySpan {
		t.Helper()
		if len(byName[name]) <= i {
			t.Fatalf("no span %q (#%d) among %d spans", name, i+1, len(spans))
		}
		return byName[name][i]
	}
	// Ping's target is the account (db.namespace), when the endpoint names one.
	ping := "ping"
	if ns := want.table["db.namespace"]; ns != "" {
		ping += " " + ns
	}
	span(ping, 0)
	for _, tc := range []struct {
		what  string
		span  sdktrace.ReadOnlySpan
		attrs map[string]string
	}{
		{"point read", span("read "+table, 0), map[string]string{"db.operation.name": "read", "azure.tables.partition_key": "p"}},
		{"query", span("query "+table, 0), map[string]string{"db.operation.name": "query", "azure.tables.partition_key": "p",
			"azure.tables.query.plan": "partition_scan"}},
		{"batch", span("BATCH create "+table, 0), map[string]string{"db.operation.name": "BATCH create", "db.operation.batch.size": "3"}},
		{"failed call", span("create "+table, 1), map[string]string{"db.operation.name": "create", "azure.tables.partition_key": "p",
			"error.type": "duplicate_key", "db.response.status_code": "409", "azure.tables.error_code": "EntityAlreadyExists"}},
	} {
		got := map[string]string{}
		for _, kv := range tc.span.Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		wantAttrs := map[string]string{"db.system.name": "azure.tables", "db.collection.name": table}
		maps.Copy(wantAttrs, tc.attrs)
		maps.Copy(wantAttrs, want.table)
		if !maps.Equal(got, wantAttrs) {
			t.Errorf("%s span %q: attributes\n got %v\nwant %v", tc.what, tc.span.Name(), got, wantAttrs)
		}
		for k := range got {
			if !slices.Contains(convAttrs, k) && !slices.Contains(ownSpanAttrs, k) && k != "db.operation.batch.size" {
				t.Errorf("%s span: attribute %s is neither the conventions' nor the library's documented own", tc.what, k)
			}
		}
		wantKind := trace.SpanKindInternal
		if want.table != nil {
			wantKind = trace.SpanKindClient
		}
		if tc.span.SpanKind() != wantKind {
			t.Errorf("%s span: kind %v, want %v", tc.what, tc.span.SpanKind(), wantKind)
		}
		if failed := tc.attrs["error.type"] != ""; (tc.span.Status().Code == codes.Error) != failed {
			t.Errorf("%s span: status %v", tc.what, tc.span.Status())
		}
	}
}
