// Command release releases the modules of this repository together, at one version that every
// module requires its siblings at. It reads the modules from go.work.
//
//	release check [-version v0.1.0]
//	    Checks that the modules pin each other at one version (at the given one, when set),
//	    that no go.mod replaces a sibling, and that go.work builds the pinned version of each
//	    module from its directory. A failure names the go.mod at fault.
//	release plan -version v0.1.0
//	    The dry run: prints what apply would change, check and tag, and what stops it now.
//	release apply -version v0.1.0 [-push] [-remote origin]
//	    Sets every sibling requirement (and go.work's replace lines) to the version, writes
//	    each module's go.sum lines for its siblings from an on-disk proxy of the release (see
//	    stage), runs go mod tidy -diff, go build and go vet in each module against that
//	    proxy with GOWORK=off, commits, checks that the commit zips to the hashes written,
//	    and tags each module in dependency order. -push pushes the commit and the tags.
//	release tidy [-diff]
//	    Runs go mod tidy in every module, with GOWORK=off and its siblings at the pinned
//	    version served by an on-disk proxy of the working tree (go mod tidy ignores go.work,
//	    and an unpublished version cannot be downloaded). Writes go.mod and go.sum, keeping
//	    the go.sum lines of the siblings as they are; -diff only prints what would change, and
//	    fails if anything would.
//	release stage [-version v0.1.0] -dir DIR
//	    Builds the release of the working tree in DIR: each module as its version will hold
//	    it (DIR/src), a module proxy serving them (DIR/proxy), and DIR/env.sh, the environment
//	    under which the go command uses that proxy with GOWORK=off. Prints the version.
//	    Without -version it stages the version the modules pin, and fails as check does.
//
// The workspace is the directory holding go.work, found from the current directory upwards
// (or from -C dir).
//
// The command imports nothing from the other modules of the workspace, so that
// scripts/release-tool.sh can build it with GOWORK=off from the tools module alone: it then
// runs even when a go.mod pins a sibling version the workspace cannot load, which is the
// mistake check reports.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/unified-data/gotables/tools/internal/release"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  release check [-version v0.1.0]
  release plan -version v0.1.0
  release apply -version v0.1.0 [-push] [-remote origin]
  release tidy [-diff]
  release stage [-version v0.1.0] -dir DIR
Each takes -C DIR to name the workspace (default: the go.work above the current directory).
`

// run runs the command line args and returns the exit status: 0 done, 1 failed, 2 misused.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd := args[0]
	fs := flag.NewFlagSet("release "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	chdir := fs.String("C", ".", "a directory inside the workspace")
	version := fs.String("version", "", "the release version, such as v0.1.0")
	dir := fs.String("dir", "", "stage: the directory to build the release in")
	push := fs.Bool("push", false, "apply: push the release commit and the tags")
	remote := fs.String("remote", "origin", "apply: the remote to push to")
	diff := fs.Bool("diff", false, "tidy: print what tidying would change instead of changing it")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "release %s: unexpected arguments %q\n%s", cmd, fs.Args(), usage)
		return 2
	}
	needVersion := func() bool {
		if *version == "" {
			fmt.Fprintf(stderr, "release %s: -version is required\n", cmd)
			return false
		}
		return true
	}

	// A misused command line is told so (exit 2) before the workspace is looked for, so that
	// the answer does not depend on where the command runs.
	switch cmd {
	case "check", "tidy":
	case "plan", "apply":
		if !needVersion() {
			return 2
		}
	case "stage":
		if *dir == "" {
			fmt.Fprintf(stderr, "release stage: -dir is required\n")
			return 2
		}
	default:
		fmt.Fprintf(stderr, "release: unknown command %q\n%s", cmd, usage)
		return 2
	}

	root, err := findWorkspace(*chdir)
	if err != nil {
		fmt.Fprintf(stderr, "release: %v\n", err)
		return 1
	}
	w, err := release.Load(root)
	if err != nil {
		fmt.Fprintf(stderr, "release: %v\n", err)
		return 1
	}
	switch cmd {
	case "check":
		err = check(w, *version, stdout)
	case "plan":
		err = plan(ctx, w, *version, stdout)
	case "apply":
		err = apply(ctx, w, *version, *push, *remote, stderr)
	case "tidy":
		err = tidy(ctx, w, *diff, stdout, stderr)
	case "stage":
		var s *release.Staged
		if s, err = release.Stage(ctx, w, release.StageOptions{Version: *version, Dir: *dir, Log: stderr}); err == nil {
			fmt.Fprintln(stdout, s.Version)
		}
	}
	if err != nil {
		var problems release.ProblemsError
		if errors.As(err, &problems) {
			for _, p := range problems {
				fmt.Fprintf(stderr, "release: %s\n", p)
			}
		} else {
			fmt.Fprintf(stderr, "release: %v\n", err)
		}
		return 1
	}
	return 0
}

// findWorkspace returns the directory holding go.work at or above dir.
func findWorkspace(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work in %s or above", dir)
		}
	}
}

// check reports the pin problems of w, if any, as a ProblemsError.
func check(w *release.Workspace, version string, stdout io.Writer) error {
	pinned, problems := w.CheckPins(version)
	if len(problems) > 0 {
		return release.ProblemsError(problems)
	}
	if pinned == "" {
		fmt.Fprintln(stdout, "release: no module requires another")
		return nil
	}
	fmt.Fprintf(stdout, "release: the %d modules require each other at %s, and go.work builds that version from the working tree\n", len(w.Modules), pinned)
	return nil
}

// tidy tidies every module against a staged release of the working tree, or with diff
// prints what tidying would change and fails if anything would.
func tidy(ctx context.Context, w *release.Workspace, diff bool, stdout, log io.Writer) error {
	tmp, err := os.MkdirTemp("", "release-tidy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s, err := release.Stage(ctx, w, release.StageOptions{Dir: tmp})
	if err != nil {
		return err
	}
	if !diff {
		changed, err := s.Tidy(ctx, w)
		for _, f := range changed {
			fmt.Fprintf(stdout, "release: tidied %s\n", f)
		}
		return err
	}
	diffs, err := s.TidyDiff(ctx)
	if err != nil {
		return err
	}
	var untidy []string
	for _, m := range w.Modules {
		if d, ok := diffs[m.Dir]; ok {
			untidy = append(untidy, m.Dir)
			fmt.Fprintf(stdout, "release: %s is not tidy; go mod tidy -diff (GOWORK=off, siblings at %s) says:\n%s\n", m.Dir, s.Version, d)
		}
	}
	if len(untidy) > 0 {
		return fmt.Errorf("not tidy: %s; make tidy fixes them", strings.Join(untidy, ", "))
	}
	fmt.Fprintf(stdout, "release: every module is tidy (go mod tidy -diff, GOWORK=off, siblings at %s)\n", s.Version)
	return nil
}

// blockers lists what stops apply from releasing version now; git failures come back as
// blockers too.
func blockers(ctx context.Context, w *release.Workspace, version string, tags []string) []string {
	var out []string
	changelog, err := os.ReadFile(filepath.Join(w.Root, "CHANGELOG.md"))
	switch {
	case err != nil:
		out = append(out, fmt.Sprintf("CHANGELOG.md: %v", err))
	case !release.ChangelogHasSection(changelog, version):
		out = append(out, fmt.Sprintf(`CHANGELOG.md has no section for %s: move the "Unreleased" entries under "## [%s] - YYYY-MM-DD" and commit`,
			version, strings.TrimPrefix(version, "v")))
	}
	for _, t := range tags {
		if _, err := release.Git(ctx, w.Root, "rev-parse", "-q", "--verify", "refs/tags/"+t); err == nil {
			out = append(out, fmt.Sprintf("tag %s exists already", t))
		}
	}
	if status, err := release.Git(ctx, w.Root, "status", "--porcelain"); err != nil {
		out = append(out, err.Error())
	} else if len(bytes.TrimSpace(status)) > 0 {
		out = append(out, "the working tree has changes that are not committed: the tags must name exactly what was checked")
	}
	return out
}

// plan prints what apply would do, and what stops it now. Nothing is written.
func plan(ctx context.Context, w *release.Workspace, version string, stdout io.Writer) error {
	edits, err := w.SetVersion(version)
	if err != nil {
		return err
	}
	after, err := w.After(edits)
	if err != nil {
		return err
	}
	if _, problems := after.CheckPins(version); len(problems) > 0 {
		return release.ProblemsError(problems)
	}
	rel, err := relToRepo(ctx, w.Root)
	if err != nil {
		return err
	}
	tags := w.Tags(rel, version)
	p := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }

	p("release %s: plan (dry run, nothing is changed)", version)
	var dirs []string
	for _, m := range w.Modules {
		dirs = append(dirs, m.Dir)
	}
	p("modules, from go.work, in dependency order: %s", strings.Join(dirs, ", "))
	p("")
	p("1. pin the modules to %s:", version)
	if len(edits) == 0 {
		p("   nothing to change: every module requires its siblings at %s and go.work builds that version from the working tree", version)
	}
	for _, e := range edits {
		for _, c := range e.Changes {
			p("   %s: %s", e.File, c)
		}
	}
	p("   then check the pins: every sibling requirement is %s (passes with the changes above)", version)
	p("2. stage the release in a temporary directory: in dependency order, write each module's")
	p("   go.sum lines for its siblings with go mod tidy against an on-disk proxy of the modules")
	p("   staged before it (GOWORK=off, checksum database off for %s only, a", w.PathPrefix())
	p("   temporary GOMODCACHE), then zip the module into that proxy")
	p("3. in each staged module, with GOWORK=off against that proxy: go mod tidy -diff, go build ./..., go vet ./...")
	p("4. copy the go.sum files back, commit go.work and the go.mod and go.sum files as")
	p("   %q, and check that each module zips from the commit to the hash its dependents' go.sum files name", commitMessage(version))
	p("5. tag the commit, in this order:")
	for _, t := range tags {
		p("   %s", t)
	}
	p("6. with PUSH=1: git push origin HEAD %s", strings.Join(tags, " "))
	p("")
	if bs := blockers(ctx, w, version, tags); len(bs) > 0 {
		p("before the real run (DRY_RUN=0), fix:")
		for _, b := range bs {
			p("   - %s", b)
		}
	} else {
		p("ready: DRY_RUN=0 commits and tags, PUSH=1 pushes as well")
	}
	return nil
}

func commitMessage(version string) string {
	return fmt.Sprintf("Release %s: the modules require each other at %s", version, version)
}

// apply releases version: see the package documentation. On a failure before the commit it
// puts back the files it changed.
func apply(ctx context.Context, w *release.Workspace, version string, push bool, remote string, log io.Writer) (err error) {
	logf := func(format string, args ...any) { fmt.Fprintf(log, "release: "+format+"\n", args...) }
	rel, err := relToRepo(ctx, w.Root)
	if err != nil {
		return err
	}
	tags := w.Tags(rel, version)
	if bs := blockers(ctx, w, version, tags); len(bs) > 0 {
		return errors.New("not released:\n  " + strings.Join(bs, "\n  "))
	}

	edits, err := w.SetVersion(version)
	if err != nil {
		return err
	}
	changed := map[string][]byte{} // file => content before, to put back on failure
	defer func() {
		if err != nil && len(changed) > 0 {
			for f, data := range changed {
				_ = os.WriteFile(filepath.Join(w.Root, filepath.FromSlash(f)), data, 0o644)
			}
			logf("put back go.work and the go.mod and go.sum files as they were")
		}
	}()
	for _, e := range edits {
		changed[e.File] = e.Old
		logf("%s: %s", e.File, strings.Join(e.Changes, "; "))
	}
	if err := w.Apply(edits); err != nil {
		return err
	}
	if w, err = release.Load(w.Root); err != nil {
		return err
	}
	if _, problems := w.CheckPins(version); len(problems) > 0 {
		return release.ProblemsError(problems)
	}

	tmp, err := os.MkdirTemp("", "release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s, err := release.Stage(ctx, w, release.StageOptions{Dir: tmp, Log: log})
	if err != nil {
		return err
	}
	if err := s.Check(ctx, log); err != nil {
		return err
	}
	var files []string
	for _, e := range edits {
		files = append(files, e.File)
	}
	for _, sm := range s.Modules {
		staged, err := os.ReadFile(filepath.Join(sm.Src, "go.sum"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		f := sm.Dir + "/go.sum"
		name := filepath.Join(w.Root, filepath.FromSlash(f))
		old, err := os.ReadFile(name)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if bytes.Equal(old, staged) {
			continue
		}
		changed[f] = old
		if err := os.WriteFile(name, staged, 0o644); err != nil {
			return err
		}
		files = append(files, f)
		logf("%s: the lines for its siblings at %s", f, version)
	}
	if len(files) > 0 {
		if _, err := release.Git(ctx, w.Root, append([]string{"add", "--"}, files...)...); err != nil {
			return err
		}
		if _, err := release.Git(ctx, w.Root, "commit", "-q", "-m", commitMessage(version), "--", "."); err != nil {
			return err
		}
		logf("committed %q", commitMessage(version))
	}
	changed = nil // committed: nothing to put back
	if err := s.VerifyRevision(ctx, "HEAD"); err != nil {
		return err
	}
	for _, t := range tags {
		if _, err := release.Git(ctx, w.Root, "tag", "-a", t, "-m", strings.TrimSuffix(t, "/"+version)+" "+version); err != nil {
			return err
		}
		logf("tagged %s", t)
	}
	pushArgs := append([]string{"push", remote, "HEAD"}, tags...)
	if !push {
		logf("released %s locally; to publish: git %s", version, strings.Join(pushArgs, " "))
		return nil
	}
	if _, err := release.Git(ctx, w.Root, pushArgs...); err != nil {
		return err
	}
	logf("pushed HEAD and %d tags to %s", len(tags), remote)
	return nil
}

// relToRepo returns the workspace root relative to the repository root, slash-separated;
// "" when they are the same directory.
func relToRepo(ctx context.Context, root string) (string, error) {
	out, err := release.Git(ctx, root, "rev-parse", "--show-prefix")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSpace(string(out)), "/"), nil
}
