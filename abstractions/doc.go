// Package abstractions holds the contracts every layer of Unified Data Tables shares: the
// entity base, the storage interface, query and filter types, ids, errors and the helpers
// built on them. It imports only the standard library, so a domain package can depend on it
// without pulling in any Azure SDK.
//
// # Errors
//
// Conditions a caller can act on are sentinel errors (ErrNotFound, ErrDuplicateKey,
// ErrConcurrencyConflict, …) matched with errors.Is. A failure reported by the service itself
// is a *StatusError carrying the HTTP status and the service's error code, matched with
// errors.As; it is the same type on the Azure backend and on the in-memory one.
package abstractions
