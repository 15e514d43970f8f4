package fidelity

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/feed"
	"github.com/unified-data/gotables/tables/service"
)

// counting counts the requests a table service receives.
type counting struct {
	service.Tables
	n atomic.Int64
}

func (c *counting) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	c.n.Add(1)
	return c.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (c *counting) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	c.n.Add(1)
	return c.Tables.Query(ctx, table, q)
}

func (c *counting) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	c.n.Add(1)
	return c.Tables.Write(ctx, table, a)
}

func (c *counting) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	c.n.Add(1)
	return c.Tables.Transact(ctx, table, acts)
}

// BenchmarkFeedPass measures a relay pass over a table with 10 partitions of pending
// records, after history partitions were written and drained (their entities stay; their
// records, marks and leases are gone): the pass's time and requests must not grow with the
// history. It runs on the memory service, whose requests cost the same whatever the table
// holds, so the requests per pass (reported) are what a pass on Azure costs.
func BenchmarkFeedPass(b *testing.B) {
	for _, history := range []int{0, 10000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			ctx := context.Background()
			svc := &counting{Tables: memservice.New()}
			table := "fdbench" + randomSuffix()
			if err := svc.CreateTable(ctx, table); err != nil {
				b.Fatal(err)
			}
			w := fdCounters(b, Memory, svc, table)
			for i := range history {
				if err := w.Create(ctx, &fdCounter{Entity: abstractions.Entity{ID: fmt.Sprintf("h%05d|e", i)}}); err != nil {
					b.Fatal(err)
				}
			}
			r, err := feed.NewRelay(w, &feed.RelayOptions{Name: "bench", PageSize: 1000})
			if err != nil {
				b.Fatal(err)
			}
			handle := func(context.Context, feed.Record) error { return nil }
			for {
				if _, err := r.Pass(ctx, handle); err != nil {
					b.Fatal(err)
				}
				bl, err := feed.Status(ctx, w)
				if err != nil {
					b.Fatal(err)
				}
				if bl.Partitions == 0 && bl.Pending == 0 {
					break
				}
				time.Sleep(fdHold)
			}
			var requests int64
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				for p := range 10 {
					if err := w.Upsert(ctx, &fdCounter{Entity: abstractions.Entity{ID: fmt.Sprintf("q%02d|e", p)}, N: i}); err != nil {
						b.Fatal(err)
					}
				}
				before := svc.n.Load()
				b.StartTimer()
				st, err := r.Pass(ctx, handle)
				b.StopTimer()
				if err != nil || st.Delivered != 10 {
					b.Fatalf("pass: %+v, %v", st, err)
				}
				requests += svc.n.Load() - before
				b.StartTimer()
			}
			b.ReportMetric(float64(requests)/float64(b.N), "requests/pass")
		})
	}
}
