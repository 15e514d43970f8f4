package readmecheck

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is a relative link of a Markdown file: a file, a file's heading or a heading of the
// file itself.
type Link struct {
	// Line is the line it is on.
	Line int
	// Target is what the parentheses hold: "docs/queries.md", "production.md#reliability",
	// "#keys".
	Target string
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	schemeRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// Links returns the relative links of a Markdown text, in order: the targets of
// [text](target) and ![alt](target) outside fenced blocks and code spans, without those
// that name a scheme (https:, mailto:).
func Links(md []byte) []Link {
	var out []Link
	eachLine(md, func(n int, line string) {
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			if !schemeRE.MatchString(m[1]) {
				out = append(out, Link{Line: n, Target: m[1]})
			}
		}
	})
	return out
}

// Anchors returns the anchors of a Markdown text's headings, as GitHub makes them: the text
// in lower case, with backquotes and punctuation dropped and spaces as hyphens; the second
// heading with an anchor gets "-1" appended, the third "-2", and so on.
func Anchors(md []byte) []string {
	var out []string
	seen := map[string]int{}
	eachLine(md, func(_ int, line string) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			return
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(k)
		} else {
			seen[a] = 1
		}
		out = append(out, a)
	})
	return out
}

// eachLine calls f with each line of md outside fenced blocks, and its number.
func eachLine(md []byte, f func(n int, line string)) {
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	inFence := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			f(n, line)
		}
	}
}
