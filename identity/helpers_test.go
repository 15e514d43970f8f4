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
	return Tables{
		Users:      must(tables.For[IdentityUserModel](acct, nil))(t),
		Roles:      must(tables.For[IdentityRoleModel](acct, nil))(t),
		UserRoles:  must(tables.For[IdentityUserRoleModel](acct, nil))(t),
		UserClaims: must(tables.For[IdentityUserClaimModel](acct, nil))(t),
		RoleClaims: must(tables.For[IdentityRoleClaimModel](acct, nil))(t),
		UserLogins: must(tables.For[IdentityUserLoginModel](acct, nil))(t),
		UserTokens: must(tables.For[IdentityUserTokenModel](acct, nil))(t),
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
