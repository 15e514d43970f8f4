package memservice

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

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

// BenchmarkSort100k is what sorting at query time would cost a 100,000-row table on every
// query, for comparison with keeping the slice sorted.
func BenchmarkSort100k(b *testing.B) {
	s := benchService(b, 100, 1000)
	t := s.lookup("Bench")
	rows := slices.Clone(t.sorted)
	b.ReportAllocs()
	for b.Loop() {
		rand.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		slices.SortFunc(rows, func(x, y *service.Row) int { return compareKeys(keyOf(x), keyOf(y)) })
	}
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
// rows: a partition query costs what the partition holds, so the two stay close (the
// README's reliability section has the figures).
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
