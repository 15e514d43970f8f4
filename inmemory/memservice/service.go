package memservice

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// An Option configures a Service.
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
	queries    atomic.Int64
	throttle   *throttle // nil: no throttling (WithThrottling)

	mu        sync.RWMutex
	tables    map[string]*table // by lower-case name
	lastStamp time.Time         // the latest row timestamp handed out

	blobMu     sync.RWMutex
	containers map[string]*container
	blobSeq    uint64 // numbers blob ETags
}

var (
	_ service.Tables = (*Service)(nil)
	_ service.Blobs  = (*Service)(nil)
)

// New returns an empty service: no tables, no containers, the system clock, no injected
// empty pages and no throttling unless opts say otherwise.
func New(opts ...Option) *Service {
	s := &Service{
		now:        time.Now,
		tables:     make(map[string]*table),
		containers: make(map[string]*container),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// stamp returns the timestamp of a new row write: the clock at the service's 100 ns
// precision, moved past the previous stamp when the clock did not advance, so that ETags
// always change. The caller holds s.mu.
func (s *Service) stamp() time.Time {
	t := s.now().UTC().Truncate(100 * time.Nanosecond).Round(0)
	if !t.After(s.lastStamp) {
		t = s.lastStamp.Add(100 * time.Nanosecond)
	}
	s.lastStamp = t
	return t
}
