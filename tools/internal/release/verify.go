package release

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"golang.org/x/mod/module"
)

// Check runs in every staged module what a module must pass on its own, outside the
// workspace and against the staged proxy: "go mod tidy -diff", "go build ./..." and
// "go vet ./..." (the last two only where the module has packages: go vet fails on none).
// The error names the module and carries the go command's output.
func (s *Staged) Check(ctx context.Context, log io.Writer) error {
	logf := func(format string, args ...any) {
		if log != nil {
			fmt.Fprintf(log, "release: "+format+"\n", args...)
		}
	}
	for _, sm := range s.Modules {
		steps := [][]string{{"mod", "tidy", "-diff"}}
		pkgs, err := s.Go(ctx, sm.Src, "list", "./...")
		if err != nil {
			return fmt.Errorf("%s: GOWORK=off go list ./...: %v\n%s", sm.Dir, err, pkgs)
		}
		if strings.Contains(string(pkgs), sm.Path) {
			steps = append(steps, []string{"build", "./..."}, []string{"vet", "./..."})
		} else {
			logf("%s %s: no packages, nothing to build or vet", sm.Dir, s.Version)
		}
		for _, args := range steps {
			logf("%s %s: go %s", sm.Dir, s.Version, strings.Join(args, " "))
			if out, err := s.Go(ctx, sm.Src, args...); err != nil {
				return fmt.Errorf("%s: GOWORK=off go %s: %v\n%s", sm.Dir, strings.Join(args, " "), err, out)
			}
		}
	}
	return nil
}

// VerifyRevision checks that each module, as the go command will zip it from a tag on the
// commit rev, has the hashes of its staged copy: the hashes its dependents' go.sum files name.
func (s *Staged) VerifyRevision(ctx context.Context, rev string) error {
	for _, sm := range s.Modules {
		files, err := filesAtRevision(ctx, s.top, rev, s.subdir(sm.Module))
		if err != nil {
			return err
		}
		sum, err := zipSum(module.Version{Path: sm.Path, Version: s.Version}, files)
		if err != nil {
			return fmt.Errorf("%s at %s: %v", sm.Dir, rev, err)
		}
		if sum != sm.Sum {
			return fmt.Errorf("%s at %s zips to %s, but the staged module to %s: the commit does not hold what was staged", sm.Dir, rev, sum, sm.Sum)
		}
	}
	return nil
}

// Tags returns the tags of the staged release, in release order.
func (s *Staged) Tags() []string {
	w := &Workspace{}
	for _, sm := range s.Modules {
		w.Modules = append(w.Modules, sm.Module)
	}
	return w.Tags(s.rel, s.Version)
}

// Tags returns the tags of a release of the workspace at version, in release order: each
// module's directory relative to the repository root (rel is the workspace root's), a slash,
// the version, such as "tables/v0.1.0". The go command finds a module's versions by them.
func (w *Workspace) Tags(rel, version string) []string {
	var tags []string
	for _, m := range w.Modules {
		tags = append(tags, path.Join(rel, m.Dir, version))
	}
	return tags
}
