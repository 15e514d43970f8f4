package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tools/examples/shop"
	"github.com/unified-data/gotables/tools/examples/shop/domain"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestHandler drives the HTTP API over the server's store in an in-memory account; main,
// which needs a storage account and serves forever, is not run.
func TestHandler(t *testing.T) {
	store, err := shop.Orders(inmemory.NewAccount(nil), "")
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(domain.NewService(store).WithIDs(func() string { return "o1" }))
	do := func(method, path, body string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}
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
	} {
		code, body := do(tc.method, tc.path, tc.body)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %q, want %d and %q", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}
}
