// Command benchchart draws the performance chart of the docs from the output of make bench:
// for each workload the harness measured against an account, the library's median time per
// operation over the raw Azure SDK's and over the plain-HTTP floor's, as horizontal bars
// beside a line at 1.0 (as fast as the baseline). make bench runs it after the harness:
//
//	go run ./tools/cmd/benchchart -in tools/bench-results/latest.txt -out docs/performance.svg
//
// It reads the table "udtables bench" prints (tools/bench's text output) and ignores the rest
// of the file; rows of the memory backend have no baseline and are left out. It refuses a
// file without that table, or with a row whose columns do not match the table's header, and
// writes nothing then. It uses the standard library only.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchchart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "tools/bench-results/latest.txt", "the output of make bench")
	out := fs.String("out", "docs/performance.svg", "the SVG file to write")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "benchchart: unexpected arguments %q; it takes only -in and -out\n", fs.Args())
		return 2
	}
	if err := draw(*in, *out); err != nil {
		fmt.Fprintln(stderr, "benchchart:", err)
		return 1
	}
	return 0
}

func draw(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("%w (make bench writes it)", err)
	}
	defer f.Close()
	rep, err := parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var svg bytes.Buffer
	if err := writeSVG(&svg, rep); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	// Write beside the target and rename, so a failed write leaves the old chart whole.
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, svg.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return nil
}
