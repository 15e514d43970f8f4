package tables

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/service"
)

func TestCachePolicyString(t *testing.T) {
	for p, want := range map[CachePolicy]string{Disabled: "Disabled", Sliding(time.Second): "Sliding(1s)", Absolute(time.Minute): "Absolute(1m0s)",
		{}: "Default", Sliding(0): "Disabled", Absolute(-time.Second): "Disabled"} {
		if p.String() != want {
			t.Errorf("%v, want %s", p, want)
		}
	}
}

// cachingStore returns a store of item whose account caches with policy and whose clock the
// test moves with the returned function.
func cachingStore(t *testing.T, policy CachePolicy) (*Store[item], *fakeTables, func(time.Duration)) {
	t.Helper()
	now := testNow
	s, f := newStore[item](t, &Options{Cache: policy, Now: func() time.Time { return now }})
	return s, f, func(d time.Duration) { now = now.Add(d) }
}

// What a store promises of its cache: a hit sends nothing; its own writes (and those of
// every store of the account) keep it coherent; entries end on the account's clock.
func TestStoreCache(t *testing.T) {
	ctx := context.Background()
	t.Run("reads are served from the cache", func(t *testing.T) {
		s, f, _ := cachingStore(t, Absolute(time.Minute))
		if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a"}); err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		for range 3 {
			if v, err := s.One(ctx, "p|a"); err != nil || v.Name != "a" {
				t.Fatalf("One: %+v, %v", v, err)
			}
			if ok, err := s.Exists(ctx, "p|a"); err != nil || !ok {
				t.Fatalf("Exists: %v, %v", ok, err)
			}
		}
		if len(f.calls) != 0 {
			t.Errorf("cached reads sent %v", f)
		}
		// A hit is a fresh value: changing it changes nothing cached.
		v, _ := s.One(ctx, "p|a")
		v.Name = "changed"
		if w, _ := s.One(ctx, "p|a"); w.Name != "a" {
			t.Errorf("a caller's change reached the cache: %q", w.Name)
		}
	})
	t.Run("writes keep it coherent", func(t *testing.T) {
		s, f, _ := cachingStore(t, Absolute(time.Minute))
		v := &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a"}
		if err := s.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.List(ctx, "p"); len(got) != 1 {
			t.Fatalf("list of %d", len(got))
		}
		v.Name = "b"
		if err := s.Update(ctx, v, abstractions.Strict); err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		if got, _ := s.One(ctx, "p|a"); got.Name != "b" || got.ETag != v.ETag {
			t.Errorf("after an update: %+v", got)
		}
		if len(f.calls) != 0 {
			t.Errorf("the written version was not kept: %v", f)
		}
		// A store of the same table with caching off still drops what it writes.
		plain, err := For[item](s.Account(), &StoreOptions{Table: "items", Cache: Disabled})
		if err != nil {
			t.Fatal(err)
		}
		if err := plain.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "c"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.One(ctx, "p|a"); got.Name != "c" {
			t.Errorf("another store's write left %q cached", got.Name)
		}
		if got, _ := s.List(ctx, "p"); len(got) != 1 || got[0].Name != "c" {
			t.Errorf("the list after another store's write: %+v", got)
		}
		if deleted, err := s.Delete(ctx, "p|a", ""); err != nil || !deleted {
			t.Fatalf("delete: %v, %v", deleted, err)
		}
		if _, err := s.One(ctx, "p|a"); !errors.Is(err, abstractions.ErrNotFound) {
			t.Errorf("after a delete: %v", err)
		}
		if got, _ := s.List(ctx, "p"); len(got) != 0 {
			t.Errorf("the list after a delete: %+v", got)
		}
		// A failed write drops the row: the next read asks the table.
		if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|b"}}); err != nil {
			t.Fatal(err)
		}
		f.before = func(call string) error {
			if call == "Write" {
				return fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
			}
			return nil
		}
		if err := s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|b"}, Name: "lost?"}); !errors.Is(err, abstractions.ErrUnavailable) {
			t.Fatal(err)
		}
		f.before = nil
		f.resetCalls()
		if _, err := s.One(ctx, "p|b"); err != nil || f.count("GetRow") != 1 {
			t.Errorf("after a failed write: %v, %d reads", err, f.count("GetRow"))
		}
	})
	t.Run("entries end on the account's clock", func(t *testing.T) {
		for _, tc := range []struct {
			policy CachePolicy
			reads  int // reads sent for reads at 0, 40 s, 80 s and 130 s after the write
		}{
			{Absolute(time.Minute), 1}, // the written version ends at 60 s; the one read at 80 s lasts
			{Sliding(time.Minute), 0},  // each read keeps the entry another minute
			{Disabled, 4},
		} {
			s, f, advance := cachingStore(t, tc.policy)
			if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
				t.Fatal(err)
			}
			f.resetCalls()
			for _, d := range []time.Duration{0, 40 * time.Second, 40 * time.Second, 50 * time.Second} {
				advance(d)
				if _, err := s.One(ctx, "p|a"); err != nil {
					t.Fatal(err)
				}
			}
			if n := f.count("GetRow"); n != tc.reads {
				t.Errorf("%v: %d reads, want %d", tc.policy, n, tc.reads)
			}
		}
	})
	t.Run("a patch keeps a cached entity only as it knows it", func(t *testing.T) {
		s, f, _ := cachingStore(t, Absolute(time.Minute))
		v := &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a", N: 1}
		if err := s.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		setN := func(n int) *abstractions.Patch[item] {
			return abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(x *item) *int { return &x.N }), n)
		}
		// Conditional on the cached version: the cached entity takes the cells and the ETag.
		etag, err := s.Patch(ctx, "p|a", setN(2).WithETag(v.ETag))
		if err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		if got, _ := s.One(ctx, "p|a"); got.N != 2 || got.ETag != etag || len(f.calls) != 0 {
			t.Errorf("after a conditional patch: %+v, sent %v", got, f)
		}
		// Unconditional: the cells, but the older ETag, so a Strict write of it conflicts.
		if _, err := s.Patch(ctx, "p|a", setN(3)); err != nil {
			t.Fatal(err)
		}
		got, _ := s.One(ctx, "p|a")
		if got.N != 3 || got.ETag != etag || len(f.calls) != 1 {
			t.Errorf("after an unconditional patch: %+v, sent %v", got, f)
		}
		got.Name = "stale"
		if err := s.Update(ctx, got, abstractions.Strict); !errors.Is(err, abstractions.ErrConcurrencyConflict) {
			t.Errorf("a Strict update of the entity cached after an unconditional patch: %v", err)
		}
	})
}

// movingClock is an account clock that goroutines may read while a test moves it.
type movingClock struct{ ns atomic.Int64 }

func newMovingClock() *movingClock {
	c := &movingClock{}
	c.ns.Store(testNow.UnixNano())
	return c
}

func (c *movingClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *movingClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// entriesOf returns the account's cache entries (nil when nothing was ever stored).
func entriesOf(s *Store[item]) *otter.Cache[string, *cache.Entry] { return s.core.Acct.Cache.Items() }

// The bound: a cache of CacheSize rows keeps at most that many, whatever is read; an evicted
// row is a miss, and the read after it gets the table's version.
func TestCacheBound(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []CachePolicy{Sliding(time.Hour), Absolute(time.Hour)} {
		t.Run(policy.String(), func(t *testing.T) {
			s, f := newStore[item](t, &Options{Cache: policy, CacheSize: 3})
			for i := range 10 {
				if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}, N: i}); err != nil {
					t.Fatal(err)
				}
			}
			items := entriesOf(s)
			items.CleanUp()
			if n := items.EstimatedSize(); n > 3 {
				t.Fatalf("%d entries in a cache of 3 rows", n)
			}
			if n := s.core.Acct.Cache.Evictions(); n < 7 {
				t.Errorf("%d evictions after 10 writes into a cache of 3 rows", n)
			}
			f.resetCalls()
			for i := range 10 {
				v, err := s.One(ctx, fmt.Sprintf("p|%d", i))
				if err != nil || v.N != i {
					t.Fatalf("p|%d: %+v, %v", i, v, err)
				}
			}
			if n := f.count("GetRow"); n < 7 {
				t.Errorf("%d of 10 reads went to the table, from a cache of 3 rows", n)
			}
			// A list weighs its rows: one of 10 does not fit in 3.
			if l, err := s.List(ctx, "p"); err != nil || len(l) != 10 {
				t.Fatalf("list: %d, %v", len(l), err)
			}
			items.CleanUp()
			if w := items.WeightedSize(); w > 3 {
				t.Errorf("the cache weighs %d rows, bound 3", w)
			}
		})
	}
	t.Run("default and unbounded", func(t *testing.T) {
		s, _ := newStore[item](t, &Options{Cache: Sliding(time.Hour)})
		if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
			t.Fatal(err)
		}
		if m := entriesOf(s).GetMaximum(); m != cache.DefaultSize {
			t.Errorf("default bound %d, want %d", m, cache.DefaultSize)
		}
		u, _ := newStore[item](t, &Options{Cache: Sliding(time.Hour), CacheSize: -1})
		for i := range 50 {
			if err := u.Create(ctx, &item{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}}); err != nil {
				t.Fatal(err)
			}
		}
		items := entriesOf(u)
		items.CleanUp()
		if items.IsWeighted() || items.EstimatedSize() != 50 || u.core.Acct.Cache.Evictions() != 0 {
			t.Errorf("unbounded: weighted=%v, %d entries, %d evictions", items.IsWeighted(), items.EstimatedSize(), u.core.Acct.Cache.Evictions())
		}
	})
	t.Run("an account that never caches builds no cache", func(t *testing.T) {
		s, _ := newStore[item](t, nil)
		if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.One(ctx, "p|a"); err != nil {
			t.Fatal(err)
		}
		if entriesOf(s) != nil {
			t.Error("a cache was built")
		}
	})
}

// lagging is a table service whose reads sometimes take a while to return after the
// service answered, as a network's do: the window in which a write of the row may start and
// return before the read does.
type lagging struct{ *fakeTables }

func lag() {
	if rand.IntN(4) == 0 {
		time.Sleep(rand.N(100 * time.Microsecond))
	} else {
		runtime.Gosched()
	}
}

func (l lagging) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	r, err := l.fakeTables.GetRow(ctx, table, pk, rk, sel)
	lag()
	return r, err
}

func (l lagging) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	p, err := l.fakeTables.Query(ctx, table, q)
	lag()
	return p, err
}

// TestCacheBoundUnderPressure fills a small cache far past its bound from many goroutines,
// under both policies, while the clock moves (so entries end by time too): writers of
// disjoint rows, readers of single rows and of lists. The cache must stay within its bound
// (give or take the writes in flight, whose eviction runs as they return), evict, and never
// answer a read with a version older than the last write of the row that returned (the
// oracle of inmemory's TestCacheNeverOlderThanAReturnedWrite).
func TestCacheBoundUnderPressure(t *testing.T) {
	const (
		bound   = 32
		rows    = 256 // 8 times the bound
		writers = 8   // each owns rows/writers rows, so a row's versions are ordered
		readers = 8
		writes  = 500 // per writer
	)
	for _, policy := range []CachePolicy{Sliding(40 * time.Millisecond), Absolute(40 * time.Millisecond)} {
		t.Run(policy.String(), func(t *testing.T) {
			ctx := context.Background()
			clock := newMovingClock()
			f := newFake()
			f.tables["items"] = map[fakeKey]service.Row{}
			s, err := For[item](testAccount("test", lagging{f}, nil, &Options{Cache: policy, CacheSize: bound, Now: clock.Now}), &StoreOptions{Table: "items"})
			if err != nil {
				t.Fatal(err)
			}
			type state struct {
				returned      atomic.Int64 // the version of the last returned write; negative: a delete
				deleteStarted atomic.Int64 // the highest version of a delete that was started
			}
			states := make([]state, rows)
			id := func(r int) string { return fmt.Sprintf("p%d|%03d", r%4, r) }
			// check judges a row a read returned (nil: absent) against the floor noted
			// before the read started.
			check := func(r int, floor int64, v *item) {
				switch {
				case v == nil && floor > 0 && states[r].deleteStarted.Load() < floor:
					t.Errorf("%s: absent after version %d returned, with no later delete started", id(r), floor)
				case v != nil && floor > 0 && int64(v.N) < floor:
					t.Errorf("%s: read version %d after version %d returned", id(r), v.N, floor)
				case v != nil && floor < 0 && int64(v.N) < -floor:
					t.Errorf("%s: read version %d after the delete at version %d returned", id(r), v.N, -floor)
				}
			}
			var wg, rwg sync.WaitGroup
			stop := make(chan struct{})
			var worst atomic.Int64 // the most entries seen at once
			for w := range writers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), 1))
					for v := int64(1); v <= writes; v++ {
						r := w + writers*rng.IntN(rows/writers)
						if rng.IntN(5) == 0 {
							states[r].deleteStarted.Store(v)
							if _, err := s.Delete(ctx, id(r), ""); err != nil {
								t.Error(err)
								return
							}
							states[r].returned.Store(-v)
							continue
						}
						if err := s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: id(r)}, N: int(v)}); err != nil {
							t.Error(err)
							return
						}
						states[r].returned.Store(v)
					}
				})
			}
			for g := range readers {
				rwg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 2))
					for {
						select {
						case <-stop:
							return
						default:
						}
						if rng.IntN(16) == 0 { // a list of a quarter of the rows
							p := rng.IntN(4)
							floors := make([]int64, rows)
							for r := p; r < rows; r += 4 {
								floors[r] = states[r].returned.Load()
							}
							l, err := s.List(ctx, fmt.Sprintf("p%d", p))
							if err != nil {
								t.Error(err)
								return
							}
							for _, v := range l {
								var r int
								fmt.Sscanf(v.ID[len(v.ID)-3:], "%d", &r)
								check(r, floors[r], v)
							}
							continue
						}
						r := rng.IntN(rows)
						floor := states[r].returned.Load()
						v, err := s.One(ctx, id(r))
						if errors.Is(err, abstractions.ErrNotFound) {
							v, err = nil, nil
						}
						if err != nil {
							t.Error(err)
							return
						}
						check(r, floor, v)
					}
				})
			}
			// The sampler moves the clock and notes the most entries held at once.
			rwg.Go(func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Microsecond):
					}
					clock.Advance(time.Millisecond)
					if items := s.core.Acct.Cache.Items(); items != nil {
						if n := int64(items.EstimatedSize()); n > worst.Load() {
							worst.Store(n)
						}
					}
				}
			})
			wg.Wait()
			close(stop)
			rwg.Wait()

			items := entriesOf(s)
			if items == nil {
				t.Fatal("nothing was ever cached")
			}
			// In flight, a store is counted before the eviction it causes runs: at most one
			// such store per goroutine.
			if n := worst.Load(); n > bound+writers+readers {
				t.Errorf("%d entries at once in a cache of %d rows", n, bound)
			}
			items.CleanUp()
			if n, w := items.EstimatedSize(), items.WeightedSize(); n > bound || w > bound {
				t.Errorf("after the run: %d entries weighing %d rows in a cache of %d", n, w, bound)
			}
			if n := s.core.Acct.Cache.Evictions(); n == 0 {
				t.Error("no eviction under pressure")
			}
			if s.core.Acct.Cache.InFlight() != 0 {
				t.Errorf("%d key states left behind", s.core.Acct.Cache.InFlight())
			}
			t.Logf("most entries at once %d, evictions %d", worst.Load(), s.core.Acct.Cache.Evictions())
			// Every row reads back as its last write, cached or not.
			for r := range rows {
				v, err := s.One(ctx, id(r))
				if errors.Is(err, abstractions.ErrNotFound) {
					v, err = nil, nil
				}
				if err != nil {
					t.Fatal(err)
				}
				last := states[r].returned.Load()
				if got := int64(-1); v != nil {
					got = int64(v.N)
					if last <= 0 || got != last {
						t.Errorf("%s: version %d, the last write %d", id(r), got, last)
					}
				} else if last > 0 {
					t.Errorf("%s: absent, the last write version %d", id(r), last)
				}
			}
		})
	}
}

// gated is a table service that holds a write of a row named "v2" before applying it, and,
// once gateReads is set, every point read after it fetched the row, until the test lets
// each go.
type gated struct {
	*fakeTables
	gateReads        atomic.Bool
	writeIn, writeGo chan struct{}
	readIn, readGo   chan struct{}
}

func (g *gated) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if v, ok := a.Row.Get("Name"); ok && v.Str() == "v2" {
		g.writeIn <- struct{}{}
		<-g.writeGo
	}
	return g.fakeTables.Write(ctx, table, a)
}

func (g *gated) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	r, err := g.fakeTables.GetRow(ctx, table, pk, rk, sel)
	if g.gateReads.Load() {
		g.readIn <- struct{}{}
		<-g.readGo
	}
	return r, err
}

// Until a store that caches exists, a store's writes of one row skip the cache's
// bookkeeping. A write sent before the first caching store appeared that returns after it
// must still keep that store coherent: a read that fetched the version before the write, and
// returns after the write did, caches nothing, so the next read gets the write's version.
func TestCacheStoreAppearsDuringAWrite(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	f.tables["items"] = map[fakeKey]service.Row{}
	g := &gated{fakeTables: f, writeIn: make(chan struct{}), writeGo: make(chan struct{}),
		readIn: make(chan struct{}), readGo: make(chan struct{})}
	acct := testAccount("test", g, nil, &Options{Now: func() time.Time { return testNow }})
	plain, err := For[item](acct, &StoreOptions{Table: "items"})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "v1"}); err != nil {
		t.Fatal(err)
	}
	if acct.e.Cache.Announces() {
		t.Fatal("an account with no caching store announces its writes")
	}
	arrive := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never reached the service", what)
		}
	}
	wrote := make(chan error, 1)
	go func() { wrote <- plain.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "v2"}) }()
	arrive(g.writeIn, "the write") // the write is sent, unannounced

	cached, err := For[item](acct, &StoreOptions{Table: "items", Cache: Absolute(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	g.gateReads.Store(true)
	type result struct {
		v   *item
		err error
	}
	read := make(chan result, 1)
	go func() { v, err := cached.One(ctx, "p|a"); read <- result{v, err} }()
	arrive(g.readIn, "the read") // the read fetched v1
	g.writeGo <- struct{}{}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	g.readGo <- struct{}{}
	if r := <-read; r.err != nil || r.v.Name != "v1" {
		t.Fatalf("the overlapping read: %+v, %v", r.v, r.err)
	}
	g.gateReads.Store(false)
	if v, err := cached.One(ctx, "p|a"); err != nil || v.Name != "v2" {
		t.Fatalf("after the write returned, a read answers %+v, %v; want v2", v, err)
	}
	// From now on the plain store's writes announce themselves, and the cached store's
	// own reads are served from the cache.
	if !acct.e.Cache.Announces() {
		t.Fatal("a caching store did not make writes announce")
	}
	f.resetCalls()
	if v, err := cached.One(ctx, "p|a"); err != nil || v.Name != "v2" || f.count("GetRow") != 0 {
		t.Fatalf("a second read: %+v, %v, %d reads sent", v, err, f.count("GetRow"))
	}
}
