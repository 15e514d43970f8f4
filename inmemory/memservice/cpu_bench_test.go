//go:build unix

package memservice

import (
	"syscall"
	"testing"
	"time"
)

// A cpuMeter measures the processor time the process spends (user and system, every thread)
// while it runs, which a busy machine disturbs far less than the wall time a benchmark
// reports.
type cpuMeter struct{ start, total time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startCPU returns a running meter.
func startCPU() *cpuMeter { return &cpuMeter{start: processCPU()} }

// stop pauses the meter, as b.StopTimer pauses the clock; resume starts it again.
func (m *cpuMeter) stop()   { m.total += processCPU() - m.start }
func (m *cpuMeter) resume() { m.start = processCPU() }

// report stops the meter and reports its time per operation as the metric cpu-ns/op.
func (m *cpuMeter) report(b *testing.B) {
	m.stop()
	if b.N > 0 {
		b.ReportMetric(float64(m.total)/float64(b.N), "cpu-ns/op")
	}
}
