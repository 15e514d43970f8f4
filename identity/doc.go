// Package identity stores the users, roles, claims, external logins and tokens of ASP.NET
// Core Identity in the tables the .NET library's Identity package uses, through any
// backend's abstractions.Storage, and hashes passwords in ASP.NET Core Identity's format. A
// Go service can so take over users from a .NET one, or share them with it, on one storage
// account; and, because the stores only use abstractions.Storage, the whole user model runs
// on the in-memory backend in tests. The package depends on the abstractions module and the
// standard library only.
//
//	acct, err := tables.NewAccount(conn, nil)
//	t, err := identitytables.For(acct, nil) // the seven stores, in one call
//	users, err := identity.NewUserStore(t, nil)
//	roles, err := identity.NewRoleStore(t, nil)
//
// Package identitytables (github.com/unified-data/gotables/identity/identitytables) is the
// one that imports package tables; this one, and so code that only uses the stores, does
// not.
//
// # Tables
//
// Seven row models, one table each, named as the .NET library names them (after its row
// types): User in IdentityUserModel, Role in IdentityRoleModel, UserRole in
// IdentityUserRoleModel, UserClaim in IdentityUserClaimModel, RoleClaim in
// IdentityRoleClaimModel, UserLogin in IdentityUserLoginModel and UserToken in
// IdentityUserTokenModel. Their columns are ASP.NET Core Identity's property names, plus Id,
// CreatedAt and UpdatedAt of every entity. identitytables.For names the tables so.
//
// # Keys
//
// The rows and their keys are the .NET package's, so each library reads what the other
// writes. Ids (user ids, role ids, login providers) and the constants User and Role are
// used verbatim as key parts, and the account's id mode normalises them or not, as the .NET
// library's IdNormalization does (by default: trimmed, spaces as "-", lower case). Such a
// part may not be empty or hold "|", "/", "\", "#", "?" or control characters
// (ErrInvalidKey). Text a user or a provider chooses (claim types and values, provider keys,
// token providers and names) may hold anything, so it is hashed with HashKey: MD5 over its
// UTF-8 bytes, 32 lower-case hex digits; the rows keep the text, and every lookup compares
// it. With u a user id, r a role id, p a login provider and H HashKey (the table shows the
// key parts as the stores pass them; under the default id mode the account stores them
// normalised, so the user rows' partition is "user", the role rows' "role", and ids and
// providers are lower case, exactly as the .NET library stores them under its default):
//
//	table                   row                     partition key   row key
//	IdentityUserModel       user                    User            u
//	                        user-name index (*)     H(name)         username
//	                        email index (*)         H(email)        email
//	IdentityRoleModel       role                    Role            r
//	                        role-name index (*)     H(name)         rolename
//	IdentityUserRoleModel   membership              u               r
//	IdentityUserClaimModel  claim                   u               H(type + "-" + value)
//	IdentityRoleClaimModel  role claim              r               H(type + "-" + value)
//	IdentityUserLoginModel  login                   p               H(provider key)
//	IdentityUserTokenModel  token                   u               H(provider + "-" + name)
//
// The rows marked (*) are this module's own: the .NET package finds a user by name or email,
// and a role by name, with a query of the User (or Role) partition filtered on the value,
// and never reads the partitions these rows live in. With them FindByName, FindByEmail and
// RoleStore.FindByName are two point reads, and two stores claiming one name at once cannot
// both win; a user or role the .NET package wrote has no index row, and a lookup that finds
// none (or a stale one) falls back to the .NET package's query. A create or rename also
// runs that query, so a name a .NET-written user holds is refused too. FindByLogin is a
// point read of the login row and one of the user row. The calls that list rows by
// something their keys do not hold query the table filtered on a column, as the .NET
// package does: Logins (and Delete, for the user's logins) on UserId, UsersInRole (and
// RoleStore.Delete) on RoleId, UsersForClaim on ClaimType and ClaimValue. Claims, Roles and
// a role's claims read one partition. Two claims whose type and value join to the same
// text ("a-b" and "c", "a" and "b-c") have one key, as in the .NET package: the second
// added replaces the first, and RemoveClaims and ReplaceClaim leave a row that holds
// another claim alone.
//
// # Caching
//
// Keep the read cache off for user rows. A user row holds the security stamp, the password
// hash and the lockout end; a cached copy on one instance of a service keeps a revoked
// stamp valid, an old password working or a lifted lockout in force until it expires, so
// signing a user out everywhere or locking them out would not reliably take effect.
// NewUserStore therefore refuses a user store that caches reads, whether its own
// StoreOptions.Cache or the account's Options.Cache turned it on, with ErrUserCacheEnabled.
// identitytables.For builds the user store with its cache off whatever the account's
// policy, and the other six with the account's. (The check asks the store through
// driver.CachesReads, which both backends' stores answer; a Storage of your own that caches
// must not be used for users.)
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
// Locking a user out after failed sign-ins is the application's policy, as it is ASP.NET
// Core's UserManager's: the stores keep AccessFailedCount, LockoutEnd and LockoutEnabled,
// and never lock anyone out themselves. Count a failure and start the lockout at the limit
// in one Modify, so that concurrent failures are all counted and one starts it (the
// identity guide, docs/identity.md, has the recipe; Example_signInHandler uses it).
//
// Changes that span rows (a user and its index rows, a user and what belongs to it) are
// ordered so that a failure part-way leaves nothing a lookup trusts: an index row or a
// login row whose user does not exist, or does not hold the value, is ignored by lookups
// and taken over by the next claim of the value. Calling the failed operation again
// completes it.
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
// RequireUniqueEmail. A user or role id, or a login provider, holding "|" is refused (the
// .NET package would compose an id that splits in the wrong place). Custom user and role
// types are not supported: the row models are fixed (the .NET package refuses subclasses of
// IdentityUser too); keep extra data in a table of your own keyed by the user id.
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
