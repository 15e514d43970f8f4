package outbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tools/examples/outbox"
)

// TestInbox: a consumer handles each message once while the inbox remembers it; a week
// later its row expired, and a sweep deletes it.
func TestInbox(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	opts := &tables.Options{Now: func() time.Time { return time.Unix(0, now.Load()) }}
	accounts := map[string]*tables.Account{"memory": inmemory.NewAccount(opts)}
	table := outbox.InboxTable
	if conn, ok := azuritetest.LookupConnectionString(t); ok {
		o := *opts
		o.ClientOptions = azuritetest.ClientOptions(t)
		acct, err := tables.NewAccount(conn, &o)
		if err != nil {
			t.Fatal(err)
		}
		var b [5]byte
		_, _ = rand.Read(b[:])
		table += hex.EncodeToString(b[:])
		t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), table) })
		accounts["azurite"] = acct
	}
	for name, acct := range accounts {
		t.Run(name, func(t *testing.T) {
			now.Store(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC).UnixNano())
			in, err := outbox.OpenInbox(acct, table)
			if err != nil {
				t.Fatal(err)
			}
			handled := map[int64]int{}
			h := func(_ context.Context, m outbox.Message) error { handled[m.Seq]++; return nil }
			m1 := outbox.Message{Tenant: "t1", Seq: 1, Type: "Placed"}
			m2 := outbox.Message{Tenant: "t1", Seq: 2, Type: "Paid"}
			for _, m := range []outbox.Message{m1, m1, m2, m1, m2} { // redeliveries
				if err := in.Handle(ctx, m, h); err != nil {
					t.Fatal(err)
				}
			}
			if handled[1] != 1 || handled[2] != 1 {
				t.Fatalf("handled %v, want each message once", handled)
			}
			// Nothing is due yet.
			if rep, err := in.Sweep(ctx, 0); err != nil || rep.Swept != 0 {
				t.Fatalf("an early sweep: %+v, %v", rep, err)
			}
			now.Add(int64(8 * 24 * time.Hour))
			rep, err := in.Sweep(ctx, 100)
			if err != nil || rep.Swept != 2 {
				t.Fatalf("the sweep a week later: %+v, %v; want both rows swept", rep, err)
			}
			// Past the window, a message reads as never handled.
			if err := in.Handle(ctx, m1, h); err != nil || handled[1] != 2 {
				t.Fatalf("a delivery after the window: handled %v, %v", handled, err)
			}
		})
	}
}
