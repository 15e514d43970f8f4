package release

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/module"
)

// mergeSums returns the go.sum that keeps base's lines for modules outside the workspace and
// takes from fresh the lines for the workspace modules (isSibling), sorted as the go command
// writes a go.sum, so that "go mod tidy -diff" finds nothing to change in the order.
func mergeSums(base, fresh []byte, isSibling func(modPath string) bool) ([]byte, error) {
	sums := map[module.Version][]string{}
	add := func(data []byte, keep func(string) bool) error {
		for i, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if len(f) != 3 {
				return fmt.Errorf("go.sum line %d: %q is not \"module version hash\"", i+1, line)
			}
			if keep(f[0]) {
				m := module.Version{Path: f[0], Version: f[1]}
				sums[m] = append(sums[m], f[2])
			}
		}
		return nil
	}
	if err := add(base, func(p string) bool { return !isSibling(p) }); err != nil {
		return nil, err
	}
	if err := add(fresh, isSibling); err != nil {
		return nil, err
	}
	mods := make([]module.Version, 0, len(sums))
	for m := range sums {
		mods = append(mods, m)
	}
	module.Sort(mods)
	var buf bytes.Buffer
	for _, m := range mods {
		hashes := sums[m]
		slices.Sort(hashes)
		for _, h := range slices.Compact(hashes) {
			fmt.Fprintf(&buf, "%s %s %s\n", m.Path, m.Version, h)
		}
	}
	return buf.Bytes(), nil
}
