package retry

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRetryPolicyDefaultsAndDelays(t *testing.T) {
	p := Policy{}.WithDefaults()
	if p.MaxRetries != 3 || p.RetryDelay != 800*time.Millisecond || p.MaxRetryDelay != time.Minute {
		t.Errorf("defaults %+v, want the Azure SDK's", p)
	}
	if q := (Policy{MaxRetries: -1, RetryDelay: -1}).WithDefaults(); q.MaxRetries != 0 || q.RetryDelay != 0 {
		t.Errorf("negative values %+v, want none", q)
	}
	// The n-th retry waits (2^n − 1) × RetryDelay × [0.8, 1.3), capped.
	for n, base := range map[int]time.Duration{1: 800 * time.Millisecond, 2: 2400 * time.Millisecond, 3: 5600 * time.Millisecond} {
		for range 50 {
			if d := p.delay(n); d < base*8/10 || d >= base*13/10 {
				t.Fatalf("retry %d waits %v, want [%v, %v)", n, d, base*8/10, base*13/10)
			}
		}
	}
	if d := (Policy{MaxRetryDelay: time.Second}).WithDefaults().delay(10); d != time.Second {
		t.Errorf("capped delay %v", d)
	}
}

func TestPressure(t *testing.T) {
	p := NewPressure(8)
	if p.Limit() != 8 {
		t.Fatalf("limit %d", p.Limit())
	}
	p.Busy()
	p.Busy() // within busySpacing of the first: one signal
	if p.Limit() != 4 {
		t.Errorf("after a busy answer: %d, want 4", p.Limit())
	}
	for range 3 {
		p.lastCut = p.lastCut.Add(-busySpacing)
		p.Busy()
	}
	if p.Limit() != 1 {
		t.Errorf("after four busy answers: %d, want 1", p.Limit())
	}
	commits := 0
	for p.Limit() < 8 {
		p.Committed()
		commits++
	}
	if commits < 20 || commits > 40 {
		t.Errorf("%d commits to grow from 1 to 8", commits)
	}
	for range 100 {
		p.Committed()
	}
	if p.Limit() != 8 || NewPressure(0).Limit() != 1 {
		t.Errorf("limit %d; a degree of 0 gives %d", p.Limit(), NewPressure(0).Limit())
	}
}
