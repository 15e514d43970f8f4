package azblobs_test

import (
	"log"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
)

// Document is a stored type of the example.
type Document struct {
	abstractions.Entity
	Title string
}

// An account with blob support. The connection string must reach the blob service too: a
// BlobEndpoint, or an AccountName whose default endpoints it derives ("UseDevelopmentStorage=true"
// names both of Azurite's). Without Options.Blobs the account has no blob service, and the
// program does not link the blob SDK.
func ExampleConnect() {
	acct, err := tables.NewAccount(os.Getenv("STORAGE_CONNECTION_STRING"), &tables.Options{Blobs: azblobs.Connect})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tables.For[Document](acct, nil); err != nil {
		log.Fatal(err)
	}
}

// With a token credential, the blob endpoint is the second argument.
func ExampleConnect_credential() {
	var cred azcore.TokenCredential // for example one of package azidentity
	acct, err := tables.NewAccountWithCredential(
		"https://myaccount.table.core.windows.net",
		"https://myaccount.blob.core.windows.net",
		cred, &tables.Options{Blobs: azblobs.Connect})
	if err != nil {
		log.Fatal(err)
	}
	_ = acct
}
