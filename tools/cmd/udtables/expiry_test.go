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
	"github.com/unified-data/gotables/tables/service"
)

type expRow struct {
	abstractions.Entity
	Body  string
	Until time.Time `table:",expires"`
}

// TestSweepExpired: the command deletes the rows that expired, with their index rows, and
// keeps the others; bad flags are usage errors.
func TestSweepExpired(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	table := fmt.Sprintf("udtexp%d", time.Now().UnixNano())
	s, err := tables.For[expRow](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = acct.Tables().DeleteTable(context.Background(), table) }()
	for i := range 6 {
		until := time.Now().Add(-2 * time.Hour) // expired
		if i%2 == 1 {
			until = time.Now().Add(time.Hour)
		}
		if err := s.Create(ctx, &expRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%d", i%3, i)}, Body: "b", Until: until}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code := run(ctx, []string{"sweep-expired", "--connection-string", conn, "--table", table, "--column", "Until", "--rate", "100"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "3 expired rows, 3 swept, 0 renewed") {
		t.Fatalf("sweep-expired: exit %d\n%s%s", code, out.String(), errb.String())
	}
	rows, err := acct.Tables().Query(ctx, table, service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	// The three live entities, their expiry index rows, and the marks of the hour ahead.
	live := 0
	for _, r := range rows.Rows {
		if !strings.HasPrefix(r.RowKey, "~") && !strings.HasPrefix(r.PartitionKey, "~") {
			live++
		}
	}
	if live != 3 || len(rows.Rows) > 3+3+3 {
		t.Errorf("after the sweep: %d live entities in %d rows", live, len(rows.Rows))
	}
	for _, args := range [][]string{
		{"sweep-expired", "--azurite", "--column", "Until"},
		{"sweep-expired", "--azurite", "--table", table},
		{"sweep-expired", "--azurite", "--table", table, "--column", "Until", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(ctx, args, &out, &errb); code != 1 || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
