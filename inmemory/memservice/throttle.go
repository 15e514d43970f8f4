package memservice

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Throttling is a throttling model for the table service: token buckets that refill at a
// rate of entities per second, one for the account and one per partition of each table, as
// Azure's scale targets are stated. A request that finds too few tokens is refused before it
// does anything, with 503 ServerBusy, as Azure answers a client past its targets; it changes
// nothing and may be sent again. The zero value throttles nothing.
//
// What a request costs, in entities, from each bucket it draws on:
//
//   - a row read or write: 1, from its partition's bucket and the account's;
//   - a transaction: its number of actions, from its partition's bucket and the account's;
//   - a query page: 1 from the account's bucket to start, then one per row returned
//     beyond the first (a bucket may go below zero, and then refuses until it refills);
//   - a table operation (create, delete, exists, ping): 1 from the account's bucket.
//
// A request costing more than a bucket can hold passes when the bucket is full. Blob
// operations are not throttled.
type Throttling struct {
	// AccountRate is the entities per second the account serves; 0 means no account limit.
	AccountRate float64
	// PartitionRate is the entities per second one partition of a table serves; 0 means no
	// partition limit.
	PartitionRate float64
	// Burst is how long a bucket can save up for: an idle bucket holds Burst × rate tokens.
	// 0 means one second.
	Burst time.Duration
	// Clock is the time the buckets refill by; nil means time.Now. It is not the service's
	// clock (WithClock), which tests often pin: a pinned clock would never refill.
	Clock func() time.Time
}

// AzureTargets is Azure's published scalability targets for table storage, as a throttling
// model: 20,000 entities per second for the account and 2,000 per partition, each bucket
// saving up for one second.
var AzureTargets = Throttling{AccountRate: 20_000, PartitionRate: 2_000}

// WithThrottling makes the service throttle its table requests under the model t (see
// Throttling). Tests use it to see how their code behaves near the service's limits:
// with the in-memory backend's default retries, a throttled call backs off and is sent
// again, as it is on Azure.
func WithThrottling(t Throttling) Option {
	return func(s *Service) {
		if t.AccountRate <= 0 && t.PartitionRate <= 0 {
			s.throttle = nil
			return
		}
		s.throttle = newThrottle(t)
	}
}

// Throttled returns the number of requests the throttling model refused so far.
func (s *Service) Throttled() int64 {
	if s.throttle == nil {
		return 0
	}
	return s.throttle.refused.Load()
}

// bucket is a token bucket. Its fields are guarded by the throttle's lock.
type bucket struct {
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// throttle applies a Throttling.
type throttle struct {
	model   Throttling
	refused atomic.Int64

	mu         sync.Mutex
	account    bucket
	partitions map[partitionKey]*bucket
}

type partitionKey struct{ table, pk string }

// pruneAt is the number of partition buckets above which full ones are forgotten (a full
// bucket and a missing one mean the same).
const pruneAt = 10_000

func newThrottle(t Throttling) *throttle {
	if t.Burst <= 0 {
		t.Burst = time.Second
	}
	if t.Clock == nil {
		t.Clock = time.Now
	}
	th := &throttle{model: t, partitions: map[partitionKey]*bucket{}}
	th.account = bucket{tokens: th.capacity(t.AccountRate), at: t.Clock()}
	return th
}

func (th *throttle) capacity(rate float64) float64 { return rate * th.model.Burst.Seconds() }

// refill brings b up to date at now.
func (th *throttle) refill(b *bucket, rate float64, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(th.capacity(rate), b.tokens+rate*d.Seconds())
	}
	b.at = now
}

// enough reports whether b can pay n now.
func (th *throttle) enough(b *bucket, rate, n float64) bool {
	return b.tokens >= min(n, th.capacity(rate))
}

// admit takes n tokens from the account's bucket and, when table is not "", from the
// partition's, or refuses the request with 503 ServerBusy and takes nothing.
func (th *throttle) admit(table, pk string, n int) error {
	if th == nil {
		return nil
	}
	cost := float64(n)
	th.mu.Lock()
	defer th.mu.Unlock()
	now := th.model.Clock()
	if r := th.model.AccountRate; r > 0 {
		th.refill(&th.account, r, now)
		if !th.enough(&th.account, r, cost) {
			th.refused.Add(1)
			return errAccountBusy()
		}
	}
	var pb *bucket
	if r := th.model.PartitionRate; r > 0 && table != "" {
		k := partitionKey{strings.ToLower(table), pk}
		pb = th.partitions[k]
		if pb == nil {
			if len(th.partitions) >= pruneAt {
				th.prune(now)
			}
			pb = &bucket{tokens: th.capacity(r), at: now}
			th.partitions[k] = pb
		}
		th.refill(pb, r, now)
		if !th.enough(pb, r, cost) {
			th.refused.Add(1)
			return errPartitionBusy()
		}
		pb.tokens -= cost
	}
	if th.model.AccountRate > 0 {
		th.account.tokens -= cost
	}
	return nil
}

// charge takes n more tokens from the account's bucket, for work already done (the rows of
// a query page); the bucket may go below zero.
func (th *throttle) charge(n int) {
	if th == nil || n <= 0 || th.model.AccountRate <= 0 {
		return
	}
	th.mu.Lock()
	defer th.mu.Unlock()
	th.refill(&th.account, th.model.AccountRate, th.model.Clock())
	th.account.tokens -= float64(n)
}

// prune forgets the partition buckets that are full again.
func (th *throttle) prune(now time.Time) {
	r := th.model.PartitionRate
	for k, b := range th.partitions {
		th.refill(b, r, now)
		if b.tokens >= th.capacity(r) {
			delete(th.partitions, k)
		}
	}
}

// errAccountBusy is the answer past the account's target.
func errAccountBusy() error {
	return statusError(http.StatusServiceUnavailable, "ServerBusy", "Operations per second is over the account limit.")
}

// errPartitionBusy is the answer past a partition's target.
func errPartitionBusy() error {
	return statusError(http.StatusServiceUnavailable, "ServerBusy", "The server is busy.")
}
