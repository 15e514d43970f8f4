// Package identity stores the users, roles, claims, external logins and tokens of ASP.NET
// Core Identity in the tables the .NET library's Identity package uses, through any
// backend's abstractions.Storage, and hashes passwords in ASP.NET Core Identity's format. A
// Go service can so take over users from a .NET one, or share them with it, on one storage
// account; and, because the stores only use abstractions.Storage, the whole user model runs
// on the in-memory backend in tests. The package depends on the abstractions module and the
// standard library only.
//
//	acct, err := tables.NewAccount(conn, nil)
//	t := identity.Tables{Users: must(tables.For[identity.IdentityUserModel](acct, nil)), …}
//	users, err := identity.NewUserStore(t, nil)
//	roles, err := identity.NewRoleStore(t, nil)
//
// # Tables
//
// Seven row models, one table each, named after the type as the .NET library names them:
// IdentityUserModel, IdentityRoleModel, IdentityUserRoleModel, IdentityUserClaimModel,
// IdentityRoleClaimModel, IdentityUserLoginModel and IdentityUserTokenModel. Their columns
// are ASP.NET Core Identity's property names, plus Id, CreatedAt and UpdatedAt of every
// entity. Build each store with nil StoreOptions to keep those names.
//
// # Keys
//
// Ids (user ids, role ids, login providers, token names and the constants below) are used
// verbatim as key parts, lower-cased as stores normalise ids, so the keys are the same
// whether the account normalises ids or keeps them as written. Such a part may not be
// empty or hold "|", "/", "\", "#", "?" or control characters (ErrInvalidKey). Text a user
// or a provider chooses (normalised names and emails, claim types and values, provider
// keys) may hold anything, so it is hashed with HashKey: MD5 over its UTF-8 bytes, 32
// lower-case hex digits; the rows keep the text, and every lookup compares it. With u a
// user id, r a role id, p a login provider and H HashKey:
//
//	table                   row                     partition key   row key
//	IdentityUserModel       user                    u               u
//	                        user-name index         H(name)         username
//	                        email index             H(email)        email
//	IdentityRoleModel       role                    r               r
//	                        role-name index         H(name)         rolename
//	IdentityUserRoleModel   membership, by user     u               r
//	                        membership, by role     r               user|u
//	IdentityUserClaimModel  claim, by user          u               H(type)-H(value)
//	                        claim, by claim         H(type)-H(value) user|u
//	IdentityRoleClaimModel  role claim              r               H(type)-H(value)
//	IdentityUserLoginModel  login owner             p               H(provider key)
//	                        login, by user          u               p|H(provider key)
//	IdentityUserTokenModel  token                   u               p|name
//
// So every lookup is a point read or one bounded partition query, never a table scan:
// FindByName and FindByEmail read an index row and the user row, FindByLogin the owner
// row and the user row, UsersInRole and UsersForClaim one partition and each user row.
//
// # Caching
//
// Keep the read cache off for user rows. A user row holds the security stamp, the password
// hash and the lockout end; a cached copy on one instance of a service keeps a revoked
// stamp valid, an old password working or a lifted lockout in force until it expires, so
// signing a user out everywhere or locking them out would not reliably take effect.
// NewUserStore therefore refuses a user store that caches reads, whether its own
// StoreOptions.Cache or the account's Options.Cache turned it on, with ErrUserCacheEnabled.
// An account that caches everything else builds the user store with
// StoreOptions{Cache: Disabled}. (The check asks the store through its CachesReads method,
// which both backends' stores have; a Storage of your own that caches must not be used
// for users.)
//
// # Logins
//
// Role memberships, claims and tokens are upserted: writing one twice is harmless. Login
// rows are created, never upserted. The owner row of a login is keyed by provider and
// hashed provider key and holds the owning user in a column, so an upsert would hand an
// external identity to whoever wrote last; a create fails instead, and AddLogin reports a
// login another user owns with ErrLoginTaken. Two users adding one login at once: exactly
// one succeeds.
//
// # Roles
//
// AddToRole with a role that does not exist fails with ErrRoleNotFound, as ASP.NET Core
// Identity's own stores throw: it is a change that cannot be made, and reporting success
// having assigned nothing would mislead the caller. The other role calls treat a missing
// role as an empty one: IsInRole answers false, RemoveFromRole does nothing, UsersInRole
// returns none.
//
// # Concurrency
//
// Update replaces a user (or RoleStore.Update a role) only while the stored
// ConcurrencyStamp is the one the caller read, and sets a new one; a stale stamp fails with
// ErrConcurrencyFailure. Every other change of a user row (the setters, Modify,
// IncrementAccessFailedCount) is a write on condition of the version read, retried after a
// lost race, that also sets a new concurrency stamp, so concurrent failed sign-ins are all
// counted and an Update based on an older read is refused rather than undoing them.
// RedeemRecoveryCode rewrites the recovery-code token on condition of its ETag: one code
// redeemed by many callers at once succeeds for exactly one.
//
// Changes that span rows (a user and its index rows, both rows of a membership or a claim)
// are ordered so that a failure part-way leaves nothing a lookup trusts: an index row or a
// login owner row whose user does not exist, or does not hold the value, is ignored by
// lookups and taken over by the next claim of the value; the row a read by user relies on
// is written first and removed last. Calling the failed operation again completes it.
//
// # Passwords
//
// PasswordHasher produces ASP.NET Core Identity's version 3 format with the .NET 7 and
// later defaults (PBKDF2 with HMAC-SHA512, 100,000 iterations, a 16-byte salt, a 32-byte
// subkey) and verifies versions 2 and 3 with every PRF, reporting
// VerificationSuccessRehashNeeded for a weaker hash. The stores never hash: store what
// Hash returns with SetPasswordHash.
//
// # Differences from the .NET package
//
// The stores do what ASP.NET Core Identity's stores do, and a few things its UserManager
// does: SetPasswordHash, SetPhoneNumber, SetTwoFactorEnabled, RemoveLogin and
// SetAuthenticatorKey give the user a new security stamp. Go has no null string: a user
// written here stores "" where .NET stores no column for null (PhoneNumber, say); both read
// either form as empty. Emails are unique, as with ASP.NET Core Identity's
// RequireUniqueEmail. Custom user and role types are not supported: the row models are fixed
// (the .NET package refuses subclasses of IdentityUser too); keep extra data in a table of
// your own keyed by the user id.
//
// # Errors
//
// Errors match the library's sentinels with errors.Is (ErrNotFound for a missing user or
// role, ErrInvalidKey and ErrInvalidArgument for input refused before anything is sent,
// ErrConcurrencyConflict, ErrDuplicateKey, ErrUnavailable) and, where identity has a case of
// its own, one of this package's sentinels, each of which also matches its library sentinel:
// ErrDuplicateUserName, ErrDuplicateEmail, ErrDuplicateRoleName, ErrLoginTaken (all
// ErrDuplicateKey), ErrConcurrencyFailure (ErrConcurrencyConflict), ErrRoleNotFound
// (ErrNotFound) and ErrUserCacheEnabled (ErrInvalidArgument).
package identity
