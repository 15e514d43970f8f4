package tables_test

import (
	"context"
	"log"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
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

// The quick start on Azure (or Azurite): an account from a connection string, the store of
// a type in it, and a first write. The examples of package inmemory run the same calls
// without a service.
func ExampleNewAccount() {
	ctx := context.Background()
	// A connection string with an AccountKey or a SharedAccessSignature, or
	// "UseDevelopmentStorage=true" for Azurite on its default ports.
	acct, err := tables.NewAccount(os.Getenv("STORAGE_CONNECTION_STRING"), nil)
	if err != nil {
		log.Fatal(err)
	}
	customers, err := tables.For[Customer](acct, nil) // the table is named "Customer"
	if err != nil {
		log.Fatal(err)
	}
	// The first write creates the table; EnsureCreated fails fast at start-up instead.
	if err := customers.EnsureCreated(ctx); err != nil {
		log.Fatal(err)
	}
	alice := &Customer{Entity: abstractions.Entity{ID: "eu|alice"}, Name: "Alice", Balance: 100}
	if err := customers.Create(ctx, alice); err != nil {
		log.Fatal(err)
	}
}

// An account reached with a Microsoft Entra ID credential instead of a key.
func ExampleNewAccountWithCredential() {
	// Any azcore.TokenCredential, for example one of package azidentity.
	var cred azcore.TokenCredential
	acct, err := tables.NewAccountWithCredential(
		"https://myaccount.table.core.windows.net",
		"", // the blob endpoint, needed only with Options.Blobs
		cred, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tables.For[Customer](acct, &tables.StoreOptions{Table: "Clients"}); err != nil {
		log.Fatal(err)
	}
}

// An account whose calls fail fast: no SDK retries, and a short timeout per try. Every
// client the account builds (the table client, and the blob client when blob support is
// on) takes these options; ids are used exactly as written instead of normalised.
func ExampleOptions() {
	acct, err := tables.NewAccount(os.Getenv("STORAGE_CONNECTION_STRING"), &tables.Options{
		IDs: tables.IDsAsWritten,
		ClientOptions: azcore.ClientOptions{
			Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: 2 * time.Second},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tables.For[Customer](acct, nil); err != nil {
		log.Fatal(err)
	}
}

// Stores of several types share one account; each type has its own table.
func ExampleFor() {
	type Order struct {
		abstractions.Entity
		CustomerID string
		Total      float64
	}
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	customers, err := tables.For[Customer](acct, nil)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, &tables.StoreOptions{Table: "Orders", Cache: tables.Absolute(30 * time.Second)})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = customers, orders
}
