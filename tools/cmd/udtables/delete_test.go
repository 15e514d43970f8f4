package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/service"
)

// TestDeleteAndClearCommands deletes by a filter on Azurite, split entities with their
// continuation rows, and clears the table only with --all-rows.
func TestDeleteAndClearCommands(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	acct, closeAcct, err := openAccount(conn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAcct()
	ctx := context.Background()
	table := "CliDel" + fmt.Sprint(rand.Uint32())
	defer acct.Tables().DeleteTable(ctx, table) //nolint:errcheck
	docs, err := tables.For[cliDoc](acct, &tables.StoreOptions{Table: table, TableScans: tables.AllowTableScans})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		// Every third entity holds a value split over continuation rows.
		d := &cliDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|d%02d", i%2, i)}, N: i, Body: strings.Repeat("b", (i%3)*400_000)}
		if err := docs.Upsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	rows := func() int {
		t.Helper()
		n := 0
		q := service.Query{Select: []string{}}
		for {
			page, err := acct.Tables().Query(ctx, table, q)
			if err != nil {
				t.Fatal(err)
			}
			n += len(page.Rows)
			if page.Next == nil {
				return n
			}
			q.Continuation = page.Next
		}
	}
	before := rows()
	if before <= 12 {
		t.Fatalf("%d rows: the split values made no continuation rows", before)
	}
	cmd := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(ctx, append(args, "--connection-string", conn, "--progress", "none"), &out, &errb)
		return out.String(), errb.String(), code
	}
	if _, errs, code := cmd("delete", "--table", table); code == 0 || !strings.Contains(errs, "--all-rows") {
		t.Errorf("delete without --where: exit %d, %s", code, errs)
	}
	if _, errs, code := cmd("clear", table); code == 0 || !strings.Contains(errs, "--all-rows") {
		t.Errorf("clear without --all-rows: exit %d, %s", code, errs)
	}
	out, errs, code := cmd("delete", "--table", table, "--where", "N lt 6L", "--dry-run")
	if code != 0 || !strings.Contains(out, "would delete 6 entities") {
		t.Errorf("dry run: exit %d, %s%s", code, out, errs)
	}
	if rows() != before {
		t.Fatal("the dry run deleted rows")
	}
	out, errs, code = cmd("delete", "--table", table, "--where", "N lt 6L")
	if code != 0 || !strings.Contains(out, "deleted 6 entities") {
		t.Errorf("delete: exit %d, %s%s", code, out, errs)
	}
	left, err := docs.ListAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range left {
		if d.N < 6 {
			t.Errorf("%s is left", d.ID)
		}
	}
	if len(left) != 6 {
		t.Errorf("%d entities left, want 6", len(left))
	}
	out, errs, code = cmd("clear", table, "--all-rows")
	if code != 0 || !strings.Contains(out, "deleted 6 entities") || rows() != 0 {
		t.Errorf("clear: exit %d, %s%s; %d rows left", code, out, errs, rows())
	}
	if ok, err := acct.Tables().TableExists(ctx, table); err != nil || !ok {
		t.Errorf("clear keeps the table: %v, %v", ok, err)
	}
}

type cliIx struct {
	abstractions.Entity
	Status string `table:",index=status"`
}

// TestDeleteCommandTakesIndexRows deletes indexed entities by a filter on Azurite: their
// index rows go with them, the others' stay.
func TestDeleteCommandTakesIndexRows(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	acct, closeAcct, err := openAccount(conn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAcct()
	ctx := context.Background()
	table := "CliDelIx" + fmt.Sprint(rand.Uint32())
	defer acct.Tables().DeleteTable(ctx, table) //nolint:errcheck
	s, err := tables.For[cliIx](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := s.Create(ctx, &cliIx{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}, Status: []string{"open", "done"}[i%2]}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"delete", "--table", table, "--where", "PartitionKey eq 'p' and Status eq 'done'", "--connection-string", conn, "--progress", "none"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "deleted 3 entities (6 rows)") {
		t.Fatalf("delete: exit %d: %s%s", code, out.String(), errb.String())
	}
	page, err := acct.Tables().Query(ctx, table, service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	ix := 0
	for _, r := range page.Rows {
		if strings.HasPrefix(r.RowKey, "~ix.") {
			ix++
		} else if v, _ := r.Get("Status"); v.Str() != "open" {
			t.Errorf("%s is left", r.RowKey)
		}
	}
	if len(page.Rows) != 6 || ix != 3 {
		t.Errorf("%d rows, %d of them index rows; want 3 entities and their 3 index rows", len(page.Rows), ix)
	}
}
