package release

import (
	"regexp"
	"strings"
)

// ChangelogHasSection reports whether a changelog in the Keep a Changelog style has a section
// for version: a second-level heading such as "## [0.1.0] - 2026-12-01" (the v, the brackets
// and the date are optional).
func ChangelogHasSection(changelog []byte, version string) bool {
	number := regexp.QuoteMeta(strings.TrimPrefix(version, "v"))
	heading := regexp.MustCompile(`(?m)^##[ \t]+\[?v?` + number + `\]?([ \t]|$)`)
	return heading.Match(changelog)
}
