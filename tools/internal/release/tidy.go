package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// TidyDiff runs "go mod tidy -diff" in every staged module: what tidying would change in the
// module, with its siblings at the staged version served by the staged proxy. It returns the
// diff of each module that is not tidy, by module directory.
func (s *Staged) TidyDiff(ctx context.Context) (map[string][]byte, error) {
	diffs := map[string][]byte{}
	for _, sm := range s.Modules {
		out, err := s.Go(ctx, sm.Src, "mod", "tidy", "-diff")
		if err == nil {
			continue
		}
		if len(bytes.TrimSpace(out)) == 0 || !bytes.Contains(out, []byte("diff ")) {
			return nil, fmt.Errorf("%s: GOWORK=off go mod tidy -diff: %v\n%s", sm.Dir, err, out)
		}
		diffs[sm.Dir] = out
	}
	return diffs, nil
}

// Tidy runs "go mod tidy" in every staged module and writes the result into the workspace
// w: go.mod as tidied, and go.sum with the tidied lines for modules outside the workspace but
// the workspace's own lines for its modules, since those name the published version while
// the staged lines name the working tree. It returns the files it changed, relative to
// w.Root.
func (s *Staged) Tidy(ctx context.Context, w *Workspace) ([]string, error) {
	isSibling := func(p string) bool { return w.Module(p) != nil }
	var changed []string
	for _, sm := range s.Modules {
		if out, err := s.Go(ctx, sm.Src, "mod", "tidy"); err != nil {
			return changed, fmt.Errorf("%s: GOWORK=off go mod tidy: %v\n%s", sm.Dir, err, out)
		}
		mod, err := os.ReadFile(filepath.Join(sm.Src, "go.mod"))
		if err != nil {
			return changed, err
		}
		tidied, err := readIfExists(filepath.Join(sm.Src, "go.sum"))
		if err != nil {
			return changed, err
		}
		dst := filepath.Join(w.Root, filepath.FromSlash(sm.Dir))
		own, err := readIfExists(filepath.Join(dst, "go.sum"))
		if err != nil {
			return changed, err
		}
		sum, err := mergeSums(tidied, own, isSibling)
		if err != nil {
			return changed, fmt.Errorf("%s/go.sum: %v", sm.Dir, err)
		}
		for name, data := range map[string][]byte{"go.mod": mod, "go.sum": sum} {
			file := filepath.Join(dst, name)
			old, err := readIfExists(file)
			if err != nil {
				return changed, err
			}
			if bytes.Equal(old, data) || old == nil && len(data) == 0 {
				continue
			}
			if err := os.WriteFile(file, data, 0o644); err != nil {
				return changed, err
			}
			changed = append(changed, sm.Dir+"/"+name)
		}
	}
	return changed, nil
}

// readIfExists returns the file's content, or nil when there is no such file.
func readIfExists(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}
