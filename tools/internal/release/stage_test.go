package release

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stageFamily stages the family repository's release into a new directory. The upstream
// proxy is an empty directory: the family needs nothing from outside, and a lookup there
// finds nothing (where GOPROXY=off would fail it).
func stageFamily(t *testing.T, root, version string) *Staged {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	w, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	upstream := "file://" + filepath.ToSlash(filepath.Join(tmp, "upstream"))
	if err := os.Mkdir(filepath.Join(tmp, "upstream"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Stage(context.Background(), w, StageOptions{Version: version, Dir: filepath.Join(tmp, "release"), Upstream: upstream})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sumLines(s *Staged, dirs ...string) string {
	var b strings.Builder
	for _, sm := range s.Modules {
		for _, d := range dirs {
			if sm.Dir == d {
				b.WriteString(sm.Path + " " + s.Version + " " + sm.Sum + "\n")
				b.WriteString(sm.Path + " " + s.Version + "/go.mod " + sm.GoModSum + "\n")
			}
		}
	}
	return b.String()
}

// Stage builds each module as its tag will hold it, with go.sum files naming the hashes of
// the siblings it zipped before, and a proxy the go command builds from with GOWORK=off.
func TestStage(t *testing.T) {
	root := familyRepo(t)
	s := stageFamily(t, root, "")
	if s.Version != "v0.1.0" {
		t.Errorf("staged %s, want the pinned v0.1.0", s.Version)
	}
	if got := strings.Join(s.Tags(), " "); got != "a/v0.1.0 b/v0.1.0 c/v0.1.0" {
		t.Errorf("Tags() = %s", got)
	}
	for _, f := range []string{"a", "b", "c"} {
		for _, ext := range []string{"info", "mod", "zip"} {
			if _, err := os.Stat(filepath.Join(s.Dir, "proxy", "example.com", "fam", f, "@v", "v0.1.0."+ext)); err != nil {
				t.Error(err)
			}
		}
	}
	if got, want := readFile(t, s.Dir, "src/b/go.sum"), sumLines(s, "a"); got != want {
		t.Errorf("b/go.sum:\n%s\nwant:\n%s", got, want)
	}
	if got, want := readFile(t, s.Dir, "src/c/go.sum"), sumLines(s, "a", "b"); got != want {
		t.Errorf("c/go.sum:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "src", "a", "go.sum")); err == nil {
		t.Error("a requires nothing, but got a go.sum")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "src", "a", "build.out")); err == nil {
		t.Error("a file git ignores was staged")
	}
	if got := readFile(t, s.Dir, "src/a/LICENSE"); got != "the family's licence\n" {
		t.Errorf("a/LICENSE = %q, want the repository's", got)
	}
	if got := readFile(t, s.Dir, "src/c/LICENSE"); got != "c's own licence\n" {
		t.Errorf("c/LICENSE = %q, want its own", got)
	}
	env := readFile(t, s.Dir, "env.sh")
	for _, want := range []string{"export GOWORK='off'\n", "export GONOSUMDB='example.com/fam'\n", "export GOPROXY='file://" + filepath.ToSlash(s.Dir) + "/proxy,file://"} {
		if !strings.Contains(env, want) {
			t.Errorf("env.sh lacks %q:\n%s", want, env)
		}
	}
	if err := s.Check(context.Background(), nil); err != nil {
		t.Error(err)
	}

	// The same tree stages to the same hashes.
	again := stageFamily(t, root, "")
	for i, sm := range again.Modules {
		if sm.Sum != s.Modules[i].Sum || sm.GoModSum != s.Modules[i].GoModSum {
			t.Errorf("%s staged twice: %s then %s", sm.Dir, s.Modules[i].Sum, sm.Sum)
		}
	}
}

// A commit holding the staged go.sum files zips to the staged hashes; one that differs does
// not, and the error names the module.
func TestVerifyRevision(t *testing.T) {
	root := familyRepo(t)
	s := stageFamily(t, root, "")
	for _, d := range []string{"b", "c"} {
		writeFile(t, root, d+"/go.sum", readFile(t, s.Dir, "src/"+d+"/go.sum"))
	}
	run(t, root, "git", "add", ".")
	run(t, root, "git", "commit", "-q", "-m", "go.sum files")
	if err := s.VerifyRevision(context.Background(), "HEAD"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "b/extra.go", "package b\n")
	run(t, root, "git", "add", ".")
	run(t, root, "git", "commit", "-q", "-m", "more b")
	err := s.VerifyRevision(context.Background(), "HEAD")
	if err == nil || !strings.HasPrefix(err.Error(), "b at HEAD zips to ") {
		t.Errorf("VerifyRevision after a change to b: %v", err)
	}
}

// A version given moves the pins in the staged copies only.
func TestStageAnotherVersion(t *testing.T) {
	root := familyRepo(t)
	s := stageFamily(t, root, "v0.2.0")
	if got := readFile(t, s.Dir, "src/c/go.mod"); !strings.Contains(got, "example.com/fam/b v0.2.0") {
		t.Errorf("staged c/go.mod:\n%s", got)
	}
	if got := readFile(t, root, "c/go.mod"); !strings.Contains(got, "example.com/fam/b v0.1.0") {
		t.Errorf("the working tree's c/go.mod changed:\n%s", got)
	}
	if err := s.Check(context.Background(), nil); err != nil {
		t.Error(err)
	}
}

// An untidy module stays untidy in the staged copy, for TidyDiff to report; Tidy fixes it in
// the workspace.
func TestTidy(t *testing.T) {
	root := familyRepo(t)
	editFile(t, root, "c/go.mod", "\texample.com/fam/b v0.1.0\n", "")
	// c no longer requires b, so only go.work's order stages b before c, as tidying c needs.
	editFile(t, root, "go.work", "\t./c\n\t./b\n\t./a\n", "\t./a\n\t./b\n\t./c\n")
	s := stageFamily(t, root, "")
	diffs, err := s.TidyDiff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || !strings.Contains(string(diffs["c"]), "+\texample.com/fam/b v0.1.0") {
		t.Fatalf("TidyDiff: %q", diffs)
	}
	w, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := s.Tidy(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, " ") != "c/go.mod" {
		t.Errorf("Tidy changed %v, want c/go.mod (go.sum keeps no lines for unpublished siblings)", changed)
	}
	if got := readFile(t, root, "c/go.mod"); !strings.Contains(got, "example.com/fam/b v0.1.0") {
		t.Errorf("tidied c/go.mod:\n%s", got)
	}
}
