// Command server is the host of the example shop: it wires the Azure backend into the domain
// and serves a small HTTP API over it.
//
// It reads the storage account's connection string from UNIFIED_TABLES_CONNECTION_STRING
// ("UseDevelopmentStorage=true" for a local Azurite), makes sure the orders table exists so
// that a wrong connection string fails at start-up rather than on the first request, and
// serves:
//
//	POST /customers/{customer}/orders                  place an order; body: [{"SKU":…,"Quantity":…,"PriceCents":…}]
//	GET  /customers/{customer}/orders                  the customer's orders
//	POST /customers/{customer}/orders/{order}/ship     mark an order shipped
//	POST /customers/{customer}/orders/{order}/cancel   mark an order cancelled
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tools/examples/shop"
	"github.com/unified-data/gotables/tools/examples/shop/domain"
)

// connectionEnv names the environment variable holding the connection string.
const connectionEnv = "UNIFIED_TABLES_CONNECTION_STRING"

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the address to listen on")
	flag.Parse()
	if err := serve(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// serve wires the service to the account of the environment's connection string and serves
// until SIGINT or SIGTERM.
func serve(addr string) error {
	conn := os.Getenv(connectionEnv)
	if conn == "" {
		return fmt.Errorf("set %s to a storage account connection string", connectionEnv)
	}
	acct, err := tables.NewAccount(conn, nil)
	if err != nil {
		return err
	}
	orders, err := shop.Orders(acct, "")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = orders.EnsureCreated(start)
	cancel()
	if err != nil {
		return fmt.Errorf("the orders table: %w", err)
	}

	srv := &http.Server{Addr: addr, Handler: newHandler(domain.NewService(orders)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("shop: serving on %s, orders in table %s", addr, orders.Table())
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler returns the HTTP API over the service. It knows nothing of the backend, so the
// tests serve it over the same store (shop.Orders) in an in-memory account.
func newHandler(svc *domain.Service) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /customers/{customer}/orders", func(w http.ResponseWriter, r *http.Request) {
		var lines []domain.Line
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&lines); err != nil {
			http.Error(w, "the body must be a JSON array of lines: "+err.Error(), http.StatusBadRequest)
			return
		}
		o, err := svc.Place(r.Context(), r.PathValue("customer"), lines)
		reply(w, http.StatusCreated, o, err)
	})
	mux.HandleFunc("GET /customers/{customer}/orders", func(w http.ResponseWriter, r *http.Request) {
		orders, err := svc.OrdersOf(r.Context(), r.PathValue("customer"))
		reply(w, http.StatusOK, orders, err)
	})
	for verb, move := range map[string]func(context.Context, string) (*domain.Order, error){"ship": svc.Ship, "cancel": svc.Cancel} {
		mux.HandleFunc("POST /customers/{customer}/orders/{order}/"+verb, func(w http.ResponseWriter, r *http.Request) {
			id, err := abstractions.CombineID(r.PathValue("customer"), r.PathValue("order"))
			if err != nil {
				reply(w, http.StatusOK, nil, err)
				return
			}
			o, err := move(r.Context(), id)
			reply(w, http.StatusOK, o, err)
		})
	}
	return mux
}

// reply writes v as JSON with status, or err with the status its kind calls for.
func reply(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		code := http.StatusInternalServerError
		switch {
		case errors.Is(err, domain.ErrInvalidOrder), errors.Is(err, abstractions.ErrInvalidKey):
			code = http.StatusBadRequest
		case errors.Is(err, domain.ErrNoSuchOrder):
			code = http.StatusNotFound
		case errors.Is(err, domain.ErrWrongStatus), errors.Is(err, abstractions.ErrConcurrencyConflict):
			code = http.StatusConflict
		case errors.Is(err, abstractions.ErrUnavailable):
			code = http.StatusServiceUnavailable
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
