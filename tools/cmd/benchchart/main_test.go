package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// committed is the output of make bench as the repository holds it.
const committed = "../../bench-results/latest.txt"

// sample is the start of a make bench output, in the harness's format: an azure row with
// both ratios, one with the raw ratio only, one with the floor only, and a memory row.
const sample = `== udtables bench --ops 600: the library against hand-written Azure SDK code, then the memory backend
workload                                              backend    ops  library median  raw median   ratio  floor median  lib/floor  raw/floor  lib CPU/op  raw CPU/op  floor CPU/op  lib/floor CPU  library ops/s  raw ops/s  allocs/op  target
point read                                            azure      600          1.07ms      1.15ms    0.93        1.02ms       1.04       1.13     392.5µs     418.7µs       324.4µs           1.21            510        494        118  ratio <= 1.05 ok; <= 1.2x floor, CPU <= 1.5x ok
point read (cache on)                                 azure      600           6.1µs     864.0µs  0.0070             -          -          -           -           -             -              -         140254        793          4  ratio <= 0.01 ok
hot row: 32x25 Mutate (floor: 800 read+update pairs)  azure      800          9.68ms           -       -        6.68ms       1.45          -           -           -             -              -              -          -          -  <= 2x floor (whole run) ok
point read                                            memory   30000           2.4µs           -       -             -          -          -           -           -             -              -          31988          -          8  ops/s >= 200000 MISSED

concurrency 1; medians per operation; ratio = library median / raw SDK median; library, raw and floor operations alternate.
workload  this line is not part of the table
`

func f(v float64) *float64 { return &v }

func TestParseSample(t *testing.T) {
	rep, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if rep.command != "udtables bench --ops 600" {
		t.Errorf("command %q", rep.command)
	}
	want := []row{
		{"point read", "azure", f(0.93), f(1.04), nil},
		{"point read (cache on)", "azure", f(0.007), nil, nil},
		{"hot row: 32x25 Mutate (floor: 800 read+update pairs)", "azure", nil, f(1.45), nil},
		{"point read", "memory", nil, nil, nil},
	}
	if len(rep.rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rep.rows), len(want), rep.rows)
	}
	same := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for i, w := range want {
		g := rep.rows[i]
		if g.workload != w.workload || g.backend != w.backend || !same(g.ratio, w.ratio) || !same(g.floor, w.floor) {
			t.Errorf("row %d = %s, want %s", i, show(g), show(w))
		}
	}
	if n := len(rep.charted()); n != 3 {
		t.Errorf("charted %d rows, want the 3 azure ones", n)
	}
}

func show(r row) string {
	s := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return value(*v)
	}
	return r.workload + "/" + r.backend + " ratio " + s(r.ratio) + " floor " + s(r.floor)
}

// parseCommitted parses the committed run.
func parseCommitted(t *testing.T) report {
	t.Helper()
	file, err := os.Open(committed)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	rep, err := parse(file)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestParseCommitted reads the committed output: every workload the harness runs against
// an account is there with its ratio, the single-row ones with their floor too.
func TestParseCommitted(t *testing.T) {
	rep := parseCommitted(t)
	if !strings.HasPrefix(rep.command, "udtables bench") {
		t.Errorf("command %q", rep.command)
	}
	byName := map[string]row{}
	backends := map[string]int{}
	for _, r := range rep.rows {
		backends[r.backend]++
		if r.backend == "azure" {
			byName[r.workload] = r
		} else if r.ratio != nil || r.floor != nil {
			t.Errorf("%s on %s has a ratio; only rows against an account have one", r.workload, r.backend)
		}
	}
	if backends["azure"] == 0 || backends["memory"] == 0 {
		t.Errorf("rows per backend: %v; want both", backends)
	}
	for _, name := range []string{"point read", "insert", "upsert", "update (Strict)"} {
		if r := byName[name]; r.ratio == nil || r.floor == nil || *r.ratio <= 0 || *r.floor <= 0 {
			t.Errorf("%q: %s; want both ratios", name, show(r))
		}
	}
	for _, name := range []string{"point read (cache on)", "query 1,000-row partition", "page of 100", "write 1 MB text (split)", "read 1 MB text (split)"} {
		if r := byName[name]; r.ratio == nil || *r.ratio <= 0 {
			t.Errorf("%q: %s; want a ratio to the raw SDK", name, show(r))
		}
	}
	if len(rep.charted()) != len(byName) {
		t.Errorf("charted %d rows of %d azure rows", len(rep.charted()), len(byName))
	}
}

func TestParseRefuses(t *testing.T) {
	header := "workload  backend  ratio  lib/floor  target\n"
	for name, in := range map[string]string{
		"no table":       "== go test -bench . -benchmem\nPASS\n",
		"no rows":        header + "\n",
		"missing column": "workload  backend  ratio  target\nx  azure  1.0  -\n",
		"short row":      header + "point read  azure  0.93  ok\n",
		"bad figure":     header + "point read  azure  fast  -  ok\n",
	} {
		if _, err := parse(strings.NewReader(in)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestSVG draws the committed output and checks the document is well-formed XML that names
// every charted workload, both series, the axes and the 1.0 line.
func TestSVG(t *testing.T) {
	rep := parseCommitted(t)
	var out bytes.Buffer
	if err := writeSVG(&out, rep); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	bars := 0
	dec := xml.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.CharData:
			text.Write(tok)
			text.WriteString("\n")
		case xml.StartElement:
			if tok.Name.Local == "rect" {
				for _, a := range tok.Attr {
					if a.Name.Local == "fill" && (a.Value == colourRaw || a.Value == colourFloor) {
						bars++
					}
				}
			}
		}
	}
	s := text.String()
	for _, r := range rep.charted() {
		if !strings.Contains(s, r.workload) {
			t.Errorf("no label %q", r.workload)
		}
	}
	for _, want := range []string{"library ÷ raw Azure SDK", "library ÷ plain-HTTP floor", "1.0: as fast as the baseline",
		"library time ÷ baseline time per operation", "workload", rep.command} {
		if !strings.Contains(s, want) {
			t.Errorf("no text %q", want)
		}
	}
	want := 2 // the legend's swatches
	for _, r := range rep.charted() {
		if r.ratio != nil {
			want++
		}
		if r.floor != nil {
			want++
		}
	}
	if bars != want {
		t.Errorf("%d bars and swatches, want %d", bars, want)
	}
}

func TestRunWritesTheChart(t *testing.T) {
	out := filepath.Join(t.TempDir(), "docs", "performance.svg")
	var stderr bytes.Buffer
	if code := run([]string{"-in", committed, "-out", out}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(b, []byte("<svg ")) {
		t.Fatalf("%v: %.40q", err, b)
	}
	stderr.Reset()
	if code := run([]string{"-in", filepath.Join(t.TempDir(), "none.txt"), "-out", out}, &stderr); code != 1 || !strings.Contains(stderr.String(), "make bench") {
		t.Errorf("a missing input: exit %d, %q", code, stderr.String())
	}
}
