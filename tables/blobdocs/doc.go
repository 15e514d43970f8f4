// Package blobdocs stores typed documents in Azure Blob Storage, one document per blob, beside
// the table stores: an invoice's rendered content, a generated report, the state of a saga.
//
// It speaks only to the blob service interface (service.Blobs), so it runs unchanged on both
// backends and links no Azure SDK itself:
//
//	// Azure or Azurite: the account's blob service, which blob support must be asked for.
//	acct, err := tables.NewAccount(conn, &tables.Options{Blobs: azblobs.Connect})
//	docs, err := blobdocs.New(acct.Blobs(), nil)
//
//	// In memory: the memory service is a table and a blob service.
//	docs, err := blobdocs.New(inmemory.NewAccount(nil).Blobs(), nil)
//
// # Registration
//
// A Registry holds the registered types. Each type is registered once, explicitly, with the
// container that holds its documents and a function that names a document's blob:
//
//	invoices, err := blobdocs.Register[InvoiceContent](docs, blobdocs.Registration{
//		Container: "invoice-content",
//		BlobName: func(c blobdocs.NameContext) string {
//			return "invoices/v7/" + c.Tenant + "/" + c.ID + ".json"
//		},
//	})
//
// Both settings are required and there is no default layout: which blob holds which
// identity is what only the application knows, and a layout chosen here would not fit a
// container that already holds blobs. A registration missing either setting, or naming a
// type the registry already has, is refused when it is made, not at the first read.
// Register and RegisterState return typed handles (Documents[T], StateDocuments[T]); keep
// them, as the table stores are kept.
//
// The name function receives the type, the document's identity, and the tenant. A handle
// has no tenant (the empty string) until WithTenant scopes a copy of it to one.
//
// Containers are never created: create them when the application is deployed, or at start-up
// with the blob service's CreateContainer (tables.Account.Blobs), taking 409
// ContainerAlreadyExists (abstractions.HasStatus) as done. A read or
// write in a missing container fails with ErrContainerNotFound, naming the container, so a
// mistyped container name never reads as a document that has not been written yet.
//
// # Serialization
//
// Documents are JSON (encoding/json) by default, stored as application/json. A
// registration's Compression stores them gzip- or brotli-compressed, with the blob's
// Content-Encoding set to match (gzip, br) so that any HTTP client can read them. Reads
// honour the Content-Encoding each blob carries, not the registration's setting: a
// document another client wrote compressed reads back, and a registration can change its
// compression without rewriting its blobs. A Serializer of your own (another format, an
// envelope, a checksum, encryption) replaces JSON; compression stays around it.
//
// Brotli is github.com/andybalholm/brotli: a pure-Go translation of Google's reference C
// implementation (no cgo, no dependencies of its own), maintained and released since 2019,
// and used by the Apache Arrow Go module among many others. It is already in this module
// graph through the Azure blob SDK, so choosing it adds no new module; the version is the
// one the graph already selects. Gzip is the standard library's.
//
// A document larger than Options.MaxSize (64 MiB by default), serialized or inflated, is
// refused, so that a small compressed blob cannot expand without bound in memory.
//
// # Documents
//
// A document (Register) is last-writer-wins: Put is one unconditional upload that creates
// the blob or overwrites whatever is there. Blob Storage has no insert-versus-update to
// honour, so Put is the only write. Delete is unconditional, and deleting a missing document
// succeeds. One reports a missing blob as a missing document (abstractions.ErrNotFound).
//
// # State documents
//
// A state document (RegisterState) is a read-modify-write, like a saga's state: two
// messages for one saga arriving together must not silently lose one change. One returns
// the document and its version (the blob's ETag); Create writes with If-None-Match: *;
// Update and Delete write with If-Match: the version read. Every refusal — a create that
// finds the document (409 BlobAlreadyExists), an update or delete of a changed document
// (412 ConditionNotMet), an update or delete of a document deleted meanwhile — fails with
// abstractions.ErrConcurrencyConflict, the error a lost race on a table row gives, so one
// retry policy covers both. A refusal that may answer a resend of the call's own write is
// checked first (see Lost responses). Mutate and MutateOrCreate run the read, change,
// conditional write loop for you, with the abstractions.RetryOptions of the table verbs.
//
// The conditional write is a compare-and-swap of one blob, not a transaction: nothing
// spans two blobs, or a blob and a table row.
//
// # Lost responses
//
// The Azure SDK resends a write whose response was lost (or that met a 500 or 503), and the
// resend of a write the service had applied meets the refusal that write caused: 409 for a
// Create, 412 for an Update or a conditional Delete. So every upload stores a write token, a
// random string unique to the call, as the blob's metadata (blobdocs_write; an upload
// replaces any other metadata the blob had). When a refusal follows a resend, or no answer
// came, the call reads the blob: if it carries the call's token, the write is stored and the
// call succeeds with the stored version. Create, Update and Put thus report success for what
// they stored, and Mutate and MutateOrCreate apply their change once. An unconditional
// Delete succeeds when the document is gone afterwards, whoever removed it.
//
// When the outcome cannot be known, the call fails with an error matching
// abstractions.ErrUnavailable (context.Canceled when the context was cancelled) that says
// so; read the document to see what is stored. That happens when
//
//   - no answer came before the context ended (a request stalled past the deadline after
//     it was sent), or the read that would tell fails too;
//   - a resend was refused and the stored document is not the call's: its first try was
//     refused as well, or it was applied and another writer replaced or deleted it between
//     the tries;
//   - a conditional Delete's resend was refused: a deleted blob keeps no trace of which
//     call deleted it.
//
// Mutate returns such an error without applying its change again; calling it again may
// apply the change twice, so make the change idempotent (record the message id in the
// document, say) when that matters.
//
// # Errors
//
// Failures are *Error values that name the container and blob and match a sentinel with
// errors.Is: abstractions.ErrNotFound (missing document), ErrContainerNotFound,
// abstractions.ErrConcurrencyConflict, abstractions.ErrInvalidArgument and
// abstractions.ErrInvalidKey (refused before anything is sent), abstractions.ErrIntegrity
// (a blob that does not decode), abstractions.ErrNotSupported (an unknown
// Content-Encoding), abstractions.ErrOversizedValue, abstractions.ErrUnavailable (the
// service could not be reached, or a write's outcome cannot be known: see Lost responses).
// The service's *abstractions.StatusError stays in the chain.
//
// # What it does not do
//
// No querying. There is no List, Query or Count: listing the blobs under a name prefix is a
// paged scan of names, not a query over documents, and offering a scan shaped like a query
// would hide its cost and its lack of filtering until a container grows. Keep what must be
// queried in a table (the table stores query it), or scan names knowingly with
// service.Blobs.List.
//
// No unit of work. Every write takes effect when it returns; a caller that writes two
// documents and then fails has written the first.
//
// No soft delete. A serializer decides what a deleted payload means: its Unmarshal answers
// an error matching abstractions.ErrNotFound for a blob that should count as missing.
package blobdocs
