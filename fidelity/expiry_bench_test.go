package fidelity

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/expiry"
)

// BenchmarkSweepInMemory measures a sweep of 1,000 expired rows in a table of only those
// and in one of 100,000 rows (UNIFIED_TABLES_EXPIRY_BENCH_ROWS sets the size), on the
// memory service, whose point reads and key-range queries, like the service's, do not slow
// down as the table grows: the time and the requests per sweep (reported) must stay within
// 2× of each other. make expiry-bench runs it beside the Azurite benchmark of tables/expiry.
func BenchmarkSweepInMemory(b *testing.B) {
	rows := 100_000
	if n, err := strconv.Atoi(os.Getenv("UNIFIED_TABLES_EXPIRY_BENCH_ROWS")); err == nil && n > 0 {
		rows = n
	}
	for _, n := range []int{1000, rows} {
		b.Run(fmt.Sprintf("1000-expired-of-%d", n), func(b *testing.B) {
			ctx := context.Background()
			var requests int64
			for range b.N {
				b.StopTimer()
				svc := &counting{Tables: memservice.New()}
				clk := newExpClock()
				acct := tables.NewAccountOver(Memory, svc, nil, &tables.Options{Now: clk.now, Logger: discardLogger()})
				s, err := tables.For[expSession](acct, &tables.StoreOptions{Table: "sweepbench"})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.EnsureCreated(ctx); err != nil {
					b.Fatal(err)
				}
				byPK := map[int][]*expSession{}
				for i := range n {
					at := expT0.Add(10 * time.Hour)
					if i < 1000 {
						at = expT0.Add(10 * time.Minute)
					}
					pk := i % 50
					byPK[pk] = append(byPK[pk], &expSession{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|s%06d", pk, i)}, User: "u", Expires: at})
				}
				for _, batch := range byPK {
					if err := s.CreateBatch(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				clk.at0(time.Hour)
				before := svc.n.Load()
				runtime.GC() // the fill's garbage is not the sweep's to collect
				b.StartTimer()
				rep, err := expiry.Sweep(ctx, s, nil)
				b.StopTimer()
				if err != nil || rep.Swept != 1000 {
					b.Fatalf("sweep: %+v, %v", rep, err)
				}
				requests += svc.n.Load() - before
			}
			b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
		})
	}
}
