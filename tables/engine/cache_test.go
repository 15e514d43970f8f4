package engine

import (
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

func rowEntry(v int32) *entry {
	return &entry{row: service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{{Name: "V", Value: service.Int32(v)}}}, ttl: time.Minute}
}

func cached(c *readCache, key string) (int32, bool) {
	e, ok := c.get(key)
	if !ok {
		return 0, false
	}
	v, _ := e.row.Get("V")
	return v.Int32(), true
}

func TestCacheWriteStoresItsVersion(t *testing.T) {
	c := newReadCache(time.Now)
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
	c := newReadCache(time.Now)
	since := c.beginRead("k") // the read fetches version 1 …
	c.beginWrite([]string{"k"})
	c.endWrite([]string{"k"}, func(string, *entry) *entry { return rowEntry(2) })
	c.endRead("k", since, rowEntry(1)) // … and returns after the write of version 2
	if v, ok := cached(c, "k"); !ok || v != 2 {
		t.Fatalf("the read replaced the newer write: %v %v", v, ok)
	}
	// A read that started while a write was in flight stores nothing either.
	c2 := newReadCache(time.Now)
	c2.beginWrite([]string{"k"})
	since = c2.beginRead("k")
	c2.endRead("k", since, rowEntry(1))
	if _, ok := cached(c2, "k"); ok {
		t.Fatal("a read during a write stored its version")
	}
	c2.endWrite([]string{"k"}, nil)
}

func TestCacheOverlappingWritesLeaveNothing(t *testing.T) {
	c := newReadCache(time.Now)
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
	c := newReadCache(time.Now)
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
	c := newReadCache(time.Now)
	since := c.beginRead("k")
	c.endRead("k", since, rowEntry(7))
	if v, ok := cached(c, "k"); !ok || v != 7 {
		t.Fatalf("a quiet read: %v %v", v, ok)
	}
}

func TestCacheExpiry(t *testing.T) {
	c := newReadCache(time.Now)
	e := rowEntry(1)
	e.ttl = 20 * time.Millisecond
	c.beginWrite([]string{"abs"})
	c.endWrite([]string{"abs"}, func(string, *entry) *entry { return e })
	s := rowEntry(2)
	s.ttl, s.sliding = 40*time.Millisecond, true
	c.beginWrite([]string{"sl"})
	c.endWrite([]string{"sl"}, func(string, *entry) *entry { return s })
	for i := 0; i < 4; i++ {
		time.Sleep(15 * time.Millisecond)
		if _, ok := cached(c, "sl"); !ok {
			t.Fatal("a sliding entry read every 15 ms expired")
		}
	}
	if _, ok := cached(c, "abs"); ok {
		t.Fatal("an absolute entry outlived its time")
	}
}

func TestCachePolicyString(t *testing.T) {
	for p, want := range map[CachePolicy]string{Disabled: "Disabled", Sliding(time.Second): "Sliding(1s)", Absolute(time.Minute): "Absolute(1m0s)"} {
		if p.String() != want {
			t.Errorf("%v, want %s", p, want)
		}
	}
}
