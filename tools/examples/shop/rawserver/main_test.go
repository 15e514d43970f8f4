package main

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"go.uber.org/goleak"

	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tools/examples/shop"
	"github.com/unified-data/gotables/tools/examples/shop/domain"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// liveTable returns a client of a new table on the test account (Azurite), deleted when the
// test ends, and the account's connection string. Without an account the test skips,
// unless UNIFIED_TABLES_REQUIRE_AZURITE=1.
func liveTable(t *testing.T) (*aztables.Client, string, string) {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	svc, err := aztables.NewServiceClientFromConnectionString(conn,
		&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	name := "rawshop" + strings.ToLower(rand.Text()[:10])
	if _, err := svc.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := svc.DeleteTable(context.Background(), name, nil); err != nil {
			t.Errorf("deleting table %s: %v", name, err)
		}
	})
	return svc.NewClient(name), name, conn
}

// TestHandler runs the cases of the library's server test (server/main_test.go) against
// this server on Azurite: the same requests get the same statuses and bodies.
func TestHandler(t *testing.T) {
	client, _, _ := liveTable(t)
	h := newHandler(client, func() string { return "o1" })
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/customers/alice/orders", `[{"SKU":"tea","Quantity":2,"PriceCents":450}]`, http.StatusCreated, `"TotalCents":900`},
		{"POST", "/customers/alice/orders", `[]`, http.StatusBadRequest, "no lines"},
		{"POST", "/customers/alice/orders", `{`, http.StatusBadRequest, "JSON array"},
		{"GET", "/customers/alice/orders", "", http.StatusOK, `"ID":"alice|o1"`},
		{"POST", "/customers/alice/orders/o1/ship", "", http.StatusOK, `"Status":"shipped"`},
		{"POST", "/customers/alice/orders/o1/cancel", "", http.StatusConflict, "wrong status"},
		{"POST", "/customers/alice/orders/o2/ship", "", http.StatusNotFound, "no such order"},
		{"POST", "/customers/a%7Cb/orders/o1/ship", "", http.StatusBadRequest, "cannot address"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s %s: %d %q, want %d and %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.code, tc.want)
		}
	}
}

// TestRowsAreTheLibrarys checks that both servers store the same rows: an order this server
// places reads back through the library as the same domain.Order, and one the library
// places is listed and moved by this server.
func TestRowsAreTheLibrarys(t *testing.T) {
	client, name, conn := liveTable(t)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	orders, err := shop.Orders(acct, name) // the library server's wiring, in this test's table
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	placed, err := place(ctx, client, "Bob", "raw1", []Line{{SKU: "tea", Quantity: 3, PriceCents: 250}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := orders.One(ctx, "bob|raw1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.Placed || got.TotalCents != 750 || len(got.Lines) != 1 || got.Lines[0].SKU != "tea" ||
		got.ETag != placed.ETag || !got.CreatedAt.Equal(placed.CreatedAt) {
		t.Errorf("the library reads %+v, want the order placed: %+v", got, placed)
	}

	svc := domain.NewService(orders).WithIDs(func() string { return "lib1" })
	if _, err := svc.Place(ctx, "bob", []domain.Line{{SKU: "cake", Quantity: 1, PriceCents: 400}}); err != nil {
		t.Fatal(err)
	}
	listed, err := list(ctx, client, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || listed[0].ID != "bob|lib1" || listed[0].TotalCents != 400 || listed[1].ID != "bob|raw1" {
		t.Errorf("listed %+v, want bob|lib1 (400) and bob|raw1", listed)
	}
	moved, err := move(ctx, client, "bob", "lib1", "shipped")
	if err != nil {
		t.Fatal(err)
	}
	back, err := orders.One(ctx, "bob|lib1")
	if err != nil {
		t.Fatal(err)
	}
	if back.Status != domain.Shipped || back.ETag != moved.ETag || back.Lines[0].SKU != "cake" {
		t.Errorf("after the raw ship the library reads %+v", back)
	}
}
