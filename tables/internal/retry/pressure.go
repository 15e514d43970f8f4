package retry

import (
	"sync"
	"time"
)

// busySpacing is the shortest time between two cuts of the window: the busy answers of
// transactions that were out together count as one signal.
const busySpacing = 100 * time.Millisecond

// Pressure is an account's congestion window for batch transactions: additive increase,
// multiplicative decrease, as TCP does. A batch call may have window transactions out at
// once (at most the configured degree, at least 1). Each busy answer of the service halves
// the window (at most once per busySpacing); each transaction that commits grows it by
// 1/window, so a full window of commits grows it by about one.
type Pressure struct {
	max int

	mu      sync.Mutex
	window  float64
	lastCut time.Time
}

// NewPressure returns the window of an account whose batch calls may have degree
// transactions out at once (at least 1).
func NewPressure(degree int) *Pressure {
	return &Pressure{max: max(1, degree), window: float64(max(1, degree))}
}

// Limit is the number of transactions a batch call may have out now.
func (p *Pressure) Limit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(p.window)
}

// Busy halves the window after a busy answer.
func (p *Pressure) Busy() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.lastCut.IsZero() && now.Sub(p.lastCut) < busySpacing {
		return
	}
	p.lastCut = now
	p.window = max(1, p.window/2)
}

// Max is the configured degree: 1 means batch transactions are sent one after another.
func (p *Pressure) Max() int { return p.max }

// Committed grows the window after a transaction committed.
func (p *Pressure) Committed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.window < float64(p.max) {
		p.window = min(float64(p.max), p.window+1/p.window)
	}
}
