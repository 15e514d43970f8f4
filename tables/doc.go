// Package tables is Unified Data Tables' account and store types, for both backends: an
// account on Azure (or Azurite) reached through the Azure SDK for Go, or in memory (package
// inmemory returns the same [*Account]), and the stores of entity types in it.
//
//	acct, err := tables.NewAccount(os.Getenv("STORAGE_CONNECTION_STRING"), nil)
//	customers, err := tables.For[Customer](acct, nil)
//	err = customers.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|alice"}})
//
// # What you call
//
//   - [NewAccount] (a connection string) or [NewAccountWithCredential] (an endpoint and a
//     token credential) builds an [Account]: one per storage account and process, shared by
//     its stores. One [*Options] configures it, nil meaning the defaults; the Azure SDK's
//     client options (transport, retries, policies, tracing) are Options.ClientOptions.
//   - [For] returns the [Store] of one entity type, a struct that embeds
//     [abstractions.Entity], in a table named after the type unless its [StoreOptions] name
//     one. A Store implements [abstractions.Storage], whose methods document every call, and
//     the verbs of package abstractions ([abstractions.Mutate], [abstractions.TryTransition],
//     …) take it as they take any Storage.
//   - [PolyFor] returns a [PolyStore]: many item types in one table, registered in an
//     [abstractions.TypeRegistry] and read back through a base interface; it implements
//     [abstractions.PolyStorage].
//   - [Store.Transaction] starts a transaction of one partition that stores of the table
//     join (Store.CreateIn, PolyStore.InsertIn, …), and [Transaction.Commit] sends it as
//     one entity-group transaction: every write or none.
//   - [CachePolicy] ([Sliding], [Absolute]) turns on the account's read cache, off by default;
//     Options.Blobs set to azblobs.Connect (package tables/azblobs) gives the account blobs,
//     which large values, files and blob documents need.
//
// The in-memory backend builds the same Account, so the same Store type, the same code and
// the same wiring serve production and tests: write the function that builds an
// application's stores once, taking a *Account.
//
// # What it refuses, before sending anything
//
// A key that is empty, longer than 512 UTF-16 code units or holds a character the service
// forbids ([abstractions.ErrInvalidKey]); a type it cannot store ([abstractions.ErrNotSupported]:
// For refuses the type, a polymorphic store the item); a table name the service would refuse, and a connection
// string, endpoint or option the constructors cannot use ([abstractions.ErrInvalidArgument]);
// a value too large for its cell ([abstractions.ErrOversizedCell]); and a transaction the
// service would refuse: one of more than 100 writes, over 4 MiB, or naming a row twice. Reads never create
// a table; the first write that finds one missing does, unless Options.NeverCreateTables
// (for a credential that may not create tables).
//
// # Errors and retries
//
// Errors match the sentinels of package abstractions with errors.Is; a call about one row
// returns an [*abstractions.StoreError] naming the table and the key, with the service's
// [*abstractions.StatusError] behind it. No error repeats a key or a signature. A transient
// failure (408, 429, 500, 502, 503, 504, no answer) is retried in one place per backend,
// under Options.ClientOptions.Retry (4 tries, waiting from 800 ms and doubling): on Azure by
// the SDK's pipeline, in memory by the account. A write whose resend meets its own earlier
// try is reported as applied; what stays ambiguous is in the production guide's
// "Reliability" (docs/production.md). The outcome verbs' repetition of a read-modify-write
// that lost a race ([abstractions.RetryOptions]) is a new attempt, not a retry.
package tables
