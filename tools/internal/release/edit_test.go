package release

import (
	"strings"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"v0.1.0", "v1.2.3", "v0.2.0-rc.1"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("CheckVersion(%q) = %v", v, err)
		}
	}
	for _, v := range []string{"", "0.1.0", "v0.1", "v1.2.3+build", "v2.0.0", "latest"} {
		if err := CheckVersion(v); err == nil {
			t.Errorf("CheckVersion(%q) accepted it", v)
		}
	}
}

// SetVersion moves every pin and go.work's replace lines, keeps go.work's comments, and
// leaves a workspace that passes CheckPins at the new version; a second run has nothing to do.
func TestSetVersion(t *testing.T) {
	root := familyRepo(t)
	content := readFile(t, root, "b/go.mod")
	writeFile(t, root, "b/go.mod", content+"\nreplace example.com/fam/a => ../a\n")
	w, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	edits, err := w.SetVersion("v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]string{}
	for _, e := range edits {
		changes[e.File] = strings.Join(e.Changes, "\n")
	}
	for file, want := range map[string]string{
		"b/go.mod": "require example.com/fam/a v0.1.0 => v0.2.0\ndrop replace example.com/fam/a",
		"c/go.mod": "require example.com/fam/a v0.1.0 => v0.2.0\nrequire example.com/fam/b v0.1.0 => v0.2.0",
		"go.work": "replace example.com/fam/a v0.2.0 => ./a (was v0.1.0)\n" +
			"replace example.com/fam/b v0.2.0 => ./b (was v0.1.0)\n" +
			"replace example.com/fam/c v0.2.0 => ./c (was v0.1.0)",
	} {
		if changes[file] != want {
			t.Errorf("changes to %s:\n%s\nwant:\n%s", file, changes[file], want)
		}
	}
	if _, ok := changes["a/go.mod"]; ok {
		t.Error("a/go.mod requires no sibling but was edited")
	}

	after, err := w.After(edits)
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := after.CheckPins("v0.2.0"); len(problems) > 0 {
		t.Errorf("after SetVersion:\n%s", problemText(problems))
	}
	if err := w.Apply(edits); err != nil {
		t.Fatal(err)
	}
	work := readFile(t, root, "go.work")
	for _, want := range []string{"// The modules at their pinned version, from their directories.", "example.com/fam/b v0.2.0 => ./b"} {
		if !strings.Contains(work, want) {
			t.Errorf("go.work lacks %q:\n%s", want, work)
		}
	}
	if strings.Contains(work, "v0.1.0") {
		t.Errorf("go.work still names v0.1.0:\n%s", work)
	}
	if w, err = Load(root); err != nil {
		t.Fatal(err)
	}
	if again, err := w.SetVersion("v0.2.0"); err != nil || len(again) > 0 {
		t.Errorf("SetVersion again: %v, %d edits", err, len(again))
	}
}

func TestChangelogHasSection(t *testing.T) {
	for _, tc := range []struct {
		changelog string
		want      bool
	}{
		{"## [Unreleased]\n\n## [0.1.0] - 2026-12-01\n", true},
		{"## [v0.1.0]\n", true},
		{"## 0.1.0\n", true},
		{"## [Unreleased]\n\n- Ready for 0.1.0.\n", false},
		{"## [0.1.01] - 2026-12-01\n", false},
		{"### [0.1.0]\n", false},
		{"## [0.10.0]\n", false},
	} {
		if got := ChangelogHasSection([]byte(tc.changelog), "v0.1.0"); got != tc.want {
			t.Errorf("ChangelogHasSection(%q, v0.1.0) = %v, want %v", tc.changelog, got, tc.want)
		}
	}
}

func TestMergeSums(t *testing.T) {
	base := "example.com/fam/a v0.0.1 h1:old=\n" +
		"example.com/fam/a v0.0.1/go.mod h1:oldmod=\n" +
		"golang.org/x/text v0.3.0/go.mod h1:text=\n" +
		"golang.org/x/mod v0.39.0 h1:mod=\n"
	fresh := "example.com/fam/a v0.1.0/go.mod h1:newmod=\n" +
		"example.com/fam/a v0.1.0 h1:new=\n" +
		"golang.org/x/mod v0.40.0 h1:ignored=\n"
	got, err := mergeSums([]byte(base), []byte(fresh), func(p string) bool { return strings.HasPrefix(p, "example.com/fam/") })
	if err != nil {
		t.Fatal(err)
	}
	want := "example.com/fam/a v0.1.0 h1:new=\n" +
		"example.com/fam/a v0.1.0/go.mod h1:newmod=\n" +
		"golang.org/x/mod v0.39.0 h1:mod=\n" +
		"golang.org/x/text v0.3.0/go.mod h1:text=\n"
	if string(got) != want {
		t.Errorf("mergeSums:\n%s\nwant:\n%s", got, want)
	}
	if _, err := mergeSums([]byte("example.com/x v1.0.0\n"), nil, func(string) bool { return false }); err == nil {
		t.Error("mergeSums accepted a line without a hash")
	}
}
