package cache

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func rowEntry(v int32) *Entry {
	return &Entry{Row: service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{{Name: "V", Value: service.Int32(v)}}}, TTL: time.Minute}
}

// stopped is a clock that stands still: no entry expires because the machine was slow.
func stopped() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// manualClock is a clock a test moves.
type manualClock struct{ now time.Time }

func (c *manualClock) Now() time.Time { return c.now }

func cached(c *Cache, key string) (int32, bool) {
	e, ok := c.Get(key)
	if !ok {
		return 0, false
	}
	v, _ := e.Row.Get("V")
	return v.Int32(), true
}

func TestCacheWriteStoresItsVersion(t *testing.T) {
	c := New(stopped, 0, nil)
	keys := []string{"k"}
	c.BeginWrite(keys)
	c.EndWrite(keys, func(string, *Entry) *Entry { return rowEntry(1) })
	if v, ok := cached(c, "k"); !ok || v != 1 {
		t.Fatalf("after a write: %v %v", v, ok)
	}
	if c.InFlight() != 0 {
		t.Fatalf("states left behind: %v", c.states)
	}
}

// A key's state outlives its calls (idle) until maxIdle are idle, and an idle state keeps
// the rules: a read that a write of the key overlapped stores nothing, a quiet one stores.
func TestCacheIdleStates(t *testing.T) {
	c := New(stopped, 0, nil)
	for i := range 3 * maxIdle {
		keys := []string{strconv.Itoa(i)}
		c.BeginWrite(keys)
		c.EndWrite(keys, nil)
	}
	if c.InFlight() != 0 || len(c.states) > maxIdle+1 {
		t.Fatalf("%d in flight, %d states kept; want 0 and at most %d", c.InFlight(), len(c.states), maxIdle+1)
	}
	keys := []string{"hot"}
	c.BeginWrite(keys)
	c.EndWrite(keys, nil)
	since := c.BeginRead("hot")
	c.BeginWrite(keys)
	c.EndWrite(keys, nil)
	c.EndRead("hot", since, rowEntry(1))
	if _, ok := cached(c, "hot"); ok {
		t.Fatal("a read overlapped by a write of an idle key stored what it read")
	}
	since = c.BeginRead("hot")
	c.EndRead("hot", since, rowEntry(2))
	if v, ok := cached(c, "hot"); !ok || v != 2 {
		t.Fatalf("a quiet read of an idle key: %v %v", v, ok)
	}
	if c.InFlight() != 0 {
		t.Fatalf("%d in flight", c.InFlight())
	}
}

func TestCacheReadOverlappingAWriteLeavesNothing(t *testing.T) {
	c := New(stopped, 0, nil)
	since := c.BeginRead("k") // the read fetches version 1 …
	c.BeginWrite([]string{"k"})
	c.EndWrite([]string{"k"}, func(string, *Entry) *Entry { return rowEntry(2) })
	c.EndRead("k", since, rowEntry(1)) // … and returns after the write of version 2
	if v, ok := cached(c, "k"); !ok || v != 2 {
		t.Fatalf("the read replaced the newer write: %v %v", v, ok)
	}
	// A read that started while a write was in flight stores nothing either.
	c2 := New(stopped, 0, nil)
	c2.BeginWrite([]string{"k"})
	since = c2.BeginRead("k")
	c2.EndRead("k", since, rowEntry(1))
	if _, ok := cached(c2, "k"); ok {
		t.Fatal("a read during a write stored its version")
	}
	c2.EndWrite([]string{"k"}, nil)
}

func TestCacheOverlappingWritesLeaveNothing(t *testing.T) {
	c := New(stopped, 0, nil)
	k := []string{"k"}
	c.BeginWrite(k)
	c.BeginWrite(k)
	c.EndWrite(k, func(string, *Entry) *Entry { return rowEntry(1) })
	if _, ok := cached(c, "k"); ok {
		t.Fatal("the first of two overlapping writes was cached")
	}
	c.EndWrite(k, func(string, *Entry) *Entry { return rowEntry(2) })
	if _, ok := cached(c, "k"); ok {
		t.Fatal("the second of two overlapping writes was cached")
	}
	// Once both returned, writes cache again.
	c.BeginWrite(k)
	c.EndWrite(k, func(string, *Entry) *Entry { return rowEntry(3) })
	if v, ok := cached(c, "k"); !ok || v != 3 {
		t.Fatalf("a later write: %v %v", v, ok)
	}
}

func TestCacheFailedWriteDrops(t *testing.T) {
	c := New(stopped, 0, nil)
	k := []string{"k", "list"}
	c.BeginWrite(k)
	c.EndWrite(k, func(string, *Entry) *Entry { return rowEntry(1) })
	c.BeginWrite(k)
	c.EndWrite(k, nil)
	for _, key := range k {
		if _, ok := cached(c, key); ok {
			t.Fatalf("%s survived a failed write", key)
		}
	}
}

func TestCacheReadStoresWhenQuiet(t *testing.T) {
	c := New(stopped, 0, nil)
	since := c.BeginRead("k")
	c.EndRead("k", since, rowEntry(7))
	if v, ok := cached(c, "k"); !ok || v != 7 {
		t.Fatalf("a quiet read: %v %v", v, ok)
	}
}

func TestCacheExpiry(t *testing.T) {
	clock := &manualClock{now: stopped()}
	c := New(clock.Now, 0, nil)
	e := rowEntry(1)
	e.TTL = 20 * time.Millisecond
	c.BeginWrite([]string{"abs"})
	c.EndWrite([]string{"abs"}, func(string, *Entry) *Entry { return e })
	s := rowEntry(2)
	s.TTL, s.Sliding = 40*time.Millisecond, true
	c.BeginWrite([]string{"sl"})
	c.EndWrite([]string{"sl"}, func(string, *Entry) *Entry { return s })
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

// A write of one row touches the keys Write names for it, and Row names them with one
// allocation.
func TestRowKeysAreWriteKeys(t *testing.T) {
	k := NewKeys("Orders")
	got := k.Row("p", "r")
	want := []string{k.Entity("p", "r"), k.Partition("p"), k.Table()}
	if got != [3]string(want) || !slices.Equal(k.Write([2]string{"p", "r"}), want) {
		t.Errorf("Row = %q, Write = %q, want %q", got, k.Write([2]string{"p", "r"}), want)
	}
	if n := testing.AllocsPerRun(100, func() { k.Row("p", "r") }); n > 1 {
		t.Errorf("Row allocates %v times, want 1", n)
	}
}

// A write sent unannounced (no store cached when it began) that returns after a caching
// store appeared leaves nothing older than itself cached: not what a read that overlapped
// it fetched, nor what an announced write of the key in flight wrote, which the service may
// have applied first.
func TestCacheUnannouncedWrite(t *testing.T) {
	c := New(stopped, 0, nil)
	if c.Announces() {
		t.Fatal("a new cache asks writes to announce")
	}
	c.Announce()
	if !c.Announces() {
		t.Fatal("Announce did not take")
	}
	k := []string{"k"}

	// A read that fetched the old version and ends after the write returned stores nothing.
	since := c.BeginRead("k")
	c.EndUnannounced(k)
	c.EndRead("k", since, rowEntry(1))
	if _, ok := cached(c, "k"); ok {
		t.Fatal("a read overlapped by an unannounced write stored what it read")
	}

	// A read that stored the old version before the write returned loses it.
	since = c.BeginRead("k")
	c.EndRead("k", since, rowEntry(1))
	if _, ok := cached(c, "k"); !ok {
		t.Fatal("a quiet read stored nothing")
	}
	c.EndUnannounced(k)
	if _, ok := cached(c, "k"); ok {
		t.Fatal("an unannounced write left the version before it cached")
	}

	// An announced write in flight when the unannounced one returns is not cached.
	c.BeginWrite(k)
	c.EndUnannounced(k)
	c.EndWrite(k, func(string, *Entry) *Entry { return rowEntry(2) })
	if _, ok := cached(c, "k"); ok {
		t.Fatal("a write that overlapped an unannounced one was cached")
	}
	c.BeginWrite(k)
	c.EndWrite(k, func(string, *Entry) *Entry { return rowEntry(3) })
	if v, ok := cached(c, "k"); !ok || v != 3 {
		t.Fatalf("a later write: %v %v", v, ok)
	}
	if c.InFlight() != 0 {
		t.Fatalf("%d in flight", c.InFlight())
	}
}
