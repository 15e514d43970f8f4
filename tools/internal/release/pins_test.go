package release

import (
	"strings"
	"testing"
)

// problemText joins the problems, one a line.
func problemText(problems []Problem) string {
	return ProblemsError(problems).Error()
}

// The check on a temporary copy of this repository's go.work and go.mod files, with one
// go.mod broken on purpose: the failure names the module at fault.
func TestCheckPinsNamesTheModule(t *testing.T) {
	root := repoRootForTest(t)
	w, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	pinned, problems := w.CheckPins("")
	if len(problems) > 0 {
		t.Fatalf("the repository itself fails the check:\n%s", problemText(problems))
	}
	tables := w.Module("github.com/unified-data/gotables/tables")
	if tables == nil {
		t.Fatal("no tables module in go.work")
	}

	for _, tc := range []struct {
		name    string
		version string // the version checked against; "" for none
		break_  func(t *testing.T, dir string)
		want    []string // each must be in one problem line
	}{
		{
			name: "a go.mod pins another version of a sibling",
			break_: func(t *testing.T, dir string) {
				editFile(t, dir, "inmemory/go.mod", tables.Path+" "+pinned, tables.Path+" v0.0.9")
			},
			want: []string{
				tables.Path + " is required at different versions: v0.0.9 by inmemory/go.mod; " + pinned + " by ",
				"inmemory/go.mod: requires " + tables.Path + " v0.0.9, but the other modules pin their siblings at " + pinned,
			},
		},
		{
			name:    "a go.mod pins a version that is not the one being released",
			version: "v0.2.0",
			want: []string{
				"inmemory/go.mod: requires " + tables.Path + " " + pinned + ", not v0.2.0, the version being released",
				"go.work: replaces " + tables.Path + " " + pinned + ", but the modules pin v0.2.0",
			},
		},
		{
			name: "a go.mod replaces a sibling",
			break_: func(t *testing.T, dir string) {
				content := readFile(t, dir, "fidelity/go.mod")
				writeFile(t, dir, "fidelity/go.mod", content+"\nreplace "+tables.Path+" => ../tables\n")
			},
			want: []string{"fidelity/go.mod: replaces " + tables.Path + "; a consumer ignores replace lines"},
		},
		{
			name: "go.work does not build the pinned version from the working tree",
			break_: func(t *testing.T, dir string) {
				editFile(t, dir, "go.work", tables.Path+" "+pinned+" => ./tables", tables.Path+" v0.0.9 => ./tables")
			},
			want: []string{
				"go.work: replaces " + tables.Path + " v0.0.9, but the modules pin " + pinned,
				"go.work: needs \"replace " + tables.Path + " " + pinned + " => ./tables\"",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyWorkspaceFiles(t, root)
			if tc.break_ != nil {
				tc.break_(t, dir)
			}
			w, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, problems := w.CheckPins(tc.version)
			text := problemText(problems)
			if len(problems) == 0 {
				t.Fatal("CheckPins found nothing wrong")
			}
			for _, want := range tc.want {
				if !strings.Contains(text, want) {
					t.Errorf("no problem says %q; the problems:\n%s", want, text)
				}
			}
			if tc.version == "" && got != "" {
				t.Errorf("CheckPins returned version %q for a workspace that fails it", got)
			}
		})
	}
}

// Two modules, one sibling, one version each: neither is the majority, and both are named.
func TestCheckPinsNamesBothSides(t *testing.T) {
	root := familyRepo(t)
	editFile(t, root, "c/go.mod", "example.com/fam/a v0.1.0", "example.com/fam/a v0.0.9")
	w, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	_, problems := w.CheckPins("")
	want := "go.mod files: example.com/fam/a is required at different versions: v0.0.9 by c/go.mod; v0.1.0 by b/go.mod"
	if text := problemText(problems); !strings.Contains(text, want) {
		t.Errorf("no problem says %q; the problems:\n%s", want, text)
	}
}
