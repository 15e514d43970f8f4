package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// Every git and go command the tests start is waited for, so no goroutine should be left.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runRelease runs the command line and returns its exit status, standard output and standard
// error.
func runRelease(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func write(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func command(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// brokenCopy copies this repository's go.work and go.mod files into a temporary directory
// and makes inmemory/go.mod require tables at v0.0.9 instead of the version the other
// modules pin.
func brokenCopy(t *testing.T) string {
	t.Helper()
	root, err := findWorkspace(".")
	if err != nil {
		t.Skip("not inside the repository:", err)
	}
	dst := t.TempDir()
	write(t, dst, "go.work", read(t, root, "go.work"))
	for _, m := range []string{"abstractions", "tables", "inmemory", "identity", "fidelity", "tools"} {
		write(t, dst, m+"/go.mod", read(t, root, m+"/go.mod"))
	}
	mod := read(t, dst, "inmemory/go.mod")
	broken := strings.Replace(mod, "github.com/unified-data/gotables/tables v0.1.0", "github.com/unified-data/gotables/tables v0.0.9", 1)
	if broken == mod {
		t.Fatalf("inmemory/go.mod does not require tables at v0.1.0:\n%s", mod)
	}
	write(t, dst, "inmemory/go.mod", broken)
	return dst
}

// The check, and the consumer check's first step (stage), fail on a copy of the repository
// with one go.mod pinning another version of a sibling, and name that go.mod.
func TestCheckFailsNamingTheModule(t *testing.T) {
	dir := brokenCopy(t)
	want := "release: inmemory/go.mod: requires github.com/unified-data/gotables/tables v0.0.9, but the other modules pin their siblings at v0.1.0\n"
	for _, args := range [][]string{
		{"check", "-C", dir},
		{"stage", "-C", dir, "-dir", filepath.Join(t.TempDir(), "release")},
	} {
		code, stdout, stderr := runRelease(args...)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("release %s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and %q", args[0], code, stdout, stderr, want)
		}
	}
	code, _, stderr := runRelease("check", "-C", dir, "-version", "v0.1.0")
	if want := "release: inmemory/go.mod: requires github.com/unified-data/gotables/tables v0.0.9, not v0.1.0, the version being released\n"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("release check -version v0.1.0: exit %d, stderr:\n%s\nwant %q", code, stderr, want)
	}
}

func TestCheckPassesOnTheRepository(t *testing.T) {
	root, err := findWorkspace(".")
	if err != nil {
		t.Skip("not inside the repository:", err)
	}
	code, stdout, stderr := runRelease("check", "-C", root)
	if code != 0 || !strings.Contains(stdout, "require each other at v0.1.0") {
		t.Errorf("release check: exit %d\n%s%s", code, stdout, stderr)
	}
}

// The command builds from the tools module alone (see the package documentation): none of
// the packages it links comes from another module of the workspace.
func TestImportsNoSibling(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	out := command(t, ".", "go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")
	for _, mod := range strings.Fields(out) {
		if strings.HasPrefix(mod, "github.com/unified-data/gotables/") && mod != "github.com/unified-data/gotables/tools" {
			t.Errorf("the command links a package of module %s", mod)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"plan"}, {"stage"}, {"bogus"}, {"check", "extra"}} {
		if code, _, _ := runRelease(args...); code != 2 {
			t.Errorf("release %q: exit %d, want 2", args, code)
		}
	}
}

// familyRepo makes a git repository of two modules, example.com/fam/a and example.com/fam/b
// (which requires a at v0.1.0), with a go.work and a changelog; nothing in it needs a module
// from outside. GOPROXY is an empty directory, so that nothing is downloaded.
func familyRepo(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, "is not installed")
		}
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
	tmp := t.TempDir()
	upstream := filepath.Join(tmp, "upstream")
	if err := os.Mkdir(upstream, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(upstream))
	root := filepath.Join(tmp, "repo")
	for name, content := range map[string]string{
		"go.work":      "go 1.25.0\n\nuse (\n\t./a\n\t./b\n)\n\nreplace (\n\texample.com/fam/a v0.1.0 => ./a\n\texample.com/fam/b v0.1.0 => ./b\n)\n",
		"LICENSE":      "licence\n",
		"CHANGELOG.md": "# Changelog\n\n## [Unreleased]\n\n- Everything.\n",
		"a/go.mod":     "module example.com/fam/a\n\ngo 1.25.0\n",
		"a/a.go":       "// Package a says hello.\npackage a\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n",
		"b/go.mod":     "module example.com/fam/b\n\ngo 1.25.0\n\nrequire example.com/fam/a v0.1.0\n",
		"b/b.go":       "// Package b greets.\npackage b\n\nimport \"example.com/fam/a\"\n\n// Greet greets.\nfunc Greet() string { return a.Hello() + \", world\" }\n",
	} {
		write(t, root, name, content)
	}
	command(t, root, "git", "init", "-q")
	command(t, root, "git", "add", ".")
	command(t, root, "git", "commit", "-q", "-m", "A family of modules")
	return root
}

func TestPlan(t *testing.T) {
	root := familyRepo(t)
	code, stdout, stderr := runRelease("plan", "-C", root, "-version", "v0.1.0")
	if code != 0 {
		t.Fatalf("release plan: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"modules, from go.work, in dependency order: a, b\n",
		"nothing to change: every module requires its siblings at v0.1.0",
		"5. tag the commit, in this order:\n   a/v0.1.0\n   b/v0.1.0\n",
		"CHANGELOG.md has no section for v0.1.0",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, stdout)
		}
	}
	if got := command(t, root, "git", "status", "--porcelain"); got != "" {
		t.Errorf("the dry run changed files:\n%s", got)
	}
}

// apply commits the go.sum lines and tags each module in order; a later release moves every
// pin and replaces the siblings' go.sum lines.
func TestApply(t *testing.T) {
	root := familyRepo(t)
	if code, _, stderr := runRelease("apply", "-C", root, "-version", "v0.1.0"); code != 1 || !strings.Contains(stderr, "CHANGELOG.md has no section for v0.1.0") {
		t.Fatalf("apply without a changelog section: exit %d\n%s", code, stderr)
	}
	write(t, root, "CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-12-01\n\n- Everything.\n\n## [0.2.0] - 2026-12-02\n\n- More.\n")
	command(t, root, "git", "commit", "-q", "-am", "Changelog for 0.1.0 and 0.2.0")

	code, stdout, stderr := runRelease("apply", "-C", root, "-version", "v0.1.0")
	if code != 0 {
		t.Fatalf("release apply: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := command(t, root, "git", "tag", "--list", "--sort=creatordate"); got != "a/v0.1.0\nb/v0.1.0\n" {
		t.Errorf("tags:\n%s", got)
	}
	if got := command(t, root, "git", "log", "-1", "--format=%s", "b/v0.1.0"); got != "Release v0.1.0: the modules require each other at v0.1.0\n" {
		t.Errorf("b/v0.1.0 tags %q", got)
	}
	if got := read(t, root, "b/go.sum"); !strings.Contains(got, "example.com/fam/a v0.1.0 h1:") || !strings.Contains(got, "example.com/fam/a v0.1.0/go.mod h1:") {
		t.Errorf("b/go.sum:\n%s", got)
	}
	if got := command(t, root, "git", "status", "--porcelain"); got != "" {
		t.Errorf("apply left changes:\n%s", got)
	}
	if code, _, stderr := runRelease("apply", "-C", root, "-version", "v0.1.0"); code != 1 || !strings.Contains(stderr, "tag a/v0.1.0 exists already") {
		t.Errorf("apply again: exit %d\n%s", code, stderr)
	}

	if code, stdout, stderr := runRelease("apply", "-C", root, "-version", "v0.2.0"); code != 0 {
		t.Fatalf("release apply v0.2.0: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := read(t, root, "b/go.mod"); !strings.Contains(got, "require example.com/fam/a v0.2.0") {
		t.Errorf("b/go.mod after v0.2.0:\n%s", got)
	}
	if got := read(t, root, "go.work"); strings.Contains(got, "v0.1.0") || !strings.Contains(got, "example.com/fam/b v0.2.0 => ./b") {
		t.Errorf("go.work after v0.2.0:\n%s", got)
	}
	if got := read(t, root, "b/go.sum"); strings.Contains(got, "v0.1.0") || !strings.Contains(got, "example.com/fam/a v0.2.0 h1:") {
		t.Errorf("b/go.sum after v0.2.0:\n%s", got)
	}
	if code, stdout, stderr := runRelease("check", "-C", root, "-version", "v0.2.0"); code != 0 {
		t.Errorf("check after v0.2.0: exit %d\n%s%s", code, stdout, stderr)
	}
}
