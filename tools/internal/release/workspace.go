// Package release keeps the modules of this repository releasable as one family: every module
// requires its siblings at the version of the release it belongs to, and go.work makes the
// workspace build them from the working tree (a replace line per module at that version,
// since a workspace still reads the go.mod of a required version).
//
// It reads the list of modules from go.work (Load), checks that the modules pin each other at
// one version (Workspace.CheckPins), moves those pins for a release (Workspace.SetVersion), and
// builds what a release publishes: each module's files as its version will hold them, with
// go.sum files that name the siblings' hashes, and a module proxy on disk that serves them
// (Stage). The release command (tools/cmd/release) and the repository's scripts use it.
//
// The go.sum lines for siblings. A hash covers a module's files, go.sum included, so a
// module's lines for its siblings can only be written in dependency order, and only for a
// release: the release writes them (Stage, then apply in tools/cmd/release) and commits them,
// and between releases they name the published version, which the working tree no longer
// equals. Before the first release there are none. Whatever builds a module on its own from
// the working tree (Stage, and with it the consumer check and the tidy check) writes them
// afresh in its staged copies, from "go mod tidy" run with GOWORK=off against the on-disk
// proxy of the siblings staged before, with GONOSUMDB for these modules only and a module
// cache of its own, so that an unpublished version never reaches the real one. The lines are
// reproducible: the same files give the same hashes, and Staged.VerifyRevision checks that the
// release commit zips, as the go command zips a module from a tag, to the hashes written.
package release

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// Module is one module of the workspace.
type Module struct {
	// Dir is the module's directory relative to the workspace root, slash-separated and
	// without a leading "./", such as "tables".
	Dir string
	// Path is the module path.
	Path string
	// Requires lists the module's requirements on other modules of the workspace, in go.mod
	// order.
	Requires []module.Version
	// Replaces lists the replace lines of the module's go.mod that name another module of the
	// workspace.
	Replaces []module.Version
}

// GoMod is the module's go.mod, relative to the workspace root.
func (m *Module) GoMod() string { return path.Join(m.Dir, "go.mod") }

// Workspace is the go.work file and its modules.
type Workspace struct {
	// Root is the directory that holds go.work.
	Root string
	// Modules are the modules go.work uses, in dependency order: each after every module it
	// requires, otherwise in go.work's order.
	Modules []*Module
	// Replaces are go.work's replace lines.
	Replaces []*modfile.Replace
}

// Load reads root/go.work and the go.mod file of every module it uses.
func Load(root string) (*Workspace, error) {
	return load(root, os.ReadFile)
}

// After returns the workspace as it would be with the edits applied, without writing them.
func (w *Workspace) After(edits []Edit) (*Workspace, error) {
	return load(w.Root, func(name string) ([]byte, error) {
		for _, e := range edits {
			if name == filepath.Join(w.Root, filepath.FromSlash(e.File)) {
				return e.New, nil
			}
		}
		return os.ReadFile(name)
	})
}

func load(root string, read func(string) ([]byte, error)) (*Workspace, error) {
	name := filepath.Join(root, "go.work")
	data, err := read(name)
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, err
	}
	w := &Workspace{Root: root, Replaces: wf.Replace}
	var listed []*Module
	for _, u := range wf.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		if path.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") {
			return nil, fmt.Errorf("go.work: use %s: the release tool expects every module inside the workspace", u.Path)
		}
		m, err := loadModule(root, dir, read)
		if err != nil {
			return nil, err
		}
		listed = append(listed, m)
	}
	if len(listed) == 0 {
		return nil, fmt.Errorf("go.work: no modules")
	}
	siblings := map[string]bool{}
	for _, m := range listed {
		if siblings[m.Path] {
			return nil, fmt.Errorf("go.work: two directories hold module %s", m.Path)
		}
		siblings[m.Path] = true
	}
	for _, m := range listed {
		m.Requires = slices.DeleteFunc(m.Requires, func(v module.Version) bool { return !siblings[v.Path] })
		m.Replaces = slices.DeleteFunc(m.Replaces, func(v module.Version) bool { return !siblings[v.Path] })
	}
	if w.Modules, err = dependencyOrder(listed); err != nil {
		return nil, err
	}
	return w, nil
}

// loadModule reads the go.mod file in root/dir. Requires and Replaces hold every line at
// first; Load keeps the ones that name workspace modules.
func loadModule(root, dir string, read func(string) ([]byte, error)) (*Module, error) {
	name := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
	data, err := read(name)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, err
	}
	if f.Module == nil {
		return nil, fmt.Errorf("%s/go.mod: no module line", dir)
	}
	m := &Module{Dir: dir, Path: f.Module.Mod.Path}
	for _, r := range f.Require {
		m.Requires = append(m.Requires, r.Mod)
	}
	for _, r := range f.Replace {
		m.Replaces = append(m.Replaces, r.Old)
	}
	return m, nil
}

// dependencyOrder sorts modules so that each comes after the modules it requires; among the
// modules that are ready, the one listed first goes first.
func dependencyOrder(listed []*Module) ([]*Module, error) {
	placed := map[string]bool{}
	var order []*Module
	for len(order) < len(listed) {
		next := slices.IndexFunc(listed, func(m *Module) bool {
			return !placed[m.Path] && !slices.ContainsFunc(m.Requires, func(r module.Version) bool { return !placed[r.Path] })
		})
		if next < 0 {
			var left []string
			for _, m := range listed {
				if !placed[m.Path] {
					left = append(left, m.Dir)
				}
			}
			return nil, fmt.Errorf("go.work: the modules %s require each other in a cycle", strings.Join(left, ", "))
		}
		placed[listed[next].Path] = true
		order = append(order, listed[next])
	}
	return order, nil
}

// Module returns the workspace module with the given module path, or nil.
func (w *Workspace) Module(modPath string) *Module {
	for _, m := range w.Modules {
		if m.Path == modPath {
			return m
		}
	}
	return nil
}

// PathPrefix is the longest path prefix, in whole elements, that every module path shares,
// such as "github.com/unified-data/gotables": the pattern under which GONOSUMDB turns the
// checksum database off for these modules and no others.
func (w *Workspace) PathPrefix() string {
	prefix := strings.Split(w.Modules[0].Path, "/")
	for _, m := range w.Modules[1:] {
		elems := strings.Split(m.Path, "/")
		n := 0
		for n < len(prefix) && n < len(elems) && prefix[n] == elems[n] {
			n++
		}
		prefix = prefix[:n]
	}
	return strings.Join(prefix, "/")
}
