package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
)

type cliDoc struct {
	abstractions.Entity
	N    int
	Body string `table:",split=text"`
}

// TestBackupCommands runs backup, restore --verify, restore and copy on Azurite and reads
// the restored entities back through a store.
func TestBackupCommands(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	acct, closeAcct, err := openAccount(conn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAcct()
	ctx := context.Background()
	sfx := fmt.Sprint(rand.Uint32())
	src, dst, cp := "CliSrc"+sfx, "CliDst"+sfx, "CliCopy"+sfx
	for _, tb := range []string{src, dst, cp} {
		defer acct.Tables().DeleteTable(ctx, tb) //nolint:errcheck
	}
	docs, err := tables.For[cliDoc](acct, &tables.StoreOptions{Table: src})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		d := &cliDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|d%02d", i%3, i)}, N: i, Body: strings.Repeat("b", i*9000)}
		if err := docs.Upsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	progressOut = &log
	defer func() { progressOut = nil }()
	archive := filepath.Join(t.TempDir(), "src.udtb")
	runOK := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(ctx, append(args, "--connection-string", conn, "--progress", "log"), &out, &errb); code != 0 {
			t.Fatalf("udtables %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	out := runOK("backup", "--table", src, "--archive", archive, "--parallel", "2", "--count", "--verify")
	if !strings.Contains(out, "25 entities") || !strings.Contains(out, "verified") {
		t.Errorf("backup printed:\n%s", out)
	}
	if !strings.Contains(log.String(), "backup "+src+": ") {
		t.Errorf("no progress line: %q", log.String())
	}
	out = runOK("restore", "--verify", "--archive", archive)
	if !strings.Contains(out, "complete, 25 entities") {
		t.Errorf("restore --verify printed:\n%s", out)
	}
	runOK("restore", "--table", dst, "--archive", archive)
	var errb bytes.Buffer
	if code := run(ctx, []string{"restore", "--table", dst, "--archive", archive, "--connection-string", conn, "--progress", "none"}, &bytes.Buffer{}, &errb); code == 0 || !strings.Contains(errb.String(), "not empty") {
		t.Errorf("a second restore: exit %d, %s", code, errb.String())
	}
	out = runOK("restore", "--table", dst, "--archive", archive, "--existing", "skip")
	if !strings.Contains(out, "25 skipped") {
		t.Errorf("restore --existing skip printed:\n%s", out)
	}
	runOK("copy", "--table", src, "--to-table", cp, "--to-connection-string", conn)
	for _, table := range []string{dst, cp} {
		s, err := tables.For[cliDoc](acct, &tables.StoreOptions{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 25 {
			d, err := s.One(ctx, fmt.Sprintf("p%d|d%02d", i%3, i))
			if err != nil || d.N != i || d.Body != strings.Repeat("b", i*9000) {
				t.Fatalf("%s: entity %d: %v", table, i, err)
			}
		}
	}
}

// TestBackupHelpNamesEveryFlag checks that each command's help lists each of its flags.
func TestBackupHelpNamesEveryFlag(t *testing.T) {
	for _, name := range []string{"backup", "restore", "copy"} {
		var out bytes.Buffer
		if code := run(context.Background(), []string{name, "--help"}, &out, &out); code != 0 {
			t.Fatalf("%s --help: exit %d", name, code)
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		lookup(name).flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out.String(), "-"+f.Name+" ") && !strings.Contains(out.String(), "-"+f.Name+"\n") {
				t.Errorf("%s --help does not document --%s", name, f.Name)
			}
		})
	}
}
