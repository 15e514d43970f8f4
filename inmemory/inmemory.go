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

	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/engine"
)

// Options configure every store of an account; the zero value is ready to use. See
// engine.Options.
type Options = engine.Options

// Account is an in-memory storage account and the options its stores share.
type Account = engine.Account

// Store is the repository of one entity type; it implements abstractions.Storage[T].
type Store[T any] = engine.Store[T]

// StoreOption changes one store's configuration, such as WithTable.
type StoreOption = engine.StoreOption

// WithTable stores the entities in the named table instead of the one named after the type.
func WithTable(name string) StoreOption { return engine.WithTable(name) }

// ID modes for Options.IDs.
const (
	NormalizeIDs = engine.NormalizeIDs
	IDsAsWritten = engine.IDsAsWritten
)

var accounts atomic.Int64

// NewAccount returns a new, empty in-memory account. Accounts share nothing: two of them are
// two storage accounts. A nil opts means the defaults.
func NewAccount(opts *Options) *Account {
	return NewAccountOver(memservice.New(), opts)
}

// NewAccountOver returns an account over a memory service you configured yourself (a pinned
// clock, injected empty pages).
func NewAccountOver(svc *memservice.Service, opts *Options) *Account {
	name := fmt.Sprintf("memory://account-%d", accounts.Add(1))
	return engine.NewAccount(name, svc, svc, opts)
}

// For returns the store of entity type T in the account: a struct embedding
// abstractions.Entity, stored in the table named after the type unless WithTable says
// otherwise.
func For[T any](a *Account, opts ...StoreOption) (*Store[T], error) {
	return engine.New[T](a, opts...)
}
