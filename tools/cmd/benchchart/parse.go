package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// report is what the chart needs of a bench run.
type report struct {
	// command is the harness's command line as make bench announced it, such as
	// "udtables bench --ops 600"; empty when the file has no such line.
	command string
	rows    []row
}

// row is one line of the harness's table.
type row struct {
	workload, backend string
	// ratio is the library's median over the raw SDK's, floor the library's over the
	// plain-HTTP floor's; nil where the table has "-" (not measured).
	ratio, floor *float64
	// cells are the row's cells as printed, by the header's column names ("library
	// median": "1.07ms").
	cells map[string]string
}

// The columns the chart reads, named as tools/bench's writeText names them.
const (
	colWorkload = "workload"
	colBackend  = "backend"
	colRatio    = "ratio"
	colFloor    = "lib/floor"
)

// cellGap separates the table's cells: writeText pads cells and puts two spaces between
// them, and no cell holds two spaces in a row.
var cellGap = regexp.MustCompile(` {2,}`)

// announce is make bench's line before the harness runs: "== udtables bench --ops 600: …".
var announce = regexp.MustCompile(`^== (udtables bench[^:]*):`)

// parse reads the harness's table from make bench's output: the header line that starts
// with "workload", the rows after it up to the first empty line.
func parse(r io.Reader) (report, error) {
	var rep report
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var header map[string]int
	var width int
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), " ")
		if header == nil {
			if m := announce.FindStringSubmatch(line); m != nil {
				rep.command = m[1]
				continue
			}
			if !strings.HasPrefix(line, colWorkload+" ") {
				continue
			}
			cells := cellGap.Split(line, -1)
			header = map[string]int{}
			for i, c := range cells {
				header[c] = i
			}
			for _, c := range []string{colWorkload, colBackend, colRatio, colFloor} {
				if _, ok := header[c]; !ok {
					return report{}, fmt.Errorf("line %d: the table's header has no %q column (is this udtables bench output?)", n, c)
				}
			}
			width = len(cells)
			continue
		}
		if line == "" {
			break
		}
		cells := cellGap.Split(line, -1)
		if len(cells) != width {
			return report{}, fmt.Errorf("line %d: %d columns, the header has %d", n, len(cells), width)
		}
		rw := row{workload: cells[header[colWorkload]], backend: cells[header[colBackend]], cells: map[string]string{}}
		for name, i := range header {
			rw.cells[name] = cells[i]
		}
		var err error
		if rw.ratio, err = figure(cells[header[colRatio]]); err != nil {
			return report{}, fmt.Errorf("line %d: column %s: %w", n, colRatio, err)
		}
		if rw.floor, err = figure(cells[header[colFloor]]); err != nil {
			return report{}, fmt.Errorf("line %d: column %s: %w", n, colFloor, err)
		}
		rep.rows = append(rep.rows, rw)
	}
	if err := sc.Err(); err != nil {
		return report{}, err
	}
	if header == nil {
		return report{}, errors.New("no udtables bench table (a line starting with \"workload\"); run make bench to write one")
	}
	if len(rep.rows) == 0 {
		return report{}, errors.New("the udtables bench table has no rows")
	}
	return rep, nil
}

// figure parses a ratio cell: a number, or "-" for none.
func figure(s string) (*float64, error) {
	if s == "-" {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return nil, fmt.Errorf("%q is neither a ratio nor \"-\"", s)
	}
	return &v, nil
}

// charted returns the rows with at least one ratio, in the table's order: the workloads
// run against an account.
func (r report) charted() []row {
	var out []row
	for _, rw := range r.rows {
		if rw.ratio != nil || rw.floor != nil {
			out = append(out, rw)
		}
	}
	return out
}
