package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// checkStoppedBench checks the output of a bench run that was stopped: exit status 1, the
// table's header and the line saying why it stopped on standard output.
func checkStoppedBench(t *testing.T, code int, stdout, stderr, why string) {
	t.Helper()
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.HasPrefix(stdout, "workload ") || !strings.Contains(stdout, "incomplete: "+why+"; the ") {
		t.Errorf("standard output lacks the table so far and %q:\n%s\nstandard error:\n%s", why, stdout, stderr)
	}
}

// TestBenchTimeout stops udtables bench by its own --timeout, long before its 100,000
// operations per workload are done: the rows measured so far are printed, and the exit
// status is 1. (tools/bench's tests check the rows of a run stopped at a known point.)
func TestBenchTimeout(t *testing.T) {
	t.Setenv(testConnectionEnv, "") // the memory backend alone
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"bench", "--ops", "100000", "--timeout", "1s"}, &stdout, &stderr)
	checkStoppedBench(t, code, stdout.String(), stderr.String(), "its deadline passed")
	if !strings.Contains(stderr.String(), "gave up after 1s (--timeout)") {
		t.Errorf("standard error %q does not name the timeout", stderr.String())
	}
}
