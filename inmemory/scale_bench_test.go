package inmemory_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
)

// Sample is the row of the scale simulations: about 100 bytes, like a telemetry sample.
type Sample struct {
	abstractions.Entity
	Sensor string
	Value  float64
	Unit   string
}

func samples(partitions, perPartition int) []*Sample {
	out := make([]*Sample, 0, partitions*perPartition)
	for i := range perPartition {
		for p := range partitions {
			out = append(out, &Sample{Entity: abstractions.Entity{ID: fmt.Sprintf("site%03d|%06d", p, i)},
				Sensor: fmt.Sprint("s", p), Value: float64(i), Unit: "kPa"})
		}
	}
	return out
}

// throttledStore is a store over a fresh memory service throttled at Azure's targets,
// with the account's default retries (the Azure SDK's policy: 3 retries from 800 ms).
func throttledStore(b *testing.B, degree int) (*tables.Store[Sample], *memservice.Service) {
	b.Helper()
	svc := memservice.New(memservice.WithThrottling(memservice.AzureTargets))
	acct := inmemory.NewAccountOver(svc, svc, &tables.Options{BatchParallelism: degree})
	s, err := tables.For[Sample](acct, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s, svc
}

// report records the throughput of rows written in elapsed (over b.N loads): rows/s, its
// share of the model's sustained rate (%of-rate), and, stricter, its share of everything
// the model lets through in that time, each load's full one-second bucket included
// (%of-ceiling); and the requests the service refused (503s).
func report(b *testing.B, rows int, elapsed time.Duration, rate float64, refused int64) {
	perSec := float64(rows) / elapsed.Seconds()
	b.ReportMetric(perSec, "rows/s")
	b.ReportMetric(100*perSec/rate, "%of-rate")
	b.ReportMetric(100*float64(rows)/(rate*elapsed.Seconds()+rate*float64(b.N)), "%of-ceiling")
	b.ReportMetric(float64(refused), "503s")
}

// BenchmarkThrottledBulkLoad loads 100,000 rows over 100 partitions into a memory service
// throttled at Azure's targets (20,000 entities/s for the account, 2,000 per partition), so
// the account's rate bounds the load. Every call must succeed: the 503s are absorbed by the
// retries and by batches sending fewer transactions at once. Run it with -benchtime=1x:
// each load takes about five seconds. On a small machine the lower degrees are bound by
// the processor, not by the model (few 503s).
func BenchmarkThrottledBulkLoad(b *testing.B) {
	const partitions, perPartition = 100, 1000
	for _, degree := range []int{1, 4, 8} {
		b.Run(fmt.Sprint("degree=", degree), func(b *testing.B) {
			ctx := context.Background()
			var rows int
			var elapsed time.Duration
			var refused int64
			for b.Loop() {
				b.StopTimer()
				s, svc := throttledStore(b, degree)
				if err := s.EnsureCreated(ctx); err != nil {
					b.Fatal(err)
				}
				vs := samples(partitions, perPartition)
				b.StartTimer()
				start := time.Now()
				n, err := s.UpsertBatch(ctx, vs)
				if err != nil || n != len(vs) {
					b.Fatalf("wrote %d of %d: %v", n, len(vs), err)
				}
				elapsed += time.Since(start)
				rows += n
				refused += svc.Throttled()
			}
			report(b, rows, elapsed, memservice.AzureTargets.AccountRate, refused)
		})
	}
}

// BenchmarkThrottledHotPartition writes into one partition past its target of 2,000
// entities/s: a bulk load of 10,000 rows (one transaction after another), and 8 writers
// upserting 1,250 rows each on their own. The partition must stay at its limit with the
// 503s absorbed; "failed" counts the calls that failed even so (the retries ran out).
func BenchmarkThrottledHotPartition(b *testing.B) {
	ctx := context.Background()
	b.Run("batch", func(b *testing.B) {
		var rows int
		var elapsed time.Duration
		var refused int64
		for b.Loop() {
			b.StopTimer()
			s, svc := throttledStore(b, 0)
			if err := s.EnsureCreated(ctx); err != nil {
				b.Fatal(err)
			}
			vs := samples(1, 10_000)
			b.StartTimer()
			start := time.Now()
			n, err := s.UpsertBatch(ctx, vs)
			if err != nil {
				b.Fatalf("wrote %d: %v", n, err)
			}
			elapsed += time.Since(start)
			rows += n
			refused += svc.Throttled()
		}
		report(b, rows, elapsed, memservice.AzureTargets.PartitionRate, refused)
	})
	b.Run("single-writers", func(b *testing.B) {
		const writers, each = 8, 1250
		var rows int
		var elapsed time.Duration
		var refused int64
		var failed atomic.Int64
		for b.Loop() {
			b.StopTimer()
			s, svc := throttledStore(b, 0)
			if err := s.EnsureCreated(ctx); err != nil {
				b.Fatal(err)
			}
			vs := samples(1, writers*each)
			b.StartTimer()
			start := time.Now()
			var wg sync.WaitGroup
			var ok atomic.Int64
			for w := range writers {
				wg.Go(func() {
					for _, v := range vs[w*each : (w+1)*each] {
						if err := s.Upsert(ctx, v); err != nil {
							failed.Add(1)
						} else {
							ok.Add(1)
						}
					}
				})
			}
			wg.Wait()
			elapsed += time.Since(start)
			rows += int(ok.Load())
			refused += svc.Throttled()
		}
		report(b, rows, elapsed, memservice.AzureTargets.PartitionRate, refused)
		b.ReportMetric(float64(failed.Load()), "failed")
	})
}
