// Command surface counts the exported identifiers of the library's packages, as a user of
// them sees them: exported types, functions, constants and variables, the exported methods
// of exported types, and the exported fields and interface methods of exported types. Test
// files are not counted. It prints one line per group of packages and fails when a group is
// over its budget:
//
//	go run ./tools/cmd/surface          # from the repository root; make lint runs it
//	go run ./tools/cmd/surface -v       # also lists every counted name
//
// The groups are the packages an application imports (abstractions and tables, with a
// budget), the packages drivers and tools import (tables/service) and the backup package
// (tables/backup), which are counted and printed.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// group is a set of package directories whose names are counted together.
type group struct {
	name   string
	dirs   []string
	budget int // the most the group may export now; 0: printed, not checked
	target int // the count the project aims at (the budget), printed beside
}

var groups = []group{
	// The application surface may only shrink: budget is its size now, target the size the
	// project aims at (260: ARCHITECTURE.md, "Exported surface", says why it is not reached),
	// and lowering budget as names go keeps them gone.
	{name: "application surface (abstractions + tables)", dirs: []string{"abstractions", "tables"}, budget: 335, target: 260},
	{name: "driver surface (tables/service)", dirs: []string{"tables/service"}},
	// Backup, restore and copy: a package of its own, imported only by programs that move
	// tables, kept small (printed, not checked, as the driver surface).
	{name: "backup surface (tables/backup)", dirs: []string{"tables/backup"}},
	// Partition indexes: a package of its own over the stores, imported by programs that
	// look entities up by index (printed, not checked).
	{name: "index surface (tables/index)", dirs: []string{"tables/index"}},
	// The claim protocol of unique values: for the libraries that keep values unique (the
	// stores' unique indexes, the identity stores), not for applications (printed).
	{name: "claims surface (abstractions/claims)", dirs: []string{"abstractions/claims"}},
	// Rows that expire: renewal and the sweep, a package of its own over the stores
	// (printed, not checked).
	{name: "expiry surface (tables/expiry)", dirs: []string{"tables/expiry"}},
	// The change feed: a package of its own over the stores, imported by programs that
	// enable a feed, publish events or relay records (printed, not checked).
	{name: "feed surface (tables/feed)", dirs: []string{"tables/feed"}},
}

func main() {
	verbose := flag.Bool("v", false, "list every counted name")
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	failed := false
	for _, g := range groups {
		var names []string
		for _, d := range g.dirs {
			n, err := exported(filepath.Join(*root, d))
			if err != nil {
				fmt.Fprintln(os.Stderr, "surface:", err)
				os.Exit(2)
			}
			for _, s := range n {
				names = append(names, d+"."+s)
			}
		}
		sort.Strings(names)
		status := ""
		if g.budget > 0 {
			status = fmt.Sprintf(" (budget %d, target %d)", g.budget, g.target)
			if len(names) > g.budget {
				status += ": over budget"
				failed = true
			}
		}
		fmt.Printf("surface: %s: %d exported identifiers%s\n", g.name, len(names), status)
		if *verbose {
			for _, n := range names {
				fmt.Println("  " + n)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

// exported returns the exported names of the package in dir, without its tests: "Name" for
// a top-level declaration, "Type.Name" for a method, a field or an interface method.
func exported(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == "main" || strings.HasSuffix(f.Name.Name, "_test") {
			continue
		}
		out = append(out, fileNames(f)...)
	}
	return out, nil
}

func fileNames(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				out = append(out, d.Name.Name)
				continue
			}
			if recv := recvName(d.Recv.List[0].Type); ast.IsExported(recv) {
				out = append(out, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					out = append(out, s.Name.Name)
					out = append(out, members(s.Name.Name, s.Type)...)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// members are the exported fields of a struct type and the exported methods of an interface.
func members(typ string, t ast.Expr) []string {
	var list *ast.FieldList
	switch t := t.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		for _, n := range f.Names {
			if n.IsExported() {
				out = append(out, typ+"."+n.Name)
			}
		}
		// An embedded struct field is a field; an interface's embedded interfaces and type
		// elements (a constraint's *T) are not names of their own.
		if _, isStruct := t.(*ast.StructType); isStruct && len(f.Names) == 0 {
			if n := recvName(f.Type); ast.IsExported(n) {
				out = append(out, typ+"."+n)
			}
		}
	}
	return out
}

// recvName is the type name of a receiver or an embedded field: T, *T, T[P], pkg.T.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}
