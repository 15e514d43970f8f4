package memservice

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// An Option configures a Service: WithClock, WithEmptyPages, WithThrottling.
//
// The service takes functional options, where the library's accounts and stores take one
// *Options (nil for the defaults), because it is a test double, not a program's
// configuration: each option is an independent toggle (a pinned clock, injected empty pages,
// a throttling model) that most tests leave off and a few switch on one at a time, as
// grpc.NewServer takes its ServerOptions, so that memservice.New() is the whole call in the
// common case. Each option sets a setting of its own, none depends on another, and they act
// only when New applies them.
type Option func(*Service)

// WithClock makes the service read the time from now instead of time.Now. Tests pin the
// clock with it; the service still makes row timestamps strictly increasing when the clock
// stands still or goes back.
func WithClock(now func() time.Time) Option {
	return func(s *Service) {
		if now != nil {
			s.now = now
		}
	}
}

// WithSharedReads makes GetRow and Query hand out the stored rows' property lists instead of
// copying them, which halves the cost of a point read. The caller must then treat every
// returned row as read-only, as [service.Tables] asks: changing a returned row's Properties
// in place would change the stored row. Appending to them is safe (their capacity is their
// length, so append copies). inmemory.NewAccount turns it on, since the engine never changes
// a row it reads. It is off by default.
func WithSharedReads() Option {
	return func(s *Service) { s.shareReads = true }
}

// WithEmptyPages makes every k-th query (counted over the whole service) answer a page with
// no rows and a continuation to the same position, as the real service may when a page hits
// its time limit or a partition boundary. The engine must keep asking. k < 2 turns the
// injection off, since k = 1 would never make progress. It is off by default.
func WithEmptyPages(k int) Option {
	return func(s *Service) {
		if k < 2 {
			k = 0
		}
		s.emptyEvery = int64(k)
	}
}

// Service is an in-memory table and blob service. The zero value is not usable; call New.
type Service struct {
	now        func() time.Time
	emptyEvery int64
	shareReads bool
	cosmos     bool // behave as Azure Cosmos DB for Table (Cosmos)
	queries    atomic.Int64
	throttle   *throttle   // nil: no throttling (WithThrottling)
	journal    journal.Log // nil: changes are not logged (the emulator's data directory sets it)

	mu     sync.Mutex // held to create or delete a table
	tables sync.Map   // tableKey(name) → *table

	stampMu   sync.Mutex
	lastStamp time.Time // the latest row timestamp handed out

	blobMu     sync.RWMutex
	containers map[string]*container
	blobSeq    uint64 // numbers blob ETags
}

var (
	_ service.Tables = (*Service)(nil)
	_ service.Blobs  = (*Service)(nil)
)

// New returns an empty service: no tables, no containers, the system clock, no injected
// empty pages and no throttling unless opts say otherwise (see [Option] for why they are
// functional options). Options apply in order; one given twice takes its last value.
func New(opts ...Option) *Service {
	s := &Service{
		now:        time.Now,
		containers: make(map[string]*container),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// stamp returns the timestamp of a new row write: the clock at the service's 100 ns
// precision, moved past the previous stamp when the clock did not advance, so that ETags
// always change, also between tables. The caller holds the lock of the row's partition for
// writing, so that a partition's rows are stamped in the order they are written.
func (s *Service) stamp() time.Time {
	s.stampMu.Lock()
	defer s.stampMu.Unlock()
	t := s.now().UTC().Truncate(100 * time.Nanosecond).Round(0)
	if !t.After(s.lastStamp) {
		t = s.lastStamp.Add(100 * time.Nanosecond)
	}
	s.lastStamp = t
	return t
}
