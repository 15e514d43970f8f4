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
	"github.com/unified-data/gotables/tables/feed"
)

// TestFeedStatusAndReplay: status counts the pending records and the dead letters of a
// table whatever its type; replay sends the dead letters back to the relays.
func TestFeedStatusAndReplay(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	table := fmt.Sprintf("udtfd%d", time.Now().UnixNano())
	s, err := tables.For[ixRow](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = acct.Tables().DeleteTable(context.Background(), table) }()
	if err := feed.Enable(s, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := s.Create(ctx, &ixRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r", i)}, Number: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(verb string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, []string{"feed", verb, "--connection-string", conn, "--table", table}, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, out, errb := cmd("status"); code != 0 || !strings.Contains(out, "pending: 2 records in 2 partitions") || !strings.Contains(out, "dead letters: 0") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errb)
	}
	r, err := feed.NewRelay(s, &feed.RelayOptions{MaxFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Pass(ctx, func(context.Context, feed.Record) error { return fmt.Errorf("down") }); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := cmd("status"); code != 0 || !strings.Contains(out, "pending: 0 records") || !strings.Contains(out, "dead letters: 2 in 2 partitions") {
		t.Fatalf("status after the failures: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := cmd("replay"); code != 0 || !strings.Contains(out, "2 dead letters sent back") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := cmd("status"); code != 0 || !strings.Contains(out, "pending: 2 records in 2 partitions") || !strings.Contains(out, "dead letters: 0 in 0") {
		t.Fatalf("status after the replay: exit %d\n%s%s", code, out, errb)
	}
	if code, _, errb := cmd("drain"); code != 1 || !strings.Contains(errb, "status or replay") {
		t.Fatalf("an unknown verb: exit %d %s", code, errb)
	}
}
