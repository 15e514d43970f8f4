package tables

import (
	"sync"
	"time"
)

// DefaultBatchParallelism is the number of partitions' transactions a batch call has out at
// once when Options.BatchParallelism is 0. Measured on Azurite (one emulator process on a
// 2-core machine; 10,000 new rows over 10 partitions): 6.0 s one after another, 3.6 s at 2,
// 3.4 s at 4, 2.8 s at 8 and 3.3 s at 16. The real service serves partitions on many
// servers and has longer round trips, so each step gains more there; past 8 a batch
// mostly adds load when the service throttles.
const DefaultBatchParallelism = 8

// busySpacing is the shortest time between two cuts of the window: the busy answers of
// transactions that were out together count as one signal.
const busySpacing = 100 * time.Millisecond

// pressure is an account's congestion window for batch transactions: additive increase,
// multiplicative decrease, as TCP does. A batch call may have window transactions out at
// once (at most the configured degree, at least 1). Each busy answer of the service halves
// the window (at most once per busySpacing); each transaction that commits grows it by
// 1/window, so a full window of commits grows it by about one.
type pressure struct {
	max int

	mu      sync.Mutex
	window  float64
	lastCut time.Time
}

func newPressure(degree int) *pressure {
	if degree <= 0 {
		degree = DefaultBatchParallelism
	}
	return &pressure{max: degree, window: float64(degree)}
}

// limit is the number of transactions a batch call may have out now.
func (p *pressure) limit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(p.window)
}

// busy halves the window after a busy answer.
func (p *pressure) busy() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.lastCut.IsZero() && now.Sub(p.lastCut) < busySpacing {
		return
	}
	p.lastCut = now
	p.window = max(1, p.window/2)
}

// committed grows the window after a transaction committed.
func (p *pressure) committed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.window < float64(p.max) {
		p.window = min(float64(p.max), p.window+1/p.window)
	}
}
