package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
)

// The hot-row workload: Sizes.HotWorkers goroutines (32) each make Sizes.HotEach (25) Mutate
// increments of one row through the library, with the default retry options; the floor
// makes the same number of increments (800) one after another, each a read and an update
// under If-Match through the floor client. The
// calls of one account take turns on a row (the turn of driver.Hooks), so the library's run
// should cost little more than the floor's serial one.
const (
	hotRowTarget  = "<= 2x floor (whole run)"
	hotRowLatency = 2.0
)

// hotRow measures the floor's serial run, the library's, and the floor's again, and
// compares the library's wall time with the mean of the two floor runs.
func (s *sides) hotRow(ctx context.Context) (Result, error) {
	hotRowName, hotWorkers, hotEach := s.sz.hotRowName(), s.sz.HotWorkers, s.sz.HotEach
	if err := s.store.Create(ctx, newOrder("hot", "lib", 0)); err != nil {
		return Result{}, fmt.Errorf("%s: %w", hotRowName, err)
	}
	fo := newFloorOrder("hot", "floor", 0)
	if err := s.floor.insert(ctx, fo, s.now()); err != nil {
		return Result{}, fmt.Errorf("%s (floor): %w", hotRowName, err)
	}
	floorRun := func() (time.Duration, error) {
		start := time.Now()
		for range hotWorkers * hotEach {
			o, err := s.floor.get(ctx, "hot", "floor")
			if err != nil {
				return 0, err
			}
			o.Quantity++
			if err := s.floor.replace(ctx, o, o.ETag, s.now()); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	f1, err := floorRun()
	if err != nil {
		return Result{}, fmt.Errorf("%s (floor): %w", hotRowName, err)
	}
	var exhausted atomic.Int64
	errs := make([]error, hotWorkers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range hotWorkers {
		wg.Go(func() {
			for range hotEach {
				for {
					_, err := abstractions.Mutate(ctx, s.store, "hot|lib", func(o *Order) error { o.Quantity++; return nil }, nil)
					if errors.Is(err, abstractions.ErrConcurrencyConflict) {
						exhausted.Add(1)
						continue
					}
					if err != nil {
						errs[w] = err
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	lib := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return Result{}, fmt.Errorf("%s (library): %w", hotRowName, err)
	}
	f2, err := floorRun()
	if err != nil {
		return Result{}, fmt.Errorf("%s (floor): %w", hotRowName, err)
	}
	got, err := s.store.One(ctx, "hot|lib")
	if err != nil {
		return Result{}, fmt.Errorf("%s (library): %w", hotRowName, err)
	}
	n := hotWorkers * hotEach
	if int(got.Quantity) != n+1 { // newOrder(…, 0) starts at 1
		return Result{}, fmt.Errorf("%s: the counter is %d after %d increments from 1", hotRowName, got.Quantity, n)
	}
	floor := (f1 + f2) / 2
	r := Result{Workload: hotRowName, Backend: BackendAzure, Status: StatusMeasured, Ops: n,
		LibraryMedianNs: ptr(int64(lib / time.Duration(n))), FloorMedianNs: ptr(int64(floor / time.Duration(n))), FloorTarget: hotRowTarget}
	if v, ok := Ratio(lib, floor); ok {
		r.LibraryFloorRatio = &v
		r.FloorMet = ptr(v <= hotRowLatency)
	}
	r.Note = fmt.Sprintf("library %v for the %d increments, floor %v and %v (mean %v); per increment: wall time over %d, not a median; %d calls ran out of attempts",
		lib.Round(time.Millisecond), n, f1.Round(time.Millisecond), f2.Round(time.Millisecond), floor.Round(time.Millisecond), n, exhausted.Load())
	return r, nil
}
