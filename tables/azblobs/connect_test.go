package azblobs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
)

// Connect needs the account's own blob endpoint; ConnectTo takes another account's (URL
// names it, for the account's telemetry). Nothing is sent here.
func TestConnectAndConnectTo(t *testing.T) {
	const key = "a2V5"
	cosmos := "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + key + ";TableEndpoint=https://acct.table.cosmos.azure.com:443/;"
	_, err := tables.NewAccount(cosmos, &tables.Options{Blobs: azblobs.Connect})
	if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "azblobs.ConnectTo") || strings.Contains(err.Error(), key) {
		t.Errorf("Connect on a Cosmos DB connection string: %v, want ErrInvalidArgument naming ConnectTo", err)
	}
	if _, err := tables.NewAccount(cosmos, &tables.Options{Blobs: azblobs.ConnectTo("AccountName=store")}); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("ConnectTo a connection string without a credential: %v, want ErrInvalidArgument", err)
	}
	storage := "DefaultEndpointsProtocol=https;AccountName=store;AccountKey=" + key
	acct, err := tables.NewAccount(cosmos, &tables.Options{Blobs: azblobs.ConnectTo(storage)})
	if err != nil || acct.Blobs() == nil {
		t.Fatalf("ConnectTo a storage account: %v", err)
	}
	b, err := azblobs.NewFromConnectionString(storage, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.URL(); got != "https://store.blob.core.windows.net" {
		t.Errorf("URL = %q", got)
	}
}
