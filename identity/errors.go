package identity

import "github.com/unified-data/gotables/abstractions"

// kindError is an identity sentinel that also matches the library sentinel of its kind, so
// a caller that only knows package abstractions still recognises it.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }

// Unwrap returns the library sentinel the error is a case of.
func (e *kindError) Unwrap() error { return e.kind }

// Sentinel errors of the identity stores. Each also matches, with errors.Is, the sentinel of
// package abstractions named in its description, and the errors the stores return keep the
// storage error that caused them in their chain.
var (
	// ErrDuplicateUserName reports a user whose normalised name another user already has.
	// It matches abstractions.ErrDuplicateKey.
	ErrDuplicateUserName error = &kindError{"identity: the user name is taken", abstractions.ErrDuplicateKey}
	// ErrDuplicateEmail reports a user whose normalised email another user already has:
	// the stores keep emails unique, as ASP.NET Core Identity does with RequireUniqueEmail.
	// It matches abstractions.ErrDuplicateKey.
	ErrDuplicateEmail error = &kindError{"identity: the email is taken", abstractions.ErrDuplicateKey}
	// ErrDuplicateRoleName reports a role whose normalised name another role already has.
	// It matches abstractions.ErrDuplicateKey.
	ErrDuplicateRoleName error = &kindError{"identity: the role name is taken", abstractions.ErrDuplicateKey}
	// ErrLoginTaken reports an external login (provider and provider key) that belongs to
	// another user. Login rows are created, never upserted, so a second account claiming
	// the same external identity fails instead of taking it over. It matches
	// abstractions.ErrDuplicateKey.
	ErrLoginTaken error = &kindError{"identity: the external login belongs to another user", abstractions.ErrDuplicateKey}
	// ErrConcurrencyFailure reports an update whose concurrency stamp is not the stored
	// one: the user or role changed since it was read. Read it again and reapply the change.
	// It matches abstractions.ErrConcurrencyConflict.
	ErrConcurrencyFailure error = &kindError{"identity: the concurrency stamp is stale", abstractions.ErrConcurrencyConflict}
	// ErrRoleNotFound reports AddToRole with a role that does not exist. The other role
	// calls treat a missing role as an empty one. It matches abstractions.ErrNotFound.
	ErrRoleNotFound error = &kindError{"identity: no role has this name", abstractions.ErrNotFound}
	// ErrUserCacheEnabled reports a user store whose read cache is on: a cached user row
	// could keep a revoked security stamp, a replaced password hash or a lifted lockout
	// alive. It matches abstractions.ErrInvalidArgument.
	ErrUserCacheEnabled error = &kindError{"identity: the user store caches reads", abstractions.ErrInvalidArgument}
)
