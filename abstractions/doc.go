// Package abstractions holds the contracts every layer of Unified Data Tables shares: the
// entity base, the storage interface, query and filter types, ids, errors and the helpers
// built on them. It imports only the standard library, so a domain package can depend on it
// without pulling in any Azure SDK.
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
