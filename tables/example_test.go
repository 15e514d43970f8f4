package tables_test

import (
	"context"
	"log"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
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
	customers, err := tables.For[Customer](acct) // the table is named "Customer"
	if err != nil {
		log.Fatal(err)
	}
	// Stores create their table on first use; EnsureCreated fails fast at start-up instead.
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
		"https://myaccount.blob.core.windows.net", // "" when no blob feature is used
		cred, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tables.For[Customer](acct, tables.WithTable("Clients")); err != nil {
		log.Fatal(err)
	}
}

// An account over a table client the application already has; ids are used exactly as
// written instead of normalised.
func ExampleNewAccountFromClients() {
	client, err := aztables.NewServiceClientFromConnectionString(os.Getenv("STORAGE_CONNECTION_STRING"), nil)
	if err != nil {
		log.Fatal(err)
	}
	acct := tables.NewAccountFromClients(client, nil, &tables.Options{IDs: tables.IDsAsWritten})
	if _, err := tables.For[Customer](acct); err != nil {
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
	customers, err := tables.For[Customer](acct)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := tables.For[Order](acct, tables.WithTable("Orders"))
	if err != nil {
		log.Fatal(err)
	}
	_, _ = customers, orders
}
