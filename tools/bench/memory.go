package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// memoryReadTarget is the point reads per second the memory backend must reach on one core.
const memoryReadTarget = 200_000

// runMemory measures the library's workloads on a fresh in-memory account. On an error it
// returns the rows measured before it too.
func runMemory(ctx context.Context, cfg Config) ([]Result, error) {
	z := cfg.Sizes
	acct := inmemory.NewAccount(nil)
	store, err := tables.For[Order](acct, &tables.StoreOptions{Table: "benchorders"})
	if err != nil {
		return nil, err
	}
	cfg.progress("memory: seeding %d rows", len(seedRows(z)))
	if _, err := store.UpsertBatch(ctx, seedRows(z)); err != nil {
		return nil, fmt.Errorf("memory: seeding: %w", err)
	}

	cached, err := tables.For[Order](acct, &tables.StoreOptions{Table: "benchorders", Cache: tables.Absolute(time.Hour)})
	if err != nil {
		return nil, err
	}
	for i := range z.ReadRows {
		if _, err := cached.One(ctx, "read|"+rowKey(i)); err != nil {
			return nil, err
		}
	}
	single := cfg.Ops * 50
	upd := make([]*Order, cfg.Concurrency)
	for w := range upd {
		upd[w] = newOrder("upd", rowKey(w), w)
		if err := store.Create(ctx, upd[w]); err != nil {
			return nil, err
		}
	}
	// Rows per worker: a write updates the entities it was given.
	batch := make([][]*Order, cfg.Concurrency)
	for w := range batch {
		for i := range z.BatchRows {
			batch[w] = append(batch[w], newOrder("batch"+strconv.Itoa(i%batchParts), rowKey(i), i))
		}
	}
	cursors := make([]string, cfg.Concurrency)
	wls := []workload{
		{name: "point read", ops: single, target: fmt.Sprintf("ops/s >= %d", memoryReadTarget), library: func(ctx context.Context, w, i int) error {
			v, err := store.One(ctx, "read|"+rowKey(z.readKey(w, i)))
			if err == nil && v == nil {
				err = errors.New("the row is missing")
			}
			return err
		}},
		{name: "point read (cache on)", ops: single, library: func(ctx context.Context, w, i int) error {
			v, err := cached.One(ctx, "read|"+rowKey(z.readKey(w, i)))
			if err == nil && v == nil {
				err = errors.New("the row is missing")
			}
			return err
		}},
		{name: "insert", ops: single, library: func(ctx context.Context, w, i int) error {
			// Keys per worker and operation (warm-ups have negative numbers): unique
			// without a shared counter.
			return store.Create(ctx, newOrder("ins", "w"+strconv.Itoa(w)+"k"+strconv.Itoa(i), i))
		}},
		{name: "upsert", ops: single, library: func(ctx context.Context, w, i int) error {
			return store.Upsert(ctx, newOrder("ups", rowKey(z.readKey(w, i)), i))
		}},
		{name: "update (Strict)", ops: single, library: func(ctx context.Context, w, _ int) error {
			upd[w].Quantity++
			return store.Update(ctx, upd[w], abstractions.Strict)
		}},
		{name: z.queryName(), ops: cfg.Ops, library: func(ctx context.Context, _, _ int) error {
			vs, err := store.List(ctx, "list")
			if err == nil && len(vs) != z.ListRows {
				err = fmt.Errorf("listed %d rows, want %d", len(vs), z.ListRows)
			}
			return err
		}},
		{name: z.pageName(), ops: single, library: func(ctx context.Context, w, _ int) error {
			p, err := store.Page(ctx, abstractions.Query[Order]{Partition: "list", Take: z.PageRows, Cursor: cursors[w]})
			if err == nil && len(p.Items) != z.PageRows {
				err = fmt.Errorf("a page of %d rows, want %d", len(p.Items), z.PageRows)
			}
			cursors[w] = p.Cursor
			return err
		}},
		{name: z.batchName(), ops: max(3, cfg.Ops/4), library: func(ctx context.Context, w, _ int) error {
			_, err := store.UpsertBatch(ctx, batch[w])
			return err
		}},
		{name: z.countName(), ops: max(3, cfg.Ops/4), library: func(ctx context.Context, _, _ int) error {
			n, err := store.Count(ctx, "count")
			if err == nil && n != z.CountRows {
				err = fmt.Errorf("counted %d rows, want %d", n, z.CountRows)
			}
			return err
		}},
	}

	// The target is per core: with one worker, run on one processor, collector included.
	if cfg.Concurrency == 1 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	var results []Result
	for _, wl := range wls {
		if !cfg.selected(wl.name) {
			continue
		}
		cfg.progress("memory: %s: %d operations…", wl.name, wl.ops)
		smp, err := measure(ctx, cfg, wl)
		if err != nil {
			return results, fmt.Errorf("memory: %w", err)
		}
		r := result(cfg, BackendMemory, wl, smp)
		// Throughput here is what the loop achieved, timing overhead included.
		if smp.wall > 0 {
			r.LibraryOpsPerSec = ptr(float64(len(smp.library)) / smp.wall.Seconds())
		}
		if wl.name == "point read" {
			r.Met = ptr(*r.LibraryOpsPerSec >= memoryReadTarget)
		}
		results = append(results, r)
	}
	return results, nil
}
