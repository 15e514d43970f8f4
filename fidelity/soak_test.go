package fidelity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/service"
)

// Soak parameters. The normal suite runs a short soak; "make soak" sets
// UNIFIED_TABLES_SOAK_OPS to run many more operations per goroutine.
const (
	soakWorkers    = 32
	soakShortOps   = 25 // per worker in the normal suite
	soakIDsPerWork = 20 // the rows each worker cycles through: the stored data stays bounded
	soakCounterOne = 10 // one operation in soakCounterOne is a Mutate of the shared counter
	soakHeapSlack  = 8 << 20
)

func soakOps(t *testing.T) int {
	if v := os.Getenv("UNIFIED_TABLES_SOAK_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("UNIFIED_TABLES_SOAK_OPS=%q is not a positive number", v)
		}
		return n
	}
	return soakShortOps
}

// TestSoak runs 32 goroutines of mixed operations, a fixed number each, on every backend
// (loopback Azurite and the memory service). Each goroutine owns a partition and tracks what
// it acknowledged there; all of them increment one shared counter with Mutate. Afterwards
// every acknowledged write must be readable, deleted rows gone, and the counter equal to the
// number of increments that reported success. The heap and the goroutine count measured
// after the first quarter of the run and at its end must stay flat, and no goroutine may
// outlive the run.
func TestSoak(t *testing.T) {
	ops := soakOps(t)
	for _, b := range soakBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			table := "soak" + randomSuffix()
			if err := b.tables.CreateTable(ctx, table); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.tables.DeleteTable(context.Background(), table) }()
			s, err := tables.For[counterRow](tables.NewAccountOver(b.name, b.tables, nil, &tables.Options{Logger: discardLogger()}), &tables.StoreOptions{Table: table})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "shared|counter"}}); err != nil {
				t.Fatal(err)
			}

			var (
				wg         sync.WaitGroup
				mu         sync.Mutex
				increments int
				failures   []string
				warm       sync.WaitGroup
				measured   = make(chan struct{})
			)
			transport.CloseIdleConnections()
			_, goroutinesBefore := heapAndGoroutines()
			expected := make([]map[string]int, soakWorkers)
			warm.Add(soakWorkers)
			fail := func(format string, args ...any) {
				mu.Lock()
				failures = append(failures, fmt.Sprintf(format, args...))
				mu.Unlock()
			}
			for w := range soakWorkers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 21))
					pk := fmt.Sprintf("w%02d", w)
					have := map[string]int{}
					expected[w] = have
					for i := range ops {
						if i == ops/4 {
							warm.Done()
							<-measured
						}
						id := fmt.Sprintf("%s|r%02d", pk, rng.IntN(soakIDsPerWork))
						n, exists := have[id]
						switch op := rng.IntN(soakCounterOne); {
						case op == 0:
							_, err := abstractions.Mutate(ctx, s, "shared|counter", func(c *counterRow) error { c.N++; return nil }, nil)
							switch {
							case err == nil:
								mu.Lock()
								increments++
								mu.Unlock()
							case !errors.Is(err, abstractions.ErrConcurrencyConflict):
								fail("mutate: %v", err)
							}
						case !exists:
							if err := s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: id}, N: 1}); err != nil {
								fail("create %s: %v", id, err)
								continue
							}
							have[id] = 1
						case op <= 2:
							if deleted, err := s.Delete(ctx, id, ""); err != nil || !deleted {
								fail("delete %s: %v, %v (want deleted)", id, deleted, err)
								continue
							}
							delete(have, id)
						case op <= 4:
							v, err := s.One(ctx, id)
							if err != nil || v.N != n {
								fail("one %s: %v (N %v, want %d)", id, err, v, n)
								continue
							}
							v.N++
							if err := s.Update(ctx, v, abstractions.Strict); err != nil {
								fail("update %s: %v", id, err)
								continue
							}
							have[id] = n + 1
						case op <= 5:
							if _, err := s.Patch(ctx, id, abstractions.Set(abstractions.NewPatch[counterRow](), abstractions.Field(func(c *counterRow) *int { return &c.N }), n+1)); err != nil {
								fail("patch %s: %v", id, err)
								continue
							}
							have[id] = n + 1
						case op <= 6:
							batch := []*counterRow{{Entity: abstractions.Entity{ID: id}, N: n + 1}}
							other := fmt.Sprintf("%s|b%02d", pk, rng.IntN(5))
							batch = append(batch, &counterRow{Entity: abstractions.Entity{ID: other}, N: i})
							if _, err := s.UpsertBatch(ctx, batch); err != nil {
								fail("upsert batch %s: %v", id, err)
								continue
							}
							have[id], have[other] = n+1, i
						case op <= 7:
							vs, err := s.Query(ctx, abstractions.Query[counterRow]{Partition: pk, Take: 5})
							if err != nil || len(vs) > 5 {
								fail("query %s: %d rows, %v", pk, len(vs), err)
							}
						default:
							got, err := s.Count(ctx, pk)
							if err != nil || got != len(have) {
								fail("count %s: %d, %v; want %d", pk, got, err, len(have))
							}
						}
					}
				}()
			}
			warm.Wait()
			heapWarm, goroutinesWarm := heapAndGoroutines()
			close(measured)
			wg.Wait()
			// Idle keep-alive connections hold two goroutines each: close them, and give
			// their goroutines a moment to end, before counting.
			transport.CloseIdleConnections()
			for i := 0; i < 100 && runtime.NumGoroutine() > goroutinesBefore; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			heapEnd, goroutinesEnd := heapAndGoroutines()
			for _, f := range failures {
				t.Error(f)
			}

			// Every acknowledged write is readable, every delete gone.
			for w, have := range expected {
				pk := fmt.Sprintf("w%02d", w)
				vs, err := s.List(ctx, pk)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]int{}
				for _, v := range vs {
					got[v.ID] = v.N
				}
				if len(got) != len(have) {
					t.Errorf("%s: %d rows stored, %d acknowledged", pk, len(got), len(have))
				}
				for id, n := range have {
					if got[id] != n {
						t.Errorf("%s: stored N=%d, acknowledged %d", id, got[id], n)
					}
				}
			}
			c, err := s.One(ctx, "shared|counter")
			if err != nil || c.N != increments {
				t.Errorf("shared counter: %v, %v; %d increments acknowledged", c, err, increments)
			}
			t.Logf("%s: %d operations by %d goroutines, %d counter increments; heap %d KiB after a quarter, %d KiB at the end; goroutines %d before, %d running, %d after",
				b.name, ops*soakWorkers, soakWorkers, increments, heapWarm>>10, heapEnd>>10, goroutinesBefore, goroutinesWarm, goroutinesEnd)
			if goroutinesEnd > goroutinesBefore || goroutinesWarm > goroutinesBefore+soakWorkers+8 {
				t.Errorf("goroutines: %d before, %d while running, %d after", goroutinesBefore, goroutinesWarm, goroutinesEnd)
			}
			if heapEnd > heapWarm+heapWarm/2+soakHeapSlack {
				t.Errorf("the heap grew from %d to %d bytes", heapWarm, heapEnd)
			}
		})
	}
}

// soakBackend is one service the soak runs on.
type soakBackend struct {
	name   string
	tables service.Tables
}

// soakBackends returns Azurite, when a connection string names it, and a memory service of
// the soak's own.
func soakBackends(t *testing.T) []soakBackend {
	t.Helper()
	out := []soakBackend{{name: Memory, tables: memservice.New()}}
	conn, ok := azuritetest.LookupConnectionString(t)
	if !ok {
		t.Log(azuritetest.ConnEnv + " not set: the soak runs on the memory service only")
		return out
	}
	az, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: transport}}})
	if err != nil {
		t.Fatal(err)
	}
	return append([]soakBackend{{name: Azurite, tables: az}}, out...)
}

// heapAndGoroutines returns the live heap after a collection and the number of goroutines.
func heapAndGoroutines() (uint64, int) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, runtime.NumGoroutine()
}
