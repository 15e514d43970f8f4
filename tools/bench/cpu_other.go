//go:build !unix

package bench

import "time"

// processCPU reports that this system has no getrusage: the CPU figures stay empty.
func processCPU() (time.Duration, bool) { return 0, false }
