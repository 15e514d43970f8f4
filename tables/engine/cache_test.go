package engine

import (
	"testing"
	"time"

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
	for p, want := range map[CachePolicy]string{Disabled: "Disabled", Sliding(time.Second): "Sliding(1s)", Absolute(time.Minute): "Absolute(1m0s)"} {
		if p.String() != want {
			t.Errorf("%v, want %s", p, want)
		}
	}
}
