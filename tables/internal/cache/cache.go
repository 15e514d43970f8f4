// Package cache owns the read cache's coherence: one cache per account, shared by all its
// stores, which holds rows (not values) and never lets a read answer an older version than a
// write of the process has returned. Every write announces its keys before it is sent and
// when it returns (BeginWrite, EndWrite); a read may store what it fetched only if no write
// of its key started or ended meanwhile (BeginRead, EndRead). The entries are an otter
// cache, bounded in rows and expiring on the account's clock; an eviction is a miss, never
// an older version. What it promises to users is stated once, on tables.CachePolicy.
//
// It refuses nothing and cannot fail; it starts no goroutine.
package cache

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/unified-data/gotables/tables/internal/telemetry"
	"github.com/unified-data/gotables/tables/service"
)

// Cache is the read cache of one account, shared by all its stores. It holds rows (cells,
// keys, ETag and Timestamp), not entities, so a hit decodes a fresh value: a caller can never
// modify what another caller gets.
//
// Coherence. Every write announces the keys it touches before it is sent and again when it
// has returned (BeginWrite / EndWrite), whatever the policy of the store that writes, so a
// store with caching disabled still keeps the others coherent. (Until a store that caches
// exists, a write of one row may skip both: see Announce.) Each announcement moves the
// key's event counter. A read notes the counter when it starts and may store what it fetched
// only if no write of the key started or ended meanwhile (so a read overlapping a write
// never leaves the older version behind). A write that ends stores the version it wrote
// only if it succeeded and no other write of the key overlapped it; otherwise it drops the
// key, so the next read goes to the table.
//
// Entries. The entries live in an otter cache (W-TinyLFU, bounded by the account's
// Options.CacheSize in rows), which expires them on the account's clock. mu orders every store into it and every
// drop with the coherence bookkeeping; a hit only looks the key up, without mu. An entry the
// library evicts (for size or time) is a miss like any other: the next read fetches the row
// and stores it under the same rules, so no eviction can make a read older.
type Cache struct {
	mu     sync.Mutex
	seq    uint64
	states map[string]*keyState
	idle   int         // states in the map with no call in flight (see release)
	free   []*keyState // released states, for reuse
	clock  accountClock
	size   int // the bound in rows (Options.CacheSize); negative: none
	// items is built by the first store, so an account that never caches has none.
	items atomic.Pointer[otter.Cache[string, *Entry]]
	// evictions counts the entries the cache library evicted (see evicted), and meters
	// reports them as the account's metric.
	evictions atomic.Uint64
	meters    *telemetry.Meters
	// announced is set once a store that caches exists (Announce): until then no entry can
	// be stored, and a write of one row may skip its announcements (EndUnannounced).
	announced atomic.Bool
}

// keyState tracks the writes and reads of one key that are in flight. A state with none in
// flight stays in the map (the next call of the key finds it there, instead of adding it and
// deleting it again) until maxIdle are idle; then every idle one is removed, so the map
// stays as small as the concurrency plus maxIdle. An idle state is no different from a
// missing one to the rules: a read compares the key's counter at its start and its end, and
// a write moves it, whether the state was kept or made anew.
type keyState struct {
	writers, readers int
	last             uint64 // the cache's seq at the key's last write event
	overlapped       bool   // two writes of the key were in flight at once
}

// Entry is what the cache stores under a key: one row, or the rows of a list.
type Entry struct {
	// Row is the row of an entry of one row.
	Row service.Row
	// Rows are the rows of a list, IsList says the entry is one.
	Rows   []service.Row
	IsList bool
	// TTL and Sliding are the policy of the store that stored it.
	TTL     time.Duration
	Sliding bool
	// deadline is when an Absolute entry expires on the account's clock (Unix nanoseconds),
	// set when it is first stored. An entry derived from an Absolute one (a patch applied to
	// it) keeps its deadline: patching a cached row must not extend how long its other cells
	// may be stale. A Sliding entry has none: each hit moves its end.
	deadline int64
}

// DefaultSize is the bound of an account whose Options.CacheSize is 0.
const DefaultSize = 10_000

// New returns an empty cache bounded to size rows (0: DefaultSize, negative:
// no bound) whose entries expire on now: a test's clock, not time.Now, decides when an entry
// is gone.
func New(now func() time.Time, size int, m *telemetry.Meters) *Cache {
	if size == 0 {
		size = DefaultSize
	}
	return &Cache{states: map[string]*keyState{}, clock: accountClock{now}, size: size, meters: m}
}

// entries returns the entries, building them when build is set and there are none yet. The
// caller holds mu to build.
func (c *Cache) entries(build bool) *otter.Cache[string, *Entry] {
	if items := c.items.Load(); items != nil || !build {
		return items
	}
	o := &otter.Options[string, *Entry]{
		ExpiryCalculator: entryExpiry{c.clock},
		Clock:            c.clock,
		// Maintenance (eviction, expiry) runs on the goroutine that reads or writes, so the
		// cache starts no goroutine that outlives the account.
		Executor: func(fn func()) { fn() },
		OnAtomicDeletion: func(e otter.DeletionEvent[string, *Entry]) {
			if e.WasEvicted() {
				c.evicted(e.Key, e.Cause)
			}
		},
	}
	if c.size > 0 {
		o.MaximumWeight = uint64(c.size)
		o.Weigher = func(_ string, e *Entry) uint32 { return e.weight() }
	}
	items := otter.Must(o)
	c.items.Store(items)
	return items
}

// evicted is called for each entry the cache library evicts, for size (otter.CauseOverflow)
// or time (otter.CauseExpiration), under the lock of the entry's bucket: it must not call
// the cache. Drops by writes are not evictions.
func (c *Cache) evicted(_ string, _ otter.DeletionCause) {
	c.evictions.Add(1)
	c.meters.CacheEvicted()
}

// Items returns the entries, nil before the first store (for tests).
func (c *Cache) Items() *otter.Cache[string, *Entry] { return c.entries(false) }

// Evictions returns how many entries the cache library evicted (for tests).
func (c *Cache) Evictions() uint64 { return c.evictions.Load() }

// InFlight returns how many keys have a read or write in flight (for tests).
func (c *Cache) InFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.states) - c.idle
}

// Derive returns an entry of row that keeps e's policy and, for an Absolute entry, its
// deadline: a row derived from a cached one (a patch applied to it) must not extend how long
// its other cells may be stale.
func (e *Entry) Derive(row service.Row) *Entry {
	return &Entry{Row: row, TTL: e.TTL, Sliding: e.Sliding, deadline: e.deadline}
}

// weight is how many rows the entry holds, for the bound: a list weighs its rows, at least 1.
func (e *Entry) weight() uint32 {
	if !e.IsList {
		return 1
	}
	return uint32(min(max(uint64(len(e.Rows)), 1), math.MaxUint32))
}

// accountClock is the account's clock as the cache library reads it. It never ticks: the
// library's periodic clean-up would need a goroutine, and expired entries are removed by the
// maintenance that reads and writes run.
type accountClock struct{ now func() time.Time }

func (k accountClock) NowNano() int64                    { return k.now().UnixNano() }
func (accountClock) Tick(time.Duration) <-chan time.Time { return nil }

// entryExpiry gives each entry its own life: a store's policy is its own, so entries of one
// account may have different times. A Sliding entry lives for its time after it was stored
// or last read; an Absolute one until its deadline, however often it is read.
type entryExpiry struct{ clock accountClock }

func (x entryExpiry) life(e *Entry) time.Duration {
	if e.Sliding {
		return e.TTL
	}
	return time.Duration(e.deadline - x.clock.NowNano())
}

func (x entryExpiry) ExpireAfterCreate(en otter.Entry[string, *Entry]) time.Duration {
	return x.life(en.Value)
}

func (x entryExpiry) ExpireAfterUpdate(en otter.Entry[string, *Entry], _ *Entry) time.Duration {
	return x.life(en.Value)
}

func (x entryExpiry) ExpireAfterRead(en otter.Entry[string, *Entry]) time.Duration {
	if en.Value.Sliding {
		return en.Value.TTL
	}
	return en.ExpiresAfter()
}

func (c *Cache) state(key string) *keyState {
	st := c.states[key]
	if st != nil && st.writers == 0 && st.readers == 0 {
		c.idle--
	}
	if st == nil {
		if n := len(c.free); n > 0 {
			st, c.free = c.free[n-1], c.free[:n-1]
			*st = keyState{last: c.seq}
		} else {
			st = &keyState{last: c.seq}
		}
		c.states[key] = st
	}
	return st
}

// release notes that a call of the key ended. When none of the key is in flight any more,
// its state stays in the map, idle, until more than maxIdle are: then every idle state is
// forgotten, and kept for the next keys (at most maxFree of them), so that a call costs no
// allocation for its state.
func (c *Cache) release(st *keyState) {
	if st.writers != 0 || st.readers != 0 {
		return
	}
	c.idle++
	if c.idle <= maxIdle {
		return
	}
	for k, st := range c.states {
		if st.writers == 0 && st.readers == 0 {
			delete(c.states, k)
			if len(c.free) < maxFree {
				c.free = append(c.free, st)
			}
		}
	}
	c.idle = 0
}

const (
	// maxIdle is the most key states the map keeps with no call in flight: a key written
	// or read again soon (a hot row, its partition's list, the table's list) finds its
	// state there.
	maxIdle = 1024
	// maxFree is the most forgotten key states the cache keeps for reuse: as many as a
	// sweep forgets, so that writes of ever new keys (inserts) reuse them.
	maxFree = maxIdle
)

// Announce notes that a store that caches exists. It must be called before that store's
// first read or write. Until the first call, no entry can be stored, so a write need not
// announce its keys: a write of one row that began before (Announces false) and ends after
// calls EndUnannounced instead of EndWrite.
func (c *Cache) Announce() { c.announced.Store(true) }

// Announces reports whether writes must announce their keys: whether a store that caches
// exists.
func (c *Cache) Announces() bool { return c.announced.Load() }

// EndUnannounced notes that a write of the keys, sent without BeginWrite because no store
// cached when it began, returned after one appeared. It counts as a write event of each key
// (a read that overlapped it stores nothing), drops what the key holds, and marks a write of
// the key still in flight as overlapped, since that write may have been applied before this
// one: so nothing older than this write stays cached once it has returned.
func (c *Cache) EndUnannounced(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	for _, k := range keys {
		st := c.state(k)
		st.last = c.seq
		if st.writers > 0 {
			st.overlapped = true
		}
		c.remove(k)
		c.release(st)
	}
}

// Get returns the entry under key, moving a Sliding one's end. It takes no lock of its own.
func (c *Cache) Get(key string) (*Entry, bool) {
	items := c.entries(false)
	if items == nil {
		return nil, false
	}
	return items.GetIfPresent(key)
}

// current is the entry under key as a write that ends sees it, without counting as a read.
// The caller holds mu.
func (c *Cache) current(key string) *Entry {
	items := c.entries(false)
	if items == nil {
		return nil
	}
	if en, ok := items.GetEntryQuietly(key); ok && !en.HasExpired() {
		return en.Value
	}
	return nil
}

// BeginRead notes that a read of key starts and returns the key's event counter.
func (c *Cache) BeginRead(key string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(key)
	st.readers++
	return st.last
}

// EndRead notes that a read of key ended. When e is not nil and no write of the key started
// or ended since BeginRead returned since, e is stored.
func (c *Cache) EndRead(key string, since uint64, e *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(key)
	st.readers--
	if e != nil && st.writers == 0 && st.last == since {
		c.store(key, e)
	}
	c.release(st)
}

// BeginWrite notes that a write of the keys is about to be sent. It must follow every check
// the call makes itself, so that a call refused before sending changes nothing here.
func (c *Cache) BeginWrite(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	for _, k := range keys {
		st := c.state(k)
		if st.writers > 0 {
			st.overlapped = true
		}
		st.writers++
		st.last = c.seq
	}
}

// EndWrite notes that the write of the keys returned. For each key, put returns the entry
// to store when the write succeeded and wrote a version this process can cache; nil means
// drop. put sees the entry the cache holds now (nil if none). A key whose write overlapped
// another is dropped whatever put says.
func (c *Cache) EndWrite(keys []string, put func(key string, current *Entry) *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	for _, k := range keys {
		st := c.state(k)
		st.writers--
		st.last = c.seq
		var e *Entry
		if put != nil && !st.overlapped {
			e = put(k, c.current(k))
		}
		if e != nil {
			c.store(k, e)
		} else {
			c.remove(k)
		}
		if st.writers == 0 {
			st.overlapped = false
		}
		c.release(st)
	}
}

// Drop removes the keys' entries, outside any write bookkeeping.
func (c *Cache) Drop(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.remove(k)
	}
}

// remove drops key's entry. The caller holds mu.
func (c *Cache) remove(key string) {
	if items := c.entries(false); items != nil {
		items.Invalidate(key)
	}
}

// store keeps e under key, replacing what the key held. An Absolute entry gets its deadline
// when first stored; one whose deadline has passed (derived from an entry that expired
// meanwhile) is dropped instead. The caller holds mu.
func (c *Cache) store(key string, e *Entry) {
	if !e.Sliding {
		now := c.clock.NowNano()
		if e.deadline == 0 {
			e.deadline = now + int64(e.TTL)
		} else if e.deadline <= now {
			c.remove(key)
			return
		}
	}
	c.entries(true).Set(key, e)
}

// Cache keys. The cache belongs to one account, so a key names the table (the service
// compares table names without regard to case) and the row or list within it. Entries hold
// rows, whatever the store's type, so every store of a table shares them and every write
// through any of them keeps them coherent.
//
// Keys are the fixed parts of a table's cache keys, made once per store.
type Keys struct{ entity, partition, table string }

// NewKeys returns the keys of a table. table is the name as the account tells tables apart:
// in lower case on Table Storage, whose names ignore case, as given on Cosmos DB for Table.
func NewKeys(table string) Keys {
	t := table
	return Keys{entity: t + "\x00e\x00", partition: t + "\x00p\x00", table: t + "\x00a"}
}

// Entity is the key of one row.
func (k Keys) Entity(pk, rk string) string { return k.entity + pk + "\x00" + rk }

// Partition is the key of a partition's list.
func (k Keys) Partition(pk string) string { return k.partition + pk }

// Table is the key of the whole table's list.
func (k Keys) Table() string { return k.table }

// Row returns the keys a write of one row touches, as Write does for one row: the row's own,
// its partition's list and the table's list. The row's and the partition's keys share one
// string, so that the keys cost one allocation, and the array costs none when the caller
// keeps it on its stack.
func (k Keys) Row(pk, rk string) [3]string {
	var b strings.Builder
	b.Grow(len(k.entity) + len(pk) + 1 + len(rk) + len(k.partition) + len(pk))
	b.WriteString(k.entity)
	b.WriteString(pk)
	b.WriteByte(0)
	b.WriteString(rk)
	e := b.Len()
	b.WriteString(k.partition)
	b.WriteString(pk)
	both := b.String()
	return [3]string{both[:e], both[e:], k.table}
}

// Write returns the keys a write of rows touches: each row and the lists that hold it, the
// first row's own key first.
func (k Keys) Write(rows ...[2]string) []string {
	if len(rows) == 1 {
		keys := k.Row(rows[0][0], rows[0][1])
		return keys[:]
	}
	keys := make([]string, 0, 2*len(rows)+1)
	var parts map[string]bool
	if len(rows) > 8 {
		parts = make(map[string]bool)
	}
	for i, r := range rows {
		keys = append(keys, k.Entity(r[0], r[1]))
		seen := false
		if parts != nil {
			seen = parts[r[0]]
			parts[r[0]] = true
		} else {
			for _, q := range rows[:i] {
				if q[0] == r[0] {
					seen = true
					break
				}
			}
		}
		if !seen {
			keys = append(keys, k.Partition(r[0]))
		}
	}
	return append(keys, k.Table())
}

// Written is a row's new version as the cache keeps it: the cells written, with the
// ETag and Timestamp the service returned.
func Written(row service.Row, w service.Written) *service.Row {
	r := row.Clone()
	r.ETag, r.Timestamp = w.ETag, w.Timestamp
	return &r
}
