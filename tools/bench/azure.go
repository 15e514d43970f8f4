package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// Partitions of the benchmark table. Each side writes partitions of its own, so that
// neither finds the other's rows; reads use rows both sides see.
const (
	batchParts = 10  // partitions of one batch upsert
	txMax      = 100 // actions of one entity-group transaction
)

// sides is the library and the raw SDK client over one table and one HTTP transport.
type sides struct {
	store  *tables.Store[Order]
	cached *tables.Store[Order] // the same table, with the read cache on
	raw    *aztables.Client
	floor  *floorClient // plain net/http, requests signed by hand (floor.go)
	azcore *azcoreFloor // the floor's requests through a bare azcore pipeline (floor.go)
	sz     Sizes
	table  string
	now    func() time.Time
	seq    atomic.Int64 // row keys of inserts, unique across workers
}

// rowKey is the row key of the i-th row of a seeded partition; fixed width keeps key order
// equal to number order.
func rowKey(i int) string { return fmt.Sprintf("r%05d", i) }

// rawConnectionString is what the SDK's own parser needs: it does not know the emulator
// shorthand.
func rawConnectionString(cs string) string {
	if strings.EqualFold(strings.TrimSuffix(strings.TrimSpace(cs), ";"), "UseDevelopmentStorage=true") {
		return DevelopmentConnectionString
	}
	return cs
}

// runAzure measures the side-by-side workloads on the account of cfg.ConnectionString. On
// an error it returns the rows measured before it too.
func runAzure(ctx context.Context, cfg Config) (results []Result, err error) {
	// One transport for both sides, closed at the end so no connection outlives the run.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, 2*cfg.Concurrency+2)
	defer tr.CloseIdleConnections()
	client := azcore.ClientOptions{Transport: &http.Client{Transport: tr}}

	// The library as a user builds it, on this run's transport.
	acct, err := tables.NewAccount(cfg.ConnectionString, &tables.Options{ClientOptions: client})
	if err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	rawSvc, err := aztables.NewServiceClientFromConnectionString(rawConnectionString(cfg.ConnectionString), &aztables.ClientOptions{ClientOptions: client})
	if err != nil {
		return nil, fmt.Errorf("connection string (Azure SDK): %w", err)
	}

	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	table := "udtbench" + hex.EncodeToString(b[:])
	store, err := tables.For[Order](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		return nil, err
	}
	cached, err := tables.For[Order](acct, &tables.StoreOptions{Table: table, Cache: tables.Absolute(time.Hour)})
	if err != nil {
		return nil, err
	}
	floor, err := newFloorClient(cfg.ConnectionString, table, &http.Client{Transport: tr})
	if err != nil {
		return nil, err
	}
	s := &sides{store: store, cached: cached, raw: rawSvc.NewClient(table), floor: floor, azcore: newAzcoreFloor(floor, &client),
		table: table, now: time.Now, sz: cfg.Sizes}

	cctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	err = store.EnsureCreated(cctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("the table service at %s did not answer within %v", acct.Name(), cfg.ConnectTimeout)
		}
		return nil, fmt.Errorf("creating the benchmark table on the account of the connection string: %w", err)
	}
	defer func() {
		// Delete the table after a failure or an interrupt too, on a context of its own.
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer dcancel()
		if derr := acct.Tables().DeleteTable(dctx, table); derr != nil {
			err = errors.Join(err, fmt.Errorf("deleting the benchmark table %s: %w", table, derr))
		} else {
			cfg.progress("deleted table %s", table)
		}
	}()
	cfg.progress("table %s created; seeding %d rows", table, len(seedRows(cfg.Sizes)))
	if err := s.seed(ctx); err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}

	// Stores of the same table on accounts that differ only in BatchParallelism.
	withDegree := func(d int) (*tables.Store[Order], error) {
		a, err := tables.NewAccount(cfg.ConnectionString, &tables.Options{ClientOptions: client, BatchParallelism: d})
		if err != nil {
			return nil, err
		}
		return tables.For[Order](a, &tables.StoreOptions{Table: table})
	}
	// The index workloads' store, of a table of its own.
	ixTable := table + "ix"
	indexed, err := tables.For[IndexedOrder](acct, &tables.StoreOptions{Table: ixTable})
	if err != nil {
		return nil, err
	}
	if err := indexed.EnsureCreated(ctx); err != nil {
		return nil, fmt.Errorf("creating the indexed benchmark table: %w", err)
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer dcancel()
		if derr := acct.Tables().DeleteTable(dctx, ixTable); derr != nil {
			err = errors.Join(err, fmt.Errorf("deleting the benchmark table %s: %w", ixTable, derr))
		} else {
			cfg.progress("deleted table %s", ixTable)
		}
	}()
	wls := append(s.workloads(ctx, cfg), s.bulkWorkloads(cfg, withDegree)...)
	for _, wl := range append(wls, s.indexWorkloads(ctx, cfg, indexed, rawSvc.NewClient(ixTable))...) {
		if wl.library == nil || !cfg.selected(wl.name) {
			continue
		}
		cfg.progress("%s: %d operations on each side…", wl.name, wl.ops)
		smp, err := measure(ctx, cfg, wl)
		if err != nil {
			return results, err
		}
		r := result(cfg, BackendAzure, wl, smp)
		if r.Ratio != nil {
			switch r.Target {
			case targetRatio:
				r.Met = ptr(*r.Ratio <= 1.05)
			case targetCached:
				r.Met = ptr(*r.Ratio <= 0.01)
			case targetIndexedWrite:
				r.Met = ptr(*r.Ratio <= indexedWriteRatio)
			}
		}
		if g := wl.floorGoal; g != nil && r.LibraryFloorRatio != nil && r.LibraryFloorCPURatio != nil {
			r.FloorMet = ptr(*r.LibraryFloorRatio <= g.latency && *r.LibraryFloorCPURatio <= g.cpu)
		}
		line := fmt.Sprintf("%s: library %v", wl.name, time.Duration(*r.LibraryMedianNs))
		if r.RawMedianNs != nil {
			line += fmt.Sprintf(", raw %v", time.Duration(*r.RawMedianNs))
		}
		if r.FloorMedianNs != nil {
			line += fmt.Sprintf(", floor %v", time.Duration(*r.FloorMedianNs))
		}
		cfg.progress("%s", line)
		results = append(results, r)
	}
	if !cfg.selected(cfg.Sizes.hotRowName()) {
		return results, nil
	}
	cfg.progress("%s…", cfg.Sizes.hotRowName())
	r, err := s.hotRow(ctx)
	if err != nil {
		return results, err
	}
	cfg.progress("%s: %s", r.Workload, r.Note)
	results = append(results, r)
	return results, nil
}

// seed writes the rows the read, query and count workloads find.
func (s *sides) seed(ctx context.Context) error {
	_, err := s.store.UpsertBatch(ctx, seedRows(s.sz))
	return err
}

// workloads returns the side-by-side workloads; cfg sets their operation counts.
func (s *sides) workloads(ctx context.Context, cfg Config) []workload {
	const target = targetRatio
	return append([]workload{
		{name: "point read", ops: cfg.Ops, target: target, floorGoal: &floorRead, library: s.libRead, raw: s.rawRead, floor: s.floorRead},
		s.cachedReadWorkload(ctx, cfg),
		{name: "insert", ops: cfg.Ops, target: target, floorGoal: &floorWrite, library: s.libInsert, raw: s.rawInsert, floor: s.floorInsert},
		{name: "upsert", ops: cfg.Ops, target: target, floorGoal: &floorWrite, library: s.libUpsert, raw: s.rawUpsert, floor: s.floorUpsert},
		s.updateWorkload(ctx, cfg),
		{name: azcoreUpsertName, ops: cfg.Ops, library: s.azcoreUpsert, floor: s.floorUpsert},
		{name: s.sz.queryName(), ops: cfg.heavyOps(), target: target, library: s.libList, raw: s.rawList},
		s.pageWorkload(cfg),
		s.batchWorkload(cfg, target),
		{name: s.sz.countName(), ops: cfg.heavyOps(), library: s.libCount, raw: s.rawCount},
	}, s.largeWorkloads(cfg)...)
}

// Targets of the side-by-side workloads.
const (
	targetRatio  = "ratio <= 1.05"
	targetCached = "ratio <= 0.01" // at least 100 times faster than the raw read
)

// floorGoal is a single-row operation's target against the floor: its median at most
// latency times the floor's, its client CPU per operation at most cpu times.
type floorGoal struct{ latency, cpu float64 }

func (g floorGoal) String() string {
	return fmt.Sprintf("<= %.2fx floor, CPU <= %.2fx", g.latency, g.cpu)
}

// The targets against the floor (issue 43): a point read no slower than the floor and
// within 6 % of its CPU, a write within 3 % of its median and 10 % of its CPU.
var (
	floorRead  = floorGoal{latency: 1.00, cpu: 1.06}
	floorWrite = floorGoal{latency: 1.03, cpu: 1.10}
)

// cachedReadWorkload reads the rows the point read reads, through a store with the read
// cache on, against the raw read. Every row is read once beforehand, so the measured reads
// are hits: what a hot key costs.
//
// The library's hits run one after another, then the raw reads, so a hit is timed as on
// the memory backend. Timed right after a raw read, a hit measures the raw read's wait
// instead: the processor sat idle (or ran other programs) for the round trip, and the first
// microseconds after it cost several times what a hit costs (4 to 8 µs against 0.5 to 1 µs,
// on Azurite and in memory alike; the hit itself sends nothing and does nothing the memory
// backend's does not). Runs of ten hits between raw reads still measured about 2 µs on a
// loaded machine.
func (s *sides) cachedReadWorkload(ctx context.Context, cfg Config) workload {
	wl := workload{name: "point read (cache on)", ops: cfg.Ops, target: targetCached, raw: s.rawRead, turn: cfg.Ops}
	for i := range s.sz.ReadRows {
		if _, err := s.cached.One(ctx, "read|"+rowKey(i)); err != nil {
			wl.library = func(context.Context, int, int) error { return err }
			return wl
		}
	}
	wl.library = func(ctx context.Context, w, i int) error {
		v, err := s.cached.One(ctx, "read|"+rowKey(s.sz.readKey(w, i)))
		if err == nil && v == nil {
			err = errors.New("the row is missing")
		}
		return err
	}
	return wl
}

func (s *sides) libRead(ctx context.Context, w, i int) error {
	v, err := s.store.One(ctx, "read|"+rowKey(s.sz.readKey(w, i)))
	if err == nil && v == nil {
		err = errors.New("the row is missing")
	}
	return err
}

func (s *sides) rawRead(ctx context.Context, w, i int) error {
	resp, err := s.raw.GetEntity(ctx, "read", rowKey(s.sz.readKey(w, i)), nil)
	if err != nil {
		return err
	}
	o, err := unmarshalRawOrder(resp.Value)
	if err == nil {
		o.ETag = string(resp.ETag)
	}
	return err
}

func (s *sides) floorRead(ctx context.Context, w, i int) error {
	_, err := s.floor.get(ctx, "read", rowKey(s.sz.readKey(w, i)))
	return err
}

func (s *sides) floorInsert(ctx context.Context, _, i int) error {
	return s.floor.insert(ctx, newFloorOrder("insfloor", "k"+strconv.FormatInt(s.seq.Add(1), 10), i), s.now())
}

func (s *sides) floorUpsert(ctx context.Context, w, i int) error {
	return s.floor.replace(ctx, newFloorOrder("upsfloor", rowKey(s.sz.readKey(w, i)), i), "", s.now())
}

// azcoreUpsertName is the workload of the floor's upsert through a bare azcore pipeline,
// against the floor's own.
const azcoreUpsertName = "upsert, floor's request via azcore (÷ floor)"

func (s *sides) azcoreUpsert(ctx context.Context, w, i int) error {
	return s.azcore.upsert(ctx, newFloorOrder("upsazcore", rowKey(s.sz.readKey(w, i)), i), s.now())
}

func (s *sides) libInsert(ctx context.Context, _, i int) error {
	return s.store.Create(ctx, newOrder("inslib", "k"+strconv.FormatInt(s.seq.Add(1), 10), i))
}

func (s *sides) rawInsert(ctx context.Context, _, i int) error {
	o := newRawOrder("insraw", "k"+strconv.FormatInt(s.seq.Add(1), 10), i)
	body, err := o.marshal(s.now())
	if err != nil {
		return err
	}
	resp, err := s.raw.AddEntity(ctx, body, nil)
	if err == nil {
		o.ETag = string(resp.ETag)
	}
	return err
}

func (s *sides) libUpsert(ctx context.Context, w, i int) error {
	return s.store.Upsert(ctx, newOrder("upslib", rowKey(s.sz.readKey(w, i)), i))
}

func (s *sides) rawUpsert(ctx context.Context, w, i int) error {
	o := newRawOrder("upsraw", rowKey(s.sz.readKey(w, i)), i)
	body, err := o.marshal(s.now())
	if err != nil {
		return err
	}
	resp, err := s.raw.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	if err == nil {
		o.ETag = string(resp.ETag)
	}
	return err
}

// updateWorkload updates one row per worker and side over and over, each time with the
// ETag the previous write returned, as an optimistic-concurrency loop does.
func (s *sides) updateWorkload(ctx context.Context, cfg Config) workload {
	wl := workload{name: "update (Strict)", ops: cfg.Ops, target: targetRatio, floorGoal: &floorWrite}
	libRows := make([]*Order, cfg.Concurrency)
	rawRows := make([]*rawOrder, cfg.Concurrency)
	floorRows := make([]*floorOrder, cfg.Concurrency)
	for w := range cfg.Concurrency {
		floorRows[w] = newFloorOrder("updfloor", rowKey(w), w)
		if err := s.floor.insert(ctx, floorRows[w], s.now()); err != nil {
			wl.library = func(context.Context, int, int) error { return err }
			return wl
		}
		libRows[w] = newOrder("updlib", rowKey(w), w)
		if err := s.store.Create(ctx, libRows[w]); err != nil {
			wl.library = func(context.Context, int, int) error { return err }
			return wl
		}
		rawRows[w] = newRawOrder("updraw", rowKey(w), w)
		body, err := rawRows[w].marshal(s.now())
		if err == nil {
			var resp aztables.AddEntityResponse
			resp, err = s.raw.AddEntity(ctx, body, nil)
			rawRows[w].ETag = string(resp.ETag)
		}
		if err != nil {
			wl.library = func(context.Context, int, int) error { return err }
			return wl
		}
	}
	wl.library = func(ctx context.Context, w, _ int) error {
		v := libRows[w]
		v.Quantity++
		return s.store.Update(ctx, v, abstractions.Strict)
	}
	wl.floor = func(ctx context.Context, w, _ int) error {
		o := floorRows[w]
		o.Quantity++
		return s.floor.replace(ctx, o, o.ETag, s.now())
	}
	wl.raw = func(ctx context.Context, w, _ int) error {
		o := rawRows[w]
		o.Quantity++
		body, err := o.marshal(s.now())
		if err != nil {
			return err
		}
		etag := azcore.ETag(o.ETag)
		resp, err := s.raw.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
		if err == nil {
			o.ETag = string(resp.ETag)
		}
		return err
	}
	return wl
}

func (s *sides) libList(ctx context.Context, _, _ int) error {
	vs, err := s.store.List(ctx, "list")
	if err == nil && len(vs) != s.sz.ListRows {
		err = fmt.Errorf("listed %d rows, want %d", len(vs), s.sz.ListRows)
	}
	return err
}

// rawList pages through the partition and decodes every row, as a List does.
func (s *sides) rawList(ctx context.Context, _, _ int) error {
	filter := "PartitionKey eq 'list'"
	pager := s.raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	var out []*rawOrder
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, e := range page.Entities {
			o, err := unmarshalRawOrder(e)
			if err != nil {
				return err
			}
			out = append(out, o)
		}
	}
	if len(out) != s.sz.ListRows {
		return fmt.Errorf("listed %d rows, want %d", len(out), s.sz.ListRows)
	}
	return nil
}

// pageWorkload reads the 1,000-row partition one page of 100 at a time, each operation the
// page after the previous one of its worker (and the first again after the last), keeping
// the continuation between operations as a web handler keeps it between requests.
func (s *sides) pageWorkload(cfg Config) workload {
	libCursors := make([]string, cfg.Concurrency)
	rawNext := make([]*aztables.ListEntitiesResponse, cfg.Concurrency)
	return workload{
		name: s.sz.pageName(), ops: cfg.Ops, target: targetRatio,
		library: func(ctx context.Context, w, _ int) error {
			p, err := s.store.Page(ctx, abstractions.Query[Order]{Partition: "list", Take: s.sz.PageRows, Cursor: libCursors[w]})
			if err != nil {
				return err
			}
			if len(p.Items) != s.sz.PageRows {
				return fmt.Errorf("a page of %d rows, want %d", len(p.Items), s.sz.PageRows)
			}
			libCursors[w] = p.Cursor
			return nil
		},
		raw: func(ctx context.Context, w, _ int) error {
			filter, top := "PartitionKey eq 'list'", int32(s.sz.PageRows)
			opts := &aztables.ListEntitiesOptions{Filter: &filter, Top: &top}
			if prev := rawNext[w]; prev != nil {
				opts.NextPartitionKey, opts.NextRowKey = prev.NextPartitionKey, prev.NextRowKey
			}
			page, err := s.raw.NewListEntitiesPager(opts).NextPage(ctx)
			if err != nil {
				return err
			}
			out := make([]*rawOrder, 0, len(page.Entities))
			for _, e := range page.Entities {
				o, err := unmarshalRawOrder(e)
				if err != nil {
					return err
				}
				out = append(out, o)
			}
			if len(out) != s.sz.PageRows {
				return fmt.Errorf("a page of %d rows, want %d", len(out), s.sz.PageRows)
			}
			rawNext[w] = nil
			if page.NextPartitionKey != nil || page.NextRowKey != nil {
				rawNext[w] = &page
			}
			return nil
		},
	}
}

// batchWorkload upserts 1,000 rows over 10 partitions; the rows are built beforehand on
// both sides, the encoding and the transactions are measured.
func (s *sides) batchWorkload(cfg Config, target string) workload {
	// Rows per worker: a write updates the entities it was given.
	libRows := make([][]*Order, cfg.Concurrency)
	rawRows := make([][]*rawOrder, cfg.Concurrency)
	for w := range cfg.Concurrency {
		for i := range s.sz.BatchRows {
			p := strconv.Itoa(i % batchParts)
			libRows[w] = append(libRows[w], newOrder("batchlib"+p, rowKey(i), i))
			rawRows[w] = append(rawRows[w], newRawOrder("batchraw"+p, rowKey(i), i))
		}
	}
	return workload{
		name: s.sz.batchName(), ops: cfg.heavyOps(), target: target,
		library: func(ctx context.Context, w, _ int) error {
			n, err := s.store.UpsertBatch(ctx, libRows[w])
			if err == nil && n != s.sz.BatchRows {
				err = fmt.Errorf("wrote %d rows, want %d", n, s.sz.BatchRows)
			}
			return err
		},
		raw: func(ctx context.Context, w, _ int) error { return s.rawBatch(ctx, rawRows[w]) },
	}
}

func (s *sides) libCount(ctx context.Context, _, _ int) error {
	n, err := s.store.Count(ctx, "count")
	if err == nil && n != s.sz.CountRows {
		err = fmt.Errorf("counted %d rows, want %d", n, s.sz.CountRows)
	}
	return err
}

// rawCount pages through the partition asking for the keys only.
func (s *sides) rawCount(ctx context.Context, _, _ int) error {
	filter, sel := "PartitionKey eq 'count'", "PartitionKey,RowKey"
	pager := s.raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Select: &sel})
	n := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		n += len(page.Entities)
	}
	if n != s.sz.CountRows {
		return fmt.Errorf("counted %d rows, want %d", n, s.sz.CountRows)
	}
	return nil
}
