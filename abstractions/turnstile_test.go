package abstractions

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// queuedStore is a fakeStore whose rows have turns: a mutex per row, with counts of the
// turns taken and given back. Its Hooks give the verbs its turn method.
type queuedStore struct {
	*fakeStore
	backend.Hooks
	mu        sync.Mutex
	rows      map[string]*sync.Mutex
	taken     atomic.Int64
	released  atomic.Int64
	refuseErr error // when set, Turn fails with it
}

func newQueued(f *fakeStore, refuseErr error) *queuedStore {
	q := &queuedStore{fakeStore: f, refuseErr: refuseErr}
	q.Hooks = backend.NewHooks(q.turn, nil, false)
	return q
}

func (q *queuedStore) turn(ctx context.Context, id string) (func(), error) {
	if q.refuseErr != nil {
		return nil, q.refuseErr
	}
	q.mu.Lock()
	if q.rows == nil {
		q.rows = map[string]*sync.Mutex{}
	}
	m := q.rows[id]
	if m == nil {
		m = &sync.Mutex{}
		q.rows[id] = m
	}
	q.mu.Unlock()
	m.Lock()
	q.taken.Add(1)
	return func() { q.released.Add(1); m.Unlock() }, nil
}

// TestTurnsEndInProcessRaces runs 32 callers × 25 increments of one row through each verb
// that takes turns, with a window between read and write that makes racing callers lose:
// queued, no call may run out of its attempts.
func TestTurnsEndInProcessRaces(t *testing.T) {
	verbs := []struct {
		name string
		call func(ctx context.Context, s ReadWriter[counter]) error
	}{
		{"Mutate", func(ctx context.Context, s ReadWriter[counter]) error {
			_, err := Mutate(ctx, s, "p|1", inc, fast)
			return err
		}},
		{"TryMutate", func(ctx context.Context, s ReadWriter[counter]) error {
			out, err := TryMutate(ctx, s, "p|1", inc, fast)
			if err == nil && out.Status != OutcomeUpdated {
				err = errors.New(out.Status.String())
			}
			return err
		}},
		{"TryTransition", func(ctx context.Context, s ReadWriter[counter]) error {
			out, err := TryTransition(ctx, s, "p|1", func(*counter) bool { return true }, inc, fast)
			if err == nil && out.Status != OutcomeUpdated {
				err = errors.New(out.Status.String())
			}
			return err
		}},
		{"MutateOrCreate", func(ctx context.Context, s ReadWriter[counter]) error {
			_, err := MutateOrCreate(ctx, s, "p|1", func() *counter { return &counter{} }, inc, fast)
			return err
		}},
	}
	for _, v := range verbs {
		t.Run(v.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFake()
			if v.name != "MutateOrCreate" {
				_ = f.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
			}
			// Yield between the read and the write, so that an unqueued racer reads the
			// same version and loses.
			f.beforeUpdate = runtime.Gosched
			q := newQueued(f, nil)
			const workers, each = 32, 25
			var wg sync.WaitGroup
			errs := make(chan error, workers*each)
			for range workers {
				wg.Go(func() {
					for range each {
						if err := v.call(ctx, q); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("a call failed: %v", err)
			}
			c, err := f.One(ctx, "p|1")
			if err != nil || c.N != workers*each {
				t.Fatalf("counter = %+v, %v; want %d", c, err, workers*each)
			}
			if q.taken.Load() != workers*each || q.released.Load() != workers*each {
				t.Fatalf("turns taken %d, released %d; want %d each", q.taken.Load(), q.released.Load(), workers*each)
			}
		})
	}
}

func TestTurnFailureEndsTheCall(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	_ = f.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
	q := newQueued(f, context.DeadlineExceeded)
	ran := false
	_, err := Mutate(ctx, q, "p|1", func(*counter) error { ran = true; return nil }, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the turn's error", err)
	}
	if ran || f.reads.Load() != 0 {
		t.Fatalf("the call went on without its turn: mutate ran %v, %d reads", ran, f.reads.Load())
	}
	out, err := TryMutate(ctx, q, "p|1", inc, nil)
	if !errors.Is(err, context.DeadlineExceeded) || out.Status != 0 || out.Attempts != 0 {
		t.Fatalf("TryMutate: got %+v, %v; want no outcome and the turn's error", out, err)
	}
}

// TestTurnReleasedOnEveryPath checks each way a verb call ends gives its turn back.
func TestTurnReleasedOnEveryPath(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(q *queuedStore) error
	}{
		{"updated", func(q *queuedStore) error { _, err := Mutate(ctx, q, "p|1", inc, nil); return err }},
		{"not found", func(q *queuedStore) error { _, err := Mutate(ctx, q, "p|none", inc, nil); return err }},
		{"mutate fails", func(q *queuedStore) error {
			_, err := Mutate(ctx, q, "p|1", func(*counter) error { return errors.New("no") }, nil)
			return err
		}},
		{"precondition", func(q *queuedStore) error {
			_, err := TryTransition(ctx, q, "p|1", func(*counter) bool { return false }, inc, nil)
			return err
		}},
		{"conflicted", func(q *queuedStore) error {
			q.beforeUpdate = func() { q.bump("p|1") }
			_, err := TryMutate(ctx, q, "p|1", inc, fast)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			_ = f.Create(ctx, &counter{Entity: Entity{ID: "p|1"}})
			q := newQueued(f, nil)
			_ = tc.run(q)
			if q.taken.Load() != 1 || q.released.Load() != 1 {
				t.Fatalf("turns taken %d, released %d; want 1 each", q.taken.Load(), q.released.Load())
			}
		})
	}
}
