// Package tables is the Azure backend of Unified Data Tables: accounts reached through the
// Azure SDK for Go, and the stores of entity types in them.
//
//	acct, err := tables.NewAccount(os.Getenv("STORAGE_CONNECTION_STRING"), nil)
//	customers, err := tables.For[Customer](acct)
//	err = customers.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|alice"}})
//
// The stores are the engine of package engine over the Azure adapter of package azservice;
// the in-memory backend (module inmemory) runs the same engine over an in-memory service, so
// code and tests written against abstractions.Storage behave the same on both.
package tables

import (
	"fmt"
	"net/url"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/engine"
)

// Options configure every store of an account; the zero value is ready to use. See
// engine.Options.
type Options = engine.Options

// Account is a storage account and the options its stores share.
type Account = engine.Account

// Store is the repository of one entity type; it implements abstractions.Storage[T]. Its
// methods are documented on engine.Store (package tables/engine).
type Store[T any] = engine.Store[T]

// StoreOption changes one store's configuration, such as WithTable.
type StoreOption = engine.StoreOption

// WithTable stores the entities in the named table instead of the one named after the type.
func WithTable(name string) StoreOption { return engine.WithTable(name) }

// CachePolicy is a store's read-cache policy: Disabled (the default), Sliding or Absolute.
type CachePolicy = engine.CachePolicy

// Disabled keeps nothing in the read cache; every read goes to the table.
var Disabled = engine.Disabled

// Sliding keeps a read or written row until it has not been read for d; d <= 0 means
// Disabled. Use it only when this process is the only writer of the table: another
// process's writes are never seen while the entry keeps being read.
func Sliding(d time.Duration) CachePolicy { return engine.Sliding(d) }

// Absolute keeps a read or written row for d after it was stored; d <= 0 means Disabled.
func Absolute(d time.Duration) CachePolicy { return engine.Absolute(d) }

// WithCache sets one store's read-cache policy, overriding the account's.
func WithCache(p CachePolicy) StoreOption { return engine.WithCache(p) }

// ID modes for Options.IDs.
const (
	NormalizeIDs = engine.NormalizeIDs
	IDsAsWritten = engine.IDsAsWritten
)

// NewAccount returns the account a connection string names: one with an AccountKey or a
// SharedAccessSignature, or "UseDevelopmentStorage=true" for the Azurite emulator on its
// default loopback ports. A nil opts means the defaults. A connection string it cannot use
// fails with an error matching abstractions.ErrInvalidArgument that says which setting is
// wrong and never repeats a key or signature.
func NewAccount(connectionString string, opts *Options) (*Account, error) {
	svc, err := azservice.NewFromConnectionString(connectionString)
	if err != nil {
		return nil, err
	}
	return engine.NewAccount(svc.Endpoint(), svc, svc, opts), nil
}

// NewAccountWithCredential returns the account at tableURL (such as
// "https://myaccount.table.core.windows.net") authenticated with cred, for example an
// azidentity credential. blobURL may be empty when no blob feature is used.
func NewAccountWithCredential(tableURL, blobURL string, cred azcore.TokenCredential, opts *Options) (*Account, error) {
	if cred == nil {
		return nil, fmt.Errorf("%w: tables: the credential is nil", abstractions.ErrInvalidArgument)
	}
	if _, err := url.ParseRequestURI(tableURL); err != nil {
		return nil, fmt.Errorf("%w: tables: the table endpoint %q is not a URL: %v", abstractions.ErrInvalidArgument, tableURL, err)
	}
	tc, err := aztables.NewServiceClient(tableURL, cred, nil)
	if err != nil {
		return nil, fmt.Errorf("tables: creating the table client: %w", err)
	}
	var bc *azblob.Client
	if blobURL != "" {
		if bc, err = azblob.NewClient(blobURL, cred, nil); err != nil {
			return nil, fmt.Errorf("tables: creating the blob client: %w", err)
		}
	}
	return NewAccountFromClients(tc, bc, opts), nil
}

// NewAccountFromClients returns an account over clients you already have. blobs may be nil
// when no blob feature is used; tables must not be (it panics).
func NewAccountFromClients(tables *aztables.ServiceClient, blobs *azblob.Client, opts *Options) *Account {
	svc := azservice.New(tables, blobs)
	return engine.NewAccount(svc.Endpoint(), svc, svc, opts)
}

// For returns the store of entity type T in the account: a struct embedding
// abstractions.Entity, stored in the table named after the type unless WithTable says
// otherwise. A nil account, a type that does not embed Entity, and a table name the service
// would refuse (3–63 letters and digits, starting with a letter: name generic or short
// types with WithTable) fail with ErrInvalidArgument; a field the serializer cannot map fails
// with ErrNotSupported, naming the field.
func For[T any](a *Account, opts ...StoreOption) (*Store[T], error) {
	return engine.New[T](a, opts...)
}
