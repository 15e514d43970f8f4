// Package inmemory is the in-memory backend of Unified Data Tables: accounts whose table and
// blob services (package memservice) live in memory and succeed and fail where the Azure
// services do. It returns the same [tables.Account] as the Azure backend, so the stores
// ([tables.For], [tables.PolyFor]) and everything built on them are the same types, run the
// same code and take the same [tables.Options]. Use it in tests and in offline or development
// hosts; it needs no emulator and no network.
//
//	acct := inmemory.NewAccount(nil)
//	customers, err := tables.For[Customer](acct, nil)
//
// An application that runs on Azure and in tests in memory therefore wires its stores once,
// in a function that takes a *tables.Account.
//
// # Accounts
//
// [NewAccount] returns a new, empty account. Accounts share nothing, so each test can take
// its own. [NewAccountOver] builds one over services you provide: a memory service with a
// pinned clock or a throttling model (memservice.WithThrottling), or a wrapper that counts,
// delays or fails calls. Requests answered with a transient failure (503 ServerBusy, …) are
// retried as the Azure SDK retries them, under the options' ClientOptions.Retry (see
// [tables.NewAccountOver]).
//
// # Fidelity
//
// The memory service follows the real Azure service, not its emulator: status and error
// codes, key, property and size limits, atomic entity-group transactions, ETags in the
// service's shape, keys ordered by UTF-16 code units, and paged queries that parse the filter
// text the engine sends. The fidelity suite (module fidelity) runs every scenario on Azurite
// and on the memory service and requires the same observations, except for a short, tested
// list of known Azurite deviations.
//
// # Errors
//
// Errors are those of the Azure backend: they match the sentinels of package abstractions
// with errors.Is, and a failure the service reported holds an *abstractions.StatusError
// with the status and code Azure would answer (and no SDK error behind it).
//
// # Dependencies
//
// Because the account is the Azure backend's type, a program that imports this package links
// the Azure SDK's table client too (not its blob client, which stays in tables/azblobs). That
// is the price of one account and one store type for both backends; domain code that imports
// only package abstractions still links neither.
package inmemory

import (
	"fmt"
	"sync/atomic"

	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

var accounts atomic.Int64

// NewAccount returns a new, empty in-memory account, with a memory table service and a memory
// blob service of its own. A nil opts means the defaults; every option means what it means
// on Azure, except that Blobs is not used (the account has its blob service) and of
// ClientOptions only Retry and TracingProvider apply (see [tables.NewAccountOver]). Its
// service hands the engine the stored rows without copying them (memservice.WithSharedReads).
// With opts.Service set to service.Cosmos, the service behaves as Azure Cosmos DB for Table
// (memservice.Cosmos), and so does the account: test Cosmos code without a Cosmos account.
func NewAccount(opts *tables.Options) *tables.Account {
	o := []memservice.Option{memservice.WithSharedReads()}
	if opts != nil && opts.Service == service.Cosmos {
		o = append(o, memservice.Cosmos())
	}
	svc := memservice.New(o...)
	return NewAccountOver(svc, svc, opts)
}

// NewAccountOver returns an in-memory account over services you provide: a memory service you
// configured yourself (a pinned clock, a throttling model, injected empty pages), or a wrapper
// around one that counts, delays or fails calls in a test. blobs may be nil when no blob
// feature is used; tbl must not be (the stores of such an account are refused). It is
// [tables.NewAccountOver] with a name of the form "memory://account-N".
func NewAccountOver(tbl service.Tables, blobs service.Blobs, opts *tables.Options) *tables.Account {
	return tables.NewAccountOver(fmt.Sprintf("memory://account-%d", accounts.Add(1)), tbl, blobs, opts)
}
