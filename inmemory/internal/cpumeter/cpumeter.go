// Package cpumeter measures the processor time a benchmark spends, which a busy machine
// disturbs far less than the wall time testing.B reports.
package cpumeter

import (
	"testing"
	"time"
)

// A Meter measures the processor time the process spends (user and system, every thread)
// while it runs. Where the operating system does not say, it reports nothing.
type Meter struct{ start, total time.Duration }

// Start returns a running meter.
func Start() *Meter { return &Meter{start: processCPU()} }

// Stop pauses the meter, as b.StopTimer pauses the clock; Resume starts it again.
func (m *Meter) Stop() { m.total += processCPU() - m.start }

// Resume starts a stopped meter again.
func (m *Meter) Resume() { m.start = processCPU() }

// Report stops the meter and reports its time per operation as the metric cpu-ns/op.
func (m *Meter) Report(b *testing.B) {
	m.Stop()
	if b.N > 0 && available {
		b.ReportMetric(float64(m.total)/float64(b.N), "cpu-ns/op")
	}
}
