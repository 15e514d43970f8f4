package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
)

type ixRow struct {
	abstractions.Entity
	Number int64
	City   string
}

// TestIndexVerifyAndRebuild: rows written before an index existed fail verify (status 1,
// the differences printed), rebuild repairs them, and verify then passes.
func TestIndexVerifyAndRebuild(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	table := fmt.Sprintf("udtix%d", time.Now().UnixNano())
	s, err := tables.For[ixRow](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = acct.Tables().DeleteTable(context.Background(), table) }()
	for i := range 5 {
		if err := s.Create(ctx, &ixRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p|r%d", i)}, Number: int64(i), City: "Lisbon"}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(verb string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, []string{"index", verb, "--connection-string", conn, "--table", table,
			"--index", "number=Number", "--index", "city=City:desc"}, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, out, errb := cmd("verify"); code != 1 || !strings.Contains(out, "10 missing") || !strings.Contains(errb, "index rebuild") {
		t.Fatalf("verify before: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := cmd("rebuild"); code != 0 || !strings.Contains(out, "5 repaired") {
		t.Fatalf("rebuild: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := cmd("verify"); code != 0 || !strings.Contains(out, "10 index rows; 0 missing, 0 stale, 0 entities with a wrong list") {
		t.Fatalf("verify after: exit %d\n%s%s", code, out, errb)
	}
	// A unique index added to the table: the duplicate is printed and claimed for neither,
	// the other values are claimed, and the index rows are left alone.
	if err := s.Create(ctx, &ixRow{Entity: abstractions.Entity{ID: "q|r9"}, Number: 3, City: "Porto"}); err != nil {
		t.Fatal(err)
	}
	unique := func(verb string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, []string{"index", verb, "--connection-string", conn, "--table", table, "--unique", "number=Number"}, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, out, errb := unique("verify"); code != 1 || !strings.Contains(out, "claims: 4 missing, 0 in the way, 0 stale, 1 duplicate values") ||
		!strings.Contains(out, "duplicate: the unique index number has the value 3 in 2 entities: p|r3 q|r9") {
		t.Fatalf("verify of a unique index: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := unique("rebuild"); code != 0 || !strings.Contains(out, "4 repaired") {
		t.Fatalf("rebuild of a unique index: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := unique("verify"); code != 1 || !strings.Contains(out, "claims: 0 missing, 0 in the way, 0 stale, 1 duplicate values") {
		t.Fatalf("verify after the rebuild of a unique index: exit %d\n%s%s", code, out, errb)
	}
	for _, args := range [][]string{
		{"index", "verify", "--azurite", "--table", table, "--unique", "n=Number:desc"},
		{"index", "--azurite", "--table", table, "--index", "n=Number"},
		{"index", "verify", "--azurite", "--table", table},
		{"index", "verify", "--azurite", "--table", table, "--index", "n"},
		{"index", "verify", "--azurite", "--table", table, "--index", "n=Number:up"},
	} {
		var out, errb bytes.Buffer
		if code := run(ctx, args, &out, &errb); code != 1 || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
