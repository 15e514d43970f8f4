package release

import (
	"fmt"
	"path"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Problem is one reason the workspace cannot be released as it is. File names the file at
// fault, relative to the workspace root, such as "inmemory/go.mod".
type Problem struct {
	File string
	Msg  string
}

func (p Problem) String() string { return p.File + ": " + p.Msg }

// pin is one requirement of a workspace module on a sibling.
type pin struct {
	from *Module
	mod  module.Version
}

// CheckPins reports what stops the modules from being released together at version, or, when
// version is empty, at one version at all:
//
//   - two modules requiring one sibling at different versions;
//   - a requirement on a sibling at another version than the release's (when version is set),
//     or at another version than the other requirements (when it is not);
//   - a go.mod that replaces a sibling (a consumer ignores replace lines, so the module would
//     build here and nowhere else);
//   - go.work not pointing the pinned version of each module at its directory.
//
// It returns the version the modules pin (version itself when set; empty when no module
// requires another or the pins disagree) and the problems, in a stable order.
func (w *Workspace) CheckPins(version string) (string, []Problem) {
	var problems []Problem
	var pins []pin
	for _, m := range w.Modules {
		for _, r := range m.Requires {
			pins = append(pins, pin{m, r})
		}
		for _, r := range m.Replaces {
			problems = append(problems, Problem{m.GoMod(), fmt.Sprintf(
				"replaces %s; a consumer ignores replace lines, and go.work already builds the workspace from the working tree: remove the replace", r.Path)})
		}
	}

	// One sibling, several versions: name every module and what it pins.
	for _, sib := range w.Modules {
		byVersion := map[string][]string{}
		var versions []string
		for _, p := range pins {
			if p.mod.Path != sib.Path {
				continue
			}
			if _, ok := byVersion[p.mod.Version]; !ok {
				versions = append(versions, p.mod.Version)
			}
			byVersion[p.mod.Version] = append(byVersion[p.mod.Version], p.from.GoMod())
		}
		if len(versions) < 2 {
			continue
		}
		semver.Sort(versions)
		var parts []string
		for _, v := range versions {
			parts = append(parts, fmt.Sprintf("%s by %s", v, strings.Join(byVersion[v], ", ")))
		}
		problems = append(problems, Problem{"go.mod files", fmt.Sprintf(
			"%s is required at different versions: %s; modules of one release require each other at that release's version",
			sib.Path, strings.Join(parts, "; "))})
	}

	want := version
	if want == "" {
		want = commonVersion(pins)
	}
	for _, p := range pins {
		if want == "" || p.mod.Version == want {
			continue
		}
		if version != "" {
			problems = append(problems, Problem{p.from.GoMod(), fmt.Sprintf(
				"requires %s %s, not %s, the version being released", p.mod.Path, p.mod.Version, version)})
		} else {
			problems = append(problems, Problem{p.from.GoMod(), fmt.Sprintf(
				"requires %s %s, but the other modules pin their siblings at %s", p.mod.Path, p.mod.Version, want)})
		}
	}
	if want != "" {
		problems = append(problems, w.checkWorkReplaces(want)...)
	}
	if version == "" && len(problems) > 0 {
		want = ""
	}
	return want, problems
}

// commonVersion returns the version most requirements name (the highest one on a tie), or
// "" when there are no requirements.
func commonVersion(pins []pin) string {
	count := map[string]int{}
	best := ""
	for _, p := range pins {
		count[p.mod.Version]++
	}
	for v, n := range count {
		if best == "" || n > count[best] || n == count[best] && semver.Compare(v, best) > 0 {
			best = v
		}
	}
	return best
}

// checkWorkReplaces reports the modules whose version go.work does not point at their
// directory: without that line the workspace would download the version instead of building
// the working tree, and fail while it is unpublished.
func (w *Workspace) checkWorkReplaces(version string) []Problem {
	var problems []Problem
	for _, m := range w.Modules {
		found := false
		for _, r := range w.Replaces {
			if r.Old.Path != m.Path {
				continue
			}
			switch {
			case r.Old.Version == "":
				problems = append(problems, Problem{"go.work", fmt.Sprintf(
					"replaces %s at every version; replace only %s %s (the go command refuses to replace a workspace module at all versions)", m.Path, m.Path, version)})
			case r.Old.Version != version:
				problems = append(problems, Problem{"go.work", fmt.Sprintf(
					"replaces %s %s, but the modules pin %s", m.Path, r.Old.Version, version)})
			case path.Clean(r.New.Path) != m.Dir || r.New.Version != "":
				problems = append(problems, Problem{"go.work", fmt.Sprintf(
					"replaces %s %s with %s, not with its directory ./%s", m.Path, version, r.New.Path, m.Dir)})
			default:
				found = true
			}
		}
		if !found {
			problems = append(problems, Problem{"go.work", fmt.Sprintf(
				"needs \"replace %s %s => ./%s\", or the workspace downloads that version instead of building ./%s", m.Path, version, m.Dir, m.Dir)})
		}
	}
	return problems
}
