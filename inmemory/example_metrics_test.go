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
// few calls, then every data point: sums by value, the duration histogram by count.
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
	// udtables.batch.transactions.active{db.collection.name=Customer} 0
	// udtables.cache.hits{db.collection.name=Customer} 2
	// udtables.cache.misses{db.collection.name=Customer} 1
	// udtables.call.duration{db.collection.name=Customer,db.operation.name=create batch,udtables.outcome=ok} count 1 (s)
	// udtables.call.duration{db.collection.name=Customer,db.operation.name=create,udtables.outcome=ok} count 1 (s)
	// udtables.call.duration{db.collection.name=Customer,db.operation.name=mutate,udtables.outcome=ok} count 1 (s)
	// udtables.call.duration{db.collection.name=Customer,db.operation.name=read,udtables.outcome=not_found} count 1 (s)
	// udtables.call.duration{db.collection.name=Customer,db.operation.name=read,udtables.outcome=ok} count 2 (s)
	// udtables.call.duration{db.collection.name=Customer,db.operation.name=update,udtables.outcome=ok} count 1 (s)
	// udtables.calls{db.collection.name=Customer,db.operation.name=create batch,udtables.outcome=ok} 1
	// udtables.calls{db.collection.name=Customer,db.operation.name=create,udtables.outcome=ok} 1
	// udtables.calls{db.collection.name=Customer,db.operation.name=mutate,udtables.outcome=ok} 1
	// udtables.calls{db.collection.name=Customer,db.operation.name=read,udtables.outcome=not_found} 1
	// udtables.calls{db.collection.name=Customer,db.operation.name=read,udtables.outcome=ok} 2
	// udtables.calls{db.collection.name=Customer,db.operation.name=update,udtables.outcome=ok} 1
}
