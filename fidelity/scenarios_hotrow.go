package fidelity

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// Hot rows: many outcome-verb calls on one row. Within one account the calls take turns
// (the turn of driver.Hooks), so none can lose an attempt to another; two accounts over one
// table stand for two processes, whose calls still race through the service.

// hotRowIncrements runs workers goroutines that each make each successful Mutate
// increments of the row through s, calling again when a call runs out of attempts. It
// returns the value each success returned and how many calls ran out of attempts.
func hotRowIncrements(ctx context.Context, e *Env, s *tables.Store[counterRow], id string, workers, each int) (values []int, exhausted int64) {
	var mu sync.Mutex
	var out atomic.Int64
	hammer(e, workers, func(int) error {
		for range each {
			for {
				c, err := abstractions.Mutate(ctx, s, id, func(c *counterRow) error { c.N++; return nil }, nil)
				if errors.Is(err, abstractions.ErrConcurrencyConflict) {
					out.Add(1)
					continue
				}
				if err != nil {
					return err
				}
				mu.Lock()
				values = append(values, c.N)
				mu.Unlock()
				break
			}
		}
		return nil
	})
	return values, out.Load()
}

// eachOnce reports whether values holds every number 1..n exactly once: each increment
// returned the counter as it wrote it.
func eachOnce(values []int, n int) bool {
	seen := make([]bool, n+1)
	for _, v := range values {
		if v < 1 || v > n || seen[v] {
			return false
		}
		seen[v] = true
	}
	return len(values) == n
}

var hotRowScenarios = []Scenario{
	{
		Name: "store/hotrow/one-account-32x25",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[counterRow](e, nil)
			e.OK("create", s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "hot|1"}}))
			const workers, each = 32, 25
			start := time.Now()
			values, exhausted := hotRowIncrements(ctx, e, s, "hot|1", workers, each)
			took := time.Since(start)
			c, err := s.One(ctx, "hot|1")
			e.OK("read", err)
			e.Equal("counter", c.N, workers*each)
			e.Equal("every success returned its own value 1..800", eachOnce(values, workers*each), true)
			// The calls of one account queue for the row: no attempt loses, so no call can
			// run out of them with the default budget.
			e.Equal("calls that ran out of attempts", exhausted, int64(0))
			e.t.Logf("[%s] 32x25 Mutate in one account: %v for 800 increments (%v each), %d calls ran out of attempts",
				e.Backend, took.Round(time.Millisecond), (took / (workers * each)).Round(time.Microsecond), exhausted)
		},
	},
	{
		Name: "store/hotrow/two-accounts-2x16x25",
		Run: func(ctx context.Context, e *Env) {
			// Two accounts over one table: two processes, as far as the turns go.
			a, b := storeOf[counterRow](e, nil), storeOf[counterRow](e, nil)
			if a.Account() == b.Account() {
				e.Fatalf("the two stores share an account")
			}
			e.OK("create", a.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "hot|2"}}))
			const workers, each = 16, 25
			start := time.Now()
			var (
				wg           sync.WaitGroup
				valsA, valsB []int
				exA, exB     int64
			)
			wg.Go(func() { valsA, exA = hotRowIncrements(ctx, e, a, "hot|2", workers, each) })
			wg.Go(func() { valsB, exB = hotRowIncrements(ctx, e, b, "hot|2", workers, each) })
			wg.Wait()
			took := time.Since(start)
			c, err := a.One(ctx, "hot|2")
			e.OK("read", err)
			e.Equal("counter", c.N, 2*workers*each)
			e.Equal("every success returned its own value 1..800", eachOnce(append(valsA, valsB...), 2*workers*each), true)
			// How often the default budget ran out depends on timing: it is reported, not
			// compared.
			e.t.Logf("[%s] 2 accounts x 16x25 Mutate: %v for 800 increments; calls that ran out of attempts: %d and %d",
				e.Backend, took.Round(time.Millisecond), exA, exB)
		},
	},
}
