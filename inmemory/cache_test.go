package inmemory_test

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
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

type Doc struct {
	abstractions.Entity
	N     int
	Tags  []string
	When  time.Time
	Place Place
}

type Place struct{ City string }

// gate is a table service that counts calls and can hold one call after the service
// answered it and before it returns, so tests can make reads and writes overlap on purpose.
type gate struct {
	service.Tables
	gets, writes, txs, queries atomic.Int64

	mu   sync.Mutex
	hold map[string]chan struct{} // "get", "write", "tx" → released when closed
	held map[string]chan struct{} // signalled when a call is being held
}

func newGate() *gate {
	return &gate{Tables: memservice.New(), hold: map[string]chan struct{}{}, held: map[string]chan struct{}{}}
}

// pause makes the next call of kind wait after the service answered; it returns a channel
// that is closed once a call is waiting, and a function that lets it return.
func (g *gate) pause(kind string) (waiting <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h, w := make(chan struct{}), make(chan struct{})
	g.hold[kind], g.held[kind] = h, w
	return w, func() { close(h) }
}

func (g *gate) wait(kind string) {
	g.mu.Lock()
	h, w := g.hold[kind], g.held[kind]
	delete(g.hold, kind)
	delete(g.held, kind)
	g.mu.Unlock()
	if h != nil {
		close(w)
		<-h
	}
}

func (g *gate) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	g.gets.Add(1)
	r, err := g.Tables.GetRow(ctx, table, pk, rk, sel)
	g.wait("get")
	return r, err
}

func (g *gate) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	g.writes.Add(1)
	w, err := g.Tables.Write(ctx, table, a)
	g.wait("write")
	if err == nil && ctx.Err() != nil {
		// The context ended while the answer was on its way: the caller cannot know that
		// the write was applied.
		return service.Written{}, ctx.Err()
	}
	return w, err
}

func (g *gate) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	g.queries.Add(1)
	return g.Tables.Query(ctx, table, q)
}

func (g *gate) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	g.txs.Add(1)
	ws, err := g.Tables.Transact(ctx, table, actions)
	g.wait("tx")
	return ws, err
}

// testClock is an account clock that moves only when a test moves it, so no cache entry
// expires because the machine was slow.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}

func (c *testClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// cachedStore returns a store with the cache policy over a gate, on a clock that stands
// still: its entries expire only when a test says so.
func cachedStore(t *testing.T, policy tables.CachePolicy) (*tables.Store[Doc], *gate) {
	t.Helper()
	g := newGate()
	acct := inmemory.NewAccountOver(g, nil, &tables.Options{Cache: policy, Now: newTestClock().Now})
	s, err := tables.For[Doc](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureCreated(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, g
}

// read returns the entity and whether the read went to the table.
func read(t *testing.T, s *tables.Store[Doc], g *gate, id string) (*Doc, bool) {
	t.Helper()
	before := g.gets.Load()
	d, err := s.One(context.Background(), id)
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil, g.gets.Load() != before
	}
	if err != nil {
		t.Fatal(err)
	}
	return d, g.gets.Load() != before
}

func TestCacheServesWhatAWriteReturned(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Sliding(time.Minute))
	d := &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 1}
	if err := s.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	got, fetched := read(t, s, g, "p|a")
	if fetched || got.N != 1 || got.ETag != d.ETag {
		t.Fatalf("after create: fetched=%v %+v", fetched, got)
	}
	got.N = 2
	if err := s.Update(ctx, got, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	again, fetched := read(t, s, g, "p|a")
	if fetched || again.N != 2 || again.ETag != got.ETag {
		t.Fatalf("after update: fetched=%v %+v", fetched, again)
	}
	// "a" and "a|a" are one row and one entry.
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "solo"}}); err != nil {
		t.Fatal(err)
	}
	if _, fetched := read(t, s, g, "solo|solo"); fetched {
		t.Fatal(`"solo|solo" missed the entry "solo" left`)
	}
}

func TestCacheNeverAliases(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Absolute(time.Minute))
	d := &Doc{Entity: abstractions.Entity{ID: "p|a"}, Tags: []string{"x"}}
	if err := s.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	d.Tags[0] = "changed by the caller after the write"
	got, _ := read(t, s, g, "p|a")
	got.Tags[0] = "changed by a reader"
	again, fetched := read(t, s, g, "p|a")
	if fetched || again.Tags[0] != "x" {
		t.Fatalf("the cached copy was aliased: fetched=%v %q", fetched, again.Tags)
	}
}

func TestCacheReadOverlappingAWrite(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Sliding(time.Minute))
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 1}); err != nil {
		t.Fatal(err)
	}
	// The create cached version 1; drop it with a failed write so the next read fetches.
	stale := &Doc{Entity: abstractions.Entity{ID: "p|a", ETag: `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`}}
	if err := s.Update(ctx, stale, abstractions.Strict); !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		t.Fatalf("stale update: %v", err)
	}
	waiting, release := g.pause("get")
	var old *Doc
	done := make(chan struct{})
	go func() {
		defer close(done)
		old, _ = s.One(ctx, "p|a") // fetches version 1, then waits
	}()
	<-waiting
	if err := s.Upsert(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 2}); err != nil {
		t.Fatal(err)
	}
	release()
	<-done
	if old.N != 1 {
		t.Fatalf("the overlapping read returned %d", old.N)
	}
	got, _ := read(t, s, g, "p|a")
	if got.N != 2 {
		t.Fatalf("after the write returned, a read answered %d", got.N)
	}
}

func TestCacheOverlappingWritesLeaveNothing(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Sliding(time.Minute))
	waiting, release := g.pause("write")
	done := make(chan error, 1)
	go func() { done <- s.Upsert(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 1}) }()
	<-waiting // the first write is stored but has not returned
	if err := s.Upsert(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 2}); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, fetched := read(t, s, g, "p|a")
	if !fetched || got.N != 2 {
		t.Fatalf("after overlapping writes: fetched=%v N=%d", fetched, got.N)
	}
	if _, fetched := read(t, s, g, "p|a"); fetched {
		t.Fatal("the read after the overlap did not refill the entry")
	}
}

func TestCacheFailedOrCancelledWriteDrops(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Sliding(time.Minute))
	d := &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 1}
	if err := s.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	// A duplicate create fails with a 409: the entry and the partition's list go.
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}}); !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Fatal(err)
	}
	if _, fetched := read(t, s, g, "p|a"); !fetched {
		t.Fatal("a failed write left the entity cached")
	}
	// A write whose context ended before it was sent sends nothing and changes nothing:
	// the entry stays.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	writes := g.writes.Load()
	if err := s.Upsert(cctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 9}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled upsert: %v", err)
	}
	if got, fetched := read(t, s, g, "p|a"); fetched || g.writes.Load() != writes || got.N != 1 {
		t.Fatalf("a write cancelled before it was sent: fetched=%v, sent %d, N=%d", fetched, g.writes.Load()-writes, got.N)
	}
	// One whose context ends while its answer is on its way was applied, unknown to the
	// caller: the entry goes, and the next read finds the write.
	waiting, release := g.pause("write")
	cctx, cancel = context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Upsert(cctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 9}) }()
	<-waiting
	cancel()
	release()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("upsert cancelled on its way: %v", err)
	}
	if got, fetched := read(t, s, g, "p|a"); !fetched || got.N != 9 {
		t.Fatalf("a write cancelled on its way left the entity cached (fetched=%v, N=%d)", fetched, got.N)
	}
	// A refusal before sending drops nothing.
	noTag := &Doc{Entity: abstractions.Entity{ID: "p|a"}}
	if err := s.Update(ctx, noTag, abstractions.Strict); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Fatal(err)
	}
	if _, fetched := read(t, s, g, "p|a"); fetched {
		t.Fatal("a refused write dropped the entry")
	}
}

func TestCacheListsFollowWrites(t *testing.T) {
	ctx := context.Background()
	s, _ := cachedStore(t, tables.Sliding(time.Minute))
	for _, id := range []string{"p|a", "p|b", "q|a"} {
		if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(l []*Doc, err error) int {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	if n := count(s.List(ctx, "p")); n != 2 {
		t.Fatalf("list p: %d", n)
	}
	if n := count(s.ListAll(ctx)); n != 3 {
		t.Fatalf("list all: %d", n)
	}
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|c"}}); err != nil {
		t.Fatal(err)
	}
	if n := count(s.List(ctx, "p")); n != 3 {
		t.Fatalf("list p after a create: %d", n)
	}
	if n := count(s.ListAll(ctx)); n != 4 {
		t.Fatalf("list all after a create: %d", n)
	}
	if _, err := s.Patch(ctx, "q|a", abstractions.Set(abstractions.NewPatch[Doc](), abstractions.Field(func(d *Doc) *int { return &d.N }), 5)); err != nil {
		t.Fatal(err)
	}
	l, err := s.List(ctx, "q")
	if err != nil || len(l) != 1 || l[0].N != 5 {
		t.Fatalf("list after a patch: %v %v", l, err)
	}
	if _, err := s.UpsertBatch(ctx, []*Doc{{Entity: abstractions.Entity{ID: "q|b"}}}); err != nil {
		t.Fatal(err)
	}
	if n := count(s.List(ctx, "q")); n != 2 {
		t.Fatalf("list q after a batch: %d", n)
	}
	if _, err := s.DeletePartition(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if n := count(s.List(ctx, "p")); n != 0 {
		t.Fatalf("list p after delete partition: %d", n)
	}
	if d, err := s.One(ctx, "p|a"); !errors.Is(err, abstractions.ErrNotFound) || d != nil {
		t.Fatalf("one after delete partition: %v %v, want ErrNotFound", d, err)
	}
}

func TestCacheDeletePartitionFailingPartWayEvicts(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Sliding(time.Minute))
	var docs []*Doc
	for i := 0; i < 150; i++ {
		docs = append(docs, &Doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%03d", i)}})
	}
	if err := s.CreateBatch(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.One(ctx, "p|149"); err != nil { // cached
		t.Fatal(err)
	}
	// The first transaction is held after it committed; the caller gives up meanwhile, so
	// the second is never sent.
	waiting, release := g.pause("tx")
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.DeletePartition(cctx, "p")
		done <- err
	}()
	<-waiting
	cancel()
	release()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("delete partition: %v", err)
	}
	d, fetched := read(t, s, g, "p|149")
	if !fetched || d == nil {
		t.Fatalf("a listed row that was not deleted stayed cached: fetched=%v %v", fetched, d)
	}
}

func TestCacheDisabledStoreKeepsOthersCoherent(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	acct := inmemory.NewAccountOver(g, nil, &tables.Options{Cache: tables.Sliding(time.Minute), Now: newTestClock().Now})
	cached, _ := tables.For[Doc](acct, nil)
	plain, _ := tables.For[Doc](acct, &tables.StoreOptions{Cache: tables.Disabled})
	if err := cached.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 1}); err != nil {
		t.Fatal(err)
	}
	if err := plain.Upsert(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 2}); err != nil {
		t.Fatal(err)
	}
	if d, _ := read(t, cached, g, "p|a"); d.N != 2 {
		t.Fatalf("a write through a store with caching off left %d cached", d.N)
	}
}

// TestCacheNeverOlderThanAReturnedWrite mixes writes, deletes and reads of a few ids from
// many goroutines, under both policies, in a cache that holds every id and in one that holds
// fewer (so entries are evicted while reads and writes of them are in flight). Each id has
// one writer, so its versions are ordered; every read must see the version the last
// returned write made, or a newer one.
func TestCacheNeverOlderThanAReturnedWrite(t *testing.T) {
	for _, policy := range []tables.CachePolicy{tables.Sliding(time.Minute), tables.Absolute(time.Minute)} {
		for _, size := range []int{0, 2} {
			t.Run(fmt.Sprintf("%v/CacheSize=%d", policy, size), func(t *testing.T) {
				g := newGate()
				acct := inmemory.NewAccountOver(g, nil, &tables.Options{Cache: policy, CacheSize: size, Now: newTestClock().Now})
				s, err := tables.For[Doc](acct, nil)
				if err != nil {
					t.Fatal(err)
				}
				neverOlderThanAReturnedWrite(t, s)
			})
		}
	}
}

func neverOlderThanAReturnedWrite(t *testing.T, s *tables.Store[Doc]) {
	ctx := context.Background()
	const ids, writes, readers = 4, 150, 12
	type state struct {
		returned      atomic.Int64 // version of the last returned write; negative = a delete
		deleteStarted atomic.Int64 // highest version of a delete that was started
	}
	states := make([]*state, ids)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range states {
		states[i] = &state{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("p|%d", i)
			for v := int64(1); v <= writes; v++ {
				if rand.IntN(5) == 0 {
					states[i].deleteStarted.Store(v)
					if _, err := s.Delete(ctx, id, ""); err != nil {
						t.Error(err)
						return
					}
					states[i].returned.Store(-v)
					continue
				}
				if err := s.Upsert(ctx, &Doc{Entity: abstractions.Entity{ID: id}, N: int(v)}); err != nil {
					t.Error(err)
					return
				}
				states[i].returned.Store(v)
			}
		}(i)
	}
	var rwg sync.WaitGroup
	for r := 0; r < readers; r++ {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := rand.IntN(ids)
				floor := states[i].returned.Load() // > 0: an upsert of that version; < 0: a delete
				d, err := s.One(ctx, fmt.Sprintf("p|%d", i))
				if errors.Is(err, abstractions.ErrNotFound) {
					d, err = nil, nil
				}
				if err != nil {
					t.Error(err)
					return
				}
				switch {
				case d == nil && floor > 0 && states[i].deleteStarted.Load() < floor:
					t.Errorf("id %d: absent after version %d returned, with no later delete started", i, floor)
				case d != nil && floor > 0 && int64(d.N) < floor:
					t.Errorf("id %d: read version %d after version %d returned", i, d.N, floor)
				case d != nil && floor < 0 && int64(d.N) < -floor:
					t.Errorf("id %d: read version %d after the delete at version %d returned", i, d.N, -floor)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
}

func TestCachePatchKeepsWarmOnlyWhenSafe(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Sliding(time.Minute))
	d := &Doc{Entity: abstractions.Entity{ID: "p|a"}, N: 1}
	if err := s.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	n := func(p *abstractions.Patch[Doc], v int) *abstractions.Patch[Doc] {
		return abstractions.Set(p, abstractions.Field(func(d *Doc) *int { return &d.N }), v)
	}
	// An unconditional patch of a plain top-level column keeps the entity warm, with the
	// ETag it had: older than the row's, so a Strict write of it meets a conflict.
	etag, err := s.Patch(ctx, "p|a", n(abstractions.NewPatch[Doc](), 2))
	if err != nil {
		t.Fatal(err)
	}
	got, fetched := read(t, s, g, "p|a")
	if fetched || got.N != 2 || got.ETag != d.ETag || got.ETag == etag {
		t.Fatalf("after an unconditional patch: fetched=%v N=%d etag kept=%v", fetched, got.N, got.ETag == d.ETag)
	}
	if err := s.Update(ctx, got, abstractions.Strict); !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		t.Fatalf("a strict write of the warm copy: %v", err)
	}
	// Conditional on exactly the cached version: the entry takes the new ETag.
	cur, _ := read(t, s, g, "p|a") // the conflict dropped the entry: this refills it
	etag, err = s.Patch(ctx, "p|a", n(abstractions.NewPatch[Doc]().WithETag(cur.ETag), 3))
	if err != nil {
		t.Fatal(err)
	}
	got, fetched = read(t, s, g, "p|a")
	if fetched || got.N != 3 || got.ETag != etag {
		t.Fatalf("after a conditional patch: fetched=%v N=%d etag new=%v", fetched, got.N, got.ETag == etag)
	}
	// Paths that do not keep it warm: a nested column, a JSON-stored field, a time a read
	// does not give back as set (sub-100 ns).
	for name, p := range map[string]*abstractions.Patch[Doc]{
		"nested": abstractions.Set(abstractions.NewPatch[Doc](), abstractions.Field(func(d *Doc) *string { return &d.Place.City }), "Lviv"),
		"json":   abstractions.Set(abstractions.NewPatch[Doc](), abstractions.Field(func(d *Doc) *[]string { return &d.Tags }), []string{"x"}),
		"time":   abstractions.Set(abstractions.NewPatch[Doc](), abstractions.Field(func(d *Doc) *time.Time { return &d.When }), time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC)),
	} {
		read(t, s, g, "p|a") // make sure it is cached
		if _, err := s.Patch(ctx, "p|a", p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, fetched := read(t, s, g, "p|a"); !fetched {
			t.Fatalf("a %s patch kept the entity cached", name)
		}
	}
	// Not cached when the patch was sent: nothing is cached after it.
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|b"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|b"}}); !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Fatal(err) // the failed create drops the entry
	}
	if _, err := s.Patch(ctx, "p|b", n(abstractions.NewPatch[Doc](), 5)); err != nil {
		t.Fatal(err)
	}
	if got, fetched := read(t, s, g, "p|b"); !fetched || got.N != 5 {
		t.Fatalf("after a patch of an entity that was not cached: fetched=%v N=%d", fetched, got.N)
	}
}

// TestCachesReads checks that a store reports the policy it runs with: its own, or the
// account's when it sets none.
func TestCachesReads(t *testing.T) {
	cases := []struct {
		name    string
		account tables.CachePolicy
		store   tables.CachePolicy
		want    bool
	}{
		{"defaults", tables.CachePolicy{}, tables.CachePolicy{}, false},
		{"account sliding", tables.Sliding(time.Minute), tables.CachePolicy{}, true},
		{"account absolute, store disabled", tables.Absolute(time.Minute), tables.Disabled, false},
		{"store absolute", tables.CachePolicy{}, tables.Absolute(time.Second), true},
		{"store sliding of zero", tables.CachePolicy{}, tables.Sliding(0), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acct := inmemory.NewAccount(&tables.Options{Cache: tc.account})
			s, err := tables.For[Doc](acct, &tables.StoreOptions{Cache: tc.store})
			if err != nil {
				t.Fatal(err)
			}
			if got := driver.CachesReads(s); got != tc.want {
				t.Errorf("driver.CachesReads = %v, want %v", got, tc.want)
			}
		})
	}
}

// A cancelled context fails a read even when the cache could answer it.
func TestCacheHitHonoursContext(t *testing.T) {
	ctx := context.Background()
	s, _ := cachedStore(t, tables.Sliding(time.Minute))
	if err := s.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.One(cctx, "p|a"); !errors.Is(err, context.Canceled) {
		t.Errorf("One: %v", err)
	}
	if _, err := s.Exists(cctx, "p|a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Exists: %v", err)
	}
	if _, err := s.List(cctx, "p"); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v", err)
	}
}

// Patching a cached row keeps the Absolute deadline of the entry: a write by another
// process is seen once the entry's time is up, however often this process patches it.
func TestCacheAbsoluteDeadlineSurvivesPatches(t *testing.T) {
	ctx := context.Background()
	svc := newGate()
	clock := newTestClock()
	primary := inmemory.NewAccountOver(svc, nil, &tables.Options{Cache: tables.Absolute(150 * time.Millisecond), Now: clock.Now})
	other := inmemory.NewAccountOver(svc, nil, nil)
	a, _ := tables.For[Doc](primary, nil)
	b, _ := tables.For[Doc](other, nil)
	if err := a.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|x"}, Tags: []string{"alice"}}); err != nil {
		t.Fatal(err)
	}
	d, err := b.One(ctx, "p|x")
	if err != nil {
		t.Fatal(err)
	}
	d.Tags = []string{"bob"}
	if err := b.Update(ctx, d, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	tags := func() string {
		t.Helper()
		got, err := a.One(ctx, "p|x")
		if err != nil {
			t.Fatal(err)
		}
		return got.Tags[0]
	}
	// Patches every 20 ms: the entry stays warm (the patch is applied to it) until its
	// 150 ms are up, and not one patch longer.
	for i := 1; i <= 30; i++ {
		if _, err := a.Patch(ctx, "p|x", abstractions.Set(abstractions.NewPatch[Doc](), abstractions.Field(func(d *Doc) *int { return &d.N }), i)); err != nil {
			t.Fatal(err)
		}
		clock.Advance(20 * time.Millisecond)
		elapsed := time.Duration(i) * 20 * time.Millisecond
		want := "alice" // the entry of the create, patched
		if elapsed >= 150*time.Millisecond {
			want = "bob"
		}
		if got := tags(); got != want {
			t.Fatalf("%v after the create, under Absolute(150ms): read %q, want %q", elapsed, got, want)
		}
		if want == "bob" {
			return
		}
	}
	t.Fatal("the loop ended before the deadline")
}
