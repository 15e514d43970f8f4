// Command testreport turns the JSON stream of "go test -json" into progress a person can
// follow: one line per package as soon as it finishes (the line go test itself prints:
// "ok", "FAIL" or "?"), the full output of every failed test, and at the end the slowest
// packages and the total time. make test pipes the test run through it:
//
//	go test -json ./... 2>&1 | go run ./tools/cmd/testreport
//
// A package can fail with no failed test: its build failed, its test binary timed out
// ("panic: test timed out after …") or panicked outside a test, a test ended the binary
// (log.Fatal, os.Exit), TestMain failed after the tests (a leak check), or the stream ended
// before its result (an interrupted run). For each the report prints what go test printed
// (the build errors, the panic with the tests still running, the package's own output,
// without the "=== RUN", "=== PAUSE" and "=== CONT" lines) and a line saying why:
//
//	why example.com/m/slow failed: test timed out after 10m0s, running TestSlow (10m0s)
//
// Before the last lines it lists every failed package with that reason. The last line counts
// the tests (subtests included) and the failed packages, whatever made them fail:
// "tests: N passed, N failed, N skipped; packages: N failed of N". It exits 1 when a package
// or test failed, or when the stream held a build error, and 0 otherwise; make test also
// keeps go test's own exit status.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of test2json's output, or of the go command's build output
// (Action "build-output" and "build-fail", keyed by ImportPath).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

type pkgState struct {
	output      []string            // the package's own output ("ok" lines, TestMain's, a panic outside a test)
	tests       map[string][]string // each test's output while it has no result
	started     []string            // the tests in the order they started, to print the unfinished ones in order
	ended       map[string]bool     // the tests that have a result
	failed      []string            // the output of the tests that failed
	failedNames []string
}

// A failure is one failed package and why it failed, for the list at the end.
type failure struct {
	pkg, why string
}

func main() {
	slowest := 8
	start := time.Now()
	failed, err := report(os.Stdin, os.Stdout, slowest, start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func report(r io.Reader, w io.Writer, slowest int, start time.Time) (failed bool, err error) {
	pkgs := map[string]*pkgState{}
	var pkgOrder []string           // packages in the order they started, to report unfinished ones in order
	builds := map[string][]string{} // build output by the go command's import path ("p [p.test]")
	type done struct {
		pkg     string
		elapsed float64
	}
	var finished []done
	var failures []failure
	var passed, failedTests, skipped int
	state := func(pkg string) *pkgState {
		p := pkgs[pkg]
		if p == nil {
			p = &pkgState{tests: map[string][]string{}, ended: map[string]bool{}}
			pkgs[pkg] = p
			pkgOrder = append(pkgOrder, pkg)
		}
		return p
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			// Not an event: the go command's own output ("go: …", a build error of an older go).
			fmt.Fprintln(w, string(line))
			if strings.HasPrefix(string(line), "FAIL") || strings.Contains(string(line), "build failed") {
				failed = true
			}
			continue
		}
		switch e.Action {
		case "build-output":
			builds[e.ImportPath] = append(builds[e.ImportPath], e.Output)
			continue
		case "build-fail":
			continue // the package's own "fail" event follows, naming the build
		}
		p := state(e.Package)
		switch {
		case e.Action == "run" && e.Test != "":
			if _, ok := p.tests[e.Test]; !ok {
				p.tests[e.Test] = nil
				p.started = append(p.started, e.Test)
			}
		case e.Action == "output" && e.Test != "" && p.ended[e.Test]:
			// Output go test attributes to a test that already has a result (a panic of
			// another goroutine, printed after it): the package's.
			p.output = append(p.output, e.Output)
		case e.Action == "output" && e.Test != "":
			if _, ok := p.tests[e.Test]; !ok {
				p.started = append(p.started, e.Test) // output before its "run" event
			}
			p.tests[e.Test] = append(p.tests[e.Test], e.Output)
		case e.Action == "output":
			p.output = append(p.output, e.Output)
		case e.Test != "" && e.Action == "fail":
			failedTests++
			p.failed = append(p.failed, p.tests[e.Test]...)
			p.failedNames = append(p.failedNames, e.Test)
			p.ended[e.Test] = true
			delete(p.tests, e.Test)
		case e.Test != "" && (e.Action == "pass" || e.Action == "skip"):
			if e.Action == "pass" {
				passed++
			} else {
				skipped++
			}
			p.ended[e.Test] = true
			delete(p.tests, e.Test)
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			if e.Action == "fail" {
				failed = true
				why := printFailure(w, e.Package, p, builds[e.FailedBuild], false)
				failures = append(failures, failure{e.Package, why})
			} else {
				for _, o := range p.output {
					if isSummary(o) {
						fmt.Fprint(w, o)
					}
				}
			}
			finished = append(finished, done{e.Package, e.Elapsed})
			delete(pkgs, e.Package)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	// A package that started but has no result: the run was interrupted or killed.
	unfinished := 0
	for _, pkg := range pkgOrder {
		p := pkgs[pkg]
		if p == nil {
			continue
		}
		failed = true
		unfinished++
		why := printFailure(w, pkg, p, nil, true)
		failures = append(failures, failure{pkg, why})
		fmt.Fprintf(w, "FAIL\t%s [no result]\n", pkg)
	}
	sort.SliceStable(finished, func(i, j int) bool { return finished[i].elapsed > finished[j].elapsed })
	if len(finished) > 0 {
		fmt.Fprintf(w, "\nslowest packages:\n")
		for i, d := range finished {
			if i == slowest {
				break
			}
			fmt.Fprintf(w, "  %7.1fs  %s\n", d.elapsed, d.pkg)
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\nfailed packages:\n")
		for _, f := range failures {
			fmt.Fprintf(w, "  %s: %s\n", f.pkg, f.why)
		}
	}
	total := len(finished) + unfinished
	fmt.Fprintf(w, "%d packages in %s\n", total, time.Since(start).Round(time.Second))
	// The closing line counts tests (subtests included) and failed packages, in the plain
	// form CI reads; a package that failed with no failed test is counted here too.
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped; packages: %d failed of %d\n",
		passed, failedTests, skipped, len(failures), total)
	return failed, nil
}

// printFailure prints what explains a failed package: the failed tests' output, the output
// of the tests that never ended (a panic's or timeout's goroutines are there), the build
// errors and the package's own output; then a line saying why it failed, which it returns.
// cut is a package the stream ended in, without a result.
func printFailure(w io.Writer, pkg string, p *pkgState, build []string, cut bool) string {
	for _, o := range p.failed {
		fmt.Fprint(w, o)
	}
	var unfinished []string
	var unfinishedOut []string
	for _, name := range p.started {
		lines, ok := p.tests[name]
		if !ok {
			continue
		}
		unfinished = append(unfinished, name)
		for _, o := range lines {
			if !isFraming(o) {
				unfinishedOut = append(unfinishedOut, o)
			}
		}
	}
	for _, o := range unfinishedOut {
		fmt.Fprint(w, o)
	}
	for _, o := range build {
		fmt.Fprint(w, o)
	}
	for _, o := range p.output {
		fmt.Fprint(w, o)
	}
	why := reason(p, unfinished, append(unfinishedOut, p.output...), build, cut)
	fmt.Fprintf(w, "why %s failed: %s\n", pkg, why)
	return why
}

// reason says in one line why a package failed.
func reason(p *pkgState, unfinished, out, build []string, cut bool) string {
	if len(build) > 0 {
		for _, o := range build {
			if o = strings.TrimSpace(o); o != "" && !strings.HasPrefix(o, "#") {
				return "build failed: " + o
			}
		}
		return "build failed"
	}
	for i, o := range out {
		msg, ok := strings.CutPrefix(o, "panic: test timed out after ")
		if !ok {
			continue
		}
		// "\trunning tests:\n" follows, then one "\t\tTestName (1m0s)\n" per running test.
		var running []string
		for _, r := range out[i+1:] {
			if strings.TrimSpace(r) == "running tests:" {
				continue
			}
			name, ok := strings.CutPrefix(r, "\t\t")
			if !ok {
				break
			}
			running = append(running, strings.TrimSpace(name))
		}
		why := "test timed out after " + strings.TrimSpace(msg)
		if len(running) > 0 {
			why += ", running " + list(running)
		}
		return why
	}
	if len(p.failedNames) > 0 {
		if len(p.failedNames) == 1 {
			return "a test failed: " + p.failedNames[0]
		}
		return fmt.Sprintf("%d tests failed: %s", len(p.failedNames), list(p.failedNames))
	}
	for _, o := range out {
		if strings.HasPrefix(o, "panic: ") || strings.HasPrefix(o, "fatal error: ") {
			why := strings.TrimSpace(o)
			if len(unfinished) > 0 {
				why += ", while running " + list(unfinished)
			}
			return why
		}
	}
	if cut {
		why := "no result: the stream ended while it ran (go test interrupted or killed?)"
		if len(unfinished) > 0 {
			why += ", running " + list(unfinished)
		}
		return why
	}
	if len(unfinished) > 0 {
		why := "the test binary ended during " + list(unfinished) + " (os.Exit or log.Fatal in a test?)"
		if last := lastLine(out); last != "" {
			why += "; last output: " + last
		}
		return why
	}
	why := "no test failed: the test binary failed outside its tests (TestMain, a leak check)"
	if last := lastLine(p.output); last != "" {
		why += "; last output: " + last
	}
	return why
}

// lastLine returns the last line of out that is not go test's own verdict.
func lastLine(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		o := strings.TrimSpace(out[i])
		if o == "" || o == "PASS" || o == "FAIL" || isSummary(out[i]) {
			continue
		}
		return o
	}
	return ""
}

// list joins names, at most five of them.
func list(names []string) string {
	const most = 5
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// isFraming reports the lines the testing package prints as tests start, pause and resume,
// which say nothing about why a package failed.
func isFraming(o string) bool {
	return strings.HasPrefix(o, "=== RUN") || strings.HasPrefix(o, "=== PAUSE") ||
		strings.HasPrefix(o, "=== CONT") || strings.HasPrefix(o, "=== NAME")
}

// isSummary reports go test's own line for a package: "ok  \tpkg\t1.2s", "FAIL\tpkg …",
// "?   \tpkg\t[no test files]", and the coverage line.
func isSummary(o string) bool {
	return strings.HasPrefix(o, "ok ") || strings.HasPrefix(o, "ok\t") || strings.HasPrefix(o, "FAIL") ||
		strings.HasPrefix(o, "?") || strings.HasPrefix(o, "coverage:")
}
