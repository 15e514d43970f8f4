// Package bench measures Unified Data Tables against hand-written Azure SDK code: the same
// workloads, in one process, against the same account, the library's operation and the raw
// SDK's one alternating, and the library's workloads on the in-memory backend. The
// single-row workloads also run through a floor of plain net/http with requests signed by
// hand (floor.go), with the client CPU time per operation of each side. It is what
// "udtables bench" runs; see Run.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
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
	// Only, when set, runs only the workloads whose name contains one of its strings (the
	// memory backend's too), to measure a few rows again without the whole run.
	Only []string
	// ConnectTimeout bounds the first request to the account, so that an unreachable
	// endpoint fails fast instead of waiting out the SDK's retries (default 15s).
	ConnectTimeout time.Duration
	// Sizes are the amounts of data of the workloads; a zero field takes its full size.
	Sizes Sizes
}

// selected reports whether the workload name runs under cfg.Only.
func (cfg *Config) selected(name string) bool {
	if len(cfg.Only) == 0 {
		return true
	}
	for _, o := range cfg.Only {
		if strings.Contains(name, o) {
			return true
		}
	}
	return false
}

// Sizes are the amounts of data the workloads write and read. The workload names state
// them. A zero field takes the full size, given in its comment: the one udtables bench
// measures with.
type Sizes struct {
	ReadRows  int // rows of the partitions the point reads and upserts address (100)
	ListRows  int // rows of the partition the query and page workloads read (1,000)
	PageRows  int // rows of one page (100)
	CountRows int // rows the count workload counts (10,000)
	BatchRows int // rows of one batch upsert, over 10 partitions (1,000)
	BulkRows  int // rows of the bulk upserts that compare batch degrees, over 10 partitions (10,000)
	// LargeChars is the length of the text value of the large-value workloads (1,000,000
	// characters, stored split in 32 chunks over three rows).
	LargeChars int
	// HotWorkers goroutines each make HotEach increments of the hot row (32 and 25).
	HotWorkers, HotEach int
}

// TinySizes run every workload, and every path of each, over so little data that a run
// against Azurite takes seconds: the package's tests use them. Their figures mean nothing.
// The large value still needs a continuation row (more chunks than the main row holds),
// and the partitions still have more rows than a page.
var TinySizes = Sizes{
	ReadRows: 10, ListRows: 30, PageRows: 10, CountRows: 50, BatchRows: 30, BulkRows: 30,
	LargeChars: largeMainCap*largeChunk + 1, HotWorkers: 4, HotEach: 5,
}

// fullSizes are the sizes udtables bench measures with.
var fullSizes = Sizes{
	ReadRows: 100, ListRows: 1_000, PageRows: 100, CountRows: 10_000, BatchRows: 1_000, BulkRows: 10_000,
	LargeChars: 1_000_000, HotWorkers: 32, HotEach: 25,
}

// check refuses sizes the workloads cannot run with.
func (z Sizes) check() error {
	if z.ListRows%z.PageRows != 0 {
		return fmt.Errorf("bench: ListRows (%d) must be a multiple of PageRows (%d): the page workload checks every page is full", z.ListRows, z.PageRows)
	}
	return nil
}

// readKey is the row number worker w's i-th point read or upsert addresses.
func (z Sizes) readKey(w, i int) int { return ((w+1)*7919 + i) % z.ReadRows }

// The names of the workloads whose data the sizes set; at the full sizes, "query
// 1,000-row partition", "page of 100", "batch upsert 1,000 rows / 10 partitions", "count
// 10,000 rows", "write 1 MB text (split)", "read 1 MB text (split)" and "hot row: 32x25
// Mutate (floor: 800 read+update pairs)".
func (z Sizes) queryName() string {
	return fmt.Sprintf("query %s-row partition", thousands(z.ListRows))
}
func (z Sizes) pageName() string { return fmt.Sprintf("page of %s", thousands(z.PageRows)) }
func (z Sizes) batchName() string {
	return fmt.Sprintf("batch upsert %s rows / %d partitions", thousands(z.BatchRows), batchParts)
}
func (z Sizes) countName() string { return fmt.Sprintf("count %s rows", thousands(z.CountRows)) }
func (z Sizes) largeName(verb string) string {
	return fmt.Sprintf("%s %s MB text (split)", verb, strconv.FormatFloat(float64(z.LargeChars)/1e6, 'g', 2, 64))
}
func (z Sizes) hotRowName() string {
	return fmt.Sprintf("hot row: %dx%d Mutate (floor: %d read+update pairs)", z.HotWorkers, z.HotEach, z.HotWorkers*z.HotEach)
}

// withDefaults sets each zero field to its full size.
func (s Sizes) withDefaults() Sizes {
	for _, f := range []struct {
		v    *int
		full int
	}{
		{&s.ReadRows, fullSizes.ReadRows}, {&s.ListRows, fullSizes.ListRows}, {&s.PageRows, fullSizes.PageRows},
		{&s.CountRows, fullSizes.CountRows}, {&s.BatchRows, fullSizes.BatchRows}, {&s.BulkRows, fullSizes.BulkRows},
		{&s.LargeChars, fullSizes.LargeChars}, {&s.HotWorkers, fullSizes.HotWorkers}, {&s.HotEach, fullSizes.HotEach},
	} {
		if *f.v <= 0 {
			*f.v = f.full
		}
	}
	return s
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
	// FloorMedianNs is the median of the floor workload (see floor.go): the same operation
	// through plain net/http with requests signed by hand. Nil for workloads without one.
	FloorMedianNs *int64 `json:"floor_median_ns,omitempty"`
	// LibraryFloorRatio and RawFloorRatio are each side's median over the floor's.
	LibraryFloorRatio *float64 `json:"library_floor_ratio,omitempty"`
	RawFloorRatio     *float64 `json:"raw_floor_ratio,omitempty"`
	// The client CPU time (user + system, getrusage) of one operation of each side, from a
	// pass after the timed one in which the sides take turns (see cpuPerOp); only with one
	// worker, and only for workloads with a floor.
	LibraryCPUNs *int64 `json:"library_cpu_ns_per_op,omitempty"`
	RawCPUNs     *int64 `json:"raw_cpu_ns_per_op,omitempty"`
	FloorCPUNs   *int64 `json:"floor_cpu_ns_per_op,omitempty"`
	// LibraryFloorCPURatio is the library's CPU per operation over the floor's.
	LibraryFloorCPURatio *float64 `json:"library_floor_cpu_ratio,omitempty"`
	// FloorTarget is the target against the floor, such as "<= 1.03x floor, CPU <= 1.10x",
	// and FloorMet whether this run reached it.
	FloorTarget string `json:"floor_target,omitempty"`
	FloorMet    *bool  `json:"floor_target_met,omitempty"`
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
//
// When ctx is cancelled or its deadline passes (an interrupt, a command's timeout), or a
// workload fails, Run still writes the rows of the workloads measured before, as the table
// (with a last line saying the run stopped and why) or the JSON array it would have
// written, then returns the error. A workload cut short has no row.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	cfg = cfg.withDefaults()
	if err := cfg.Sizes.check(); err != nil {
		return err
	}
	var results []Result
	var err error
	if cfg.ConnectionString != "" {
		var rs []Result
		rs, err = runAzure(ctx, cfg)
		results = append(results, rs...)
	}
	if err == nil && !cfg.SkipMemory {
		var rs []Result
		rs, err = runMemory(ctx, cfg)
		results = append(results, rs...)
	}
	if err != nil && len(results) == 0 && ctx.Err() == nil {
		return err // nothing measured, and the error says why
	}
	var werr error
	if cfg.JSON {
		werr = writeJSON(out, results)
	} else {
		werr = writeText(out, cfg, results, stopped(ctx, err))
	}
	return errors.Join(err, werr)
}

// stopped says why a run that failed with err stopped, for the last line of its table;
// "" when err is nil.
func stopped(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "its deadline passed"
	case ctx.Err() != nil:
		return "it was interrupted"
	}
	return "a workload failed: " + strings.Join(strings.Fields(err.Error()), " ")
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
	c.Sizes = c.Sizes.withDefaults()
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

// A workload is the same operation through the library, through raw SDK code and, for
// the single-row operations, through the floor client.
type workload struct {
	name      string
	ops       int
	target    string
	floorGoal *floorGoal // nil: no target against the floor
	library   op
	raw       op // nil on the memory backend
	floor     op // nil but for the single-row operations against an account
	// turn is how many operations of one side run one after another before the next
	// side's turn; 0 means 1, the sides alternating at every operation.
	turn int
}

// samples are what measuring one workload produced.
type samples struct {
	library, raw, floor []time.Duration
	wall                time.Duration // of the measured loop
	// allocsPerOp is the allocations of one library operation, from a pass of its own;
	// negative when not counted (more than one worker).
	allocsPerOp float64
	// cpu is the client CPU time of one operation of each side, in the order library, raw
	// (when there is one), floor; zero when not measured.
	cpu [3]time.Duration
}

// warmups is the number of unmeasured operations of each side before measuring, so that
// connections are open and lazily built state exists.
const warmups = 2

// maxAllocOps caps the library operations of the allocation pass.
const maxAllocOps = 20

// measure runs the workload's operations on cfg.Concurrency workers. The sides take turns,
// wl.turn operations each, and each worker rotates which side goes first, so that no side
// always runs on a connection another just warmed or pays for a collection another
// triggered.
//
// Allocations are counted afterwards, in a pass of library operations alone: the counter
// is exact only after runtime.ReadMemStats, which stops the world and empties every
// processor's allocation cache, and doing that around each timed operation would slow the
// operation that follows (by microseconds: a cached read would look ten times slower).
// The client CPU time per operation is measured after that too, in a pass where each side
// runs alone between two readings of the clock (cpuPerOp), because the process's CPU clock
// cannot tell sides running side by side apart.
func measure(ctx context.Context, cfg Config, wl workload) (samples, error) {
	workers := cfg.Concurrency
	type side struct {
		name string
		run  op
		pick func(*samples) *[]time.Duration
	}
	sides := []side{{"library", wl.library, func(s *samples) *[]time.Duration { return &s.library }}}
	if wl.raw != nil {
		sides = append(sides, side{"raw SDK", wl.raw, func(s *samples) *[]time.Duration { return &s.raw }})
	}
	if wl.floor != nil {
		sides = append(sides, side{"floor", wl.floor, func(s *samples) *[]time.Duration { return &s.floor }})
	}
	for i := range warmups {
		for _, sd := range sides {
			if err := sd.run(ctx, 0, -1-i); err != nil {
				return samples{}, fmt.Errorf("%s (%s, warm-up): %w", wl.name, sd.name, err)
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
			for _, sd := range sides {
				*sd.pick(s) = make([]time.Duration, 0, n)
			}
			turn := max(wl.turn, 1)
			for first := 0; first < n; first += turn {
				round := first / turn
				for k := range sides {
					sd := sides[(round+k)%len(sides)]
					for i := first; i < min(first+turn, n); i++ {
						t := time.Now()
						err := sd.run(ctx, w, i)
						d := sd.pick(s)
						*d = append(*d, time.Since(t))
						if err != nil {
							errs[w] = fmt.Errorf("%s (%s): %w", wl.name, sd.name, err)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	total := samples{wall: time.Since(start), allocsPerOp: -1}
	for _, s := range per {
		total.library = append(total.library, s.library...)
		total.raw = append(total.raw, s.raw...)
		total.floor = append(total.floor, s.floor...)
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
		if wl.floor != nil {
			runs := make([]op, len(sides))
			for k, sd := range sides {
				runs[k] = sd.run
			}
			cpu, err := cpuPerOp(ctx, runs, wl.ops+maxAllocOps, min(wl.ops, maxCPUOps))
			if err != nil {
				return total, fmt.Errorf("%s (measuring CPU time): %w", wl.name, err)
			}
			copy(total.cpu[:], cpu)
		}
	}
	return total, nil
}

// maxCPUOps caps the operations of each side's CPU-time pass.
const maxCPUOps = 400

// cpuChunk is how many operations of one side run between two readings of the CPU clock.
const cpuChunk = 10

// cpuPerOp returns the client CPU time of one operation of each side: the process's CPU
// time (user and system over all threads, so the HTTP transport's goroutines and the
// collector count) while that side alone runs. The sides take turns in chunks of cpuChunk
// operations, the first side of each round rotating, so a change of the machine's load
// during the pass weighs on every side alike; each side's figure is the median of its
// chunks, so a chunk that met a collection or a burst of another program's work does not
// decide it. Operations are numbered from first on. All zero when the system has no CPU
// clock.
func cpuPerOp(ctx context.Context, sides []op, first, n int) ([]time.Duration, error) {
	perChunk := make([][]time.Duration, len(sides))
	next := first
	for round := 0; round*cpuChunk < n; round++ {
		for k := range sides {
			side := (round + k) % len(sides)
			before, ok := processCPU()
			if !ok {
				return make([]time.Duration, len(sides)), nil
			}
			for range cpuChunk {
				if err := sides[side](ctx, 0, next); err != nil {
					return nil, err
				}
				next++
			}
			after, _ := processCPU()
			perChunk[side] = append(perChunk[side], (after-before)/cpuChunk)
		}
	}
	out := make([]time.Duration, len(sides))
	for k, c := range perChunk {
		out[k] = Median(c)
	}
	return out, nil
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
	if len(s.floor) > 0 {
		floor := Median(s.floor)
		r.FloorMedianNs = ptr(int64(floor))
		if v, ok := Ratio(lib, floor); ok {
			r.LibraryFloorRatio = &v
		}
		if len(s.raw) > 0 {
			if v, ok := Ratio(Median(s.raw), floor); ok {
				r.RawFloorRatio = &v
			}
		}
		if wl.floorGoal != nil {
			r.FloorTarget = wl.floorGoal.String()
		}
	}
	if s.cpu[0] > 0 {
		r.LibraryCPUNs = ptr(int64(s.cpu[0]))
		k := 1
		if len(s.raw) > 0 {
			r.RawCPUNs = ptr(int64(s.cpu[k]))
			k++
		}
		r.FloorCPUNs = ptr(int64(s.cpu[k]))
		if v, ok := Ratio(s.cpu[0], s.cpu[k]); ok {
			r.LibraryFloorCPURatio = &v
		}
	}
	return r
}

func ptr[T any](v T) *T { return &v }
