package identity

import (
	"time"

	"github.com/unified-data/gotables/abstractions"
)

// The row models' fields are spelled as the .NET library's: a store names a column after
// the field, so these names are the wire format a .NET service reads (which is why the
// fields say UserId, not UserID). The .NET library also names each table after its row type
// (IdentityUserModel, …); the Go types have shorter names, so the tables are named
// explicitly (identitytables.For does it). See the package documentation for the keys of
// each table.

// User is a row of the user table (table IdentityUserModel). A user row holds one user; the
// table also holds the index rows that map a normalised user name or email to its user
// (they set UserId and the normalised value only, and the stores never return them).
type User struct {
	abstractions.Entity
	// UserId is the user's id, as it was given (keys use it as the account's id mode
	// makes it: lower-cased by default). On an index row, the id of the user the row points
	// to.
	UserId string
	// UserName is the name the user signs in with; NormalizedUserName is its lookup form
	// (NormalizeName of it unless the caller sets one).
	UserName           string
	NormalizedUserName string
	// Email and NormalizedEmail are the user's email and its lookup form.
	Email           string
	NormalizedEmail string
	// EmailConfirmed reports whether the user confirmed the email.
	EmailConfirmed bool
	// PasswordHash is the user's password as a PasswordHasher hashed it; "" for none.
	PasswordHash string
	// SecurityStamp changes whenever the user's credentials change (password, logins,
	// two-factor); sessions issued under an older stamp are no longer valid.
	SecurityStamp string
	// ConcurrencyStamp changes on every write of the row; an Update carrying an older one is
	// refused with ErrConcurrencyFailure.
	ConcurrencyStamp string
	// PhoneNumber and PhoneNumberConfirmed are the user's phone number and whether it was
	// confirmed.
	PhoneNumber          string
	PhoneNumberConfirmed bool
	// TwoFactorEnabled reports whether sign-in asks for a second factor.
	TwoFactorEnabled bool
	// LockoutEnd is when the user's lockout ends, in UTC; the zero time (no column) means
	// never locked out. A time in the past means the lockout is over.
	LockoutEnd time.Time
	// LockoutEnabled reports whether failed sign-ins can lock the user out.
	LockoutEnabled bool
	// AccessFailedCount counts failed sign-ins since the last reset (an Edm.Int32, as
	// .NET's int).
	AccessFailedCount int32
}

// IsLockedOut reports whether the user is locked out at now: lockout is enabled and its end
// is after now.
func (u *User) IsLockedOut(now time.Time) bool {
	return u.LockoutEnabled && u.LockoutEnd.After(now)
}

// Role is a row of the role table (table IdentityRoleModel): a role, or the index row that
// maps a normalised role name to its role (RoleId and NormalizedName only).
type Role struct {
	abstractions.Entity
	// RoleId is the role's id, as it was given; on an index row, the role it points to.
	RoleId string
	// Name is the role's name; NormalizedName its lookup form.
	Name           string
	NormalizedName string
	// ConcurrencyStamp changes on every write of the role.
	ConcurrencyStamp string
}

// UserRole is a row of the user-role table (table IdentityUserRoleModel): a user's
// membership of a role, in the user's partition, keyed by the role's id.
type UserRole struct {
	abstractions.Entity
	UserId string
	RoleId string
}

// UserClaim is a row of the user-claim table (table IdentityUserClaimModel): a claim of a
// user, in the user's partition.
type UserClaim struct {
	abstractions.Entity
	// ClaimId is ASP.NET Core Identity's surrogate number of the claim (an Edm.Int32, named
	// so because Id is the entity's); the stores write 0, as the .NET package does.
	ClaimId    int32
	UserId     string
	ClaimType  string
	ClaimValue string
}

// RoleClaim is a row of the role-claim table (table IdentityRoleClaimModel): a claim of a
// role, in the role's partition.
type RoleClaim struct {
	abstractions.Entity
	// ClaimId is as UserClaim's.
	ClaimId    int32
	RoleId     string
	ClaimType  string
	ClaimValue string
}

// UserLogin is a row of the login table (table IdentityUserLoginModel): an external login,
// keyed by provider and hashed provider key, holding the user who owns it.
type UserLogin struct {
	abstractions.Entity
	LoginProvider       string
	ProviderKey         string
	ProviderDisplayName string
	UserId              string
}

// UserToken is a row of the token table (table IdentityUserTokenModel): a named token of a
// user, such as the authenticator key or the recovery codes.
type UserToken struct {
	abstractions.Entity
	UserId        string
	LoginProvider string
	Name          string
	Value         string
}

// Claim is a claim of a user or a role: a type (often a URI) and a value.
type Claim struct {
	Type  string
	Value string
}

// UserLoginInfo is an external login: the provider's name (the authentication scheme, such
// as "Google"), the user's key at that provider, and a name to show for the provider.
type UserLoginInfo struct {
	LoginProvider       string
	ProviderKey         string
	ProviderDisplayName string
}
