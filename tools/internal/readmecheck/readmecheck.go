// Package readmecheck type-checks the Go code blocks of a Markdown file, so that the
// examples of the README and of the guides in docs/ keep compiling as the API changes, and
// finds the relative links and heading anchors of one ([Links], [Anchors]), so that a test
// can check that every link names a file and a heading that exist.
//
// # How a block is checked
//
// Every fenced block whose info string is "go" is checked; other blocks (sh, text, …) are
// not. A block is checked as one Go package of its own, after the blocks it needs (see
// below), in these steps:
//
//   - Its lines are split with go/scanner: an import, type or func declaration that starts
//     in the first column goes to the package level; every other line is a statement of one
//     function body. So a block may mix declarations and statements, as README snippets do.
//   - The packages it uses by their usual name (abstractions., tables., time., …; see
//     [KnownImports]) are imported for it, besides the imports it writes itself.
//   - Two names are declared for every block, as snippets assume them: ctx (a
//     context.Context) and conn (a connection string).
//   - The package is type-checked with go/types against export data of the workspace's
//     packages, which "go list -export" builds. Errors are reported at their line in the
//     Markdown file (through //line directives). A variable declared and not used is not an
//     error: a snippet shows what a call returns without using it.
//
// # Directives
//
// An HTML comment on the line before a block's fence, invisible in the rendered page, says
// how the block relates to others:
//
//	<!-- readmecheck: name=define -->
//	<!-- readmecheck: needs=define,register -->
//
// name names the block; needs lists blocks (by name, in order) whose declarations and
// statements come before this block's, so a snippet can use the types and variables an
// earlier one introduced. A block is checked once on its own terms with all it needs; a
// block that several others need is thus checked several times, which reports its errors
// once (duplicates are dropped).
package readmecheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	pathpkg "path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// KnownImports maps the package names a block may use without importing them to their
// import paths.
var KnownImports = map[string]string{
	"abstractions":   "github.com/unified-data/gotables/abstractions",
	"tables":         "github.com/unified-data/gotables/tables",
	"azblobs":        "github.com/unified-data/gotables/tables/azblobs",
	"blobdocs":       "github.com/unified-data/gotables/tables/blobdocs",
	"inmemory":       "github.com/unified-data/gotables/inmemory",
	"identity":       "github.com/unified-data/gotables/identity",
	"identitytables": "github.com/unified-data/gotables/identity/identitytables",
	"azcore":         "github.com/Azure/azure-sdk-for-go/sdk/azcore",
	"policy":         "github.com/Azure/azure-sdk-for-go/sdk/azcore/policy",
	"azotel":         "github.com/Azure/azure-sdk-for-go/sdk/tracing/azotel",
	"sdktrace":       "go.opentelemetry.io/otel/sdk/trace",
	"sdkmetric":      "go.opentelemetry.io/otel/sdk/metric",
	"context":        "context",
	"errors":         "errors",
	"fmt":            "fmt",
	"log":            "log",
	"http":           "net/http",
	"os":             "os",
	"slices":         "slices",
	"strings":        "strings",
	"time":           "time",
}

// Block is one fenced Go block of a Markdown file.
type Block struct {
	// Line is the line of the file on which the block's code starts (after the fence).
	Line int
	// Code is the block's text.
	Code string
	// Name is the name its directive gives it, if any.
	Name string
	// Needs are the names of the blocks that come before it, in order.
	Needs []string
}

var (
	fenceRE     = regexp.MustCompile("^```\\s*([A-Za-z0-9_+-]*)\\s*$")
	directiveRE = regexp.MustCompile(`^<!--\s*readmecheck:(.*?)-->\s*$`)
)

// Extract returns the Go blocks of a Markdown text, with their directives. A directive that
// is malformed, or that is not followed by a Go block, is an error.
func Extract(src []byte) ([]Block, error) {
	var (
		blocks  []Block
		inFence bool
		isGo    bool
		cur     *Block
		code    strings.Builder
		pending *Block // the directive waiting for its block
		pendAt  int
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if inFence {
			if strings.TrimSpace(line) == "```" {
				inFence = false
				if isGo {
					cur.Code = code.String()
					blocks = append(blocks, *cur)
				}
				continue
			}
			if isGo {
				code.WriteString(line)
				code.WriteByte('\n')
			}
			continue
		}
		if m := directiveRE.FindStringSubmatch(line); m != nil {
			if pending != nil {
				return nil, fmt.Errorf("line %d: a directive follows the one on line %d, which has no block", n, pendAt)
			}
			d, err := parseDirective(m[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			pending, pendAt = &d, n
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			inFence, isGo = true, m[1] == "go"
			if isGo {
				cur = &Block{Line: n + 1}
				if pending != nil {
					cur.Name, cur.Needs = pending.Name, pending.Needs
				}
				code.Reset()
			} else if pending != nil {
				return nil, fmt.Errorf("line %d: the directive on line %d is followed by a %q block, not a Go one", n, pendAt, m[1])
			}
			pending = nil
			continue
		}
		if pending != nil && strings.TrimSpace(line) != "" {
			return nil, fmt.Errorf("line %d: the directive on line %d must be followed by a Go block", n, pendAt)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if inFence {
		return nil, errors.New("a fenced block is not closed")
	}
	if pending != nil {
		return nil, fmt.Errorf("the directive on line %d has no block", pendAt)
	}
	return blocks, nil
}

func parseDirective(s string) (Block, error) {
	var b Block
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" {
			return b, fmt.Errorf("readmecheck directive: %q is not key=value", f)
		}
		switch k {
		case "name":
			b.Name = v
		case "needs":
			b.Needs = strings.Split(v, ",")
		default:
			return b, fmt.Errorf("readmecheck directive: unknown key %q (want name or needs)", k)
		}
	}
	return b, nil
}

// segment is a run of lines of one block: a package-level declaration or statements.
type segment struct {
	line int // in the Markdown file
	text string
	decl bool
}

// split cuts a block into segments: each import, type or func declaration starting in the
// first column at nesting depth 0 is a declaration; the lines between are statements.
func split(b Block) ([]segment, error) {
	fset := token.NewFileSet()
	src := []byte(b.Code)
	file := fset.AddFile("block", -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) }, 0)
	lines := strings.SplitAfter(b.Code, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	isDecl := make([]bool, len(lines)+1) // by line, 1-based
	depth, start, inDecl, atStmtStart := 0, 0, false, true
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			break
		}
		p := fset.Position(pos)
		switch tok {
		case token.LPAREN, token.LBRACE, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACE, token.RBRACK:
			depth--
		}
		if depth == 0 && atStmtStart && p.Column == 1 && (tok == token.IMPORT || tok == token.TYPE || tok == token.FUNC) {
			inDecl, start = true, p.Line
		}
		atStmtStart = depth == 0 && tok == token.SEMICOLON
		if inDecl && atStmtStart {
			for l := start; l <= p.Line; l++ {
				isDecl[l] = true
			}
			inDecl = false
		}
	}
	if errs.Len() > 0 {
		errs.Sort()
		return nil, fmt.Errorf("line %d: %s", b.Line+errs[0].Pos.Line-1, errs[0].Msg)
	}
	var segs []segment
	for i, l := range lines {
		n := i + 1
		if len(segs) > 0 && segs[len(segs)-1].decl == isDecl[n] && !(isDecl[n] && startsDecl(l)) {
			segs[len(segs)-1].text += l
			continue
		}
		segs = append(segs, segment{line: b.Line + i, text: l, decl: isDecl[n]})
	}
	return segs, nil
}

func startsDecl(line string) bool {
	for _, kw := range []string{"import", "type", "func"} {
		if strings.HasPrefix(line, kw+" ") || strings.HasPrefix(line, kw+"(") {
			return true
		}
	}
	return false
}

// Program is the Go source a block is checked as.
type Program struct {
	// Block is the block checked.
	Block Block
	// Source is the package's file.
	Source string
	// Imports are the import paths the file imports.
	Imports []string
}

const prelude = `package readme

import "context"

// ctx and conn are the names every snippet may use without declaring them.
var (
	ctx  = context.Background()
	conn string
)
`

// Programs returns the program of each block: the block composed with the blocks it needs.
// mdName is the file name errors are reported in.
func Programs(blocks []Block, mdName string) ([]Program, error) {
	byName := map[string]int{}
	for i, b := range blocks {
		if b.Name == "" {
			continue
		}
		if j, dup := byName[b.Name]; dup {
			return nil, fmt.Errorf("%s:%d: the name %q is already the block's on line %d", mdName, b.Line, b.Name, blocks[j].Line)
		}
		byName[b.Name] = i
	}
	var progs []Program
	for i := range blocks {
		order, err := closure(blocks, byName, i, nil)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", mdName, blocks[i].Line, err)
		}
		p, err := compose(blocks, order, mdName)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// closure returns the blocks i needs, transitively and in order, then i.
func closure(blocks []Block, byName map[string]int, i int, visiting []int) ([]int, error) {
	if slices.Contains(visiting, i) {
		return nil, fmt.Errorf("the needs of block %q form a cycle", blocks[i].Name)
	}
	var order []int
	for _, n := range blocks[i].Needs {
		j, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("needs %q, which no block is named", n)
		}
		sub, err := closure(blocks, byName, j, append(visiting, i))
		if err != nil {
			return nil, err
		}
		for _, k := range sub {
			if !slices.Contains(order, k) {
				order = append(order, k)
			}
		}
	}
	return append(order, i), nil
}

func compose(blocks []Block, order []int, mdName string) (Program, error) {
	var decls, stmts strings.Builder
	imports := map[string]string{} // path → name ("" for the default)
	used := map[string]bool{}
	for _, i := range order {
		segs, err := split(blocks[i])
		if err != nil {
			return Program{}, fmt.Errorf("%s:%v", mdName, err)
		}
		for _, s := range segs {
			w := &stmts
			if s.decl {
				if strings.HasPrefix(s.text, "import") {
					f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+s.text, parser.ImportsOnly)
					if err != nil {
						return Program{}, fmt.Errorf("%s:%d: %v", mdName, s.line, err)
					}
					for _, is := range f.Imports {
						path, _ := strconv.Unquote(is.Path.Value)
						if isInternal(path) {
							// The checker could load it; a reader's program could not.
							return Program{}, fmt.Errorf("%s:%d: imports %s, an internal package no program outside its module can import", mdName, s.line, path)
						}
						imports[path] = ""
						if is.Name != nil {
							imports[path] = is.Name.Name
						}
					}
					continue
				}
				w = &decls
			}
			fmt.Fprintf(w, "//line %s:%d:1\n%s", mdName, s.line, s.text)
			if !strings.HasSuffix(s.text, "\n") {
				w.WriteByte('\n')
			}
			for name := range qualifiers(s.text) {
				used[name] = true
			}
		}
	}
	// Import the known packages the code names and does not import itself.
	for name := range used {
		path, ok := KnownImports[name]
		if !ok {
			continue
		}
		if _, have := imports[path]; !have && !importedAs(imports, name) {
			// Name it as the block does: a known name may differ from the package's own
			// (sdktrace for go.opentelemetry.io/otel/sdk/trace).
			imports[path] = ""
			if pathpkg.Base(path) != name {
				imports[path] = name
			}
		}
	}
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var src strings.Builder
	src.WriteString("package readme\n\nimport (\n")
	for _, p := range paths {
		fmt.Fprintf(&src, "\t%s %q\n", imports[p], p)
	}
	src.WriteString(")\n\n")
	src.WriteString(decls.String())
	src.WriteString("\nfunc _() error {\n")
	src.WriteString(stmts.String())
	src.WriteString("\treturn nil\n}\n")
	return Program{Block: blocks[order[len(order)-1]], Source: src.String(), Imports: paths}, nil
}

// isInternal reports an import path with an "internal" element.
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

func importedAs(imports map[string]string, name string) bool {
	for p, n := range imports {
		if n == name || (n == "" && p[strings.LastIndex(p, "/")+1:] == name) {
			return true
		}
	}
	return false
}

// qualifiers returns the identifiers of text that are followed by a period: the candidates
// for package names.
func qualifiers(text string) map[string]bool {
	fset := token.NewFileSet()
	src := []byte(text)
	var s scanner.Scanner
	s.Init(fset.AddFile("", -1, len(src)), src, nil, 0)
	out := map[string]bool{}
	prev, prevLit := token.ILLEGAL, ""
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.PERIOD && prev == token.IDENT {
			out[prevLit] = true
		}
		prev, prevLit = tok, lit
	}
}

// ExportImporter returns an importer that reads the export data "go list -export" builds for
// the packages and their dependencies, running go list in dir (inside the workspace).
func ExportImporter(fset *token.FileSet, dir string, paths []string) (types.Importer, error) {
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Export,Error", "--"}, paths...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Export string
			Error              *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -export: %v", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list -export: %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
	}
	lookup := func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %q (is it one of the known imports?)", path)
		}
		return os.Open(f)
	}
	return importer.ForCompiler(fset, "gc", lookup), nil
}

// Check type-checks the programs, importing through imp, and returns their errors, each
// "file:line:column: message" at its place in the Markdown file, in order and without
// duplicates. fset must be the one imp was made with.
func Check(fset *token.FileSet, imp types.Importer, progs []Program) []string {
	seen := map[string]bool{}
	var out []string
	report := func(msg string) {
		if !seen[msg] {
			seen[msg] = true
			out = append(out, msg)
		}
	}
	for _, p := range progs {
		pre, err := parser.ParseFile(fset, "prelude.go", prelude, 0)
		if err != nil {
			panic(err) // the prelude is a constant
		}
		f, err := parser.ParseFile(fset, "readme.go", p.Source, parser.SkipObjectResolution)
		if err != nil {
			var list scanner.ErrorList
			if errors.As(err, &list) {
				for _, e := range list {
					report(e.Error())
				}
				continue
			}
			report(err.Error())
			continue
		}
		conf := types.Config{
			Importer: imp,
			Error: func(err error) {
				var te types.Error
				if errors.As(err, &te) && te.Soft && strings.Contains(te.Msg, "declared and not used") {
					return
				}
				report(err.Error())
			},
		}
		_, _ = conf.Check("readme", fset, []*ast.File{pre, f}, nil)
	}
	sort.SliceStable(out, func(i, j int) bool { return lineOf(out[i]) < lineOf(out[j]) })
	return out
}

// lineOf returns the line number of a "file:line:column: message" error, 0 if it has none.
func lineOf(msg string) int {
	parts := strings.SplitN(msg, ":", 3)
	if len(parts) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}
