package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Customer is a stored type: a struct that embeds abstractions.Entity.
type Customer struct {
	abstractions.Entity
	Name    string
	Balance float64
}

// The quick start: define an entity type, build an account and a store, use it. The same
// code runs on Azure with tables.NewAccount and tables.For.
func Example() {
	ctx := context.Background()
	acct := inmemory.NewAccount(nil)
	customers, err := tables.For[Customer](acct, nil) // the table is named "Customer"
	if err != nil {
		log.Fatal(err)
	}

	alice := &Customer{Entity: abstractions.Entity{ID: "EU|Alice"}, Name: "Alice", Balance: 100}
	if err := customers.Create(ctx, alice); err != nil {
		log.Fatal(err)
	}
	fmt.Println("created", alice.ID, "in table", customers.Table())

	got, err := customers.One(ctx, "eu|alice")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("read", got.Name, got.Balance)

	// Strict writes only over the version the entity was read as (its ETag).
	stale := *got
	got.Balance += 50
	if err := customers.Update(ctx, got, abstractions.Strict); err != nil {
		log.Fatal(err)
	}
	fmt.Println("updated", got.Balance)

	// The copy read before that update now carries a stale ETag: the write loses.
	stale.Balance = 0
	err = customers.Update(ctx, &stale, abstractions.Strict)
	fmt.Println("conflict:", errors.Is(err, abstractions.ErrConcurrencyConflict))
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		fmt.Println("the service said", se.StatusCode, se.ErrorCode)
	}

	// Creating the same key again is refused too.
	err = customers.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|alice"}})
	fmt.Println("duplicate:", errors.Is(err, abstractions.ErrDuplicateKey))
	// Output:
	// created eu|alice in table Customer
	// read Alice 100
	// updated 150
	// conflict: true
	// the service said 412 UpdateConditionNotSatisfied
	// duplicate: true
}

// Batches write per partition, one transaction of up to 100 rows each; Count reads keys only.
func Example_batch() {
	ctx := context.Background()
	customers, err := tables.For[Customer](inmemory.NewAccount(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	err = customers.CreateBatch(ctx, []*Customer{
		{Entity: abstractions.Entity{ID: "eu|alice"}, Name: "Alice"},
		{Entity: abstractions.Entity{ID: "eu|bob"}, Name: "Bob"},
		{Entity: abstractions.Entity{ID: "us|carol"}, Name: "Carol"},
	})
	if err != nil {
		log.Fatal(err)
	}
	n, err := customers.Count(ctx, "eu")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("eu:", n)
	eu, err := customers.List(ctx, "eu")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range eu {
		fmt.Println(c.ID, c.Name)
	}
	deleted, err := customers.DeletePartition(ctx, "eu")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted", deleted)
	// Output:
	// eu: 2
	// eu|alice Alice
	// eu|bob Bob
	// deleted 2
}

// Accounts share nothing: each is a storage account of its own. StoreOptions.Table names a
// store's table instead of the type's name.
func ExampleNewAccount() {
	ctx := context.Background()
	first, second := inmemory.NewAccount(nil), inmemory.NewAccount(nil)
	a, err := tables.For[Customer](first, &tables.StoreOptions{Table: "Clients"})
	if err != nil {
		log.Fatal(err)
	}
	b, err := tables.For[Customer](second, &tables.StoreOptions{Table: "Clients"})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|alice"}}); err != nil {
		log.Fatal(err)
	}
	inFirst, _ := a.Exists(ctx, "eu|alice")
	inSecond, _ := b.Exists(ctx, "eu|alice")
	fmt.Println(a.Table(), inFirst, inSecond)
	// Output: Clients true false
}
