package tables

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func rowEntry(v int32) *entry {
	return &entry{row: service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{{Name: "V", Value: service.Int32(v)}}}, ttl: time.Minute}
}

// stopped is a clock that stands still: no entry expires because the machine was slow.
func stopped() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// manualClock is a clock a test moves.
type manualClock struct{ now time.Time }

func (c *manualClock) Now() time.Time { return c.now }

func cached(c *readCache, key string) (int32, bool) {
	e, ok := c.get(key)
	if !ok {
		return 0, false
	}
	v, _ := e.row.Get("V")
	return v.Int32(), true
}

func TestCacheWriteStoresItsVersion(t *testing.T) {
	c := newReadCache(stopped)
	keys := []string{"k"}
	c.beginWrite(keys)
	c.endWrite(keys, func(string, *entry) *entry { return rowEntry(1) })
	if v, ok := cached(c, "k"); !ok || v != 1 {
		t.Fatalf("after a write: %v %v", v, ok)
	}
	if len(c.states) != 0 {
		t.Fatalf("states left behind: %v", c.states)
	}
}

func TestCacheReadOverlappingAWriteLeavesNothing(t *testing.T) {
	c := newReadCache(stopped)
	since := c.beginRead("k") // the read fetches version 1 …
	c.beginWrite([]string{"k"})
	c.endWrite([]string{"k"}, func(string, *entry) *entry { return rowEntry(2) })
	c.endRead("k", since, rowEntry(1)) // … and returns after the write of version 2
	if v, ok := cached(c, "k"); !ok || v != 2 {
		t.Fatalf("the read replaced the newer write: %v %v", v, ok)
	}
	// A read that started while a write was in flight stores nothing either.
	c2 := newReadCache(stopped)
	c2.beginWrite([]string{"k"})
	since = c2.beginRead("k")
	c2.endRead("k", since, rowEntry(1))
	if _, ok := cached(c2, "k"); ok {
		t.Fatal("a read during a write stored its version")
	}
	c2.endWrite([]string{"k"}, nil)
}

func TestCacheOverlappingWritesLeaveNothing(t *testing.T) {
	c := newReadCache(stopped)
	k := []string{"k"}
	c.beginWrite(k)
	c.beginWrite(k)
	c.endWrite(k, func(string, *entry) *entry { return rowEntry(1) })
	if _, ok := cached(c, "k"); ok {
		t.Fatal("the first of two overlapping writes was cached")
	}
	c.endWrite(k, func(string, *entry) *entry { return rowEntry(2) })
	if _, ok := cached(c, "k"); ok {
		t.Fatal("the second of two overlapping writes was cached")
	}
	// Once both returned, writes cache again.
	c.beginWrite(k)
	c.endWrite(k, func(string, *entry) *entry { return rowEntry(3) })
	if v, ok := cached(c, "k"); !ok || v != 3 {
		t.Fatalf("a later write: %v %v", v, ok)
	}
}

func TestCacheFailedWriteDrops(t *testing.T) {
	c := newReadCache(stopped)
	k := []string{"k", "list"}
	c.beginWrite(k)
	c.endWrite(k, func(string, *entry) *entry { return rowEntry(1) })
	c.beginWrite(k)
	c.endWrite(k, nil)
	for _, key := range k {
		if _, ok := cached(c, key); ok {
			t.Fatalf("%s survived a failed write", key)
		}
	}
}

func TestCacheReadStoresWhenQuiet(t *testing.T) {
	c := newReadCache(stopped)
	since := c.beginRead("k")
	c.endRead("k", since, rowEntry(7))
	if v, ok := cached(c, "k"); !ok || v != 7 {
		t.Fatalf("a quiet read: %v %v", v, ok)
	}
}

func TestCacheExpiry(t *testing.T) {
	clock := &manualClock{now: stopped()}
	c := newReadCache(clock.Now)
	e := rowEntry(1)
	e.ttl = 20 * time.Millisecond
	c.beginWrite([]string{"abs"})
	c.endWrite([]string{"abs"}, func(string, *entry) *entry { return e })
	s := rowEntry(2)
	s.ttl, s.sliding = 40*time.Millisecond, true
	c.beginWrite([]string{"sl"})
	c.endWrite([]string{"sl"}, func(string, *entry) *entry { return s })
	// Read every 15 ms, the sliding entry stays; the absolute one goes after 20 ms.
	for i := 1; i <= 4; i++ {
		clock.now = clock.now.Add(15 * time.Millisecond)
		if _, ok := cached(c, "sl"); !ok {
			t.Fatalf("a sliding entry read every 15 ms expired after %d reads", i)
		}
		if _, ok := cached(c, "abs"); ok != (i == 1) {
			t.Fatalf("after %v the absolute entry of 20 ms is cached: %v", time.Duration(i)*15*time.Millisecond, ok)
		}
	}
	// Left alone for its 40 ms, the sliding entry goes too, exactly then.
	clock.now = clock.now.Add(40*time.Millisecond - time.Nanosecond)
	if _, ok := cached(c, "sl"); !ok {
		t.Fatal("the sliding entry expired before its time")
	}
	clock.now = clock.now.Add(40 * time.Millisecond)
	if _, ok := cached(c, "sl"); ok {
		t.Fatal("the sliding entry outlived 40 ms without a read")
	}
}

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
