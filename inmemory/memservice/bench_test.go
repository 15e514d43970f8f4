package memservice

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/unified-data/gotables/inmemory/internal/cpumeter"

	"github.com/unified-data/gotables/tables/service"
)

func benchService(b *testing.B, partitions, rows int) *Service {
	b.Helper()
	ctx := context.Background()
	s := New()
	if err := s.CreateTable(ctx, "Bench"); err != nil {
		b.Fatal(err)
	}
	for p := range partitions {
		for r := range rows {
			_, err := s.Write(ctx, "Bench", insert(row(fmt.Sprintf("p%04d", p), fmt.Sprintf("r%06d", r),
				prop("name", service.String("some text")), prop("n", service.Int64(int64(r))), prop("ok", service.Bool(true)))))
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	return s
}

func BenchmarkGetRow(b *testing.B) {
	s := benchService(b, 10, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.GetRow(ctx, "Bench", "p0005", fmt.Sprintf("r%06d", i%1000), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInsert(b *testing.B) {
	ctx := context.Background()
	s := New()
	if err := s.CreateTable(ctx, "Bench"); err != nil {
		b.Fatal(err)
	}
	props := []service.Property{prop("name", service.String("some text")), prop("n", service.Int64(1)), prop("ok", service.Bool(true))}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Write(ctx, "Bench", insert(row("p", fmt.Sprintf("r%09d", i), props...))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsertRandomInto100k inserts at random places of a 100,000-row table, the worst
// case of keeping the rows sorted on write.
func BenchmarkInsertRandomInto100k(b *testing.B) {
	s := benchService(b, 100, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a := insert(row(fmt.Sprintf("p%04d", rand.IntN(100)), fmt.Sprintf("x%09d", i)))
		if _, err := s.Write(ctx, "Bench", a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsertInto inserts new rows at random places, in key order, of tables of 1,000
// and 100,000 rows, in 100 partitions and in one; the rows it added are deleted, off the
// clock, every 1,000 inserts, so the table keeps its size. Keeping the rows ordered must cost
// about the same whatever the table holds: an O(n) insert shows as a 100,000-row figure far
// above the 1,000-row one (a regression benchmark).
func BenchmarkInsertInto(b *testing.B) {
	for _, tc := range []struct{ partitions, rows int }{{100, 10}, {100, 1000}, {1, 1000}, {1, 100_000}} {
		b.Run(fmt.Sprintf("table=%d/partitions=%d", tc.partitions*tc.rows, tc.partitions), func(b *testing.B) {
			s := benchService(b, tc.partitions, tc.rows)
			ctx := context.Background()
			props := []service.Property{prop("name", service.String("some text")), prop("n", service.Int64(1)), prop("ok", service.Bool(true))}
			const flush = 1000
			added := make([]service.Row, 0, flush)
			b.ReportAllocs()
			cpu := cpumeter.Start()
			for i := 0; b.Loop(); i++ {
				r := row(fmt.Sprintf("p%04d", rand.IntN(tc.partitions)), fmt.Sprintf("r%06dx%d", rand.IntN(tc.rows), i), props...)
				if _, err := s.Write(ctx, "Bench", insert(r)); err != nil {
					b.Fatal(err)
				}
				if added = append(added, r); len(added) == flush {
					b.StopTimer()
					cpu.Stop()
					for _, r := range added {
						if _, err := s.Write(ctx, "Bench", service.Action{Op: service.OpDelete, Row: r}); err != nil {
							b.Fatal(err)
						}
					}
					added = added[:0]
					cpu.Resume()
					b.StartTimer()
				}
			}
			cpu.Report(b)
		})
	}
}

// BenchmarkParallelMixed runs a mixed load on one table of 16 partitions from 64 goroutines
// per processor: of every ten calls six point reads, two replaces, one insert and one query
// of a partition's first ten rows. Run it with -cpu 1,2: the calls of a table share its lock
// only for what they change or read, so two processors should serve more than one.
func BenchmarkParallelMixed(b *testing.B) {
	const parts, rows = 16, 100
	s := benchService(b, parts, rows)
	ctx := context.Background()
	var inserts atomic.Int64
	b.SetParallelism(64)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpumeter.Start()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		props := []service.Property{prop("name", service.String("some text")), prop("n", service.Int64(1)), prop("ok", service.Bool(true))}
		for i := 0; pb.Next(); i++ {
			pk := fmt.Sprintf("p%04d", r.IntN(parts))
			var err error
			switch i % 10 {
			case 0, 2, 4, 6, 8, 9:
				_, err = s.GetRow(ctx, "Bench", pk, fmt.Sprintf("r%06d", r.IntN(rows)), nil)
			case 1, 5:
				_, err = s.Write(ctx, "Bench", service.Action{Op: service.OpUpsertReplace, Row: row(pk, fmt.Sprintf("r%06d", r.IntN(rows)), props...)})
			case 3:
				_, err = s.Write(ctx, "Bench", insert(row(pk, fmt.Sprintf("s%09d", inserts.Add(1)), props...)))
			case 7:
				var page service.Page
				page, err = s.Query(ctx, "Bench", service.Query{Filter: "PartitionKey eq '" + pk + "'", Top: 10})
				if err == nil && len(page.Rows) != 10 {
					b.Errorf("a page of %d rows", len(page.Rows))
				}
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	cpu.Report(b)
}

func BenchmarkQueryPartition1000(b *testing.B) {
	s := benchService(b, 10, 1000)
	ctx := context.Background()
	q := service.Query{Filter: "PartitionKey eq 'p0005'"}
	b.ReportAllocs()
	for b.Loop() {
		page, err := s.Query(ctx, "Bench", q)
		if err != nil || len(page.Rows) != 1000 {
			b.Fatal(len(page.Rows), err)
		}
	}
}

// BenchmarkQueryPartitionOf10 reads a 10-row partition from tables of 1,000 and 100,000
// rows: a partition query costs what the partition holds, so the two stay close
// (docs/production.md, "Reliability", has the figures).
func BenchmarkQueryPartitionOf10(b *testing.B) {
	for _, partitions := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("table=%d", partitions*10), func(b *testing.B) {
			s := benchService(b, partitions, 10)
			ctx := context.Background()
			q := service.Query{Filter: "PartitionKey eq 'p0050' and n ge 0L"}
			b.ReportAllocs()
			for b.Loop() {
				page, err := s.Query(ctx, "Bench", q)
				if err != nil || len(page.Rows) != 10 || page.Next != nil {
					b.Fatal(len(page.Rows), err)
				}
			}
		})
	}
}
