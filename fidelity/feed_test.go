package fidelity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/feed"
	"github.com/unified-data/gotables/tables/service"
)

// The relay tests run on both backends: relays racing over many partitions, and the crash
// cases (a writer stopped between its mark and its write, a relay stopped between its
// handler and its checkpoint, a lease holder that stops answering), each checked by the
// same rule: every record a committed write left is delivered, each entity's versions in
// order, and a record delivered twice only where a crash explains it (by its id).

// fdHold is the feed's hold in these tests: short, so that drained partitions are cleared
// within a few passes.
const fdHold = 20 * time.Millisecond

// fdCounter is the type the relay tests write.
type fdCounter struct {
	abstractions.Entity
	N int
}

// fdTable returns a new table of backend b, deleted at the test's end.
func fdTable(t *testing.T, b backend, prefix string) string {
	t.Helper()
	table := prefix + randomSuffix()
	if err := b.Tables.CreateTable(context.Background(), table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Tables.DeleteTable(context.Background(), table) })
	return table
}

// fdCounters returns a store of fdCounter with a feed over svc (one account: one process).
func fdCounters(t testing.TB, name string, svc service.Tables, table string) *tables.Store[fdCounter] {
	t.Helper()
	s, err := tables.For[fdCounter](tables.NewAccountOver(name, svc, nil, &tables.Options{Logger: discardLogger()}), &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed.Enable(s, &feed.Options{Hold: fdHold}); err != nil {
		t.Fatal(err)
	}
	return s
}

// deliveries collects what handlers received: each record id's count, and each entity's
// versions in the order delivered.
type deliveries struct {
	mu       sync.Mutex
	byID     map[string]int
	versions map[string][]int64
}

func newDeliveries() *deliveries {
	return &deliveries{byID: map[string]int{}, versions: map[string][]int64{}}
}

func (d *deliveries) handle(_ context.Context, r feed.Record) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byID[r.ID]++
	d.versions[r.Entity] = append(d.versions[r.Entity], r.Version)
	return nil
}

// duplicates returns the ids delivered more than once.
func (d *deliveries) duplicates() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for id, n := range d.byID {
		if n > 1 {
			out = append(out, id)
		}
	}
	return out
}

// check compares the deliveries with the entities of table: each entity at change number
// N was delivered versions 1..N, each at least once, and the first delivery of each
// version comes in rising order (a redelivery repeats versions delivered before).
func (d *deliveries) check(t *testing.T, ctx context.Context, svc service.Tables, table string) {
	t.Helper()
	rows, err := allRows(ctx, svc, table, service.Query{Filter: "RowKey lt '~'", Select: []string{"_FdVer"}})
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	entities := 0
	for _, r := range rows {
		if strings.HasPrefix(r.PartitionKey, "~") {
			continue
		}
		entities++
		v, _ := r.Get("_FdVer")
		id := r.PartitionKey + "|" + r.RowKey
		got := d.versions[id]
		next := int64(1)
		for _, g := range got {
			switch {
			case g == next:
				next++
			case g < next: // a redelivery
			default:
				t.Errorf("%s: versions delivered %v, not in order", id, got)
			}
		}
		if next-1 != v.Int64() {
			t.Errorf("%s is at change %d; delivered %v", id, v.Int64(), got)
		}
	}
	if entities == 0 {
		t.Fatal("no entity was written")
	}
}

// drain runs passes of the relays, in turn, until the registry is empty and nothing is
// pending, or fails t after the deadline.
func drain(t *testing.T, ctx context.Context, s *tables.Store[fdCounter], h feed.Handler, relays ...*feed.Relay) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		if _, err := relays[i%len(relays)].Pass(ctx, h); err != nil {
			t.Logf("pass: %v", err)
		}
		b, err := feed.Status(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if b.Partitions == 0 && b.Pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained: %+v", b)
		}
		time.Sleep(fdHold / 2)
	}
}

// TestFeedRelayRace: writers of two accounts upsert counters across many partitions while
// three relays run; afterwards every record was delivered exactly once, each entity's
// versions in order, and the registry is empty. UNIFIED_TABLES_FEED_FULL=1 (make feed-full)
// runs the size: 1,000 partitions, 20,000 writes, four relays.
func TestFeedRelayRace(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			parts, writes, relays := 40, 400, 3
			if b.Name == Azurite {
				parts, writes = 20, 160
			}
			if os.Getenv("UNIFIED_TABLES_FEED_FULL") == "1" {
				parts, writes, relays = 1000, 20000, 4
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			table := fdTable(t, b, "fdrace")
			writers := [2]*tables.Store[fdCounter]{fdCounters(t, b.Name, b.Tables, table), fdCounters(t, b.Name, b.Tables, table)}
			d := newDeliveries()
			rctx, stop := context.WithCancel(ctx)
			var rs []*feed.Relay
			var wg sync.WaitGroup
			for i := range relays {
				r, err := feed.NewRelay(fdCounters(t, b.Name, b.Tables, table), &feed.RelayOptions{Name: fmt.Sprintf("r%d", i), Lease: 10 * time.Second, Poll: 5 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				rs = append(rs, r)
				wg.Add(1)
				go func() { defer wg.Done(); _ = r.Run(rctx, d.handle) }()
			}
			var next atomic.Int64
			var written atomic.Int64
			var wwg sync.WaitGroup
			for g := range 16 {
				wwg.Add(1)
				go func() {
					defer wwg.Done()
					rnd := rand.New(rand.NewPCG(uint64(g), 7))
					for next.Add(1) <= int64(writes) {
						id := fmt.Sprintf("p%04d|c%d", rnd.IntN(parts), rnd.IntN(3))
						err := writers[g%2].Upsert(ctx, &fdCounter{Entity: abstractions.Entity{ID: id}, N: g})
						switch {
						case err == nil:
							written.Add(1)
						case errors.Is(err, abstractions.ErrConcurrencyConflict):
						default:
							t.Errorf("upsert %s: %v", id, err)
							return
						}
					}
				}()
			}
			wwg.Wait()
			drain(t, ctx, writers[0], d.handle, rs...)
			stop()
			wg.Wait()
			d.check(t, ctx, b.Tables, table)
			if dup := d.duplicates(); len(dup) > 0 {
				t.Errorf("%d records delivered more than once without a crash, such as %s", len(dup), dup[0])
			}
			d.mu.Lock()
			n := len(d.byID)
			d.mu.Unlock()
			if int64(n) != written.Load() {
				t.Errorf("%d records delivered for %d writes", n, written.Load())
			}
			t.Logf("%d writes over %d partitions, %d records delivered by %d relays", written.Load(), parts, n, relays)
		})
	}
}

// TestFeedPassesOfOneRelay: two passes of one relay at the same time (Run, and a Pass the
// application calls) share its leases by name; each partition is still worked on by one of
// them, so no record is delivered twice.
func TestFeedPassesOfOneRelay(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			table := fdTable(t, b, "fdtwice")
			s := fdCounters(t, b.Name, b.Tables, table)
			for i := range 6 {
				if err := s.Upsert(ctx, &fdCounter{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|c", i%3)}, N: i}); err != nil {
					t.Fatal(err)
				}
			}
			r, err := feed.NewRelay(s, &feed.RelayOptions{Name: "one"})
			if err != nil {
				t.Fatal(err)
			}
			d := newDeliveries()
			// The first record each pass meets waits until both passes have met one (or
			// 300 ms have passed: the other pass found every partition worked on).
			var started sync.WaitGroup
			started.Add(2)
			var first [2]atomic.Bool
			h := func(i int) feed.Handler {
				return func(ctx context.Context, rec feed.Record) error {
					if first[i].CompareAndSwap(false, true) {
						started.Done()
						waited := make(chan struct{})
						go func() { started.Wait(); close(waited) }()
						select {
						case <-waited:
						case <-time.After(300 * time.Millisecond):
						}
					}
					return d.handle(ctx, rec)
				}
			}
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := r.Pass(ctx, h(i)); err != nil {
						t.Errorf("pass %d: %v", i, err)
					}
				}()
			}
			wg.Wait()
			if !first[0].Load() && !first[1].Load() {
				t.Fatal("no record delivered")
			}
			if !first[0].Load() || !first[1].Load() {
				started.Done() // the waiter of the pass that delivered ends
			}
			if dup := d.duplicates(); len(dup) > 0 {
				t.Errorf("%d records delivered twice by two passes of one relay, such as %s", len(dup), dup[0])
			}
			d.mu.Lock()
			n := len(d.byID)
			d.mu.Unlock()
			if n != 6 {
				t.Errorf("%d records delivered, want 6", n)
			}
		})
	}
}

// TestFeedPassCancelled: a pass whose context ends in the middle of a partition stops
// there, returns the context's error and releases its lease; every record it did not
// checkpoint stays pending and the next pass delivers it, so nothing is lost.
func TestFeedPassCancelled(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			table := fdTable(t, b, "fdcancel")
			s := fdCounters(t, b.Name, b.Tables, table)
			for i := range 6 {
				if err := s.Upsert(ctx, &fdCounter{Entity: abstractions.Entity{ID: "p|c"}, N: i}); err != nil {
					t.Fatal(err)
				}
			}
			r, err := feed.NewRelay(s, &feed.RelayOptions{Name: "r"})
			if err != nil {
				t.Fatal(err)
			}
			d := newDeliveries()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			n := 0
			_, err = r.Pass(cctx, func(ctx context.Context, rec feed.Record) error {
				if n++; n == 2 {
					cancel()
				}
				return d.handle(ctx, rec)
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the cancelled pass returned %v", err)
			}
			d.mu.Lock()
			first := len(d.byID)
			d.mu.Unlock()
			if first != 2 {
				t.Fatalf("the cancelled pass delivered %d records, want the 2 before the cancel", first)
			}
			drain(t, ctx, s, d.handle, r) // at once: the lease was released
			d.check(t, ctx, b.Tables, table)
			d.mu.Lock()
			all := len(d.byID)
			d.mu.Unlock()
			if all != 6 {
				t.Errorf("%d records delivered, want 6", all)
			}
		})
	}
}

// TestFeedMarksOnceForSeveralStores: a shared-table transaction carrying the records of
// three stores with feeds (two typed, of two types, and a polymorphic one) marks its
// partition once, and each store remembers that mark: its next write of the partition
// sends none.
func TestFeedMarksOnceForSeveralStores(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			table := fdTable(t, b, "fdmarks")
			var sent atomic.Int32
			p := &tap{Tables: b.Tables, hit: func(kind string, acts []service.Action) (bool, bool) {
				if kind == "write" && marks(acts) {
					sent.Add(1)
				}
				return false, false
			}}
			acct := tables.NewAccountOver(b.Name, p, nil, &tables.Options{Logger: discardLogger()})
			opts := &tables.StoreOptions{Table: table, SharedTable: true}
			orders, err := tables.For[sharedOrder](acct, opts)
			if err != nil {
				t.Fatal(err)
			}
			notes, err := tables.For[fdNote](acct, opts)
			if err != nil {
				t.Fatal(err)
			}
			reg := new(abstractions.TypeRegistry)
			if err := abstractions.RegisterType[polyPlaced](reg, "order.placed"); err != nil {
				t.Fatal(err)
			}
			events, err := tables.PolyFor[polyEvent](acct, reg, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range []error{
				feed.Enable(orders, &feed.Options{Hold: time.Hour}),
				feed.Enable(notes, &feed.Options{Hold: time.Hour}),
				feed.Enable(events, &feed.Options{Hold: time.Hour}),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			tx := orders.Transaction("c")
			orders.CreateIn(tx, &sharedOrder{Entity: abstractions.Entity{ID: "c|o1"}, Status: "placed"})
			notes.CreateIn(tx, &fdNote{Entity: abstractions.Entity{ID: "c|n1"}, Text: "gift"})
			events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: abstractions.TableKey{PartitionKey: "c", RowKey: "e1"},
				Item: &polyPlaced{polyEventBase: polyEventBase{Order: "o1", Version: 1}}})
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if n := sent.Load(); n != 1 {
				t.Fatalf("the transaction sent %d marks; want 1", n)
			}
			if err := orders.Create(ctx, &sharedOrder{Entity: abstractions.Entity{ID: "c|o2"}}); err != nil {
				t.Fatal(err)
			}
			if err := notes.Create(ctx, &fdNote{Entity: abstractions.Entity{ID: "c|n2"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := events.Insert(ctx, abstractions.PolyWrite[polyEvent]{Key: abstractions.TableKey{PartitionKey: "c", RowKey: "e2"},
				Item: &polyPlaced{polyEventBase: polyEventBase{Order: "o2", Version: 1}}}); err != nil {
				t.Fatal(err)
			}
			if n := sent.Load(); n != 1 {
				t.Errorf("the stores' later writes sent %d more marks; each remembers the transaction's", n-1)
			}
			b, err := feed.Status(ctx, events)
			if err != nil {
				t.Fatal(err)
			}
			if b.Partitions != 1 || b.Pending != 6 {
				t.Errorf("status %+v: want one partition with 6 records", b)
			}
		})
	}
}
