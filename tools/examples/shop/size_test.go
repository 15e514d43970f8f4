package shop

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxSizeRatio is the most the library's server may weigh against the same server written
// with raw aztables, both stripped: "Binary size" in docs/performance.md.
const maxSizeRatio = 1.29

// TestServerSizeWithinRawBudget builds the shop's server (over the library) and rawserver
// (the same API over raw aztables) stripped, as "make size" does, and checks the ratio of
// their sizes. Sizes are deterministic for one toolchain and platform, so this is not a
// timed test; it is skipped under -short because it links two binaries.
func TestServerSizeWithinRawBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("links two binaries; run without -short (or make size)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
	dir := t.TempDir()
	size := func(pkg string) int64 {
		t.Helper()
		out := filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", out, pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("go build %s: %v", pkg, err)
			}
			t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
		}
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	lib, raw := size("./server"), size("./rawserver")
	ratio := float64(lib) / float64(raw)
	t.Logf("stripped: server %d bytes, rawserver %d bytes, ratio %.3f (budget %.2f)", lib, raw, ratio, maxSizeRatio)
	if ratio > maxSizeRatio {
		deps := func(pkg string) map[string]bool {
			out, err := exec.Command("go", "list", "-deps", pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", pkg, err)
			}
			m := map[string]bool{}
			for _, p := range strings.Fields(string(out)) {
				m[p] = true
			}
			return m
		}
		rawDeps := deps("./rawserver")
		var extra []string
		for p := range deps("./server") {
			if !rawDeps[p] {
				extra = append(extra, p)
			}
		}
		slices.Sort(extra)
		t.Errorf("the library's server is %.3f times the raw one, above %.2f; it links these packages the raw one does not:\n%s",
			ratio, maxSizeRatio, strings.Join(extra, "\n"))
	}
}
