//go:build unix

package main

import (
	"bytes"
	"syscall"
	"testing"
	"time"
)

// TestBenchInterrupted sends SIGTERM to this process while udtables bench runs, as a
// terminal's Ctrl-C or a job runner would: the run stops, prints the rows measured so far,
// and exits with status 1.
func TestBenchInterrupted(t *testing.T) {
	t.Setenv(testConnectionEnv, "") // the memory backend alone
	ctx, stop := interrupts()
	defer stop()
	go func() {
		time.Sleep(time.Second)
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	}()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"bench", "--ops", "100000"}, &stdout, &stderr)
	checkStoppedBench(t, code, stdout.String(), stderr.String(), "it was interrupted")
}
