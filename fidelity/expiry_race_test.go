package fidelity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/expiry"
	"github.com/unified-data/gotables/tables/service"
)

// TestExpiryRace: 64 goroutines of two accounts (two processes) on one moving clock renew,
// create, read and sweep the rows of two partitions. A renewal is never lost (a row read
// right after its renewal is there), an expired row is never read back, a create over an
// expired row holds its own values, and at the end a sweep leaves no row, index row or mark.
func TestExpiryRace(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c := newExpClock()
			table := fmt.Sprintf("exprace%d", rand.Uint32())
			var stores [2]*tables.Store[expSession]
			for i := range stores {
				s, err := tables.For[expSession](tables.NewAccountOver(b.Name, b.Tables, b.Blobs, &tables.Options{Now: c.now}), &tables.StoreOptions{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				stores[i] = s
			}
			if err := stores[0].EnsureCreated(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Tables.DeleteTable(context.Background(), table) })
			ops := 8
			if b.Name == Azurite {
				ops = 3
			}
			var swept, created atomic.Int64
			var clockMu sync.RWMutex
			race(t, stores, ops, 40, func(r *rand.Rand, s *tables.Store[expSession]) error {
				id := fmt.Sprintf("p%d|r%d", r.IntN(2), r.IntN(6))
				switch r.IntN(4) {
				case 0: // renew
					clockMu.RLock() // the clock stands still from the renewal to the read
					defer clockMu.RUnlock()
					at, err := expiry.Touch(ctx, s, id, 0)
					if err != nil {
						return err
					}
					if before := c.now(); before.Before(at.Add(-5 * time.Minute)) {
						if _, err := s.One(ctx, id); err != nil {
							return fmt.Errorf("a renewal to %v was lost at %v (%v): %w", at, before, err, errLost)
						}
					}
				case 1: // create, over an expired row if there is one
					tag := fmt.Sprintf("g%d", r.Uint32())
					v := &expSession{Entity: abstractions.Entity{ID: id}, User: tag}
					clockMu.RLock()
					defer clockMu.RUnlock()
					if err := s.Create(ctx, v); err != nil {
						return err
					}
					created.Add(1)
					if before := c.now(); before.Before(v.Expires.Add(-5 * time.Minute)) {
						got, err := s.One(ctx, id)
						if err != nil {
							return fmt.Errorf("a created row is gone (%v): %w", err, errLost)
						}
						if got.ETag == v.ETag && got.User != tag {
							return fmt.Errorf("the created version reads %q, want %q: %w", got.User, tag, errLost)
						}
					}
				case 2: // read: an expired version is never returned
					before := c.now()
					got, err := s.One(ctx, id)
					if err != nil {
						return err
					}
					if !got.Expires.After(before) {
						return fmt.Errorf("read a row that expired at %v at %v: %w", got.Expires, before, errLost)
					}
				default: // time passes; sweep
					clockMu.Lock()
					c.set(c.now().Add(4 * time.Minute))
					clockMu.Unlock()
					rep, err := expiry.Sweep(ctx, s, nil)
					swept.Add(int64(rep.Swept))
					return err
				}
				return nil
			})
			t.Logf("%d creates, %d rows swept during the race", created.Load(), swept.Load())
			if created.Load() == 0 {
				t.Error("no create succeeded: the race exercised nothing")
			}
			// Far later, a sweep leaves nothing behind.
			c.set(c.now().Add(24 * time.Hour))
			rep, err := expiry.Sweep(ctx, stores[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := allRows(ctx, b.Tables, table, service.Query{Select: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 0 {
				t.Errorf("after the last sweep (%+v) the table holds %v", rep, keysOf(rows))
			}
		})
	}
}

// errLost marks a broken invariant, which race reports (it is none of the errors it lets
// pass).
var errLost = errors.New("expiry invariant broken")
