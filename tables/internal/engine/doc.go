// Package engine owns the rows of a store whatever its entity type: a table's core (Table)
// over an account's services as the stores use them (Account), and what is done with rows
// there — the calls every store makes (send, translate, scan, the read cache's coherence,
// each call's telemetry), key resolution and validation, protected fields, bounded queries
// and their cursors, batches in per-partition transactions under the account's congestion
// window, and split-aware entities: their continuation rows, blob offload, files, cleanup
// and the orphan sweep.
//
// Package tables holds the typed API over it (Store[T], PolyStore[B], Transaction): encoding
// and decoding entities, copying written versions back, and the documentation users read.
// Every rule about rows lives here once, so both backends and every store kind follow it.
//
// The rules it composes have packages of their own: the missing-table rule (access), own
// echoes (echo), error translation (callerr), filters (odata), retries and the batch window
// (retry), the read cache (cache), telemetry, and the large-value layout (largevalue). It
// refuses, before anything is sent, what those rules and the service's limits refuse.
//
// Where the service returns query results in no key order (Azure Cosmos DB for Table),
// every read that promises key order follows one rule, in ordered.go: it sorts what it
// reads, and a read of the first rows of a range reads that range whole, within one
// partition and up to MaxSortedRows rows, or is refused with ErrNotSupported.
package engine
