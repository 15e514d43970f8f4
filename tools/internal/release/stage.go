package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// StageOptions configure Stage.
type StageOptions struct {
	// Version is the version to stage. Empty means the version the modules pin, which then
	// must pass CheckPins; a version set moves the pins to it in the staged copies, as a
	// release would.
	Version string
	// Dir receives the release. It must not exist or be empty.
	Dir string
	// Upstream is the GOPROXY list for every module outside the workspace, tried after the
	// on-disk proxy. Empty means the list "go env GOPROXY" prints.
	Upstream string
	// Log receives a line per step; nil discards them.
	Log io.Writer
}

// Staged is a release built on disk:
//
//	Dir/src/<dir>/  each module's files as its version will hold them: go.mod pinned, go.sum
//	                complete, the repository's LICENSE when the module has none
//	Dir/proxy/      a module proxy serving those versions: list, .info, .mod and .zip files
//	Dir/gomodcache/ the module cache of the go command run with Env, so that the versions
//	                staged never reach your own module cache
//	Dir/env.sh      Env as shell export lines
type Staged struct {
	Version string
	Dir     string
	// Env is the environment, as KEY=value entries to add to the current one, under which the
	// go command sees the staged versions: GOWORK=off, GOPROXY with the on-disk proxy first,
	// GONOSUMDB for the module path prefix only, GONOPROXY=none, a GOMODCACHE of its own and
	// GOFLAGS=-modcacherw.
	Env     []string
	Modules []StagedModule

	top, rel string // the repository root, and the workspace root relative to it
}

// StagedModule is one module of a Staged release.
type StagedModule struct {
	*Module
	// Src is the directory holding the module's files.
	Src string
	// Sum and GoModSum are the hashes of the module's zip and go.mod, as go.sum records them.
	Sum, GoModSum string
}

// ProblemsError is the error of a workspace that fails CheckPins.
type ProblemsError []Problem

func (e ProblemsError) Error() string {
	lines := make([]string, len(e))
	for i, p := range e {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Stage builds, in opts.Dir, the release of every workspace module from the working tree
// (the files git tracks or would track; see Staged). It works in dependency order: a module's
// go.sum gets the lines of its siblings from "go mod tidy" run against the proxy holding the
// siblings staged before it, and only then is the module zipped. Lines for other modules stay
// as they are in the working tree. The go.sum files are therefore reproducible: the same
// working tree gives the same lines, since a hash covers only file names and contents.
func Stage(ctx context.Context, w *Workspace, opts StageOptions) (*Staged, error) {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "release: "+format+"\n", args...)
		}
	}
	version := opts.Version
	var edits []Edit
	if version == "" {
		v, problems := w.CheckPins("")
		if len(problems) > 0 {
			return nil, ProblemsError(problems)
		}
		if v == "" {
			return nil, errors.New("no module requires another, so none pins a version: name the version to stage")
		}
		version = v
	} else {
		var err error
		if edits, err = w.SetVersion(version); err != nil {
			return nil, err
		}
	}
	if err := CheckVersion(version); err != nil {
		return nil, err
	}

	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty", dir)
	}
	upstream := opts.Upstream
	if upstream == "" {
		out, err := exec.CommandContext(ctx, "go", "env", "GOPROXY").Output()
		if err != nil {
			return nil, fmt.Errorf("go env GOPROXY: %v", err)
		}
		upstream = strings.TrimSpace(string(out))
	}
	s := &Staged{Version: version, Dir: dir, Env: releaseEnv(w, dir, upstream)}

	top, err := repoRoot(ctx, w.Root)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(w.Root) // git prints the top with links resolved
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(top, root)
	if err != nil {
		return nil, err
	}
	when, err := commitTime(ctx, top, "HEAD")
	if err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(top, "LICENSE"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}

	s.top, s.rel = top, filepath.ToSlash(rel)
	for _, m := range w.Modules {
		sm := StagedModule{Module: m, Src: filepath.Join(dir, "src", filepath.FromSlash(m.Dir))}
		if err := copyModule(ctx, top, s.subdir(m), sm.Src, license); err != nil {
			return nil, err
		}
		for _, e := range edits {
			if e.File == m.GoMod() {
				if err := os.WriteFile(filepath.Join(sm.Src, "go.mod"), e.New, 0o644); err != nil {
					return nil, err
				}
			}
		}
		s.Modules = append(s.Modules, sm)
	}

	isSibling := func(p string) bool { return w.Module(p) != nil }
	for i := range s.Modules {
		sm := &s.Modules[i]
		if len(sm.Requires) > 0 {
			logf("%s %s: go.sum lines of its siblings, from go mod tidy against the staged proxy", sm.Dir, version)
			if err := s.completeSums(ctx, sm, isSibling); err != nil {
				return nil, err
			}
		}
		if err := s.publish(sm, when); err != nil {
			return nil, err
		}
		logf("%s %s: %s", sm.Dir, version, sm.Sum)
	}
	if err := os.WriteFile(filepath.Join(dir, "env.sh"), []byte(shellExports(s.Env)), 0o644); err != nil {
		return nil, err
	}
	return s, nil
}

// subdir is the module's directory relative to the repository root: the prefix of its tags.
func (s *Staged) subdir(m *Module) string { return path.Join(s.rel, m.Dir) }

// releaseEnv returns the environment under which the go command builds against the release
// in dir. GONOPROXY=none overrides a GOPRIVATE that would send these modules past the
// on-disk proxy.
func releaseEnv(w *Workspace, dir, upstream string) []string {
	nosumdb := w.PathPrefix()
	if nosumdb == "" {
		var paths []string
		for _, m := range w.Modules {
			paths = append(paths, m.Path)
		}
		nosumdb = strings.Join(paths, ",")
	}
	return []string{
		"GOWORK=off",
		"GOPROXY=file://" + filepath.ToSlash(filepath.Join(dir, "proxy")) + "," + upstream,
		"GONOSUMDB=" + nosumdb,
		"GONOPROXY=none",
		"GOMODCACHE=" + filepath.Join(dir, "gomodcache"),
		"GOFLAGS=-modcacherw",
	}
}

// shellExports renders env as a shell script of export lines.
func shellExports(env []string) string {
	var b strings.Builder
	b.WriteString("# The environment under which the go command sees the staged release (written by tools/cmd/release stage).\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	return b.String()
}

// copyModule copies the files of the module in subdir (relative to the repository root top)
// into dst, adding the repository's license when the module has no LICENSE of its own, as
// the go command does when it zips a module from a tag.
func copyModule(ctx context.Context, top, subdir, dst string, license []byte) error {
	files, err := workingFiles(ctx, top, subdir)
	if err != nil {
		return err
	}
	for _, f := range files {
		src := filepath.Join(top, filepath.FromSlash(f))
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue // a module zip holds regular files only
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		name := filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(f, subdir+"/")))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "LICENSE")); errors.Is(err, os.ErrNotExist) && license != nil {
		return os.WriteFile(filepath.Join(dst, "LICENSE"), license, 0o644)
	}
	return nil
}

// completeSums gives the staged module's go.sum the lines "go mod tidy" writes for its
// siblings at the staged version, and keeps the rest of go.mod and go.sum as they are, so
// that an untidy module stays untidy for "go mod tidy -diff" to report.
func (s *Staged) completeSums(ctx context.Context, sm *StagedModule, isSibling func(string) bool) error {
	goMod := filepath.Join(sm.Src, "go.mod")
	goSum := filepath.Join(sm.Src, "go.sum")
	mod, err := os.ReadFile(goMod)
	if err != nil {
		return err
	}
	sum, err := os.ReadFile(goSum)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if out, err := s.Go(ctx, sm.Src, "mod", "tidy"); err != nil {
		return fmt.Errorf("%s: go mod tidy against the staged proxy (which holds the siblings its go.mod requires): %v\n%s", sm.Dir, err, out)
	}
	tidied, err := os.ReadFile(goSum)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	merged, err := mergeSums(sum, tidied, isSibling)
	if err != nil {
		return fmt.Errorf("%s/go.sum: %v", sm.Dir, err)
	}
	if err := os.WriteFile(goMod, mod, 0o644); err != nil {
		return err
	}
	return os.WriteFile(goSum, merged, 0o644)
}

// publish zips the staged module into the proxy, with its .mod, .info and list files, and
// records its hashes.
func (s *Staged) publish(sm *StagedModule, when time.Time) error {
	esc, err := module.EscapePath(sm.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(s.Dir, "proxy", filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	base := filepath.Join(at, s.Version)
	mv := module.Version{Path: sm.Path, Version: s.Version}
	zf, err := os.Create(base + ".zip")
	if err != nil {
		return err
	}
	if err := modzip.CreateFromDir(zf, mv, sm.Src); err != nil {
		zf.Close()
		return err
	}
	if err := zf.Close(); err != nil {
		return err
	}
	if sm.Sum, err = dirhash.HashZip(base+".zip", dirhash.Hash1); err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(sm.Src, "go.mod"))
	if err != nil {
		return err
	}
	if sm.GoModSum, err = goModSum(mod); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{s.Version, when})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		base + ".mod":             mod,
		base + ".info":            info,
		filepath.Join(at, "list"): []byte(s.Version + "\n"),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// goModSum is the hash go.sum records for a go.mod file ("module version/go.mod h1:…").
func goModSum(data []byte) (string, error) {
	return dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}

// zipSum is the hash go.sum records for a module zip made of files.
func zipSum(mv module.Version, files []modzip.File) (string, error) {
	f, err := os.CreateTemp("", "release-*.zip")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := modzip.Create(f, mv, files); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return dirhash.HashZip(f.Name(), dirhash.Hash1)
}

// Go runs the go command in dir with the release's environment and returns its combined
// output.
func (s *Staged) Go(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), s.Env...)
	return cmd.CombinedOutput()
}
