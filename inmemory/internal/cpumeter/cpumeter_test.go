package cpumeter

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A meter counts only the time it runs: stopped, busy work adds nothing.
func TestStopAndResume(t *testing.T) {
	m := Start()
	m.Stop()
	before := m.total
	spin := 0
	for i := range 50_000_000 {
		spin += i
	}
	_ = spin
	if m.total != before {
		t.Fatalf("a stopped meter moved from %v to %v", before, m.total)
	}
	m.Resume()
	for i := range 50_000_000 {
		spin += i
	}
	m.Stop()
	if available && m.total <= before {
		t.Errorf("a running meter counted nothing for busy work (%v)", m.total)
	}
}
