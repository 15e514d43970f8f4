package feed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/feed"
)

// Order is a store's entity type; a partition per customer.
type Order struct {
	abstractions.Entity
	Status string
	Cents  int64
}

// Give a store a feed, then write as usual: each write appends its change record in its
// own transaction.
func ExampleEnable() {
	ctx := context.Background()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := feed.Enable(orders, &feed.Options{Body: true}); err != nil {
		log.Fatal(err)
	}
	if err := orders.Create(ctx, &Order{Entity: abstractions.Entity{ID: "customer-42|order-7"}, Status: "open"}); err != nil {
		log.Fatal(err)
	}
}

// The outbox: a change and the event it causes, in one transaction; relays deliver the
// event with the other records of the partition.
func ExamplePublish() {
	ctx := context.Background()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := feed.Enable(orders, nil); err != nil {
		log.Fatal(err)
	}
	order, err := orders.One(ctx, "customer-42|order-7")
	if err != nil {
		log.Fatal(err)
	}
	order.Status = "paid"
	payload, _ := json.Marshal(map[string]any{"order": order.ID, "cents": order.Cents})
	tx := orders.Transaction("customer-42")
	orders.UpdateIn(tx, order, abstractions.Strict)
	feed.Publish(tx, orders, "OrderPaid", payload)
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err) // neither the change nor its event was written
	}
}

// A relay delivers what is pending, at least once, each entity's changes in order; run one
// or more per table, in as many processes as you like.
func ExampleRelay_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := feed.Enable(orders, nil); err != nil {
		log.Fatal(err)
	}
	relay, err := feed.NewRelay(orders, &feed.RelayOptions{Name: "billing-1"})
	if err != nil {
		log.Fatal(err)
	}
	err = relay.Run(ctx, func(ctx context.Context, r feed.Record) error {
		// Deduplicate by r.ID: a record may come again after a crash.
		fmt.Println(r.ID, r.Entity, r.Kind, r.Version, r.Type)
		return nil // an error leaves the record pending; it comes again
	})
	log.Print(err)
}

// Status reports the backlog: what relays have left to do.
func ExampleStatus() {
	ctx := context.Background()
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := feed.Enable(orders, nil); err != nil {
		log.Fatal(err)
	}
	b, err := feed.Status(ctx, orders)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d records pending in %d partitions, %d dead letters\n", b.Pending, b.Partitions, b.Dead)
}
