package identity

import (
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
)

// tableNames are the seven tables, named as the .NET library names them.
var tableNames = []string{"IdentityUserModel", "IdentityRoleModel", "IdentityUserRoleModel", "IdentityUserClaimModel",
	"IdentityRoleClaimModel", "IdentityUserLoginModel", "IdentityUserTokenModel"}

// memTables returns the seven stores over an in-memory account. svc may be nil (a new
// service); now may be nil (the real clock).
func memTables(t testing.TB, svc *memservice.Service, now func() time.Time) Tables {
	t.Helper()
	return memTablesWith(t, svc, &tables.Options{Now: now})
}

// memTablesWith is memTables with the account's options.
func memTablesWith(t testing.TB, svc *memservice.Service, opts *tables.Options) Tables {
	t.Helper()
	if svc == nil {
		svc = memservice.New()
	}
	acct := inmemory.NewAccountOver(svc, svc, opts)
	// Built by hand: identitytables imports this package, so its For cannot run in this
	// package's own tests (identitytables' tests check that it builds the same tables).
	named := func(i int) *tables.StoreOptions { return &tables.StoreOptions{Table: tableNames[i]} }
	return Tables{
		Users:      must(tables.For[User](acct, named(0)))(t),
		Roles:      must(tables.For[Role](acct, named(1)))(t),
		UserRoles:  must(tables.For[UserRole](acct, named(2)))(t),
		UserClaims: must(tables.For[UserClaim](acct, named(3)))(t),
		RoleClaims: must(tables.For[RoleClaim](acct, named(4)))(t),
		UserLogins: must(tables.For[UserLogin](acct, named(5)))(t),
		UserTokens: must(tables.For[UserToken](acct, named(6)))(t),
	}
}

func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// stores returns a user store and a role store over t.
func stores(tb testing.TB, t Tables) (*UserStore, *RoleStore) {
	tb.Helper()
	us, err := NewUserStore(t, nil)
	if err != nil {
		tb.Fatal(err)
	}
	rs, err := NewRoleStore(t, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return us, rs
}
