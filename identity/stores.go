package identity

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
)

// Tables are the seven stores the identity stores keep their rows in, one per row model.
// [github.com/unified-data/gotables/identity/identitytables.For] builds all seven over an
// account of either backend, in the tables the .NET library uses, with the user store's
// read cache off. Build them by hand only for stores of your own: name each table as the
// package documentation lists (a store named after the Go type would use a table .NET does
// not read), and keep the user store's read cache off.
type Tables struct {
	Users      abstractions.Storage[User]
	Roles      abstractions.Storage[Role]
	UserRoles  abstractions.Storage[UserRole]
	UserClaims abstractions.Storage[UserClaim]
	RoleClaims abstractions.Storage[RoleClaim]
	UserLogins abstractions.Storage[UserLogin]
	UserTokens abstractions.Storage[UserToken]
}

// Options configure a UserStore or a RoleStore. A nil *Options, like the zero value, means
// the defaults.
type Options struct {
	// Retry bounds the compare-and-swap loops of the calls that change one row under
	// contention (the failed-sign-in count, recovery codes, every Modify). nil means 10
	// attempts with the abstractions package's default backoff, enough for a few dozen
	// concurrent writers of one user.
	Retry *abstractions.RetryOptions
}

const defaultAttempts = 10

func (o *Options) retry() *abstractions.RetryOptions {
	if o != nil && o.Retry != nil {
		return o.Retry
	}
	return &abstractions.RetryOptions{Attempts: defaultAttempts}
}

// checkUserCache refuses a user store that caches reads.
func checkUserCache(users abstractions.Storage[User]) error {
	if driver.CachesReads(users) {
		return fmt.Errorf("%w: table %s: a cached user row can keep a revoked security stamp, an old password hash or a lifted "+
			"lockout in use on other instances; build the user store with caching off (StoreOptions.Cache: Disabled), "+
			"whatever the account's policy", ErrUserCacheEnabled, users.Table())
	}
	return nil
}

// missing refuses a nil store.
func missing(field string) error {
	return fmt.Errorf("%w: Tables.%s is nil; build the tables with identitytables.For", abstractions.ErrInvalidArgument, field)
}

// newGUID returns a random (version 4) GUID in its lower-case text form, as .NET's
// Guid.NewGuid().ToString() writes it.
func newGUID() string {
	var g abstractions.GUID
	_, _ = rand.Read(g[:]) // crypto/rand.Read never fails
	g[6] = g[6]&0x0f | 0x40
	g[8] = g[8]&0x3f | 0x80
	return g.String()
}

// NewSecurityStamp returns a new random security stamp in ASP.NET Core Identity's format:
// 20 random bytes as 32 upper-case base32 characters.
func NewSecurityStamp() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return base32.StdEncoding.EncodeToString(b[:])
}

func isNotFound(err error) bool { return errors.Is(err, abstractions.ErrNotFound) }
