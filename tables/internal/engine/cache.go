package engine

import (
	"time"

	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

// Policy is a store's read-cache policy as the engine applies it: entries live for ttl
// (0: nothing is kept), from their last read when sliding.
type Policy struct {
	TTL     time.Duration
	Sliding bool
}

// Enabled reports whether the policy keeps anything.
func (p Policy) Enabled() bool { return p.TTL > 0 }

// CachedRow returns a fresh copy of the cached row under key, if the store caches.
func (s *Table) CachedRow(key string) (*service.Row, bool) {
	if !s.Policy.Enabled() {
		return nil, false
	}
	e, ok := s.Acct.Cache.Get(key)
	if !ok || e.IsList {
		return nil, false
	}
	return &e.Row, true
}

// ReadThrough runs fetch and, when the store caches and no write of key overlapped it,
// stores what fetch returned. fetch returns nil for "nothing to store".
func (s *Table) ReadThrough(key string, fetch func() *cache.Entry) {
	if !s.Policy.Enabled() {
		fetch()
		return
	}
	since := s.Acct.Cache.BeginRead(key)
	e := fetch()
	if e != nil {
		e.TTL, e.Sliding = s.Policy.TTL, s.Policy.Sliding
	}
	s.Acct.Cache.EndRead(key, since, e)
}

// A write through a store tells the read cache about itself in three visible steps:
//
//	keys := s.WriteKeys(...)
//	s.BeginWrite(keys)                  // after the call's own checks: a refused call changes nothing
//	w, err := s.Acct.Tables.Write(...)  // the service call
//	s.EndWrite(keys, err, &row, w)      // keeps the row's new version, or drops what it touched
//
// keys[0] is the row's own key; every other key the write touched (its partition's lists,
// other rows of a transaction) is dropped, and so is everything when the write failed. A
// write of one row uses BeginRowWrite and EndRowWrite instead, which cost nothing while no
// store of the account caches.

// BeginWrite notes that a write of the keys is about to be sent.
func (s *Table) BeginWrite(keys []string) { s.Acct.Cache.BeginWrite(keys) }

// EndWrite notes that the write of the keys returned err. After a success, when the store
// caches and written is not nil, the row's own key keeps written with w's ETag and
// Timestamp as the row's new version (nil written drops it, as for a delete or a
// transaction whose rows the cache does not keep).
func (s *Table) EndWrite(keys []string, err error, written *service.Row, w service.Written) {
	var next func(*cache.Entry) *cache.Entry
	if err == nil && written != nil && s.Policy.Enabled() {
		next = func(*cache.Entry) *cache.Entry {
			return &cache.Entry{Row: *cache.Written(*written, w), TTL: s.Policy.TTL, Sliding: s.Policy.Sliding}
		}
	}
	s.EndWriteWith(keys, err, next)
}

// BeginRowWrite is BeginWrite for a write of one row (pk, rk), the single-row paths' own:
// while no store of the account caches (cache.Cache.Announces), nothing can be cached, so
// the keys are neither made nor announced (announced is false) and EndRowWrite does what a
// caching store that appeared meanwhile needs.
func (s *Table) BeginRowWrite(pk, rk string) (keys [3]string, announced bool) {
	if !s.Acct.Cache.Announces() {
		return keys, false
	}
	keys = s.Keys.Row(pk, rk)
	s.Acct.Cache.BeginWrite(keys[:])
	return keys, true
}

// EndRowWrite ends a write BeginRowWrite began, as EndWrite does. An unannounced write
// changes nothing in the cache, unless a store that caches appeared while it was in flight:
// then its keys are dropped (cache.Cache.EndUnannounced).
func (s *Table) EndRowWrite(keys *[3]string, announced bool, pk, rk string, err error, written *service.Row, w service.Written) {
	if announced {
		s.EndWrite(keys[:], err, written, w)
		return
	}
	if s.Acct.Cache.Announces() {
		k := s.Keys.Row(pk, rk)
		s.Acct.Cache.EndUnannounced(k[:])
	}
}

// EndWriteWith is EndWrite for a write whose cached version depends on what the cache holds
// when the write returns (Patch): after a success, next receives the row's current entry
// and returns the entry to store (nil drops the row).
func (s *Table) EndWriteWith(keys []string, err error, next func(current *cache.Entry) *cache.Entry) {
	if err != nil && s.Policy.Enabled() {
		s.Acct.Logger().Debug("unified tables: a write failed; the read cache dropped what it touched",
			"table", s.Name, "entries", len(keys), "error", callerr.KindName(err))
	}
	var put func(string, *cache.Entry) *cache.Entry
	if err == nil && next != nil && s.Policy.Enabled() {
		own := keys[0]
		put = func(k string, current *cache.Entry) *cache.Entry {
			if k != own {
				return nil
			}
			return next(current)
		}
	}
	s.Acct.Cache.EndWrite(keys, put)
}

// Cache keys of the store's table (package cache): a row's, a partition's list, the table's
// list, and those a write of rows touches.
func (s *Table) EntityKey(pk, rk string) string { return s.Keys.Entity(pk, rk) }

// PartitionKey is the cache key of a partition's list.
func (s *Table) PartitionKey(pk string) string { return s.Keys.Partition(pk) }

// TableKey is the cache key of the whole table's list.
func (s *Table) TableKey() string { return s.Keys.Table() }

// WriteKeys are the cache keys a write of rows touches (cache.Keys.Write).
func (s *Table) WriteKeys(rows ...[2]string) []string { return s.Keys.Write(rows...) }
