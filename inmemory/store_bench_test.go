package inmemory_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/unified-data/gotables/inmemory/internal/cpumeter"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// Order is the entity of udtables bench (tools/bench): a dozen columns, strings, numbers,
// times and a flag. The benchmarks below run its single-row and page workloads through a
// store on the memory backend, so that a profile of one of them is a profile of that row of
// the harness.
type Order struct {
	abstractions.Entity
	Customer string
	Status   string
	Notes    string
	Quantity int32
	Sequence int64
	Amount   float64
	Paid     bool
}

func newOrder(partition, rowKey string, i int) *Order {
	return &Order{
		Entity:   abstractions.Entity{ID: partition + "|" + rowKey},
		Customer: "customer-" + strconv.Itoa(i%97),
		Status:   "shipped",
		Notes:    "leave at the door; ring twice",
		Quantity: int32(i%10 + 1),
		Sequence: int64(i) * 1_000_003,
		Amount:   float64(i) + 0.25,
		Paid:     i%2 == 0,
	}
}

func orderKey(i int) string { return "k" + strconv.Itoa(100_000+i) }

// orderStore is a store of Orders on a fresh memory account (read cache off, as the
// harness's uncached rows), with partition "read" of 100 rows and "list" of 1,000.
func orderStore(b *testing.B) *tables.Store[Order] {
	b.Helper()
	ctx := context.Background()
	s, err := tables.For[Order](inmemory.NewAccount(nil), &tables.StoreOptions{Table: "benchorders"})
	if err != nil {
		b.Fatal(err)
	}
	var seed []*Order
	for i := range 100 {
		seed = append(seed, newOrder("read", orderKey(i), i))
	}
	for i := range 1000 {
		seed = append(seed, newOrder("list", orderKey(i), i))
	}
	if _, err := s.UpsertBatch(ctx, seed); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkStore runs the harness's single-row workloads and its page of 100 rows on the
// memory backend (docs/performance.md has the figures).
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	b.Run("point-read", func(b *testing.B) {
		s := orderStore(b)
		b.ReportAllocs()
		cpu := cpumeter.Start()
		for i := 0; b.Loop(); i++ {
			if _, err := s.One(ctx, "read|"+orderKey(i%100)); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b)
	})
	b.Run("insert", func(b *testing.B) {
		// The table is dropped every 10,000 inserts (outside the timer), as a test suite's
		// tables are: an ever-growing table measures the Go heap's growth, page faults
		// included, more than the insert (BenchmarkInsertInto in memservice measures
		// inserts into 100,000 rows).
		s := orderStore(b)
		b.ReportAllocs()
		cpu := cpumeter.Start()
		for i := 0; b.Loop(); i++ {
			if i > 0 && i%10_000 == 0 {
				b.StopTimer()
				cpu.Stop()
				if _, err := s.DeletePartition(ctx, "ins"); err != nil {
					b.Fatal(err)
				}
				cpu.Resume()
				b.StartTimer()
			}
			if err := s.Create(ctx, newOrder("ins", "k"+strconv.Itoa(i), i)); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b)
	})
	b.Run("upsert", func(b *testing.B) {
		s := orderStore(b)
		b.ReportAllocs()
		cpu := cpumeter.Start()
		for i := 0; b.Loop(); i++ {
			if err := s.Upsert(ctx, newOrder("read", orderKey(i%100), i)); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b)
	})
	b.Run("update-strict", func(b *testing.B) {
		s := orderStore(b)
		o := newOrder("upd", "k", 0)
		if err := s.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu := cpumeter.Start()
		for b.Loop() {
			o.Quantity++
			if err := s.Update(ctx, o, abstractions.Strict); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b)
	})
	b.Run("page-of-100", func(b *testing.B) {
		s := orderStore(b)
		var cursor string
		b.ReportAllocs()
		cpu := cpumeter.Start()
		for b.Loop() {
			p, err := s.Page(ctx, abstractions.Query[Order]{Partition: "list", Take: 100, Cursor: cursor})
			if err != nil || len(p.Items) != 100 {
				b.Fatal(len(p.Items), err)
			}
			cursor = p.Cursor
		}
		cpu.Report(b)
	})
}

// BenchmarkMixedParallel runs a mixed load on one table from 64 goroutines per processor
// (b.SetParallelism): of every ten operations six point reads, two upserts, one insert and
// one page of ten rows, over 16 partitions. Run it with -cpu 1,2 to see whether it scales
// with processors.
func BenchmarkMixedParallel(b *testing.B) {
	ctx := context.Background()
	s, err := tables.For[Order](inmemory.NewAccount(nil), &tables.StoreOptions{Table: "mixed"})
	if err != nil {
		b.Fatal(err)
	}
	const parts, perPart = 16, 100
	var seed []*Order
	for p := range parts {
		for i := range perPart {
			seed = append(seed, newOrder("p"+strconv.Itoa(p), orderKey(i), i))
		}
	}
	if _, err := s.UpsertBatch(ctx, seed); err != nil {
		b.Fatal(err)
	}
	var inserts atomic.Int64
	b.SetParallelism(64)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpumeter.Start()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for i := 0; pb.Next(); i++ {
			part := "p" + strconv.Itoa(r.IntN(parts))
			var err error
			switch i % 10 {
			case 0, 2, 4, 6, 8, 9:
				_, err = s.One(ctx, part+"|"+orderKey(r.IntN(perPart)))
			case 1, 5:
				err = s.Upsert(ctx, newOrder(part, orderKey(r.IntN(perPart)), i))
			case 3:
				err = s.Create(ctx, newOrder(part, "new"+strconv.FormatInt(inserts.Add(1), 10), i))
			case 7:
				var p abstractions.Page[Order]
				p, err = s.Page(ctx, abstractions.Query[Order]{Partition: part, Take: 10})
				if err == nil && len(p.Items) != 10 {
					b.Errorf("a page of %d rows", len(p.Items))
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
