package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The streams in testdata/ are go test -json's own output (go 1.26), recorded from small
// packages made to fail each way, paths shortened:
//
//	passfail.json   a package that passes (with a skip and a subtest), one with a failed test
//	timeout.json    go test -timeout 2s over parallel tests that sleep: no test fails, the
//	                binary panics "test timed out after 2s"
//	build.json      a package whose code does not compile, then one that passes
//	testmain.json   TestMain failing after every test passed (as a leak check does), and a
//	                package with no test files
//	panic-exit.json a test that panics, and one that calls log.Fatal

// run reports a recorded stream and returns the report, its last line and whether it failed.
func run(t *testing.T, stream string) (out, last string, failed bool) {
	t.Helper()
	var b bytes.Buffer
	failed, err := report(strings.NewReader(stream), &b, 8, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	out = b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return out, lines[len(lines)-1], failed
}

// runFailed runs the report over a stream that must fail, and checks its last line.
func runFailed(t *testing.T, stream, wantLast string) string {
	t.Helper()
	out, last, failed := run(t, stream)
	if !failed {
		t.Error("not failed")
	}
	if last != wantLast {
		t.Errorf("last line %q, want %q", last, wantLast)
	}
	return out
}

func recorded(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func contains(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the report lacks %q:\n%s", w, out)
		}
	}
}

func lacks(t *testing.T, out string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(out, u) {
			t.Errorf("the report holds %q:\n%s", u, out)
		}
	}
}

func TestPassAndFail(t *testing.T) {
	out := runFailed(t, recorded(t, "passfail.json"), "tests: 4 passed, 1 failed, 1 skipped; packages: 1 failed of 2")
	contains(t, out,
		"ok  \texample.com/rec/pass\t",
		"fail_test.go:9: got 1, want 2\n--- FAIL: TestBad",
		"why example.com/rec/fail failed: a test failed: TestBad\n",
		"failed packages:\n  example.com/rec/fail: a test failed: TestBad\n")
	lacks(t, out, "TestGood", "TestOne") // a passed test's output is not shown
}

func TestAllPass(t *testing.T) {
	// The passing package alone: the stream up to the failing package's start.
	stream := recorded(t, "passfail.json")
	stream = stream[:strings.Index(stream, `"Package":"example.com/rec/fail"`)]
	stream = stream[:strings.LastIndex(stream, "\n")+1]
	out, last, failed := run(t, stream)
	if failed {
		t.Errorf("failed:\n%s", out)
	}
	if want := "tests: 3 passed, 0 failed, 1 skipped; packages: 0 failed of 1"; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
	lacks(t, out, "failed packages", "why ")
}

// TestTimeout is the run issue 36 reported: a package that ran into go test's -timeout printed
// its RUN and PAUSE lines, no word of the timeout, and a last line of "0 failed".
func TestTimeout(t *testing.T) {
	out := runFailed(t, recorded(t, "timeout.json"), "tests: 1 passed, 0 failed, 0 skipped; packages: 1 failed of 1")
	why := "test timed out after 2s, running TestA (2s), TestB/sub (2s)"
	contains(t, out,
		"panic: test timed out after 2s\n\trunning tests:\n\t\tTestA (2s)\n\t\tTestB/sub (2s)\n",
		"example.com/rec/ptimeout.TestB.func1", // the goroutines, where the tests were stuck
		"FAIL\texample.com/rec/ptimeout\t2.016s\n",
		"why example.com/rec/ptimeout failed: "+why+"\n",
		"failed packages:\n  example.com/rec/ptimeout: "+why+"\n")
	lacks(t, out, "=== RUN", "=== PAUSE", "=== CONT")
}

// TestCutStream is a run stopped before its package's result (make interrupted, the machine
// out of memory): the package is reported as failed, with what it printed so far.
func TestCutStream(t *testing.T) {
	stream := recorded(t, "timeout.json")
	stream = stream[:strings.Index(stream, "panic: test timed out")]
	stream = stream[:strings.LastIndex(stream, "\n")+1]
	out := runFailed(t, stream, "tests: 1 passed, 0 failed, 0 skipped; packages: 1 failed of 1")
	contains(t, out,
		"FAIL\texample.com/rec/ptimeout [no result]\n",
		"example.com/rec/ptimeout: no result: the stream ended while it ran (go test interrupted or killed?), running TestA, TestB, TestB/sub\n")
}

func TestBuildFailure(t *testing.T) {
	out := runFailed(t, recorded(t, "build.json"), "tests: 3 passed, 0 failed, 1 skipped; packages: 1 failed of 2")
	compile := `build/build.go:3:23: cannot use "x" (untyped string constant) as int value in return statement`
	contains(t, out,
		"# example.com/rec/build [example.com/rec/build.test]\n"+compile+"\n",
		"FAIL\texample.com/rec/build [build failed]\n",
		"failed packages:\n  example.com/rec/build: build failed: "+compile+"\n")
}

func TestTestMainFailure(t *testing.T) {
	out := runFailed(t, recorded(t, "testmain.json"), "tests: 1 passed, 0 failed, 0 skipped; packages: 1 failed of 2")
	contains(t, out,
		"?   \texample.com/rec/notest\t[no test files]\n",
		"goleak: found unexpected goroutines: [Goroutine 7 in state sleep]\nFAIL\texample.com/rec/mainfail",
		"example.com/rec/mainfail: no test failed: the test binary failed outside its tests (TestMain, a leak check); last output: goleak: found unexpected goroutines")
}

func TestPanicAndExit(t *testing.T) {
	out := runFailed(t, recorded(t, "panic-exit.json"), "tests: 2 passed, 1 failed, 0 skipped; packages: 2 failed of 2")
	contains(t, out,
		"--- FAIL: TestPanics (0.00s)\npanic: assignment to entry in nil map",
		"example.com/rec/panics: a test failed: TestPanics\n",
		"cannot reach the emulator\nFAIL\texample.com/rec/exits",
		"example.com/rec/exits: the test binary ended during TestExits (os.Exit or log.Fatal in a test?); last output: ")
}

// TestNotEvents keeps the go command's own lines: printed as they are, a FAIL among them
// failing the report.
func TestNotEvents(t *testing.T) {
	out, _, failed := run(t, "go: warning: \"./x/...\" matched no packages\nFAIL\n")
	if !failed {
		t.Error("not failed")
	}
	contains(t, out, "go: warning: \"./x/...\" matched no packages\n")
}
