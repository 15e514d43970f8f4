package saga_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/blobdocs"
	"github.com/unified-data/gotables/tables/service"
	"github.com/unified-data/gotables/tools/examples/saga"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backends returns the blob services the saga runs on: the in-memory one always, and the
// one of the account named by UNIFIED_TABLES_TEST_CONNECTION_STRING (Azurite) when it is
// set. UNIFIED_TABLES_REQUIRE_AZURITE=1 makes a missing connection string a failure.
func backends(t *testing.T) map[string]service.Blobs {
	t.Helper()
	out := map[string]service.Blobs{"memory": inmemory.NewAccount(nil).Blobs()}
	conn, ok := azuritetest.LookupConnectionString(t)
	if !ok {
		t.Log(azuritetest.ConnEnv + " not set: the saga runs in memory only")
		return out
	}
	acct, err := tables.NewAccount(conn, &tables.Options{
		Blobs:         azblobs.Connect, // blob documents need the account's blob service
		ClientOptions: azuritetest.ClientOptions(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	out["azurite"] = acct.Blobs()
	return out
}

// newOrders returns the saga over a new container of blobs, deleted when the test ends.
func newOrders(t *testing.T, blobs service.Blobs) *saga.Orders {
	t.Helper()
	ctx := context.Background()
	container := "saga-" + strings.ToLower(rand.Text()[:10])
	if err := blobs.CreateContainer(ctx, container); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := blobs.DeleteContainer(context.Background(), container); err != nil {
			t.Errorf("delete container: %v", err)
		}
	})
	reg, err := blobdocs.New(blobs, nil)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := saga.NewOrders(reg, container)
	if err != nil {
		t.Fatal(err)
	}
	return orders
}

func wantStatus(t *testing.T, orders *saga.Orders, id string, want saga.Status) {
	t.Helper()
	got, err := orders.Status(context.Background(), id)
	if err != nil || got != want {
		t.Fatalf("status of %s: %q, %v; want %q", id, got, err, want)
	}
}

// concurrently runs n deliveries at once and returns their errors.
func concurrently(n int, deliver func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = deliver(i) })
	}
	wg.Wait()
	return errs
}

func TestSaga(t *testing.T) {
	for name, blobs := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()

			t.Run("order, payment, shipment", func(t *testing.T) {
				orders := newOrders(t, blobs)
				if err := orders.Place(ctx, "o1", 42); err != nil {
					t.Fatal(err)
				}
				wantStatus(t, orders, "o1", saga.Placed)
				if err := orders.Pay(ctx, "o1", "m-pay", "pay-1"); err != nil {
					t.Fatal(err)
				}
				wantStatus(t, orders, "o1", saga.Paid)
				if err := orders.Ship(ctx, "o1", "m-ship", "TRK-1"); err != nil {
					t.Fatal(err)
				}
				wantStatus(t, orders, "o1", saga.Completed)
				r, err := orders.Receipt(ctx, "o1")
				if err != nil || *r != (saga.Receipt{OrderID: "o1", Amount: 42, PaymentID: "pay-1", Tracking: "TRK-1"}) {
					t.Fatalf("receipt: %+v, %v", r, err)
				}
			})

			t.Run("messages delivered twice, at once, apply once", func(t *testing.T) {
				orders := newOrders(t, blobs)
				for i, err := range concurrently(8, func(int) error { return orders.Place(ctx, "o2", 10) }) {
					if err != nil {
						t.Fatalf("place delivery %d: %v", i, err)
					}
				}
				for i, err := range concurrently(16, func(int) error { return orders.Pay(ctx, "o2", "m-pay", "pay-2") }) {
					if err != nil {
						t.Fatalf("payment delivery %d: %v", i, err)
					}
				}
				wantStatus(t, orders, "o2", saga.Paid)
				for i, err := range concurrently(8, func(int) error { return orders.Ship(ctx, "o2", "m-ship", "TRK-2") }) {
					if err != nil {
						t.Fatalf("shipment delivery %d: %v", i, err)
					}
				}
				wantStatus(t, orders, "o2", saga.Completed)
				if err := orders.Ship(ctx, "o2", "m-ship", "TRK-2"); err != nil {
					t.Fatalf("shipment delivered after completion: %v", err)
				}
			})

			t.Run("two different payments race: one wins", func(t *testing.T) {
				orders := newOrders(t, blobs)
				if err := orders.Place(ctx, "o3", 5); err != nil {
					t.Fatal(err)
				}
				errs := concurrently(16, func(i int) error {
					return orders.Pay(ctx, "o3", fmt.Sprint("m-pay-", i), fmt.Sprint("pay-", i))
				})
				won, outOfOrder := 0, 0
				for _, err := range errs {
					switch {
					case err == nil:
						won++
					case errors.Is(err, saga.ErrOutOfOrder):
						outOfOrder++
					default:
						t.Errorf("payment: %v", err)
					}
				}
				if won != 1 || outOfOrder != 15 {
					t.Fatalf("%d payments applied and %d refused as out of order; want 1 and 15", won, outOfOrder)
				}
			})

			t.Run("messages out of order", func(t *testing.T) {
				orders := newOrders(t, blobs)
				if err := orders.Pay(ctx, "nobody", "m", "pay"); !errors.Is(err, abstractions.ErrNotFound) {
					t.Fatalf("payment of an unknown order: %v", err)
				}
				if err := orders.Place(ctx, "o4", 1); err != nil {
					t.Fatal(err)
				}
				if err := orders.Ship(ctx, "o4", "m-ship", "TRK"); !errors.Is(err, saga.ErrOutOfOrder) {
					t.Fatalf("shipment before payment: %v", err)
				}
				wantStatus(t, orders, "o4", saga.Placed)
				if _, err := orders.Status(ctx, "nobody"); !errors.Is(err, abstractions.ErrNotFound) {
					t.Fatalf("status of an unknown order: %v", err)
				}
			})
		})
	}
}

// A container that was never created is an error that names it, not an unknown order.
func TestMissingContainer(t *testing.T) {
	reg, err := blobdocs.New(inmemory.NewAccount(nil).Blobs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := saga.NewOrders(reg, "no-such-container")
	if err != nil {
		t.Fatal(err)
	}
	_, err = orders.Status(context.Background(), "o1")
	if !errors.Is(err, blobdocs.ErrContainerNotFound) || errors.Is(err, abstractions.ErrNotFound) ||
		!strings.Contains(err.Error(), "no-such-container") {
		t.Fatalf("status in a missing container: %v", err)
	}
}
