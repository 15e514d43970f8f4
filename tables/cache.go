package tables

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/telemetry"

	"github.com/maypok86/otter/v2"

	"github.com/unified-data/gotables/tables/service"
)

// CachePolicy is a read-cache policy: [Disabled] (the default), [Sliding] or [Absolute].
// The zero value means "not set": for Options.Cache that is Disabled, for
// StoreOptions.Cache the account's policy.
//
// The cache is one per account, shared by every store of it. It serves One, Exists, List and
// ListAll; queries, streams, pages and counts always ask the table. Within one process it
// promises:
//
//   - Once a write or delete made through any store of the account has returned, no read
//     answers an older version. A read that overlaps a write of the same row may return what
//     it fetched, but does not leave it cached; overlapping writes of one row leave nothing
//     cached.
//   - A write that fails or is cancelled drops the row and its partition's lists; a call
//     refused before anything was sent drops nothing. A batch drops what it touches, and
//     DeletePartition every row it listed, also when it fails part-way.
//   - A Patch keeps a cached entity, with the patched values, only when that is exact: the
//     entity was cached when the patch was sent, nothing replaced it since, and every patched
//     field is a top-level plain column that reads back as the value set. The entry takes the
//     patch's ETag only when the patch was conditional on the cached version (otherwise a
//     Strict write of it meets a conflict rather than overwrite a change it has not seen).
//     Any other patch drops the entity.
//   - Entries hold rows, not values: every hit decodes a fresh copy, so no caller can change
//     what another gets.
//   - Stores whose own policy is Disabled keep it coherent too.
//   - The outcome verbs' calls on one row take turns (see Store.turn), so a
//     Mutate reads, cached, the version the previous call of the process wrote. Its attempt
//     fails only when another process wrote since; the failed write drops the entry, and the
//     next attempt reads the table.
//
// Writes made through another account or by another process are seen only when an entry
// expires: use Disabled in secondary processes, and Absolute with a short time in the
// primary one. The cache holds at most Options.CacheSize rows; an entry it evicts to stay
// within them is a miss, never an older version. It lives in this process and cannot fail:
// a store call's error is always the storage error.
type CachePolicy struct {
	ttl     time.Duration
	sliding bool
	set     bool
}

// Disabled keeps nothing in the read cache: every read goes to the table. It is the
// default, because a row another process writes is seen only when a cached entry expires.
var Disabled = CachePolicy{set: true}

// Sliding keeps a read or written row until it has not been read for d; d <= 0 means
// Disabled. For d over a second the end moves in steps of a second, so an entry may end up
// to a second early (a miss). Use it only when this process is the table's only writer:
// another process's writes are never seen while the entry keeps being read.
func Sliding(d time.Duration) CachePolicy {
	if d <= 0 {
		return Disabled
	}
	return CachePolicy{ttl: d, sliding: true, set: true}
}

// Absolute keeps a read or written row for d after it was stored, however often it is
// read: the bound on how stale a write by another process can be. d <= 0 means Disabled.
func Absolute(d time.Duration) CachePolicy {
	if d <= 0 {
		return Disabled
	}
	return CachePolicy{ttl: d, set: true}
}

// enabled reports whether the policy keeps anything.
func (p CachePolicy) enabled() bool { return p.ttl > 0 }

// String describes the policy.
func (p CachePolicy) String() string {
	switch {
	case !p.set:
		return "Default"
	case !p.enabled():
		return "Disabled"
	case p.sliding:
		return "Sliding(" + p.ttl.String() + ")"
	}
	return "Absolute(" + p.ttl.String() + ")"
}

// readCache is the read cache of one account, shared by all its stores. It holds rows (cells,
// keys, ETag and Timestamp), not entities, so a hit decodes a fresh value: a caller can never
// modify what another caller gets.
//
// Coherence. Every write announces the keys it touches before it is sent and again when it
// has returned (beginWrite / endWrite), whatever the policy of the store that writes, so a
// store with caching disabled still keeps the others coherent. Each announcement moves the
// key's event counter. A read notes the counter when it starts and may store what it fetched
// only if no write of the key started or ended meanwhile (so a read overlapping a write
// never leaves the older version behind). A write that ends stores the version it wrote
// only if it succeeded and no other write of the key overlapped it; otherwise it drops the
// key, so the next read goes to the table.
//
// Entries. The entries live in an otter cache (W-TinyLFU, bounded by Options.CacheSize in
// rows), which expires them on the account's clock. mu orders every store into it and every
// drop with the coherence bookkeeping; a hit only looks the key up, without mu. An entry the
// library evicts (for size or time) is a miss like any other: the next read fetches the row
// and stores it under the same rules, so no eviction can make a read older.
type readCache struct {
	mu     sync.Mutex
	seq    uint64
	states map[string]*keyState
	free   []*keyState // released states, for reuse
	clock  accountClock
	size   int // the bound in rows (Options.CacheSize); negative: none
	// items is built by the first store, so an account that never caches has none.
	items atomic.Pointer[otter.Cache[string, *entry]]
	// evictions counts the entries the cache library evicted (see evicted), and meters
	// reports them as the account's metric.
	evictions atomic.Uint64
	meters    *telemetry.Meters
}

// keyState tracks the writes and reads of one key that are in flight. It exists only while
// one is, so the map stays as small as the concurrency.
type keyState struct {
	writers, readers int
	last             uint64 // the cache's seq at the key's last write event
	overlapped       bool   // two writes of the key were in flight at once
}

// entry is what the cache stores under a key: one row, or the rows of a list.
type entry struct {
	row     service.Row
	rows    []service.Row
	isList  bool
	ttl     time.Duration
	sliding bool
	// deadline is when an Absolute entry expires on the account's clock (Unix nanoseconds),
	// set when it is first stored. An entry derived from an Absolute one (a patch applied to
	// it) keeps its deadline: patching a cached row must not extend how long its other cells
	// may be stale. A Sliding entry has none: each hit moves its end.
	deadline int64
}

// defaultCacheSize is the bound of an account whose Options.CacheSize is 0.
const defaultCacheSize = 10_000

// newReadCache returns an empty cache bounded to size rows (0: defaultCacheSize, negative:
// no bound) whose entries expire on now: a test's clock, not time.Now, decides when an entry
// is gone.
func newReadCache(now func() time.Time, size int, m *telemetry.Meters) *readCache {
	if size == 0 {
		size = defaultCacheSize
	}
	return &readCache{states: map[string]*keyState{}, clock: accountClock{now}, size: size, meters: m}
}

// entries returns the entries, building them when build is set and there are none yet. The
// caller holds mu to build.
func (c *readCache) entries(build bool) *otter.Cache[string, *entry] {
	if items := c.items.Load(); items != nil || !build {
		return items
	}
	o := &otter.Options[string, *entry]{
		ExpiryCalculator: entryExpiry{c.clock},
		Clock:            c.clock,
		// Maintenance (eviction, expiry) runs on the goroutine that reads or writes, so the
		// cache starts no goroutine that outlives the account.
		Executor: func(fn func()) { fn() },
		OnAtomicDeletion: func(e otter.DeletionEvent[string, *entry]) {
			if e.WasEvicted() {
				c.evicted(e.Key, e.Cause)
			}
		},
	}
	if c.size > 0 {
		o.MaximumWeight = uint64(c.size)
		o.Weigher = func(_ string, e *entry) uint32 { return e.weight() }
	}
	items := otter.Must(o)
	c.items.Store(items)
	return items
}

// evicted is called for each entry the cache library evicts, for size (otter.CauseOverflow)
// or time (otter.CauseExpiration), under the lock of the entry's bucket: it must not call
// the cache. Drops by writes are not evictions.
func (c *readCache) evicted(_ string, _ otter.DeletionCause) {
	c.evictions.Add(1)
	c.meters.CacheEvicted()
}

// weight is how many rows the entry holds, for the bound: a list weighs its rows, at least 1.
func (e *entry) weight() uint32 {
	if !e.isList {
		return 1
	}
	return uint32(min(max(uint64(len(e.rows)), 1), math.MaxUint32))
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

func (x entryExpiry) life(e *entry) time.Duration {
	if e.sliding {
		return e.ttl
	}
	return time.Duration(e.deadline - x.clock.NowNano())
}

func (x entryExpiry) ExpireAfterCreate(en otter.Entry[string, *entry]) time.Duration {
	return x.life(en.Value)
}

func (x entryExpiry) ExpireAfterUpdate(en otter.Entry[string, *entry], _ *entry) time.Duration {
	return x.life(en.Value)
}

func (x entryExpiry) ExpireAfterRead(en otter.Entry[string, *entry]) time.Duration {
	if en.Value.sliding {
		return en.Value.ttl
	}
	return en.ExpiresAfter()
}

func (c *readCache) state(key string) *keyState {
	st := c.states[key]
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

// release forgets the key's state when no call of it is in flight, and keeps the state for
// the next key (at most maxFree of them), so that a call costs no allocation for it.
func (c *readCache) release(key string, st *keyState) {
	if st.writers == 0 && st.readers == 0 {
		delete(c.states, key)
		if len(c.free) < maxFree {
			c.free = append(c.free, st)
		}
	}
}

// maxFree is the most released key states the cache keeps for reuse.
const maxFree = 64

// get returns the entry under key, moving a Sliding one's end. It takes no lock of its own.
func (c *readCache) get(key string) (*entry, bool) {
	items := c.entries(false)
	if items == nil {
		return nil, false
	}
	return items.GetIfPresent(key)
}

// current is the entry under key as a write that ends sees it, without counting as a read.
// The caller holds mu.
func (c *readCache) current(key string) *entry {
	items := c.entries(false)
	if items == nil {
		return nil
	}
	if en, ok := items.GetEntryQuietly(key); ok && !en.HasExpired() {
		return en.Value
	}
	return nil
}

// beginRead notes that a read of key starts and returns the key's event counter.
func (c *readCache) beginRead(key string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(key)
	st.readers++
	return st.last
}

// endRead notes that a read of key ended. When e is not nil and no write of the key started
// or ended since beginRead returned since, e is stored.
func (c *readCache) endRead(key string, since uint64, e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(key)
	st.readers--
	if e != nil && st.writers == 0 && st.last == since {
		c.store(key, e)
	}
	c.release(key, st)
}

// beginWrite notes that a write of the keys is about to be sent. It must follow every check
// the call makes itself, so that a call refused before sending changes nothing here.
func (c *readCache) beginWrite(keys []string) {
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

// endWrite notes that the write of the keys returned. For each key, put returns the entry
// to store when the write succeeded and wrote a version this process can cache; nil means
// drop. put sees the entry the cache holds now (nil if none). A key whose write overlapped
// another is dropped whatever put says.
func (c *readCache) endWrite(keys []string, put func(key string, current *entry) *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	for _, k := range keys {
		st := c.state(k)
		st.writers--
		st.last = c.seq
		var e *entry
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
		c.release(k, st)
	}
}

// drop removes the keys' entries, outside any write bookkeeping.
func (c *readCache) drop(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.remove(k)
	}
}

// remove drops key's entry. The caller holds mu.
func (c *readCache) remove(key string) {
	if items := c.entries(false); items != nil {
		items.Invalidate(key)
	}
}

// store keeps e under key, replacing what the key held. An Absolute entry gets its deadline
// when first stored; one whose deadline has passed (derived from an entry that expired
// meanwhile) is dropped instead. The caller holds mu.
func (c *readCache) store(key string, e *entry) {
	if !e.sliding {
		now := c.clock.NowNano()
		if e.deadline == 0 {
			e.deadline = now + int64(e.ttl)
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
func (s *Store[T]) entityKey(pk, rk string) string {
	return s.keys.entity + pk + "\x00" + rk
}

func (s *Store[T]) partitionKey(pk string) string { return s.keys.partition + pk }

func (s *Store[T]) tableKey() string { return s.keys.table }

// cacheKeys are the fixed parts of a store's cache keys, made once per store.
type cacheKeys struct{ entity, partition, table string }

func newCacheKeys(cacheTable string) cacheKeys {
	return cacheKeys{entity: cacheTable + "\x00e\x00", partition: cacheTable + "\x00p\x00", table: cacheTable + "\x00a"}
}

// writeKeys are the keys a write of rows touches: each row and the lists that hold it.
func (s *Store[T]) writeKeys(rows ...[2]string) []string {
	keys := make([]string, 0, 2*len(rows)+1)
	var parts map[string]bool
	if len(rows) > 8 {
		parts = make(map[string]bool)
	}
	for i, r := range rows {
		keys = append(keys, s.entityKey(r[0], r[1]))
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
			keys = append(keys, s.partitionKey(r[0]))
		}
	}
	return append(keys, s.tableKey())
}

// cachedRow returns a fresh copy of the cached row under key, if the store caches.
func (s *Store[T]) cachedRow(key string) (*service.Row, bool) {
	if !s.policy.enabled() {
		return nil, false
	}
	e, ok := s.acct.cache.get(key)
	if !ok || e.isList {
		return nil, false
	}
	return &e.row, true
}

// readThrough runs fetch and, when the store caches and no write of key overlapped it,
// stores what fetch returned. fetch returns nil for "nothing to store".
func (s *Store[T]) readThrough(key string, fetch func() *entry) {
	if !s.policy.enabled() {
		fetch()
		return
	}
	since := s.acct.cache.beginRead(key)
	e := fetch()
	if e != nil {
		e.ttl, e.sliding = s.policy.ttl, s.policy.sliding
	}
	s.acct.cache.endRead(key, since, e)
}

// A write through a store tells the read cache about itself in three visible steps:
//
//	keys := s.writeKeys(...)
//	s.beginWrite(keys)                 // after the call's own checks: a refused call changes nothing
//	w, err := s.acct.tables.Write(...) // the service call
//	s.endWrite(keys, err, &row, w)     // keeps the row's new version, or drops what it touched
//
// keys[0] is the row's own key; every other key the write touched (its partition's lists,
// other rows of a transaction) is dropped, and so is everything when the write failed.

// beginWrite notes that a write of the keys is about to be sent.
func (s *Store[T]) beginWrite(keys []string) { s.acct.cache.beginWrite(keys) }

// endWrite notes that the write of the keys returned err. After a success, when the store
// caches and written is not nil, the row's own key keeps written with w's ETag and
// Timestamp as the row's new version (nil written drops it, as for a delete or a
// transaction whose rows the cache does not keep).
func (s *Store[T]) endWrite(keys []string, err error, written *service.Row, w service.Written) {
	var next func(*entry) *entry
	if err == nil && written != nil && s.policy.enabled() {
		next = func(*entry) *entry {
			return &entry{row: *cachedWrite(*written, w), ttl: s.policy.ttl, sliding: s.policy.sliding}
		}
	}
	s.endWriteWith(keys, err, next)
}

// endWriteWith is endWrite for a write whose cached version depends on what the cache holds
// when the write returns (Patch): after a success, next receives the row's current entry
// and returns the entry to store (nil drops the row).
func (s *Store[T]) endWriteWith(keys []string, err error, next func(current *entry) *entry) {
	if err != nil && s.policy.enabled() {
		s.acct.logger().Debug("unified tables: a write failed; the read cache dropped what it touched",
			"table", s.table, "entries", len(keys), "error", callerr.KindName(err))
	}
	var put func(string, *entry) *entry
	if err == nil && next != nil && s.policy.enabled() {
		own := keys[0]
		put = func(k string, current *entry) *entry {
			if k != own {
				return nil
			}
			return next(current)
		}
	}
	s.acct.cache.endWrite(keys, put)
}

// cachedWrite is a row's new version as the cache keeps it: the cells written, with the
// ETag and Timestamp the service returned.
func cachedWrite(row service.Row, w service.Written) *service.Row {
	r := row.Clone()
	r.ETag, r.Timestamp = w.ETag, w.Timestamp
	return &r
}
