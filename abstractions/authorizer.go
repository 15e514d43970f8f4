package abstractions

import "context"

// Authorizer decides whether the caller behind a request may change a protected field.
//
// A field becomes protected with the tag option protected=, which lists the roles allowed
// to change it (`table:",protected=admin|accountant"`). When a whole-entity Update or Upsert
// would change the stored value of such a field, the store asks the account's Authorizer,
// passing the call's context (where a host keeps the request's identity) and the field's
// roles. Without an Authorizer every such change is refused with an error matching
// ErrProtectedProperty. The library itself knows nothing of users or roles: the host
// supplies the decision.
//
// Implementations must be safe for concurrent use and should answer quickly: the store calls
// IsAllowed once per changed protected field, while the write waits.
type Authorizer interface {
	// IsAllowed reports whether the caller of ctx holds at least one of roles.
	IsAllowed(ctx context.Context, roles []string) bool
}
