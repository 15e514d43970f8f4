package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
)

// TestCSVCommands imports Storage Explorer's typed CSV and exports it again byte for
// byte, refuses a file with a mistake before writing, and refuses to export large values.
func TestCSVCommands(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	acct, closeAcct, err := openAccount(conn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAcct()
	ctx := context.Background()
	sfx := fmt.Sprint(rand.Uint32())
	table, bad, large := "CliCsv"+sfx, "CliCsvBad"+sfx, "CliCsvLarge"+sfx
	for _, tb := range []string{table, bad, large} {
		defer acct.Tables().DeleteTable(ctx, tb) //nolint:errcheck
	}
	cmd := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(ctx, append(args, "--connection-string", conn, "--progress", "none"), &out, &errb)
		return out.String(), errb.String(), code
	}
	golden := filepath.Join("..", "..", "..", "tables", "backup", "testdata", "storage-explorer.typed.csv")
	out, errs, code := cmd("import", "--table", table, "--file", golden)
	if code != 0 || !strings.Contains(out, "imported 6 rows") {
		t.Fatalf("import: exit %d: %s%s", code, out, errs)
	}
	if _, errs, code := cmd("import", "--table", table, "--file", golden); code == 0 || !strings.Contains(errs, "--existing") {
		t.Errorf("a second import: exit %d, %s", code, errs)
	}
	exported := filepath.Join(t.TempDir(), "out.csv")
	if out, errs, code := cmd("export", "--table", table, "--format", "csv", "--out", exported); code != 0 || !strings.Contains(out, "exported 6 rows") {
		t.Fatalf("export: exit %d: %s%s", code, out, errs)
	}
	want, _ := os.ReadFile(golden)
	got, _ := os.ReadFile(exported)
	if !bytes.Equal(got, want) {
		t.Errorf("the export differs from the imported file:\n%q\n%q", got, want)
	}

	broken := filepath.Join(t.TempDir(), "broken.csv")
	os.WriteFile(broken, []byte("PartitionKey,RowKey,N,N@type\r\np,a,1,Edm.Int32\r\np,b,one,Edm.Int32\r\n"), 0o644) //nolint:errcheck
	if _, errs, code := cmd("import", "--table", bad, "--file", broken); code == 0 || !strings.Contains(errs, "line 3") {
		t.Errorf("a broken file: exit %d, %s", code, errs)
	}
	if ok, _ := acct.Tables().TableExists(ctx, bad); ok {
		t.Error("a refused import created its table")
	}

	docs, err := tables.For[cliDoc](acct, &tables.StoreOptions{Table: large})
	if err != nil {
		t.Fatal(err)
	}
	if err := docs.Create(ctx, &cliDoc{Entity: abstractions.Entity{ID: "p|big"}, Body: strings.Repeat("b", 400_000)}); err != nil {
		t.Fatal(err)
	}
	refused := filepath.Join(t.TempDir(), "large.csv")
	if _, errs, code := cmd("export", "--table", large, "--out", refused); code == 0 || !strings.Contains(errs, "large value") || !strings.Contains(errs, "backup") {
		t.Errorf("export of large values: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Errorf("a refused export left a file: %v", err)
	}
}
