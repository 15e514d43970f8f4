// Command testreport turns the JSON stream of "go test -json" into progress a person can
// follow: one line per package as soon as it finishes (the line go test itself prints:
// "ok", "FAIL" or "?"), the full output of every failed test, and at the end the slowest
// packages and the total time. make test pipes the test run through it:
//
//	go test -json ./... | go run ./tools/cmd/testreport
//
// The last line counts the tests (subtests included): "tests: N passed, N failed, N skipped".
// It exits 1 when a package or test failed, or when the stream held a build error, and 0
// otherwise; make test also keeps go test's own exit status.
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

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type pkgState struct {
	output  []string            // the package's own output (build errors, "ok" lines, panics)
	tests   map[string][]string // each running test's output, dropped when it passes
	failed  []string            // the output of the tests that failed
	elapsed float64
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
	type done struct {
		pkg     string
		elapsed float64
	}
	var finished []done
	var passed, failedTests, skipped int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			// Not an event: a build error or the go command's own output.
			fmt.Fprintln(w, string(line))
			if strings.HasPrefix(string(line), "FAIL") || strings.Contains(string(line), "build failed") {
				failed = true
			}
			continue
		}
		p := pkgs[e.Package]
		if p == nil {
			p = &pkgState{tests: map[string][]string{}}
			pkgs[e.Package] = p
		}
		switch {
		case e.Action == "output" && e.Test != "":
			p.tests[e.Test] = append(p.tests[e.Test], e.Output)
		case e.Action == "output":
			p.output = append(p.output, e.Output)
		case e.Test != "" && e.Action == "fail":
			failedTests++
			p.failed = append(p.failed, p.tests[e.Test]...)
			delete(p.tests, e.Test)
		case e.Test != "" && (e.Action == "pass" || e.Action == "skip"):
			if e.Action == "pass" {
				passed++
			} else {
				skipped++
			}
			delete(p.tests, e.Test)
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			p.elapsed = e.Elapsed
			if e.Action == "fail" {
				failed = true
				for _, o := range p.failed {
					fmt.Fprint(w, o)
				}
				for _, lines := range p.tests { // tests still running when the package failed (a panic, a timeout)
					for _, o := range lines {
						fmt.Fprint(w, o)
					}
				}
			}
			for _, o := range p.output {
				if e.Action == "fail" || isSummary(o) {
					fmt.Fprint(w, o)
				}
			}
			finished = append(finished, done{e.Package, e.Elapsed})
			delete(pkgs, e.Package)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	sort.Slice(finished, func(i, j int) bool { return finished[i].elapsed > finished[j].elapsed })
	if len(finished) > 0 {
		fmt.Fprintf(w, "\nslowest packages:\n")
		for i, d := range finished {
			if i == slowest {
				break
			}
			fmt.Fprintf(w, "  %7.1fs  %s\n", d.elapsed, d.pkg)
		}
	}
	fmt.Fprintf(w, "%d packages in %s\n", len(finished), time.Since(start).Round(time.Second))
	// The closing line counts tests (subtests included), in the plain form CI reads.
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", passed, failedTests, skipped)
	return failed, nil
}

// isSummary reports go test's own line for a package: "ok  \tpkg\t1.2s", "FAIL\tpkg …",
// "?   \tpkg\t[no test files]", and the coverage line.
func isSummary(o string) bool {
	return strings.HasPrefix(o, "ok ") || strings.HasPrefix(o, "ok\t") || strings.HasPrefix(o, "FAIL") ||
		strings.HasPrefix(o, "?") || strings.HasPrefix(o, "coverage:")
}
