package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRootForTest returns the directory of this repository's go.work, or skips the test
// when there is none above (a copy of the module outside the repository).
func repoRootForTest(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d
		}
	}
	t.Skip("no go.work above the package: not inside the repository")
	return ""
}

// copyWorkspaceFiles copies go.work and every module's go.mod from the workspace at root
// into a new temporary directory and returns it: enough for Load, CheckPins and SetVersion.
func copyWorkspaceFiles(t *testing.T, root string) string {
	t.Helper()
	w, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	files := []string{"go.work"}
	for _, m := range w.Modules {
		files = append(files, m.GoMod())
	}
	for _, f := range files {
		writeFile(t, dst, f, readFile(t, root, f))
	}
	return dst
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editFile replaces old, which must occur in the file, with new.
func editFile(t *testing.T, root, name, old, new string) {
	t.Helper()
	content := readFile(t, root, name)
	if !strings.Contains(content, old) {
		t.Fatalf("%s does not contain %q:\n%s", name, old, content)
	}
	writeFile(t, root, name, strings.Replace(content, old, new, 1))
}

// isolateGit keeps the user's and the system's git configuration (signing, hooks) out of
// the test's repositories, and names the author of their commits.
func isolateGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL":   os.DevNull,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Release Test",
		"GIT_AUTHOR_EMAIL":    "release-test@example.com",
		"GIT_COMMITTER_NAME":  "Release Test",
		"GIT_COMMITTER_EMAIL": "release-test@example.com",
	} {
		t.Setenv(k, v)
	}
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// familyRepo makes a git repository holding a small family of modules that require each
// other at v0.1.0, as this repository's do: example.com/fam/a (no requirements),
// example.com/fam/b (requires a) and example.com/fam/c (requires a and b). go.work lists
// them in reverse, so that their dependency order has to be worked out. No module needs
// anything from outside, so nothing is downloaded.
func familyRepo(t *testing.T) string {
	t.Helper()
	isolateGit(t)
	root := t.TempDir()
	files := map[string]string{
		"go.work": `go 1.25.0

use (
	./c
	./b
	./a
)

// The modules at their pinned version, from their directories.
replace (
	example.com/fam/a v0.1.0 => ./a
	example.com/fam/b v0.1.0 => ./b
	example.com/fam/c v0.1.0 => ./c
)
`,
		"LICENSE":      "the family's licence\n",
		"CHANGELOG.md": "# Changelog\n\n## [Unreleased]\n\n- Everything.\n",
		".gitignore":   "*.out\n",
		"a/go.mod":     "module example.com/fam/a\n\ngo 1.25.0\n",
		"a/a.go":       "// Package a says hello.\npackage a\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n",
		"a/build.out":  "ignored by git, so not part of the module\n",
		"b/go.mod":     "module example.com/fam/b\n\ngo 1.25.0\n\nrequire example.com/fam/a v0.1.0\n",
		"b/b.go":       "// Package b greets.\npackage b\n\nimport \"example.com/fam/a\"\n\n// Greet greets.\nfunc Greet() string { return a.Hello() + \", world\" }\n",
		"c/go.mod":     "module example.com/fam/c\n\ngo 1.25.0\n\nrequire (\n\texample.com/fam/a v0.1.0\n\texample.com/fam/b v0.1.0\n)\n",
		"c/c.go":       "// Package c uses both.\npackage c\n\nimport (\n\t\"example.com/fam/a\"\n\t\"example.com/fam/b\"\n)\n\n// Both says both.\nfunc Both() string { return a.Hello() + b.Greet() }\n",
		"c/LICENSE":    "c's own licence\n",
	}
	for name, content := range files {
		writeFile(t, root, name, content)
	}
	run(t, root, "git", "init", "-q")
	run(t, root, "git", "add", ".")
	run(t, root, "git", "commit", "-q", "-m", "A family of modules")
	return root
}
