package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Edit is the new content of one file.
type Edit struct {
	// File is relative to the workspace root, such as "tables/go.mod".
	File string
	// Old and New are the file's content before and after.
	Old, New []byte
	// Changes say what changed, one line each, such as
	// "require github.com/unified-data/gotables/abstractions v0.0.0 => v0.1.0".
	Changes []string
}

// CheckVersion reports whether version can name a release of these modules: a canonical
// semantic version (v0.1.0, v1.2.3-rc.1) of major version 0 or 1, since the module paths have
// no /vN suffix.
func CheckVersion(version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		return fmt.Errorf("%q is not a release version such as v0.1.0", version)
	}
	if m := semver.Major(version); m != "v0" && m != "v1" {
		return fmt.Errorf("%s: a major version above v1 needs a /%s suffix on every module path first", version, m)
	}
	return nil
}

// SetVersion returns the edits that make every module require its siblings at version, drop
// go.mod replace lines that name a sibling, and make go.work point that version of each
// module at its directory. Files already right get no edit. Nothing is written; see Apply.
func (w *Workspace) SetVersion(version string) ([]Edit, error) {
	if err := CheckVersion(version); err != nil {
		return nil, err
	}
	var edits []Edit
	for _, m := range w.Modules {
		name := filepath.Join(w.Root, filepath.FromSlash(m.GoMod()))
		old, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := modfile.Parse(name, old, nil)
		if err != nil {
			return nil, err
		}
		var changes []string
		for _, r := range m.Requires {
			if r.Version == version {
				continue
			}
			if err := f.AddRequire(r.Path, version); err != nil {
				return nil, err
			}
			changes = append(changes, fmt.Sprintf("require %s %s => %s", r.Path, r.Version, version))
		}
		for _, r := range m.Replaces {
			if err := f.DropReplace(r.Path, r.Version); err != nil {
				return nil, err
			}
			changes = append(changes, fmt.Sprintf("drop replace %s", r))
		}
		if len(changes) == 0 {
			continue
		}
		f.Cleanup()
		edits = append(edits, Edit{File: m.GoMod(), Old: old, New: modfile.Format(f.Syntax), Changes: changes})
	}

	name := filepath.Join(w.Root, "go.work")
	old, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork(name, old, nil)
	if err != nil {
		return nil, err
	}
	var changes []string
	for _, m := range w.Modules {
		var stale []string
		current := false
		for _, r := range wf.Replace {
			switch {
			case r.Old.Path != m.Path:
			case r.Old.Version != version:
				stale = append(stale, r.Old.Version)
			case r.New.Path == "./"+m.Dir && r.New.Version == "":
				current = true
			}
		}
		if current && len(stale) == 0 {
			continue
		}
		if err := wf.AddReplace(m.Path, version, "./"+m.Dir, ""); err != nil {
			return nil, err
		}
		for _, v := range stale {
			if err := wf.DropReplace(m.Path, v); err != nil {
				return nil, err
			}
		}
		if len(stale) > 0 {
			changes = append(changes, fmt.Sprintf("replace %s %s => ./%s (was %s)", m.Path, version, m.Dir, strings.Join(stale, ", ")))
		} else {
			changes = append(changes, fmt.Sprintf("replace %s %s => ./%s", m.Path, version, m.Dir))
		}
	}
	wf.Cleanup()
	if updated := modfile.Format(wf.Syntax); !bytes.Equal(updated, old) {
		edits = append(edits, Edit{File: "go.work", Old: old, New: updated, Changes: changes})
	}
	return edits, nil
}

// Apply writes the edits into the workspace.
func (w *Workspace) Apply(edits []Edit) error {
	for _, e := range edits {
		if err := os.WriteFile(filepath.Join(w.Root, filepath.FromSlash(e.File)), e.New, 0o644); err != nil {
			return err
		}
	}
	return nil
}
