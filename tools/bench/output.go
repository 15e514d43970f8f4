package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// writeJSON writes the results as one indented JSON array.
func writeJSON(out io.Writer, results []Result) error {
	if results == nil {
		results = []Result{}
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(results)
}

// writeText writes the results as an aligned table (names left, figures right) and a
// legend. stopped, when not empty, says why the run ended before its last workload; it
// goes on the last line.
func writeText(out io.Writer, cfg Config, results []Result, stopped string) error {
	rows := [][]string{{"workload", "backend", "ops", "library median", "raw median", "ratio", "floor median", "lib/floor", "raw/floor",
		"lib CPU/op", "raw CPU/op", "floor CPU/op", "lib/floor CPU", "library ops/s", "raw ops/s", "allocs/op", "target"}}
	for _, r := range results {
		if r.Status == StatusPending {
			row := []string{r.Workload, r.Backend, "-", "pending"}
			for len(row) < len(rows[0]) {
				row = append(row, "-")
			}
			rows = append(rows, row)
			continue
		}
		rows = append(rows, []string{r.Workload, r.Backend, strconv.Itoa(r.Ops),
			dur(r.LibraryMedianNs), dur(r.RawMedianNs), ratio(r.Ratio), dur(r.FloorMedianNs), ratio(r.LibraryFloorRatio), ratio(r.RawFloorRatio),
			dur(r.LibraryCPUNs), dur(r.RawCPUNs), dur(r.FloorCPUNs), ratio(r.LibraryFloorCPURatio),
			num(r.LibraryOpsPerSec, 0), num(r.RawOpsPerSec, 0), num(r.LibraryAllocsPerOp, 0), verdict(r)})
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i < 2 || i == len(row)-1:
				b.WriteString(c)
				if i < len(row)-1 {
					b.WriteString(pad)
				}
			default:
				b.WriteString(pad)
				b.WriteString(c)
			}
			if i < len(row)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nconcurrency %d; medians per operation; ratio = library median / raw SDK median; library, raw and floor operations alternate.\n", cfg.Concurrency)
	b.WriteString("floor = plain net/http with requests signed by hand (no SDK); CPU/op = client CPU time (user+system, getrusage) per operation, the sides taking turns in chunks of ten.\n")
	for _, r := range results {
		if r.Note != "" && r.Status != StatusPending {
			fmt.Fprintf(&b, "%s (%s): %s\n", r.Workload, r.Backend, r.Note)
		}
	}
	if cfg.Concurrency != 1 {
		b.WriteString("allocs/op is only counted with concurrency 1.\n")
	}
	for _, r := range results {
		if r.Status == StatusPending {
			fmt.Fprintf(&b, "pending: %s (%s): %s\n", r.Workload, r.Backend, r.Note)
		}
	}
	if stopped != "" {
		fmt.Fprintf(&b, "incomplete: %s; the %d rows above were measured before, the workloads after them did not run.\n", stopped, len(results))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func dur(ns *int64) string {
	if ns == nil {
		return "-"
	}
	d := time.Duration(*ns)
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + "ms"
	case d >= time.Microsecond:
		return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) + "µs"
	}
	return strconv.FormatInt(*ns, 10) + "ns"
}

func num(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// ratio shows two decimals, or four for a ratio under 0.1 (a cached read's), which two
// would round to nothing.
func ratio(v *float64) string {
	if v != nil && *v < 0.1 {
		return num(v, 4)
	}
	return num(v, 2)
}

// verdict is the target column: each target the row has, with whether the run met it.
func verdict(r Result) string {
	v := targetVerdict(r.Target, r.Met)
	if r.FloorTarget != "" {
		f := targetVerdict(r.FloorTarget, r.FloorMet)
		if r.Target == "" {
			return f
		}
		v += "; " + f
	}
	return v
}

func targetVerdict(target string, met *bool) string {
	switch {
	case target == "":
		return "-"
	case met == nil:
		return target + " ?"
	case *met:
		return target + " ok"
	}
	return target + " MISSED"
}
