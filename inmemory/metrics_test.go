package inmemory_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/expiry"
	"github.com/unified-data/gotables/tables/service"
)

// offloaded returns the udtables.offload.bytes sum of the table ("" when none).
func offloaded(t *testing.T, r *sdkmetric.ManualReader, table string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "udtables.offload.bytes" {
				continue
			}
			if m.Unit != "By" {
				t.Errorf("unit %q, want By", m.Unit)
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if v, _ := p.Attributes.Value("db.collection.name"); v.AsString() != table {
					t.Errorf("a point of table %q, want %q", v.AsString(), table)
				}
				n += p.Value
			}
		}
	}
	return n
}

// The bytes offloaded are the bytes of the blobs the writes uploaded: a large value's and a
// file's; a write that finds its blob there already (the same content) uploads nothing.
func TestMetricsCountOffloadedBytes(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()
	svc := memservice.New()
	acct := inmemory.NewAccountOver(svc, svc, &tables.Options{MeterProvider: mp,
		BlobOffload: &tables.BlobOffloadOptions{Container: "values", ThresholdBytes: 1000, CleanupGrace: tables.NoCleanup}})
	s, err := tables.For[Report](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := rand.Text() + rand.Text() // random, so compression keeps it large
	for len(body) < 80_000 {          // past what split rows hold
		body += rand.Text()
	}
	file := make([]byte, 3000)
	_, _ = rand.Read(file)
	r := &Report{Entity: abstractions.Entity{ID: "p|a"}, Body: body, File: abstractions.FileFromBytes(file, "application/octet-stream")}
	if err := s.Upsert(ctx, r); err != nil {
		t.Fatal(err)
	}
	stored := func() (n int64, blobs int) {
		t.Helper()
		page, err := svc.List(ctx, "values", service.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Blobs {
			n += b.Properties.ContentLength
		}
		return n, len(page.Blobs)
	}
	n, blobs := stored()
	if blobs != 2 || n < int64(len(file)) {
		t.Fatalf("%d blobs of %d bytes, want the value's and the file's", blobs, n)
	}
	if got := offloaded(t, reader, s.Table()); got != n {
		t.Errorf("offloaded %d bytes, the blobs hold %d", got, n)
	}
	// The same content again in the same row: its blobs are there, nothing is uploaded.
	if err := s.Upsert(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := offloaded(t, reader, s.Table()); got != n {
		t.Errorf("after the same write again: offloaded %d bytes, want still %d", got, n)
	}
	// Another row's blobs are its own.
	if err := s.Upsert(ctx, &Report{Entity: abstractions.Entity{ID: "p|b"}, Body: body}); err != nil {
		t.Fatal(err)
	}
	n, blobs = stored()
	if got := offloaded(t, reader, s.Table()); blobs != 3 || got != n {
		t.Errorf("after another row's write: offloaded %d bytes, the %d blobs hold %d", got, blobs, n)
	}
}

// sumOf returns the sum of the int64 counter named name.
func sumOf(t *testing.T, r *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					n += p.Value
				}
			}
		}
	}
	return n
}

// A sweep of expired rows counts the rows it found expired and the rows it deleted.
func TestMetricsCountSweptRows(t *testing.T) {
	type session struct {
		abstractions.Entity
		Expires time.Time `table:",expires=1h"`
	}
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()
	now := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	acct := inmemory.NewAccount(&tables.Options{MeterProvider: mp, Now: func() time.Time { return now }})
	s, err := tables.For[session](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.Create(ctx, &session{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|s", i%2)}}); err != nil && i < 2 {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, &session{Entity: abstractions.Entity{ID: "p0|later"}, Expires: now.Add(5 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	rep, err := expiry.Sweep(ctx, s, nil)
	if err != nil || rep.Swept != 2 {
		t.Fatalf("Sweep = %+v, %v", rep, err)
	}
	if e, sw := sumOf(t, reader, "udtables.expiry.expired"), sumOf(t, reader, "udtables.expiry.swept"); e != 2 || sw != 2 {
		t.Errorf("expired %d, swept %d; want 2 and 2", e, sw)
	}
}

// gaugeOf returns the value of the float64 gauge named name for the table (ok false: none).
func gaugeOf(t *testing.T, r *sdkmetric.ManualReader, name, table string) (v float64, ok bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("%s: unit %q, want s", name, m.Unit)
			}
			for _, p := range m.Data.(metricdata.Gauge[float64]).DataPoints {
				if a, _ := p.Attributes.Value("db.collection.name"); a.AsString() == table {
					v, ok = p.Value, true
				}
			}
		}
	}
	return v, ok
}

// A sweep of expired rows records the age of the oldest expired row it left when it ends:
// stopped by its context, the rows of the partition it stopped in; after a full sweep, 0.
func TestMetricsOldestUnswept(t *testing.T) {
	type session struct {
		abstractions.Entity
		Expires time.Time `table:",expires=1h"`
	}
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()
	now := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	acct := inmemory.NewAccount(&tables.Options{MeterProvider: mp, Now: func() time.Time { return now }})
	s, err := tables.For[session](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	// p1's row expires at 9:30 and p0's at 10:00, so the sweep visits p1 first.
	for _, v := range []*session{{Entity: abstractions.Entity{ID: "p0|a"}}, {Entity: abstractions.Entity{ID: "p0|b"}},
		{Entity: abstractions.Entity{ID: "p1|a"}, Expires: now.Add(30 * time.Minute)}} {
		if err := s.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Hour)
	if _, ok := gaugeOf(t, reader, "udtables.expiry.oldest_unswept_age", s.Table()); ok {
		t.Fatal("a gauge before any sweep")
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rep, err := expiry.Sweep(cctx, s, &expiry.SweepOptions{Progress: func(expiry.Report) { cancel() }})
	if err == nil || rep.Swept != 1 || rep.OldestUnswept != time.Hour {
		t.Fatalf("a sweep cancelled after its first partition: %+v, %v; want 1 swept, an hour's backlog and the context's error", rep, err)
	}
	if v, ok := gaugeOf(t, reader, "udtables.expiry.oldest_unswept_age", s.Table()); !ok || v != 3600 {
		t.Errorf("after the cancelled sweep the gauge is %v (%v), want 3600", v, ok)
	}
	rep, err = expiry.Sweep(ctx, s, nil)
	if err != nil || rep.Swept != 2 || rep.OldestUnswept != 0 {
		t.Fatalf("the full sweep: %+v, %v", rep, err)
	}
	if v, ok := gaugeOf(t, reader, "udtables.expiry.oldest_unswept_age", s.Table()); !ok || v != 0 {
		t.Errorf("after the full sweep the gauge is %v (%v), want 0", v, ok)
	}
}
