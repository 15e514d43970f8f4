// Package bench measures Unified Data Tables against hand-written Azure SDK code: the same
// workloads, in one process, against the same account, the library's operation and the raw
// SDK's one alternating, and the library's workloads on the in-memory backend. It is what
// "udtables bench" runs; see Run.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
)

// DevelopmentConnectionString is the Azurite emulator's well-known development account on
// its default loopback ports (published in the emulator's documentation, not a secret).
const DevelopmentConnectionString = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
	"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
	"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"

// Config says what Run measures. The zero value measures the memory backend only, with the
// default number of operations.
type Config struct {
	// ConnectionString names the account of the side-by-side half (Azurite or Azure); empty
	// skips that half. "UseDevelopmentStorage=true" stands for DevelopmentConnectionString.
	ConnectionString string
	// Ops is the number of measured operations of each single-row workload on each side
	// (default 200). The workloads over 1,000 or 10,000 rows run Ops/20 times (at least 3),
	// and the memory backend runs 50×Ops single-row operations.
	Ops int
	// Concurrency is the number of workers running each workload side by side (default 1).
	// Allocations are only counted with one worker: the counter is process-wide.
	Concurrency int
	// JSON writes the results as one JSON array instead of a text table.
	JSON bool
	// Progress receives a line as each phase starts and ends; nil means none.
	Progress io.Writer
	// SkipMemory leaves out the memory backend.
	SkipMemory bool
	// ConnectTimeout bounds the first request to the account, so that an unreachable
	// endpoint fails fast instead of waiting out the SDK's retries (default 15s).
	ConnectTimeout time.Duration
	// BulkRows is the number of rows of the bulk upserts that compare batch degrees (default
	// 10,000, over 10 partitions).
	BulkRows int
}

// Backends named in the results.
const (
	BackendAzure  = "azure"  // the table service of the connection string, Azurite or Azure
	BackendMemory = "memory" // the in-memory backend
)

// Status of a result row.
const (
	StatusMeasured = "measured"
	StatusPending  = "pending" // the feature the workload needs has not landed yet
)

// Result is one workload on one backend. Figures that do not apply (the raw side on the
// memory backend, everything of a pending row) are nil, which JSON writes as null.
type Result struct {
	Workload string `json:"workload"`
	Backend  string `json:"backend"`
	Status   string `json:"status"`
	// Ops is the number of measured operations on each side.
	Ops                int      `json:"ops"`
	LibraryMedianNs    *int64   `json:"library_median_ns"`
	RawMedianNs        *int64   `json:"raw_median_ns"`
	Ratio              *float64 `json:"ratio"`
	LibraryOpsPerSec   *float64 `json:"library_ops_per_s"`
	RawOpsPerSec       *float64 `json:"raw_ops_per_s"`
	LibraryAllocsPerOp *float64 `json:"library_allocs_per_op"`
	// Target is the acceptance target of the workload, such as "ratio <= 1.05", and Met
	// whether this run reached it; both are empty when the workload has none.
	Target string `json:"target,omitempty"`
	Met    *bool  `json:"target_met,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Run measures what cfg asks for and writes the results to out, as a text table or as
// JSON. It refuses a connection string the library cannot parse, and fails when the first
// request to the account does not succeed within cfg.ConnectTimeout. The tables it creates
// have random names and are deleted before it returns, also when ctx is cancelled.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	cfg = cfg.withDefaults()
	var results []Result
	if cfg.ConnectionString != "" {
		rs, err := runAzure(ctx, cfg)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	if !cfg.SkipMemory {
		rs, err := runMemory(ctx, cfg)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	if cfg.JSON {
		return writeJSON(out, results)
	}
	return writeText(out, cfg, results)
}

func (c Config) withDefaults() Config {
	if c.Ops <= 0 {
		c.Ops = 200
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 15 * time.Second
	}
	if c.BulkRows <= 0 {
		c.BulkRows = 10_000
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// heavyOps is the operation count of the workloads over many rows.
func (c Config) heavyOps() int { return max(3, c.Ops/20) }

func (c Config) progress(format string, args ...any) {
	fmt.Fprintf(c.Progress, "bench: "+format+"\n", args...)
}

// An op is one operation of a workload: worker w's i-th.
type op func(ctx context.Context, w, i int) error

// A workload is the same operation through the library and through raw SDK code.
type workload struct {
	name    string
	ops     int
	target  string
	library op
	raw     op // nil on the memory backend
}

// samples are what measuring one workload produced.
type samples struct {
	library, raw []time.Duration
	wall         time.Duration // of the measured loop
	// allocsPerOp is the allocations of one library operation, from a pass of its own;
	// negative when not counted (more than one worker).
	allocsPerOp float64
}

// warmups is the number of unmeasured operations of each side before measuring, so that
// connections are open and lazily built state exists.
const warmups = 2

// maxAllocOps caps the library operations of the allocation pass.
const maxAllocOps = 20

// measure runs the workload's operations on cfg.Concurrency workers. Each worker
// alternates which side goes first, so neither always runs on a connection the other just
// warmed or pays for a collection the other triggered.
//
// Allocations are counted afterwards, in a pass of library operations alone: the counter
// is exact only after runtime.ReadMemStats, which stops the world and empties every
// processor's allocation cache, and doing that around each timed operation would slow the
// operation that follows (by microseconds: a cached read would look ten times slower).
func measure(ctx context.Context, cfg Config, wl workload) (samples, error) {
	workers := cfg.Concurrency
	for i := range warmups {
		if err := wl.library(ctx, 0, -1-i); err != nil {
			return samples{}, fmt.Errorf("%s (library, warm-up): %w", wl.name, err)
		}
		if wl.raw != nil {
			if err := wl.raw(ctx, 0, -1-i); err != nil {
				return samples{}, fmt.Errorf("%s (raw SDK, warm-up): %w", wl.name, err)
			}
		}
	}
	per := make([]samples, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		n := wl.ops / workers
		if w < wl.ops%workers {
			n++
		}
		wg.Go(func() {
			s := &per[w]
			s.library = make([]time.Duration, 0, n)
			if wl.raw != nil {
				s.raw = make([]time.Duration, 0, n)
			}
			lib := func(i int) error {
				t := time.Now()
				err := wl.library(ctx, w, i)
				s.library = append(s.library, time.Since(t))
				if err != nil {
					return fmt.Errorf("%s (library): %w", wl.name, err)
				}
				return nil
			}
			raw := func(i int) error {
				if wl.raw == nil {
					return nil
				}
				t := time.Now()
				err := wl.raw(ctx, w, i)
				s.raw = append(s.raw, time.Since(t))
				if err != nil {
					return fmt.Errorf("%s (raw SDK): %w", wl.name, err)
				}
				return nil
			}
			for i := range n {
				first, second := lib, raw
				if i%2 == 1 {
					first, second = raw, lib
				}
				if err := first(i); err != nil {
					errs[w] = err
					return
				}
				if err := second(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	total := samples{wall: time.Since(start), allocsPerOp: -1}
	for _, s := range per {
		total.library = append(total.library, s.library...)
		total.raw = append(total.raw, s.raw...)
	}
	if err := errors.Join(errs...); err != nil {
		return total, err
	}
	if err := ctx.Err(); err != nil {
		return total, err
	}
	if workers == 1 {
		// Operation numbers after the measured ones, so that inserts find new keys.
		n := min(wl.ops, maxAllocOps)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range n {
			if err := wl.library(ctx, 0, wl.ops+i); err != nil {
				return total, fmt.Errorf("%s (library, counting allocations): %w", wl.name, err)
			}
		}
		runtime.ReadMemStats(&after)
		total.allocsPerOp = float64(after.Mallocs-before.Mallocs) / float64(n)
	}
	return total, nil
}

// result turns samples into a result row.
func result(cfg Config, backend string, wl workload, s samples) Result {
	r := Result{Workload: wl.name, Backend: backend, Status: StatusMeasured, Ops: len(s.library), Target: wl.target}
	lib := Median(s.library)
	r.LibraryMedianNs = ptr(int64(lib))
	if v, ok := Throughput(len(s.library), cfg.Concurrency, sum(s.library)); ok {
		r.LibraryOpsPerSec = &v
	}
	if s.allocsPerOp >= 0 {
		r.LibraryAllocsPerOp = ptr(s.allocsPerOp)
	}
	if len(s.raw) > 0 {
		raw := Median(s.raw)
		r.RawMedianNs = ptr(int64(raw))
		if v, ok := Throughput(len(s.raw), cfg.Concurrency, sum(s.raw)); ok {
			r.RawOpsPerSec = &v
		}
		if v, ok := Ratio(lib, raw); ok {
			r.Ratio = &v
		}
	}
	return r
}

func ptr[T any](v T) *T { return &v }
