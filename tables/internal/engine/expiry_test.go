package engine

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestExpiryClockPerProcess: accounts on the real clock decide expiry on one floor per
// process, so a time one of them decided on holds for every other; an account with its own
// clock keeps its own floor, which never goes back either.
func TestExpiryClockPerProcess(t *testing.T) {
	a, b := &Account{}, &Account{}
	// Another account of the process decided on a time ahead of the system clock (as when
	// the clock is set back afterwards).
	ahead := time.Now().Add(time.Hour)
	if got := a.ExpiryNow(); got.After(ahead) {
		t.Fatalf("ExpiryNow = %v, after %v", got, ahead)
	}
	processExpiry.at(ahead)
	for name, acct := range map[string]*Account{"a": a, "b": b} {
		if got := acct.ExpiryNow(); got.Before(ahead) {
			t.Errorf("account %s decides at %v, before %v which the process decided on", name, got, ahead)
		}
	}

	now := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	own := &Account{Cfg: Config{NowFunc: func() time.Time { return now }}}
	if got := own.ExpiryNow(); !got.Equal(now) {
		t.Errorf("an account with its own clock decides at %v, want its clock's %v", got, now)
	}
	now = now.Add(-time.Minute) // its clock goes back
	if got := own.ExpiryNow(); !got.Equal(now.Add(time.Minute)) {
		t.Errorf("after its clock went back it decides at %v, want %v", got, now.Add(time.Minute))
	}
}
