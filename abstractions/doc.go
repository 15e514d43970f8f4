// Package abstractions holds the contracts every layer of Unified Data Tables shares: the
// entity base, the storage interface, query and filter types, ids, errors and the helpers
// built on them. It imports only the standard library, so a domain package can depend on it
// without pulling in any Azure SDK; the host picks a backend (package tables for Azure,
// package inmemory for tests) and hands the domain a [Storage].
//
// # Entities and keys
//
// A stored type is a struct that embeds [Entity], which carries its id, its times and its
// version (ETag); the generic functions check this at compile time through [EntityPtr]. An
// id is "PartitionKey|RowKey": [SplitID] says how it is split and why a partition never
// contains "|", [CombineID] builds one, and [NormalizeID] is what stores do to it by default.
// [InvertedTicks] and [VersionKey] make row keys that sort newest first.
//
// # Storage
//
// [Storage] is the repository of one entity type, and its methods document each call:
// writes ([Creator.Create], [ReadWriter.Update] under a [ConcurrencyMode], …), reads,
// batches, partial updates ([Storage.Patch], built with [NewPatch] and [Set]) and queries
// ([Log.Query] and its kin). Both backends implement it with one engine, so they succeed
// and fail alike. The helpers below take only the part of it they call ([ReadWriter],
// [Log], [Creator]), so domain code can pass an interface of its own or a short fake.
//
// # Concurrent writers
//
// The verbs are generic functions over any [ReadWriter] that make a read-modify-write
// correct under concurrency: [Mutate] and [TryMutate] (compare-and-swap on the ETag,
// retried per [RetryOptions]), [TryTransition] (a change that must happen once),
// [GetOrCreate] and [MutateOrCreate]. The Try verbs return the expected branches of a race as an [Outcome]
// rather than an error. Over a store that queues them per row (both backends' stores do),
// the calls of one process on one row take turns, so they never make each other lose an
// attempt: the retries are for writers in other processes, paced by [RetryOptions.Wait].
//
// # Queries
//
// A [Query] reads a partition or the whole table, filtered by a [Filter] that the table
// service evaluates. Filters are built from typed fields ([Field], [NullableField]) and
// combined with [And], [Or] and [Not], so the compiler checks the columns they name. Results
// come in key order, whole ([Log.Query]), streamed ([Log.Stream]) or a [Page] at a
// time with a cursor ([Storage.Page]). [Append], [Recent] and the versioned-stream functions
// ([AppendVersion], [Latest], [AtVersion], [AtOrBefore], [History]) build logs and version
// histories on these keys.
//
// # Errors
//
// Conditions a caller can act on are sentinel errors (ErrNotFound, ErrDuplicateKey,
// ErrConcurrencyConflict, …), and mistakes in the caller's input are ErrInvalidKey and
// ErrInvalidArgument, refused before anything is sent; a service that cannot be reached or
// answers 5xx is ErrUnavailable. All are matched with errors.Is. A
// store call about one row returns a *StoreError naming the operation, the table and the
// key; when the service refused the request, the chain also holds a *StatusError with the
// HTTP status and the service's error code (errors.As), the same type on the Azure backend
// and on the in-memory one.
package abstractions
