package fidelity

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/expiry"
	"github.com/unified-data/gotables/tables/service"
)

// BenchmarkSweep measures a sweep of 1,000 expired rows in a table of only those and in one
// of 100,000 rows (UNIFIED_TABLES_EXPIRY_BENCH_ROWS sets the size): the time and the
// requests per sweep (reported) must stay within 2× of each other. The memory service's
// point reads and key-range queries, like the service's, do not depend on the rows around
// them; Azurite's do (it reads every row of a table for a query), and filling its big table
// takes minutes, so its half runs only with UNIFIED_TABLES_EXPIRY_BENCH=1. make
// expiry-bench runs both.
func BenchmarkSweep(b *testing.B) {
	rows := 100_000
	if n, err := strconv.Atoi(os.Getenv("UNIFIED_TABLES_EXPIRY_BENCH_ROWS")); err == nil && n > 0 {
		rows = n
	}
	backends := map[string]func() service.Tables{Memory: func() service.Tables { return memservice.New() }}
	if conn, ok := azuritetest.LookupConnectionString(b); ok && os.Getenv("UNIFIED_TABLES_EXPIRY_BENCH") == "1" {
		backends[Azurite] = func() service.Tables {
			svc, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: transport}}})
			if err != nil {
				b.Fatal(err)
			}
			return svc
		}
	}
	for _, name := range []string{Memory, Azurite} {
		open, ok := backends[name]
		if !ok {
			continue
		}
		for _, n := range []int{1000, rows} {
			b.Run(fmt.Sprintf("%s/1000-expired-of-%d", name, n), func(b *testing.B) {
				ctx := context.Background()
				var requests int64
				for range b.N {
					b.StopTimer()
					svc := &counting{Tables: open()}
					clk := newExpClock()
					acct := tables.NewAccountOver(name, svc, nil, &tables.Options{Now: clk.now, Logger: discardLogger()})
					table := "sweepbench" + randomSuffix()
					s, err := tables.For[expSession](acct, &tables.StoreOptions{Table: table})
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
					_ = svc.DeleteTable(ctx, table)
				}
				b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			})
		}
	}
}
