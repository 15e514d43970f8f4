package tables

import (
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"
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
//   - The outcome verbs' calls on one row take turns (see abstractions.TryMutate), so a
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

// rule is the policy as the engine applies it.
func (p CachePolicy) rule() engine.Policy { return engine.Policy{TTL: p.ttl, Sliding: p.sliding} }

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
