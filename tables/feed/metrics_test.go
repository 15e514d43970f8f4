package feed_test

import (
	"context"
	"errors"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/feed"
)

// TestBacklogAndRedeliveryMetrics: a pass records the backlog it found (pending records,
// marked partitions, the oldest record's age) as gauges, and a record delivered after a
// failed delivery counts as a redelivery.
func TestBacklogAndRedeliveryMetrics(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()
	acct, table := account(t, mp)
	s := orders(t, acct, table, &feed.Options{Hold: time.Millisecond})
	for _, id := range []string{"p|a", "p|b", "q|c"} {
		if err := s.Create(ctx, &order{Entity: abstractions.Entity{ID: id}, Status: "open"}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond) // the oldest record is at least this old
	r, err := feed.NewRelay(s, &feed.RelayOptions{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	failOnce := true
	h := func(_ context.Context, rec feed.Record) error {
		if rec.Entity == "q|c" && failOnce {
			failOnce = false
			return errors.New("downstream unavailable")
		}
		return nil
	}
	if _, err := r.Pass(ctx, h); err != nil {
		t.Fatal(err)
	}
	g := collect(t, reader)
	if g.ints["udtables.feed.pending"] != 3 || g.ints["udtables.feed.partitions"] != 2 || g.floats["udtables.feed.oldest_pending_age"] < 0.01 {
		t.Errorf("the first pass's backlog: %v %v", g.ints, g.floats)
	}
	if _, err := r.Pass(ctx, h); err != nil {
		t.Fatal(err)
	}
	g = collect(t, reader)
	if g.ints["udtables.feed.deliveries"] != 3 || g.ints["udtables.feed.redeliveries"] != 1 || g.ints["udtables.feed.failures"] != 1 {
		t.Errorf("counters after the redelivery: %v", g.ints)
	}
	if g.ints["udtables.feed.pending"] != 1 {
		t.Errorf("the second pass found %d pending records, want 1 (the one that failed)", g.ints["udtables.feed.pending"])
	}
}

// figures are the values of a reader's instruments: counters summed, gauges' last values.
type figures struct {
	ints   map[string]int64
	floats map[string]float64
}

func collect(t *testing.T, reader *sdkmetric.ManualReader) figures {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	f := figures{ints: map[string]int64{}, floats: map[string]float64{}}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					f.ints[m.Name] += p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					f.ints[m.Name] = p.Value
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					f.floats[m.Name] = p.Value
				}
			}
		}
	}
	return f
}
