package saga_test

import (
	"context"
	"fmt"
	"log"

	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables/blobdocs"
	"github.com/unified-data/gotables/tools/examples/saga"
)

// An order's saga on the in-memory backend. On Azure the blob service comes from
// tables.NewAccount(conn, &tables.Options{Blobs: azblobs.Connect}) instead.
func Example() {
	ctx := context.Background()
	blobs := inmemory.NewAccount(nil).Blobs()
	if err := blobs.CreateContainer(ctx, "orders"); err != nil { // never created for you
		log.Fatal(err)
	}
	reg, err := blobdocs.New(blobs, nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := saga.NewOrders(reg, "orders")
	if err != nil {
		log.Fatal(err)
	}

	must := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	must(orders.Place(ctx, "o-1", 42))
	must(orders.Pay(ctx, "o-1", "msg-1", "pay-9"))
	must(orders.Pay(ctx, "o-1", "msg-1", "pay-9")) // delivered twice: applied once
	fmt.Println(orders.Status(ctx, "o-1"))
	must(orders.Ship(ctx, "o-1", "msg-2", "TRACK-7")) // completes the saga
	must(orders.Ship(ctx, "o-1", "msg-2", "TRACK-7")) // delivered again after completion: ignored
	fmt.Println(orders.Status(ctx, "o-1"))
	r, err := orders.Receipt(ctx, "o-1")
	must(err)
	fmt.Printf("%+v\n", *r)
	// Output:
	// paid <nil>
	// completed <nil>
	// {OrderID:o-1 Amount:42 PaymentID:pay-9 Tracking:TRACK-7}
}
