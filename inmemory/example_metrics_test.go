package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// Metrics: an account given a MeterProvider records its instruments through it (here the
// OpenTelemetry SDK's, read by hand; in a service, the provider your exporter uses). A
// few calls, then every data point: sums by value, the conventions' duration histogram by
// count (its count is the number of calls).
func ExampleNewAccount_metrics() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = provider.Shutdown(ctx) }()

	acct := inmemory.NewAccount(&tables.Options{MeterProvider: provider, Cache: tables.Absolute(time.Minute)})
	customers, err := tables.For[Customer](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := customers.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|alice"}, Balance: 100}); err != nil {
		log.Fatal(err)
	}
	if _, err := customers.One(ctx, "eu|alice"); err != nil { // the create cached the row
		log.Fatal(err)
	}
	if _, err := customers.One(ctx, "eu|bob"); !errors.Is(err, abstractions.ErrNotFound) {
		log.Fatal(err)
	}
	if _, err := abstractions.Mutate(ctx, customers, "eu|alice", func(c *Customer) error { c.Balance += 5; return nil }, nil); err != nil {
		log.Fatal(err)
	}
	if err := customers.CreateBatch(ctx, []*Customer{{Entity: abstractions.Entity{ID: "us|carol"}}, {Entity: abstractions.Entity{ID: "us|dave"}}}); err != nil {
		log.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s{%s} %d", m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s{%s} count %d (%s)", m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Count, m.Unit))
				}
			}
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// db.client.operation.duration{db.collection.name=Customer,db.operation.name=BATCH create,db.system.name=azure.tables} count 1 (s)
	// db.client.operation.duration{db.collection.name=Customer,db.operation.name=create,db.system.name=azure.tables} count 1 (s)
	// db.client.operation.duration{db.collection.name=Customer,db.operation.name=mutate,db.system.name=azure.tables} count 1 (s)
	// db.client.operation.duration{db.collection.name=Customer,db.operation.name=read,db.response.status_code=404,db.system.name=azure.tables,error.type=not_found} count 1 (s)
	// db.client.operation.duration{db.collection.name=Customer,db.operation.name=read,db.system.name=azure.tables} count 2 (s)
	// db.client.operation.duration{db.collection.name=Customer,db.operation.name=update,db.system.name=azure.tables} count 1 (s)
	// udtables.batch.transactions.active{db.collection.name=Customer} 0
	// udtables.cache.hits{db.collection.name=Customer} 2
	// udtables.cache.misses{db.collection.name=Customer} 1
}
