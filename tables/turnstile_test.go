package tables

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
)

type turnRow struct {
	abstractions.Entity
	N int
}

func turnStores(t *testing.T, opts *Options, tables ...string) []*Store[turnRow] {
	t.Helper()
	a := testAccount("test", &pageTables{}, nil, opts)
	var out []*Store[turnRow]
	for _, name := range tables {
		s, err := For[turnRow](a, &StoreOptions{Table: name})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// waitUsers waits until the row key has n users (holders and waiters) in the account.
func waitUsers(t *testing.T, a *Account, key string, n int) {
	t.Helper()
	for range 10_000 {
		a.turns.mu.Lock()
		got := 0
		if r := a.turns.rows[key]; r != nil {
			got = r.users
		}
		a.turns.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("row %q never had %d users", key, n)
}

// waitBlocked waits until n goroutines are blocked waiting for a turn.
func waitBlocked(t *testing.T, n int) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 10_000 {
		got := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if (strings.Contains(g, "[select") || strings.Contains(g, "[chan send")) && strings.Contains(g, "(*turnstile).take") {
				got++
			}
		}
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("never saw %d callers waiting for a turn", n)
}

func TestTurnSharedAcrossStoresAndSpellings(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		ids        IDMode
		a, b       string // ids of the two calls
		tA, tB     string // tables of the two stores
		sharedTurn bool
	}{
		{"same id, two stores of one table", NormalizeIDs, "p|1", "p|1", "Rows", "Rows", true},
		{"table names differ in case", NormalizeIDs, "p|1", "p|1", "Rows", "ROWS", true},
		{"ids normalise to one", NormalizeIDs, " P|Row 1", "p|row-1", "Rows", "Rows", true},
		{"ids as written differ in case", IDsAsWritten, "P|1", "p|1", "Rows", "Rows", false},
		{"other row", NormalizeIDs, "p|1", "p|2", "Rows", "Rows", false},
		{"other table", NormalizeIDs, "p|1", "p|1", "Rows", "Others", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := turnStores(t, &Options{IDs: tc.ids}, tc.tA, tc.tB)
			release, err := ss[0].turn(ctx, tc.a)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			r2, err := ss[1].turn(short, tc.b)
			if tc.sharedTurn {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("second caller got %v while the turn was held, want the context's deadline", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("a different row's turn waited: %v", err)
			}
			r2()
		})
	}
}

func TestTurnFirstComeFirstServed(t *testing.T) {
	ctx := context.Background()
	s := turnStores(t, nil, "Rows")[0]
	key := "rows\x00p|1"
	first, err := s.turn(ctx, "p|1")
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			release, err := s.turn(ctx, "p|1")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			release()
		})
		// Let caller i queue before caller i+1 comes.
		waitUsers(t, s.account, key, i+2)
		waitBlocked(t, i+1)
	}
	first()
	wg.Wait()
	for i, got := range order {
		if got != i {
			t.Fatalf("turns went in order %v, want 0..%d", order, n-1)
		}
	}
	s.account.turns.mu.Lock()
	left := len(s.account.turns.rows)
	s.account.turns.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d rows still have a queue after every turn was given back", left)
	}
}

func TestTurnHonoursContext(t *testing.T) {
	ctx := context.Background()
	s := turnStores(t, nil, "Rows")[0]
	release, err := s.turn(ctx, "p|1")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := s.turn(cctx, "p|1")
		done <- err
	}()
	waitUsers(t, s.account, "rows\x00p|1", 2)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled waiter got %v, want context.Canceled", err)
	}
	release()
	release() // a second call does nothing
	if _, err := s.turn(cctx, "p|1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context got %v", err)
	}
	again, err := s.turn(ctx, "p|1")
	if err != nil {
		t.Fatalf("the turn was not given back: %v", err)
	}
	again()
}

func TestTurnBoundAndRefusedIDs(t *testing.T) {
	ctx := context.Background()
	s := turnStores(t, nil, "Rows")[0]
	release, err := s.turn(ctx, "p|1")
	if err != nil {
		t.Fatal(err)
	}
	key := "rows\x00p|1"
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range maxRowWaiters - 1 {
		wg.Go(func() {
			if r, err := s.turn(wctx, "p|1"); err == nil {
				r()
			}
		})
	}
	waitUsers(t, s.account, key, maxRowWaiters)
	// The queue is full: the next caller goes through at once, without a turn.
	over, err := s.turn(ctx, "p|1")
	if err != nil {
		t.Fatalf("a caller beyond the bound: %v", err)
	}
	over()
	waitUsers(t, s.account, key, maxRowWaiters)
	cancel()
	wg.Wait()
	release()
	// An id the store refuses gets no turn and no error: the verb's read reports it.
	for _, id := range []string{"", "p|a/b", "\xff|1"} {
		r, err := s.turn(ctx, id)
		if err != nil || r == nil {
			t.Fatalf("Turn(%q): release nil %v, error %v; want a no-op release", id, r == nil, err)
		}
		r()
	}
}
