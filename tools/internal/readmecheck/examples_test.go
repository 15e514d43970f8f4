package readmecheck

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamplesAttach checks that every Example function of the workspace's packages is
// shown by go doc: go/doc attaches an example to the exported function, type or method its
// name names (ExampleFor, ExampleStore_One, ExampleFor_batch) or to the package (Example,
// Example_batch), and drops every other one (ExampleFor where the package has no For, or
// Example_Batch), which then appears nowhere.
func TestExamplesAttach(t *testing.T) {
	inRepository(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
	pkgs := workspacePackages(t)
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages in the workspace")
	}
	seen := 0
	for _, p := range pkgs {
		fset := token.NewFileSet()
		var files []*ast.File
		for _, names := range [][]string{p.GoFiles, p.TestGoFiles, p.XTestGoFiles} {
			for _, name := range names {
				f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
		}
		all, orphans, err := orphanExamples(fset, p.ImportPath, files)
		if err != nil {
			t.Fatalf("%s: %v", p.ImportPath, err)
		}
		seen += all
		for _, o := range orphans {
			t.Errorf("%s: %s attaches to nothing go doc shows: name it after an exported function, type or method of the package (ExampleName, ExampleType_Method, with an optional _suffix in lower case) or after the package (Example, Example_suffix)", p.ImportPath, o)
		}
	}
	if seen == 0 {
		t.Error("no Example functions found: the check looks in the wrong place")
	}
	t.Logf("%d Example functions in %d packages", seen, len(pkgs))
}

// TestOrphanExamplesFound shows the check telling attached examples from dropped ones.
func TestOrphanExamplesFound(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for name, src := range map[string]string{
		"p.go":      "package p\n\nfunc New() *T { return nil }\n\ntype T struct{}\n\nfunc (*T) Get() {}\n\nfunc hidden() {}\n",
		"p_test.go": "package p_test\n\nfunc Example() {}\nfunc Example_tour() {}\nfunc ExampleNew() {}\nfunc ExampleNew_twice() {}\nfunc ExampleT() {}\nfunc ExampleT_Get() {}\nfunc ExampleT_Get_again() {}\n\nfunc ExampleFor() {}\nfunc ExampleFor_batch() {}\nfunc Example_Tour() {}\nfunc ExampleT_Put() {}\nfunc Examplehidden() {}\nfunc ExampleNew_Twice() {}\n",
	} {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	all, orphans, err := orphanExamples(fset, "example.com/p", files)
	if err != nil {
		t.Fatal(err)
	}
	// Examplehidden is no example at all (a lower-case letter after "Example"), as for go test.
	want := []string{"ExampleFor", "ExampleFor_batch", "ExampleNew_Twice", "ExampleT_Put", "Example_Tour"}
	if all != 12 || strings.Join(orphans, " ") != strings.Join(want, " ") {
		t.Errorf("%d examples, orphans %q; want 12 and %q", all, orphans, want)
	}
}

// orphanExamples returns how many Example functions the files of one package (its own and
// its test files, of package p or p_test) hold, and the names of those go/doc attaches to
// nothing, sorted by name.
func orphanExamples(fset *token.FileSet, importPath string, files []*ast.File) (all int, orphans []string, err error) {
	var tests []*ast.File
	for _, f := range files {
		if strings.HasSuffix(fset.File(f.Pos()).Name(), "_test.go") {
			tests = append(tests, f)
		}
	}
	examples := doc.Examples(tests...)
	if len(examples) == 0 {
		return 0, nil, nil
	}
	p, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		return 0, nil, err
	}
	attached := map[string]bool{}
	add := func(exs []*doc.Example) {
		for _, ex := range exs {
			attached[exampleName(ex)] = true
		}
	}
	add(p.Examples)
	for _, f := range p.Funcs {
		add(f.Examples)
	}
	for _, typ := range p.Types {
		add(typ.Examples)
		for _, f := range typ.Funcs {
			add(f.Examples)
		}
		for _, m := range typ.Methods {
			add(m.Examples)
		}
	}
	for _, ex := range examples {
		if name := exampleName(ex); !attached[name] {
			orphans = append(orphans, name)
		}
	}
	return len(examples), orphans, nil
}

// exampleName is the name of the function an example was read from: go/doc keeps what
// follows "Example" in Name ("For_batch") and, on attaching, only sets Suffix beside it.
func exampleName(ex *doc.Example) string { return "Example" + ex.Name }

// listedPackage is what go list tells of a package.
type listedPackage struct {
	ImportPath, Dir                    string
	GoFiles, TestGoFiles, XTestGoFiles []string
}

// workspacePackages lists every package of the modules go.work uses, with the files that
// build on this platform.
func workspacePackages(t *testing.T) []listedPackage {
	t.Helper()
	work, err := filepath.Abs(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	// GOWORK names the repository's go.work even when the caller's environment turns the
	// workspace off, as scripts/modules.sh does.
	goList := func(args ...string) []byte {
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = root
		cmd.Env = append(cmd.Environ(), "GOWORK="+work)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	var patterns []string
	for _, dir := range strings.Fields(string(goList("-m", "-f", "{{.Dir}}"))) {
		patterns = append(patterns, dir+string(filepath.Separator)+"...")
	}
	dec := json.NewDecoder(bytes.NewReader(goList(append([]string{"-json=ImportPath,Dir,GoFiles,TestGoFiles,XTestGoFiles", "--"}, patterns...)...)))
	var pkgs []listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
