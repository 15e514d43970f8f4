package fidelity

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/service"
)

// cosmosDoc is a document with a value large enough to offload.
type cosmosDoc struct {
	abstractions.Entity
	Data []byte `table:",split=binary"`
}

// TestCosmosAccountWithAStorageAccountsBlobs: an Azure Cosmos DB for Table account (the
// table emulator serving the Cosmos profile, for an account of its own name and key) has no
// blob service; azblobs.ConnectTo gives it a storage account's (Azurite's, another name and
// key), and blob offload stores its large values there. azblobs.Connect, which would reach a
// blob endpoint named after the Cosmos DB account, is refused for a Cosmos DB endpoint.
func TestCosmosAccountWithAStorageAccountsBlobs(t *testing.T) {
	azConn := azuritetest.ConnectionString(t)
	key := []byte("a key of the Cosmos DB account, not the storage one")
	h, err := emulator.New(&emulator.Options{
		Accounts: []emulator.Account{{Name: "cosmosacct", Key: key}},
		Service:  func(string) *memservice.Service { return memservice.New(memservice.Cosmos()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	cosConn := "DefaultEndpointsProtocol=http;AccountName=cosmosacct;AccountKey=" + base64.StdEncoding.EncodeToString(key) +
		";TableEndpoint=" + srv.URL + "/cosmosacct;"
	container := fmt.Sprintf("cosmos-offload-%d", rand.Uint32())
	acct, err := tables.NewAccount(cosConn, &tables.Options{
		Service:       service.Cosmos, // the emulator's endpoint does not say so
		ClientOptions: azuritetest.ClientOptions(t),
		Blobs:         azblobs.ConnectTo(azConn),
		BlobOffload:   &tables.BlobOffloadOptions{Container: container, ThresholdBytes: 1 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer acct.Blobs().DeleteContainer(ctx, container) //nolint:errcheck
	docs, err := tables.For[cosmosDoc](acct, &tables.StoreOptions{Table: "CosmosOffload"})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte{3, 1, 4, 1, 5}, 700_000) // 3.5 MB: offloaded
	if err := docs.Upsert(ctx, &cosmosDoc{Entity: abstractions.Entity{ID: "p|big"}, Data: want}); err != nil {
		t.Fatal(err)
	}
	got, err := docs.One(ctx, "p|big")
	if err != nil || !bytes.Equal(got.Data, want) {
		t.Fatalf("the offloaded value read back: %v (%d bytes, want %d)", err, len(got.Data), len(want))
	}
	// The blob is in the storage account: Azurite's, read by an account of its own.
	blobs, err := azblobs.NewFromConnectionString(azConn, &azblobs.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	page, err := blobs.List(ctx, container, service.ListOptions{})
	if err != nil || len(page.Blobs) != 1 || page.Blobs[0].Properties.ContentLength != int64(len(want)) {
		t.Fatalf("the storage account's offload container: %+v, %v; want one blob of %d bytes", page, err, len(want))
	}

	// A Cosmos DB connection string as the portal gives it names no blob endpoint, and none
	// is made up from its account name: azblobs.Connect is refused, naming ConnectTo.
	portal := "DefaultEndpointsProtocol=https;AccountName=cosmosacct;AccountKey=" + base64.StdEncoding.EncodeToString(key) +
		";TableEndpoint=https://cosmosacct.table.cosmos.azure.com:443/;"
	_, err = tables.NewAccount(portal, &tables.Options{Blobs: azblobs.Connect})
	if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "azblobs.ConnectTo") {
		t.Errorf("azblobs.Connect on a Cosmos DB endpoint: %v, want ErrInvalidArgument naming azblobs.ConnectTo", err)
	}
	if _, err := tables.NewAccount(portal, &tables.Options{Blobs: azblobs.ConnectTo(azConn)}); err != nil {
		t.Errorf("azblobs.ConnectTo on a Cosmos DB endpoint: %v", err)
	}
}
