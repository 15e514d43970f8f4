package readmecheck

import (
	"errors"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// root is the repository's root, from this package's directory; readme is its README and
// docs the directory of its guides.
var (
	root   = filepath.Join("..", "..", "..")
	readme = filepath.Join(root, "README.md")
	docs   = filepath.Join(root, "docs")
)

// check extracts and type-checks the Go blocks of a Markdown text and returns the errors,
// reported in README.md.
func check(t *testing.T, md string) (blocks []Block, errs []string) {
	t.Helper()
	return checkAs(t, md, "README.md")
}

// checkAs is check with errors reported in the file mdName.
func checkAs(t *testing.T, md, mdName string) (blocks []Block, errs []string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err) // the checker needs go list; CI has it
	}
	blocks, err := Extract([]byte(md))
	if err != nil {
		t.Fatalf("%s: %v", mdName, err)
	}
	progs, err := Programs(blocks, mdName)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range progs {
		for _, path := range p.Imports {
			if !slices.Contains(paths, path) {
				paths = append(paths, path)
			}
		}
	}
	paths = append(paths, "context") // the prelude's
	fset := token.NewFileSet()
	imp, err := ExportImporter(fset, ".", paths)
	if err != nil {
		t.Fatal(err)
	}
	return blocks, Check(fset, imp, progs)
}

// inRepository skips the test when the module is tested on its own, outside the
// repository (as scripts/consumer-check.sh tests it): there is no README or docs/ to check.
func inRepository(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, "go.work")); errors.Is(err, fs.ErrNotExist) {
		t.Skip("not inside the repository: no go.work three directories up")
	}
}

// guides returns the Markdown files of docs/, as paths from the repository's root
// ("docs/queries.md").
func guides(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(docs, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// TestDocsCompile type-checks every Go block of every guide in docs/, as TestReadmeCompiles
// does the README's; an error names the guide and its line ("docs/queries.md:12:5: …").
func TestDocsCompile(t *testing.T) {
	inRepository(t)
	files := guides(t)
	if len(files) == 0 {
		t.Fatal("no docs/*.md found; the README links to guides there")
	}
	for _, f := range files {
		t.Run(pathpkg.Base(f), func(t *testing.T) {
			md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
			if err != nil {
				t.Fatal(err)
			}
			_, errs := checkAs(t, string(md), f)
			for _, e := range errs {
				t.Error(e)
			}
		})
	}
}

// TestCheckNamesTheGuide shows a broken block of a guide reported at its file and line.
func TestCheckNamesTheGuide(t *testing.T) {
	md := "# Guide\n\n```go\nn := abstractions.CombineID(\"eu\", \"x\") // two results: broken\n```\n"
	_, errs := checkAs(t, md, "docs/guide.md")
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "docs/guide.md:4:") {
		t.Fatalf("errors %q, want one at docs/guide.md:4", errs)
	}
}

// TestLinksResolve checks that every relative link of the README and the guides names a
// file or directory of the repository, and that a link to a heading of a Markdown file
// ("production.md#reliability", "#keys") names a heading that file has.
func TestLinksResolve(t *testing.T) {
	inRepository(t)
	files := append([]string{"README.md"}, guides(t)...)
	for _, f := range files {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range Links(md) {
			target, anchor, _ := strings.Cut(l.Target, "#")
			path := f // a bare "#anchor" is in this file
			if target != "" {
				path = pathpkg.Join(pathpkg.Dir(f), target)
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err != nil {
					t.Errorf("%s:%d: the link %q names no file of the repository", f, l.Line, l.Target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			to, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(Anchors(to), anchor) {
				t.Errorf("%s:%d: the link %q names no heading of %s (it has %v)", f, l.Line, l.Target, path, Anchors(to))
			}
		}
	}
}

// TestLinksAndAnchors shows what Links and Anchors find, and what they leave out.
func TestLinksAndAnchors(t *testing.T) {
	md := strings.Join([]string{
		"# Running in production", // 1
		"See [the guide](docs/a.md), [a part](docs/a.md#keys-and-ids).",  // 2
		"An [external](https://example.com/x) link and a [local](#top).", // 3
		"```sh",                                // 4
		"echo [not](a-link.md)",                // 5: in a block
		"```",                                  // 6
		"## Errors to HTTP statuses, `go doc`", // 7
		"![chart](performance.svg)",            // 8
		"",
	}, "\n")
	var got []string
	for _, l := range Links([]byte(md)) {
		got = append(got, strconv.Itoa(l.Line)+" "+l.Target)
	}
	want := []string{"2 docs/a.md", "2 docs/a.md#keys-and-ids", "3 #top", "8 performance.svg"}
	if !slices.Equal(got, want) {
		t.Errorf("Links: %q, want %q", got, want)
	}
	anchors := Anchors([]byte(md))
	if want := []string{"running-in-production", "errors-to-http-statuses-go-doc"}; !slices.Equal(anchors, want) {
		t.Errorf("Anchors: %q, want %q", anchors, want)
	}
}

// TestReadmeCompiles type-checks every Go block of the repository's README against the
// workspace's packages. A block that stops compiling fails it at the block's README line.
func TestReadmeCompiles(t *testing.T) {
	md, err := os.ReadFile(readme)
	if errors.Is(err, fs.ErrNotExist) {
		if _, werr := os.Stat(filepath.Join(filepath.Dir(readme), "go.work")); errors.Is(werr, fs.ErrNotExist) {
			// The module on its own, outside the repository (as scripts/consumer-check.sh
			// tests it): there is no README to check.
			t.Skip("not inside the repository: no README.md or go.work three directories up")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := check(t, string(md))
	if len(blocks) < 5 {
		t.Fatalf("found %d Go blocks in the README; the extraction is broken", len(blocks))
	}
	for _, e := range errs {
		t.Error(e)
	}
}

// TestCheckReportsBrokenBlocks shows the checker failing where it must, at the right line:
// a wrong call, a block that needs another, a name used across blocks without needs, and a
// shell block that is not checked.
func TestCheckReportsBrokenBlocks(t *testing.T) {
	md := strings.Join([]string{
		/* 1 */ "# Title",
		/* 2 */ "<!-- readmecheck: name=define -->",
		/* 3 */ "```go",
		/* 4 */ "type Customer struct {",
		/* 5 */ "\tabstractions.Entity",
		/* 6 */ "\tName string",
		/* 7 */ "}",
		/* 8 */ "```",
		/* 9 */ "```sh",
		/* 10 */ "this is not Go",
		/* 11 */ "```",
		/* 12 */ "<!-- readmecheck: needs=define -->",
		/* 13 */ "```go",
		/* 14 */ "c := &Customer{Name: \"Alice\"}",
		/* 15 */ "id, err := abstractions.CombineID(\"eu\", c.Name) // two results: fine",
		/* 16 */ "n := abstractions.CombineID(\"eu\", c.Name)       // one variable: broken",
		/* 17 */ "```",
		/* 18 */ "```go",
		/* 19 */ "var c Customer // no needs: Customer is unknown here",
		/* 20 */ "func helper() { time.Sleep(\"1s\") }",
		/* 21 */ "```",
		"",
	}, "\n")
	blocks, errs := check(t, md)
	if len(blocks) != 3 {
		t.Fatalf("got %d Go blocks, want 3", len(blocks))
	}
	want := []string{
		"README.md:16:",
		"README.md:19:",
		"README.md:20:",
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(errs), len(want), strings.Join(errs, "\n"))
	}
	for i, e := range errs {
		if !strings.HasPrefix(e, want[i]) {
			t.Errorf("error %d is %q, want it at %s", i, e, want[i])
		}
	}
}

// TestCheckAcceptsGoodBlocks shows that the rules do not refuse what snippets normally
// do: declarations and statements mixed in one block, imports written or left out, ctx and
// conn, results shown but not used.
func TestCheckAcceptsGoodBlocks(t *testing.T) {
	md := strings.Join([]string{
		"```go",
		`import "github.com/unified-data/gotables/abstractions"`,
		"",
		"type Note struct {",
		"\tabstractions.Entity",
		"\tText string",
		"}",
		"",
		"func (n Note) String() string { return n.Text }",
		"",
		"acct := inmemory.NewAccount(nil)",
		"notes, err := tables.For[Note](acct, nil)",
		"err = notes.Create(ctx, &Note{Entity: abstractions.Entity{ID: \"a|b\"}})",
		"n, err := notes.Count(ctx, \"a\") // n is not used: fine",
		"_, _ = conn, time.Second",
		"```",
		"",
	}, "\n")
	_, errs := check(t, md)
	for _, e := range errs {
		t.Error(e)
	}
}

func TestExtractRefusesBadDirectives(t *testing.T) {
	for _, tc := range []struct {
		name, md, want string
	}{
		{"unknown key", "<!-- readmecheck: nmae=x -->\n```go\n```\n", "unknown key"},
		{"not key=value", "<!-- readmecheck: name -->\n```go\n```\n", "not key=value"},
		{"before a shell block", "<!-- readmecheck: name=x -->\n```sh\n```\n", "not a Go one"},
		{"before text", "<!-- readmecheck: name=x -->\ntext\n```go\n```\n", "must be followed"},
		{"at the end", "<!-- readmecheck: name=x -->\n", "has no block"},
		{"unclosed fence", "```go\nx := 1\n", "not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Extract([]byte(tc.md))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Extract: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestProgramsRefuseBadNeeds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blocks []Block
		want   string
	}{
		{"unknown", []Block{{Line: 3, Needs: []string{"x"}}}, "no block is named"},
		{"cycle", []Block{{Line: 3, Name: "a", Needs: []string{"b"}}, {Line: 9, Name: "b", Needs: []string{"a"}}}, "cycle"},
		{"duplicate name", []Block{{Line: 3, Name: "a"}, {Line: 9, Name: "a"}}, "already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Programs(tc.blocks, "README.md")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Programs: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestProgramsRefuseInternalImports: a guide's block that imports an internal package would
// type-check here but not in a reader's program.
func TestProgramsRefuseInternalImports(t *testing.T) {
	blocks, err := Extract([]byte("```go\nimport \"github.com/unified-data/gotables/tables/internal/codec\"\n\nvar _ *codec.ValueError\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Programs(blocks, "docs/mapping.md")
	if err == nil || !strings.Contains(err.Error(), "docs/mapping.md:2: imports github.com/unified-data/gotables/tables/internal/codec, an internal package") {
		t.Errorf("Programs: %v, want the internal import refused at docs/mapping.md:2", err)
	}
}

func TestSplit(t *testing.T) {
	b := Block{Line: 10, Code: strings.Join([]string{
		"type A struct{ X int }", // 10
		"",                       // 11
		"a := A{",                // 12
		"\tX: 1,",                // 13
		"}",                      // 14
		"func f() {",             // 15
		"\t_ = a",                // 16
		"}",                      // 17
		"x := func() {}",         // 18: a func literal, a statement
		"",
	}, "\n")}
	segs, err := split(b)
	if err != nil {
		t.Fatal(err)
	}
	type seg struct {
		line int
		decl bool
	}
	var got []seg
	for _, s := range segs {
		got = append(got, seg{s.line, s.decl})
	}
	want := []seg{{10, true}, {11, false}, {15, true}, {18, false}}
	if !slices.Equal(got, want) {
		t.Errorf("segments %v, want %v", got, want)
	}
	if _, err := split(Block{Line: 1, Code: "x := \"unterminated\n"}); err == nil {
		t.Error("split accepted an unterminated string")
	}
}
