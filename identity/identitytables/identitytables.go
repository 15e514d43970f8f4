// Package identitytables builds the seven stores of the identity tables over an account of
// either backend in one call, named as the .NET library names them, so a Go service and an
// ASP.NET Core one share users on one storage account:
//
//	acct, err := tables.NewAccount(conn, nil) // or inmemory.NewAccount(nil) in tests
//	t, err := identitytables.For(acct, nil)
//	users, err := identity.NewUserStore(t, nil)
//	roles, err := identity.NewRoleStore(t, nil)
//
// It is a package of its own because it imports package tables: package identity imports
// abstractions only, so domain code that uses the identity stores through identity.Tables
// needs no Azure SDK, and Go cannot hand package identity a generic store constructor as a
// value. Build identity.Tables by hand instead when the stores are your own
// abstractions.Storage implementations.
package identitytables

import (
	"fmt"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/identity"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// The tables' names: the .NET library names each table after its row type.
const (
	userTable      = "IdentityUserModel"
	roleTable      = "IdentityRoleModel"
	userRoleTable  = "IdentityUserRoleModel"
	userClaimTable = "IdentityUserClaimModel"
	roleClaimTable = "IdentityRoleClaimModel"
	userLoginTable = "IdentityUserLoginModel"
	userTokenTable = "IdentityUserTokenModel"
)

// Options configure For. A nil *Options, like the zero value, means the defaults.
type Options struct {
	// TableName returns the name of the table the .NET library calls name
	// (IdentityUserModel, IdentityRoleModel, IdentityUserRoleModel, IdentityUserClaimModel,
	// IdentityRoleClaimModel, IdentityUserLoginModel, IdentityUserTokenModel). nil keeps
	// those names, which is what a .NET service on the same account reads; a prefix or a
	// suffix gives each application or test run tables of its own on one account. It is
	// called once per table, in that order.
	TableName func(name string) string
}

// For returns the seven identity stores over acct, for identity.NewUserStore and
// identity.NewRoleStore. Each store's table is named as the .NET library names it (see
// Options.TableName). The user store never caches reads, whatever the account's
// Options.Cache, because a cached user row keeps a revoked security stamp or a lifted
// lockout in use (see package identity); the other six use the account's cache policy.
// Tables are created by the first write that needs them, or by each store's
// EnsureCreated; For sends nothing.
//
// Refused with an error matching abstractions.ErrInvalidArgument: a nil or zero account, a
// TableName that returns a name the service would refuse, or one name for two tables
// (their rows would mix).
func For(acct *tables.Account, opts *Options) (identity.Tables, error) {
	b := &builder{acct: acct, names: map[string]string{}}
	if opts != nil {
		b.rename = opts.TableName
	}
	// A composite literal's calls run in order, so TableName sees the tables in the order
	// its documentation gives.
	t := identity.Tables{
		Users:      open[identity.User](b, userTable, tables.Disabled),
		Roles:      open[identity.Role](b, roleTable, accountPolicy),
		UserRoles:  open[identity.UserRole](b, userRoleTable, accountPolicy),
		UserClaims: open[identity.UserClaim](b, userClaimTable, accountPolicy),
		RoleClaims: open[identity.RoleClaim](b, roleClaimTable, accountPolicy),
		UserLogins: open[identity.UserLogin](b, userLoginTable, accountPolicy),
		UserTokens: open[identity.UserToken](b, userTokenTable, accountPolicy),
	}
	if b.err != nil {
		return identity.Tables{}, b.err
	}
	return t, nil
}

// accountPolicy is the zero CachePolicy, which keeps the account's Options.Cache.
var accountPolicy tables.CachePolicy

// builder builds the stores of For, keeping the first error.
type builder struct {
	acct   *tables.Account
	rename func(string) string
	names  map[string]string // lower-case table name -> the .NET name it stands for
	err    error
}

// open returns the store of T in the table the .NET library names dotnet, or nil once
// anything failed.
func open[T any, P abstractions.EntityPtr[T]](b *builder, dotnet string, cache tables.CachePolicy) abstractions.Storage[T] {
	if b.err != nil {
		return nil
	}
	name := dotnet
	if b.rename != nil {
		name = b.rename(dotnet)
		if err := service.CheckTableName(name); err != nil {
			b.err = fmt.Errorf("identity tables: Options.TableName(%q): %w", dotnet, err)
			return nil
		}
	}
	// The service compares table names without regard to case.
	key := strings.ToLower(name)
	if prev, ok := b.names[key]; ok {
		b.err = fmt.Errorf("%w: identity tables: Options.TableName names both %s and %s %q; give each table a name of its own",
			abstractions.ErrInvalidArgument, prev, dotnet, name)
		return nil
	}
	b.names[key] = dotnet
	s, err := tables.For[T, P](b.acct, &tables.StoreOptions{Table: name, Cache: cache})
	if err != nil {
		b.err = fmt.Errorf("identity tables: %w", err)
		return nil
	}
	return s
}
