// The engine: the library's behaviour, written once: the store of one entity type over
// the small service interfaces of package service. The Azure backend (package tables) and
// the in-memory backend (module inmemory) differ only in the service they hand it, so they
// plan the same rows, send the same requests and translate the same failures.
//
// # Keys
//
// Ids are "PartitionKey|RowKey" (abstractions.SplitID), normalised unless the account keeps
// ids as written. Keys are checked before anything is sent: not empty, at most 512 UTF-16
// code units (the smallest limit among the service and its emulator), and none of the
// characters the service forbids (/ \ # ? and control characters). A refused key fails with
// an error matching abstractions.ErrInvalidKey.
//
// # Writes
//
// Every write is a plan: the row actions (and, as large values arrive, blob actions) that
// carry it out. A single action is sent alone; several are sent as entity-group transactions
// of one partition and at most 100 actions. The engine checks the transaction rules itself,
// so it never sends a transaction the real service would refuse but the emulator accepts.
//
// Tables are created by writes, never by reads: a read of a missing table finds nothing, and
// a write that meets one creates it (unless Options.NeverCreateTables) and is sent again.
//
// A write whose failure an applied earlier try of its own may explain (the client resent it
// after a lost answer, and met 409, 412 or 404), or that got no answer, reads the row back and
// reports success when the table holds what it sent (echo.go); see the README's reliability
// section for what stays ambiguous.
//
// # Errors
//
// Service failures about a row come back as *abstractions.StoreError values that name the
// table and the key and match the sentinel of the condition (ErrDuplicateKey for 409
// EntityAlreadyExists, ErrConcurrencyConflict for 412, ErrNotFound for 404); the service's
// *abstractions.StatusError stays in the chain.

package tables
