package identitytables_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/identity"
	"github.com/unified-data/gotables/identity/identitytables"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// dotnetTables are the seven tables as the .NET library names them, in the order
// Options.TableName sees them.
var dotnetTables = []string{"IdentityUserModel", "IdentityRoleModel", "IdentityUserRoleModel", "IdentityUserClaimModel",
	"IdentityRoleClaimModel", "IdentityUserLoginModel", "IdentityUserTokenModel"}

func tableNames(t identity.Tables) []string {
	return []string{t.Users.Table(), t.Roles.Table(), t.UserRoles.Table(), t.UserClaims.Table(), t.RoleClaims.Table(),
		t.UserLogins.Table(), t.UserTokens.Table()}
}

// Each row model's rows land in the table the .NET library keeps them in: a user, a role, a
// membership, a claim of each, a login and a token, written through the stores For builds,
// are found in the memory service under the .NET names, each table holding its own model's
// columns.
func TestForUsesTheDotNetTables(t *testing.T) {
	ctx := context.Background()
	svc := memservice.New()
	tb, err := identitytables.For(inmemory.NewAccountOver(svc, svc, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := tableNames(tb); !slices.Equal(got, dotnetTables) {
		t.Fatalf("tables %v, want %v", got, dotnetTables)
	}
	users, err := identity.NewUserStore(tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	roles, err := identity.NewRoleStore(tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	const uid, rid = "6f9619ff-8b86-d011-b42d-00cf4fc964ff", "0d4bfa1b-38b8-4bd7-9b49-0f3a9b4dd1c2"
	for what, err := range map[string]error{
		"user": users.Create(ctx, &identity.User{UserId: uid, UserName: "alice", Email: "alice@example.com"}),
		"role": roles.Create(ctx, &identity.Role{RoleId: rid, Name: "Admin"}),
	} {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for what, err := range map[string]error{
		"membership": users.AddToRole(ctx, uid, "ADMIN"),
		"user claim": users.AddClaims(ctx, uid, identity.Claim{Type: "scope", Value: "orders.read"}),
		"role claim": roles.AddClaim(ctx, rid, identity.Claim{Type: "permission", Value: "users/delete"}),
		"login":      users.AddLogin(ctx, uid, identity.UserLoginInfo{LoginProvider: "Google", ProviderKey: "1098"}),
		"token":      users.SetToken(ctx, uid, "Google", "refresh", "r1"),
	} {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// A column only that model has, per table.
	own := map[string]string{
		"IdentityUserModel": "NormalizedUserName", "IdentityRoleModel": "NormalizedName", "IdentityUserRoleModel": "RoleId",
		"IdentityUserClaimModel": "ClaimValue", "IdentityRoleClaimModel": "ClaimValue", "IdentityUserLoginModel": "ProviderKey",
		"IdentityUserTokenModel": "Value",
	}
	for _, table := range dotnetTables {
		page, err := svc.Query(ctx, table, service.Query{})
		if err != nil {
			t.Errorf("%s: %v", table, err)
			continue
		}
		if len(page.Rows) == 0 {
			t.Errorf("%s holds no rows", table)
		}
		for _, r := range page.Rows {
			if _, ok := r.Get(own[table]); !ok {
				t.Errorf("%s holds a row without %s: %v", table, own[table], r)
			}
		}
	}
	// The user role and role claim rows are told apart by their keys: a membership is in the
	// user's partition, a role claim in the role's.
	for table, partition := range map[string]string{"IdentityUserRoleModel": uid, "IdentityRoleClaimModel": rid} {
		page, _ := svc.Query(ctx, table, service.Query{})
		for _, r := range page.Rows {
			if r.PartitionKey != partition {
				t.Errorf("%s holds a row in partition %q, want %q", table, r.PartitionKey, partition)
			}
		}
	}
}

// An account that caches reads still gets a user store that does not; the other six use
// the account's policy, and NewUserStore accepts the tables.
func TestForKeepsTheUserCacheOff(t *testing.T) {
	acct := inmemory.NewAccount(&tables.Options{Cache: tables.Sliding(time.Minute)})
	tb, err := identitytables.For(acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	stores := []any{tb.Users, tb.Roles, tb.UserRoles, tb.UserClaims, tb.RoleClaims, tb.UserLogins, tb.UserTokens}
	for i, s := range stores {
		if want := i != 0; driver.CachesReads(s) != want {
			t.Errorf("%s caches reads: %v, want %v", dotnetTables[i], driver.CachesReads(s), want)
		}
	}
	if _, err := identity.NewUserStore(tb, nil); err != nil {
		t.Fatalf("NewUserStore over For's tables on a caching account: %v", err)
	}
}

func TestForTableName(t *testing.T) {
	var asked []string
	tb, err := identitytables.For(inmemory.NewAccount(nil), &identitytables.Options{TableName: func(n string) string {
		asked = append(asked, n)
		return "app1" + n
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, dotnetTables) {
		t.Errorf("TableName was asked %v, want %v", asked, dotnetTables)
	}
	for i, got := range tableNames(tb) {
		if want := "app1" + dotnetTables[i]; got != want {
			t.Errorf("table %q, want %q", got, want)
		}
	}
}

func TestForRefuses(t *testing.T) {
	acct := inmemory.NewAccount(nil)
	for what, tc := range map[string]struct {
		acct *tables.Account
		opts *identitytables.Options
		says string
	}{
		"a nil account":  {nil, nil, "account"},
		"a zero account": {&tables.Account{}, nil, "account"},
		"a name the service refuses": {acct, &identitytables.Options{TableName: func(n string) string {
			return strings.TrimPrefix(n, "Identity") + "_x"
		}}, `"UserModel_x"`},
		"one name for two tables": {acct, &identitytables.Options{TableName: func(n string) string {
			if strings.HasSuffix(n, "ClaimModel") {
				return "Claims"
			}
			return n
		}}, "IdentityUserClaimModel and IdentityRoleClaimModel"},
	} {
		t.Run(what, func(t *testing.T) {
			tb, err := identitytables.For(tc.acct, tc.opts)
			if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("For: %v, want ErrInvalidArgument saying %s", err, tc.says)
			}
			if tb != (identity.Tables{}) {
				t.Errorf("a refused For returned stores: %+v", tb)
			}
		})
	}
}
