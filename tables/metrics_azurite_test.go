package tables_test

import (
	"context"
	"crypto/rand"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/faults"
)

// On Azurite, the SDK pipeline's retries, the busy answers it meets and a write that meets
// its own echo are counted: a 503 before a create, and a lost response to another, which the
// SDK resends into the 409 its own first try caused. The calls' durations carry the
// emulator's address, port and account as the conventions' attributes.
func TestMetricsOnAzurite(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()

	co := azuritetest.ClientOptions(t)
	ft := faults.NewTransport(co.Transport)
	co.Transport = ft
	co.Retry = policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: 10 * time.Millisecond}
	acct, err := tables.NewAccount(conn, &tables.Options{MeterProvider: mp, ClientOptions: co})
	if err != nil {
		t.Fatal(err)
	}
	table := "metrics" + strings.ToLower(rand.Text()[:10])
	s, err := tables.For[Customer](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = acct.Tables().DeleteTable(context.Background(), table) }()
	if err := s.EnsureCreated(ctx); err != nil {
		t.Fatal(err)
	}

	ft.Inject(faults.ServerBusy, faults.Writes, 1)
	if err := s.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|a"}}); err != nil {
		t.Fatalf("create after a busy answer: %v", err)
	}
	ft.Inject(faults.LoseResponse, faults.Writes, 1)
	if err := s.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|b"}}); err != nil {
		t.Fatalf("create after a lost response: %v", err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name+"{"+p.Attributes.Encoded(attribute.DefaultEncoder())+"}"] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[m.Name+"{"+p.Attributes.Encoded(attribute.DefaultEncoder())+"}"] = int64(p.Count)
				}
			}
		}
	}
	u, err := url.Parse(acct.Name())
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{
		"udtables.busy_answers{http.response.status_code=503}": 1,
		"udtables.retries{}": 2, // one after the 503, one after the lost response
		"udtables.own_echoes{db.collection.name=" + table + ",db.operation.name=insert}": 1,
		"db.client.operation.duration{db.collection.name=" + table + ",db.namespace=devstoreaccount1,db.operation.name=create," +
			"db.system.name=azure.tables,server.address=" + u.Hostname() + ",server.port=" + u.Port() + "}": 2,
	} {
		if got[key] != want {
			t.Errorf("%s = %d, want %d", key, got[key], want)
		}
	}
}
