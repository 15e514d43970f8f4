package release

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/module"
)

func dirs(w *Workspace) []string {
	var out []string
	for _, m := range w.Modules {
		out = append(out, m.Dir)
	}
	return out
}

// This repository's modules load, each after the modules it requires, and pin each other
// at one version that go.work builds from the working tree.
func TestRepositoryPinsAgree(t *testing.T) {
	w, err := Load(repoRootForTest(t))
	if err != nil {
		t.Fatal(err)
	}
	released := map[string]bool{}
	for _, m := range w.Modules {
		for _, r := range m.Requires {
			if !released[r.Path] {
				t.Errorf("%s comes before %s, which it requires", m.Dir, r.Path)
			}
		}
		released[m.Path] = true
	}
	version, problems := w.CheckPins("")
	for _, p := range problems {
		t.Error(p)
	}
	if CheckVersion(version) != nil {
		t.Errorf("the modules pin %q, not a release version", version)
	}
}

func TestLoadOrdersByDependency(t *testing.T) {
	w, err := Load(familyRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dirs(w), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	c := w.Module("example.com/fam/c")
	want := []module.Version{{Path: "example.com/fam/a", Version: "v0.1.0"}, {Path: "example.com/fam/b", Version: "v0.1.0"}}
	if c == nil || !slices.Equal(c.Requires, want) {
		t.Errorf("c requires %v, want %v", c, want)
	}
	if got := w.PathPrefix(); got != "example.com/fam" {
		t.Errorf("PathPrefix() = %q", got)
	}
}

// Among modules that are ready, go.work's order decides, so that a hand-ordered go.work
// gives the release order it shows.
func TestLoadKeepsWorkOrderWhenFree(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.work", "go 1.25.0\n\nuse (\n\t./z\n\t./y\n\t./x\n)\n")
	writeFile(t, root, "x/go.mod", "module example.com/x\n\ngo 1.25.0\n")
	writeFile(t, root, "y/go.mod", "module example.com/y\n\ngo 1.25.0\n\nrequire example.com/x v0.1.0\n")
	writeFile(t, root, "z/go.mod", "module example.com/z\n\ngo 1.25.0\n")
	w, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dirs(w), []string{"z", "x", "y"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestLoadRefusesCycles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.work", "go 1.25.0\n\nuse (\n\t./x\n\t./y\n)\n")
	writeFile(t, root, "x/go.mod", "module example.com/x\n\ngo 1.25.0\n\nrequire example.com/y v0.1.0\n")
	writeFile(t, root, "y/go.mod", "module example.com/y\n\ngo 1.25.0\n\nrequire example.com/x v0.1.0\n")
	_, err := Load(root)
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("Load of a cycle: %v", err)
	}
}
