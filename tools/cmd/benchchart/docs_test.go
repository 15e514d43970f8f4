package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The docs quote figures of the last make bench run (tools/bench-results/latest.txt) in
// tables marked, on the line before the table, with
//
//	<!-- figures from tools/bench-results/latest.txt, backend azure -->
//
// The table's first column names the harness's workload exactly; every other column is one
// of docColumns, or the target. TestDocsQuoteLatest checks every figure of such a table
// against the run's table, so a make bench that changes a figure fails it until the docs say
// the new one. Figures the docs give without the mark are ranges with their command.

// quoteMark is the mark's line; its group is the backend of the rows quoted.
var quoteMark = regexp.MustCompile(`^<!-- figures from tools/bench-results/latest\.txt, backend (\w+) -->$`)

// docColumns maps a quoting table's column to the harness's columns it shows: one, or two
// for a cell "figure (ratio)" such as "1.07 ms (1.04)".
var docColumns = map[string][]string{
	"library median":           {"library median"},
	"raw SDK median":           {"raw median"},
	"library ÷ raw":            {"ratio"},
	"library allocs/op":        {"allocs/op"},
	"floor median":             {"floor median"},
	"library median (÷ floor)": {"library median", "lib/floor"},
	"raw SDK median (÷ floor)": {"raw median", "raw/floor"},
	"floor CPU/op":             {"floor CPU/op"},
	"library CPU/op (÷ floor)": {"lib CPU/op", "lib/floor CPU"},
	"raw SDK CPU/op":           {"raw CPU/op"},
}

// colTarget is the harness's target column, and docTarget the quoting tables'.
const (
	colTarget = "target"
	docTarget = "target"
)

// A quoted table is a marked table of a Markdown file.
type quotedTable struct {
	file    string
	line    int // of the table's header
	backend string
	header  []string
	rows    [][]string
	lines   []int // of each row
}

// quotedTables returns the marked tables of md, from the file named file.
func quotedTables(md, file string) ([]quotedTable, error) {
	var out []quotedTable
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		m := quoteMark.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		t := quotedTable{file: file, line: i + 2, backend: m[1]}
		if i+2 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "|") {
			return nil, fmt.Errorf("%s:%d: the mark is not followed by a table", file, i+1)
		}
		t.header = tableCells(lines[i+1])
		for j := i + 3; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|"); j++ {
			t.rows = append(t.rows, tableCells(lines[j]))
			t.lines = append(t.lines, j+1)
		}
		out = append(out, t)
	}
	return out, nil
}

// tableCells splits a Markdown table row into its trimmed cells.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	for _, c := range strings.Split(line, "|") {
		cells = append(cells, strings.TrimSpace(c))
	}
	return cells
}

// bare is a figure without the spaces and thousands separators the docs add: "4,266" and
// "1.07 ms" are the harness's "4266" and "1.07ms".
func bare(s string) string {
	return strings.NewReplacer(" ", "", ",", "").Replace(s)
}

// withRatio splits a cell "1.07 ms (1.04)" into its two figures; "-" is two "-".
var withRatio = regexp.MustCompile(`^(.+?) \((.+)\)$`)

// verdict reads whether a target was met: from the docs' "≤ 1.05: met", "not met", "none",
// or the harness's "ratio <= 1.05 ok", "… MISSED", "-".
func verdict(s string) string {
	switch {
	case s == "-" || s == "none":
		return "none"
	case strings.Contains(s, "not met") || strings.Contains(s, "MISSED"):
		return "missed"
	case strings.HasSuffix(s, "met") || strings.HasSuffix(s, " ok"):
		return "met"
	}
	return "unreadable: " + s
}

// check compares a quoted table with the run's rows and returns the differences.
func (t quotedTable) check(rep report) []string {
	var errs []string
	bad := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s:%d: ", t.file, line)+fmt.Sprintf(format, args...))
	}
	if len(t.header) < 2 || !strings.HasPrefix(t.header[0], "workload") {
		bad(t.line, "the first column of a quoting table is the workload, named as the harness names it")
		return errs
	}
	for _, h := range t.header[1:] {
		if _, ok := docColumns[h]; !ok && h != docTarget {
			bad(t.line, "column %q is none the check knows (docColumns)", h)
		}
	}
	if len(t.rows) == 0 {
		bad(t.line, "the table has no rows")
	}
	runRows := map[string]row{}
	for _, r := range rep.rows {
		if r.backend == t.backend {
			runRows[r.workload] = r
		}
	}
	for k, cells := range t.rows {
		line := t.lines[k]
		if len(cells) != len(t.header) {
			bad(line, "%d cells, the header has %d", len(cells), len(t.header))
			continue
		}
		run, ok := runRows[cells[0]]
		if !ok {
			bad(line, "no workload %q on backend %s in the run", cells[0], t.backend)
			continue
		}
		for c, h := range t.header[1:] {
			doc := cells[c+1]
			if h == docTarget {
				if got, want := verdict(doc), verdict(run.cells[colTarget]); got != want {
					bad(line, "%s: target %q (%s), the run printed %q (%s)", cells[0], doc, got, run.cells[colTarget], want)
				}
				continue
			}
			cols := docColumns[h]
			figures := []string{doc}
			if len(cols) == 2 {
				if m := withRatio.FindStringSubmatch(doc); m != nil {
					figures = m[1:]
				} else if doc == "-" {
					figures = []string{"-", "-"}
				} else {
					bad(line, "%s: %s %q is not \"figure (ratio)\"", cells[0], h, doc)
					continue
				}
			}
			for i, col := range cols {
				if bare(figures[i]) != bare(run.cells[col]) {
					bad(line, "%s: %s %q, the run printed %s %q", cells[0], h, figures[i], col, run.cells[col])
				}
			}
		}
	}
	return errs
}

// TestDocsQuoteLatest checks every marked table of the README and the guides against the
// committed run, and that the performance guide names the run's command.
func TestDocsQuoteLatest(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.work")); errors.Is(err, fs.ErrNotExist) {
		t.Skip("not inside the repository: no README or docs/ to check")
	}
	rep := parseCommitted(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	tables := 0
	for _, f := range files {
		md, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, f)
		qs, err := quotedTables(string(md), filepath.ToSlash(name))
		if err != nil {
			t.Error(err)
		}
		for _, q := range qs {
			tables++
			for _, e := range q.check(rep) {
				t.Error(e)
			}
		}
		if filepath.ToSlash(name) == "docs/performance.md" {
			ops := regexp.MustCompile(`--ops (\d+)`).FindStringSubmatch(rep.command)
			if ops == nil {
				t.Errorf("the run's command %q has no --ops", rep.command)
			} else if !strings.Contains(string(md), "BENCH_OPS="+ops[1]+" make bench") {
				t.Errorf("docs/performance.md does not name the quoted run's command: BENCH_OPS=%s make bench (%s)", ops[1], rep.command)
			}
		}
	}
	if tables < 2 {
		t.Errorf("%d marked tables in the README and docs/; docs/performance.md quotes the run in two", tables)
	}
}

// TestQuotedTableCheck shows the check finding a changed figure, a figure of a ratio
// pair, a verdict, a missing workload and an unknown column.
func TestQuotedTableCheck(t *testing.T) {
	rep, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	md := strings.Join([]string{
		"<!-- figures from tools/bench-results/latest.txt, backend azure -->",
		"| workload (Azurite) | library median | library ÷ raw | library median (÷ floor) | library allocs/op | target |", // 2
		"| --- | ---: | ---: | ---: | ---: | --- |",
		"| point read | 1.07 ms | 0.93 | 1.07 ms (1.04) | 118 | ≤ 1.05: met |",                              // 4: right
		"| point read (cache on) | 6.2 µs | 0.0070 | - | 4 | ≤ 0.01: met |",                                 // 5: a median
		"| hot row: 32x25 Mutate (floor: 800 read+update pairs) | 9.68 ms | - | 9.68 ms (1.54) | - | met |", // 6: a ratio
		"| insert | 1.00 ms | 0.9 | - | 1 | met |",                                                          // 7: not in the sample
		"",
		"<!-- figures from tools/bench-results/latest.txt, backend memory -->",
		"| workload | library median | speed |", // 10
		"| --- | --- | --- |",
		"| point read | 2.4 µs | fast |", // 12
		"| point read | 2.4 µs | fast |", // 13
		"",
		"<!-- figures from tools/bench-results/latest.txt, backend memory -->",
		"| workload | target |", // 16
		"| --- | --- |",
		"| point read | met |", // 18: the run MISSED it
	}, "\n")
	qs, err := quotedTables(md, "docs/x.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 3 {
		t.Fatalf("%d tables, want 3", len(qs))
	}
	var got []string
	for _, q := range qs {
		for _, e := range q.check(rep) {
			if at := e[:strings.Index(e, ": ")]; len(got) == 0 || got[len(got)-1] != at {
				got = append(got, at)
			}
		}
	}
	want := []string{"docs/x.md:5", "docs/x.md:6", "docs/x.md:7", "docs/x.md:10", "docs/x.md:18"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("errors at %q, want %q", got, want)
	}
}
