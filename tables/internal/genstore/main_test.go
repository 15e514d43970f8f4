package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestGeneratedFilesAreCurrent regenerates the backends' store types and compares them with
// the committed files: a method added to the engine's stores without `go generate` fails
// here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, tc := range []struct{ pkg, dir, typ, file string }{
		{"tables", "../..", "Store", "store_gen.go"},
		{"tables", "../..", "PolyStore", "polystore_gen.go"},
		{"inmemory", "../../../inmemory", "Store", "store_gen.go"},
		{"inmemory", "../../../inmemory", "PolyStore", "polystore_gen.go"},
		{"tables", "../..", "Account", "account_gen.go"},
		{"inmemory", "../../../inmemory", "Account", "account_gen.go"},
	} {
		contract, err := contractDocs("../../../abstractions", contracts[tc.typ])
		if err != nil {
			t.Fatal(err)
		}
		want, err := generate("../../engine", tc.pkg, tc.typ, contract)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(tc.dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s is out of date: run go generate in %s", tc.pkg, tc.file, tc.pkg)
		}
	}
}

// The generated methods carry the contract's documentation, with sentinels as doc links.
func TestContractDocs(t *testing.T) {
	contract, err := contractDocs("../../../abstractions", contracts["Store"])
	if err != nil {
		t.Fatal(err)
	}
	src, err := generate("../../engine", "tables", "Store", contract)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"// One returns the row with the id. A missing row fails with an error matching\n// [abstractions.ErrNotFound]",
		"func (s *Store[T]) One(ctx context.Context, id string) (*T, error) { return s.s.One(ctx, id) }",
	} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("the generated source lacks %q", want)
		}
	}
	// A method the contract documents carries the contract's doc alone, not the engine's
	// comment after it (which repeated it in other words).
	for _, engineOnly := range []string{
		"// Table returns the name of the store's table.",
		"// One returns the row with the id; a missing row fails",
		"codec.EncodeColumns",
		"It is not meant to be called\n// directly.",
	} {
		if bytes.Contains(src, []byte(engineOnly)) {
			t.Errorf("the generated source repeats the engine's comment %q after the contract's", engineOnly)
		}
	}
	if n := bytes.Count(src, []byte("// Table returns")); n != 1 {
		t.Errorf("Table has %d doc paragraphs starting \"Table returns\", want 1", n)
	}
}
