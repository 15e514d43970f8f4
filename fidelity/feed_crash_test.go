package fidelity

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/feed"
	"github.com/unified-data/gotables/tables/service"
)

// tap wraps a table service so that a test can stop a process at a chosen call: when hit
// reports a call (the kind, "write", "transact", "get" or "query", and its actions), the
// call fails with errStopped, applied first when apply says so (a lost answer), and, once
// dead is set, every later call fails too (the process is gone).
type tap struct {
	service.Tables
	mu    sync.Mutex
	hit   func(kind string, acts []service.Action) (fail, apply bool)
	dead  bool
	fired int
	// dies: the process is gone from the call hit fails on.
	dies bool
}

var errStopped = errors.New("the test stopped this process here")

func (p *tap) check(kind string, acts []service.Action) (fail, apply bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return true, false
	}
	if p.hit == nil {
		return false, false
	}
	fail, apply = p.hit(kind, acts)
	if fail {
		p.fired++
		p.dead = p.dies
	}
	return fail, apply
}

func (p *tap) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	if fail, _ := p.check("get", nil); fail {
		return service.Row{}, errStopped
	}
	return p.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (p *tap) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	if fail, _ := p.check("query", nil); fail {
		return service.Page{}, errStopped
	}
	return p.Tables.Query(ctx, table, q)
}

func (p *tap) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if fail, apply := p.check("write", []service.Action{a}); fail {
		if apply {
			_, _ = p.Tables.Write(ctx, table, a)
		}
		return service.Written{}, errStopped
	}
	return p.Tables.Write(ctx, table, a)
}

func (p *tap) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	if fail, apply := p.check("transact", acts); fail {
		if apply {
			_, _ = p.Tables.Transact(ctx, table, acts)
		}
		return nil, errStopped
	}
	return p.Tables.Transact(ctx, table, acts)
}

// writesRecords reports a transaction that writes a change record.
func writesRecords(acts []service.Action) bool {
	for _, a := range acts {
		if a.Op != service.OpDelete && strings.HasPrefix(a.Row.RowKey, "~fd.r.") {
			return true
		}
	}
	return false
}

// deletesRecords reports a checkpoint: a delete of a delivered record.
func deletesRecords(acts []service.Action) bool {
	for _, a := range acts {
		if a.Op == service.OpDelete && strings.HasPrefix(a.Row.RowKey, "~fd.r.") {
			return true
		}
	}
	return false
}

func marks(acts []service.Action) bool {
	return len(acts) == 1 && acts[0].Row.PartitionKey == "~fd.marks" && acts[0].Op == service.OpUpsertMerge
}

func clears(acts []service.Action) bool {
	return len(acts) == 1 && acts[0].Row.PartitionKey == "~fd.marks" && acts[0].Op == service.OpDelete
}

// TestFeedWriterStopsAfterMark: a writer stopped between its mark and its transaction
// leaves a mark without a record; relays find nothing there, clear it, and deliver the
// records of the writes that did commit.
func TestFeedWriterStopsAfterMark(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			table := fdTable(t, b, "fdmark")
			p := &tap{Tables: b.Tables}
			w := fdCounters(t, b.Name, p, table)
			clean := fdCounters(t, b.Name, b.Tables, table)
			if err := clean.Create(ctx, &fdCounter{Entity: abstractions.Entity{ID: "a|1"}, N: 1}); err != nil {
				t.Fatal(err)
			}
			p.hit = func(kind string, acts []service.Action) (bool, bool) {
				return kind == "transact" && writesRecords(acts), false
			}
			err := w.Create(ctx, &fdCounter{Entity: abstractions.Entity{ID: "b|1"}, N: 1})
			if !errors.Is(err, errStopped) {
				t.Fatalf("the stopped write returned %v", err)
			}
			if _, err := clean.One(ctx, "b|1"); !errors.Is(err, abstractions.ErrNotFound) {
				t.Fatalf("the stopped write was applied: %v", err)
			}
			if got := fdMarkedPartitions(t, ctx, b.Tables, table); !strings.Contains(got, "b") {
				t.Fatalf("marks %s: the stopped write's mark is missing", got)
			}
			r, err := feed.NewRelay(clean, &feed.RelayOptions{Name: "r"})
			if err != nil {
				t.Fatal(err)
			}
			d := newDeliveries()
			drain(t, ctx, clean, d.handle, r)
			d.check(t, ctx, b.Tables, table)
			if dup := d.duplicates(); len(dup) > 0 {
				t.Errorf("%s delivered twice, though no relay stopped", dup[0])
			}
			if got := fdMarkedPartitions(t, ctx, b.Tables, table); got != "" {
				t.Errorf("marks left: %s", got)
			}
		})
	}
}

func fdMarkedPartitions(t *testing.T, ctx context.Context, svc service.Tables, table string) string {
	t.Helper()
	rows, err := allRows(ctx, svc, table, service.Query{Filter: "PartitionKey eq '~fd.marks'", Select: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.RowKey)
	}
	return strings.Join(out, ",")
}

// TestFeedRelayStopsBeforeCheckpoint: a relay stopped after its handler accepted records
// and before it deleted them (and which never answers again: its lease stays) leaves them
// pending; another relay takes the lease over once it expired and delivers them again, with
// the same ids, and nothing is lost.
func TestFeedRelayStopsBeforeCheckpoint(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			table := fdTable(t, b, "fdckpt")
			w := fdCounters(t, b.Name, b.Tables, table)
			for i := range 3 {
				for _, id := range []string{"a|1", "a|2", "b|1"} {
					if err := w.Upsert(ctx, &fdCounter{Entity: abstractions.Entity{ID: id}, N: i}); err != nil {
						t.Fatal(err)
					}
				}
			}
			p := &tap{Tables: b.Tables, dies: true}
			p.hit = func(kind string, acts []service.Action) (bool, bool) { return deletesRecords(acts), false }
			lease := 300 * time.Millisecond
			first, err := feed.NewRelay(fdCounters(t, b.Name, p, table), &feed.RelayOptions{Name: "crashes", Lease: lease, Parallel: 1})
			if err != nil {
				t.Fatal(err)
			}
			d := newDeliveries()
			var once []string
			var mu sync.Mutex
			_, err = first.Pass(ctx, func(ctx context.Context, r feed.Record) error {
				mu.Lock()
				once = append(once, r.ID)
				mu.Unlock()
				return d.handle(ctx, r)
			})
			if !errors.Is(err, errStopped) {
				t.Fatalf("the stopped relay's pass returned %v", err)
			}
			if len(once) == 0 {
				t.Fatal("the stopped relay delivered nothing")
			}
			second, err := feed.NewRelay(fdCounters(t, b.Name, b.Tables, table), &feed.RelayOptions{Name: "takes-over", Lease: lease})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			drain(t, ctx, w, d.handle, second)
			if time.Since(start) < lease {
				t.Errorf("the second relay drained in %v, before the first one's lease of %v expired", time.Since(start), lease)
			}
			d.check(t, ctx, b.Tables, table)
			dups := d.duplicates()
			if len(dups) == 0 {
				t.Error("no record was delivered twice, though the first relay never checkpointed")
			}
			for _, id := range dups {
				found := false
				for _, o := range once {
					found = found || o == id
				}
				if !found {
					t.Errorf("%s was delivered twice, but the stopped relay never delivered it", id)
				}
			}
		})
	}
}

// TestFeedLeaseHolderStopsAnswering: a relay whose handler hangs holds its partition's
// lease; another relay skips that partition until the lease has stood unchanged for its
// length, then takes it over and delivers; the first relay, once its handler returns, finds
// its lease lost and checkpoints nothing.
func TestFeedLeaseHolderStopsAnswering(t *testing.T) {
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			table := fdTable(t, b, "fdhang")
			w := fdCounters(t, b.Name, b.Tables, table)
			for i := range 3 {
				if err := w.Upsert(ctx, &fdCounter{Entity: abstractions.Entity{ID: "a|1"}, N: i}); err != nil {
					t.Fatal(err)
				}
			}
			lease := 300 * time.Millisecond
			hung, err := feed.NewRelay(w, &feed.RelayOptions{Name: "hangs", Lease: lease})
			if err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			entered := make(chan struct{})
			var hungPass sync.WaitGroup
			hungPass.Add(1)
			var hungErr error
			var hungStats feed.PassStats
			var hungIDs []string // what the hung relay's handler accepted (its goroutine only)
			go func() {
				defer hungPass.Done()
				var once sync.Once
				hungStats, hungErr = hung.Pass(ctx, func(ctx context.Context, r feed.Record) error {
					once.Do(func() { close(entered) })
					<-release
					hungIDs = append(hungIDs, r.ID)
					return nil
				})
			}()
			<-entered
			d := newDeliveries()
			other, err := feed.NewRelay(fdCounters(t, b.Name, b.Tables, table), &feed.RelayOptions{Name: "other", Lease: lease})
			if err != nil {
				t.Fatal(err)
			}
			st, err := other.Pass(ctx, d.handle)
			if err != nil || st.Visited != 0 || st.Delivered != 0 {
				t.Fatalf("a pass while the lease is held: %+v, %v", st, err)
			}
			var skipped atomic.Int32
			deadline := time.Now().Add(30 * time.Second)
			for {
				st, err := other.Pass(ctx, d.handle)
				if err != nil {
					t.Fatal(err)
				}
				if st.Delivered > 0 {
					break
				}
				skipped.Add(1)
				if time.Now().After(deadline) {
					t.Fatal("the lease was never taken over")
				}
				time.Sleep(lease / 5)
			}
			close(release)
			hungPass.Wait()
			if hungErr != nil {
				t.Fatalf("the hung relay's pass: %v", hungErr)
			}
			if hungStats.Delivered != len(hungIDs) || len(hungIDs) == 0 {
				t.Errorf("the hung relay reports %d deliveries, its handler accepted %d", hungStats.Delivered, len(hungIDs))
			}
			drain(t, ctx, w, d.handle, other)
			d.check(t, ctx, b.Tables, table)
			if skipped.Load() == 0 {
				t.Error("the lease was taken over at once")
			}
			// The relay that took over delivered each record once, the hung relay's
			// included: it found its lease lost and deleted none of them. Those it handled
			// are the duplicates the guide explains, each known by its id.
			if dup := d.duplicates(); len(dup) > 0 {
				t.Errorf("%s delivered twice by the relay that took over", dup[0])
			}
			d.mu.Lock()
			for _, id := range hungIDs {
				if d.byID[id] != 1 {
					t.Errorf("%s, which the hung relay handled, was delivered %d times by the relay that took over, want 1", id, d.byID[id])
				}
			}
			d.mu.Unlock()
		})
	}
}

// TestFeedFaults loses the answer of each step of the feed's protocol once (the request is
// applied, the caller sees a broken connection): the writer's mark and transaction, the
// relay's checkpoint and its clearing of the mark. Whatever each call reported, a write
// that reported success has its record delivered, one that is found applied too, a record
// comes twice only after a relay pass that reported an error, and the registry ends empty.
func TestFeedFaults(t *testing.T) {
	cases := []struct {
		name string
		hit  func(kind string, acts []service.Action) bool
	}{
		{"mark", func(kind string, acts []service.Action) bool { return kind == "write" && marks(acts) }},
		{"write", func(kind string, acts []service.Action) bool { return kind == "transact" && writesRecords(acts) }},
		{"checkpoint", func(kind string, acts []service.Action) bool { return deletesRecords(acts) }},
		{"clear", func(kind string, acts []service.Action) bool { return kind == "write" && clears(acts) }},
	}
	for _, b := range harnesses(t, makers) {
		t.Run(b.Name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					ctx := context.Background()
					table := fdTable(t, b, "fdfault")
					p := &tap{Tables: b.Tables}
					var once sync.Once
					p.hit = func(kind string, acts []service.Action) (bool, bool) {
						fire := false
						if c.hit(kind, acts) {
							once.Do(func() { fire = true })
						}
						return fire, true
					}
					faulty := fdCounters(t, b.Name, p, table)
					clean := fdCounters(t, b.Name, b.Tables, table)
					for i := range 3 {
						err := faulty.Upsert(ctx, &fdCounter{Entity: abstractions.Entity{ID: "a|1"}, N: i})
						if err != nil && !errors.Is(err, errStopped) {
							t.Fatalf("upsert %d: %v", i, err)
						}
					}
					r, err := feed.NewRelay(faulty, &feed.RelayOptions{Name: "r"})
					if err != nil {
						t.Fatal(err)
					}
					d := newDeliveries()
					deadline := time.Now().Add(30 * time.Second)
					failed := false // a pass reported an error
					for {
						if _, err := r.Pass(ctx, d.handle); err != nil {
							failed = true
						}
						bl, err := feed.Status(ctx, clean)
						if err != nil {
							t.Fatal(err)
						}
						if bl.Partitions == 0 && bl.Pending == 0 {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("not drained: %+v", bl)
						}
						time.Sleep(fdHold / 2)
					}
					if p.fired != 1 {
						t.Fatalf("the fault fired %d times", p.fired)
					}
					d.check(t, ctx, b.Tables, table)
					// A pass that reported success finished its partitions: what it
					// delivered was checkpointed (a retry that met its own delete counts),
					// so a record comes twice only after a pass that reported an error.
					if dup := d.duplicates(); len(dup) > 0 && !failed {
						t.Errorf("%s delivered twice, though every pass reported success", dup[0])
					}
				})
			}
		})
	}
}

// TestFeedFaultMatrix runs the writes of a store with a feed (the index matrix's cases,
// whose type is indexed too) under the fault proxy, once on single writes (the mark, which
// every write sends first) and once on transactions (the write with its record): each call
// tells the truth as TestFaultMatrix requires, the partition holds one record for each
// write applied and none for one that was not, and a partition with records is marked.
func TestFeedFaultMatrix(t *testing.T) {
	bs := faultyBackends(t)
	outcomes := map[string]map[string]string{}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			fig := faultFigures{}
			table := "fdfaults" + randomSuffix()
			ctx := context.Background()
			if err := b.clean.CreateTable(ctx, table); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.clean.DeleteTable(context.Background(), table) }()
			newStore := func(svc service.Tables) *tables.Store[ixCounter] {
				s, err := tables.For[ixCounter](tables.NewAccountOver(b.name, svc, nil, &tables.Options{Logger: discardLogger()}), &tables.StoreOptions{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				if err := feed.Enable(s, &feed.Options{Hold: fdHold}); err != nil {
					t.Fatal(err)
				}
				return s
			}
			faulty, clean := newStore(b.faulty), newStore(b.clean)
			records := func(pk string) int {
				rows, err := allRows(ctx, b.clean, table, service.Query{Filter: "PartitionKey eq '" + pk + "' and RowKey ge '~fd.r.' and RowKey lt '~fd.r/'", Select: []string{}})
				if err != nil {
					t.Fatal(err)
				}
				return len(rows)
			}
			seen := map[string]string{}
			for ci, fc := range ixFaultCases() {
				for oi, on := range []faults.Calls{faults.Writes, faults.Transactions} {
					for fi, f := range ixFaults() {
						name := fmt.Sprintf("%s/%s/%s", fc.verb, map[faults.Calls]string{faults.Writes: "mark", faults.Transactions: "write"}[on], f)
						pk, err, injected := runFaulted(t, ctx, b.plan, f, on, fmt.Sprintf("f%02d%d%d", ci, oi, fi), func(pk string) error {
							if !fc.setup {
								return nil
							}
							return clean.Create(ctx, &ixCounter{Entity: abstractions.Entity{ID: pk + "|a"}})
						}, func(ctx context.Context, pk string) error {
							return fc.run(ctx, faulty, pk)
						})
						v, rerr := clean.One(ctx, pk+"|a")
						if rerr != nil && !errors.Is(rerr, abstractions.ErrNotFound) {
							t.Fatalf("%s: reading the outcome: %v", name, rerr)
						}
						applied := rerr == nil && v.N == 1
						half := rerr == nil && v.N != 0 && v.N != 1
						if fc.gone {
							applied, half = rerr != nil, false
						}
						want := 0
						if fc.setup {
							want++
						}
						if applied {
							want++
						}
						if n := records(pk); n != want {
							t.Errorf("%s: %d records for %d writes applied", name, n, want)
							half = true
						}
						if want > 0 && !strings.Contains(","+fdMarkedPartitions(t, ctx, b.clean, table)+",", ","+pk+",") {
							t.Errorf("%s: records without a mark", name)
							half = true
						}
						seen[name] = fig.judge(t, name, injected, applied, half, err, true, describeError, "in the table")
					}
				}
			}
			outcomes[b.name] = seen
			t.Logf("%s: %d cases, %d truthful, %d ambiguous by design, %d acknowledged writes lost, %d half-applied",
				b.name, fig.cases, fig.truthful, fig.ambiguous, fig.lost, fig.half)
		})
	}
	compareOutcomes(t, outcomes)
}
