// Package inmemory is the in-memory backend of Unified Data Tables: stores that run the same
// engine as the Azure backend over an in-memory table and blob service (package memservice)
// that succeeds and fails where the Azure service does. Use it in tests and in offline or
// development hosts; it needs no emulator and no network, and links no Azure SDK.
//
//	acct := inmemory.NewAccount(nil)
//	customers, err := inmemory.For[Customer](acct)
package inmemory

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/engine"
	"github.com/unified-data/gotables/tables/service"
)

// Options configure every store of an account; the zero value is ready to use. See
// engine.Options.
type Options = engine.Options

// Account is an in-memory storage account and the options its stores share.
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

var accounts atomic.Int64

// NewAccount returns a new, empty in-memory account. Accounts share nothing: two of them are
// two storage accounts. A nil opts means the defaults.
func NewAccount(opts *Options) *Account {
	svc := memservice.New()
	return NewAccountOver(svc, svc, opts)
}

// NewAccountOver returns an account over services you provide: a memory service you
// configured yourself (a pinned clock, injected empty pages), or a wrapper around one that
// counts, delays or fails calls in a test. blobs may be nil when no blob feature is used.
func NewAccountOver(tables service.Tables, blobs service.Blobs, opts *Options) *Account {
	name := fmt.Sprintf("memory://account-%d", accounts.Add(1))
	return engine.NewAccount(name, tables, blobs, opts)
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
