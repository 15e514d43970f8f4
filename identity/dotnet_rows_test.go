package identity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// The rows below are what the .NET library's Identity package stores for one user with a
// role, a claim, a role claim, an external login and three tokens. They are written by hand,
// not by these stores, and the tests check the stores against them in both directions: what
// the stores write equals them cell for cell (names, EDM types, values), and the stores read
// them as a .NET service left them.
//
// Sources. The package page of Unified.Data.Tables 0.9.0 (the main seed of the project)
// fixes, in its "ASP.NET Core Identity" part:
//
//   - "Tables": seven row models, one table each, named after the model type; GUIDs and
//     constant key parts are used verbatim; claim values and login provider keys are
//     MD5-hashed because keys refuse /, \, # and ? and control characters;
//   - "Login rows use CreateAsync, not upsert": a login's id is {provider}|{md5(providerKey)}
//     and the owning user's id is a column of the row, not part of its key;
//
// and, in its general part:
//
//   - "Id convention": an id is PartitionKey|RowKey split at the first "|", normalised on
//     write (trimmed, spaces to "-", lower case), and also stored as the Id column;
//   - "Tiers" (the 252-property paragraph): every entity stores the properties of Entity,
//     Id, CreatedAt and UpdatedAt.
//
// The page is silent on the rest: the ids of the user, role, membership, claim and token
// rows, the text each hash is taken over, the case of the hex digits, the columns of each
// model and their types. Those come from the .NET package's own published source: its seven
// row models (the properties, hence the columns: strings as Edm.String, bool as
// Edm.Boolean, int as Edm.Int32, DateTimeOffset as Edm.DateTime, a null string as no
// column) and its key tests, which pin the ids User|{userId}, Role|{roleId},
// {userId}|{roleId}, {userId}|{md5(type + "-" + value)}, {roleId}|{md5(type + "-" +
// value)}, {provider}|{md5(providerKey)} and {userId}|{md5(provider + "-" + name)}, with
// MD5 over UTF-8 in lower-case hex, and publish the digests used below for friendly-name/Bob,
// perm/read, the provider key 12345 and the token Google/AuthenticatorKey. The digests of
// the two [AspNetUserStore] tokens were computed with md5sum. ClaimId is the .NET model's
// int of that name, which its stores leave at 0.
//
// These stores write one thing the .NET package does not: index rows (see index.go) in
// partitions of their own. They are listed separately below.

// dotnetRow is one row of a table as the .NET package stores it.
type dotnetRow struct {
	table string
	row   service.Row
}

func cells(kv ...any) []service.Property {
	var out []service.Property
	for i := 0; i < len(kv); i += 2 {
		out = append(out, service.Property{Name: kv[i].(string), Value: kv[i+1].(service.Value)})
	}
	return out
}

// dotnetIdentityRows returns the rows; asWritten says whether the account keeps ids as
// written (the .NET library's IdNormalization.AsWritten) rather than normalising them. The
// .NET package composes each id, the account normalises it or not, splits it at the first
// "|" into the keys, and stores it as the Id column; the Entity times are goldenTime.
func dotnetIdentityRows(asWritten bool) []dotnetRow {
	u, r := goldenUser, goldenRole
	a := goldenAlice()
	row := func(table, id string, kv ...any) dotnetRow {
		if !asWritten {
			id = abstractions.NormalizeID(id)
		}
		pk, rk := abstractions.SplitID(id)
		base := cells("Id", service.String(id), "CreatedAt", service.DateTime(goldenTime), "UpdatedAt", service.DateTime(goldenTime))
		return dotnetRow{table, service.Row{PartitionKey: pk, RowKey: rk, Properties: append(base, cells(kv...)...)}}
	}
	return []dotnetRow{
		// IdentityUserModel, id User|{userId}: every property of the model.
		row("IdentityUserModel", "User|"+u,
			"UserId", service.String(u),
			"UserName", service.String(a.UserName),
			"NormalizedUserName", service.String(a.NormalizedUserName),
			"Email", service.String(a.Email),
			"NormalizedEmail", service.String(a.NormalizedEmail),
			"EmailConfirmed", service.Bool(true),
			"PasswordHash", service.String(a.PasswordHash),
			"SecurityStamp", service.String(a.SecurityStamp),
			"ConcurrencyStamp", service.String(a.ConcurrencyStamp),
			"PhoneNumber", service.String(a.PhoneNumber),
			"PhoneNumberConfirmed", service.Bool(false),
			"TwoFactorEnabled", service.Bool(true),
			"LockoutEnd", service.DateTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)),
			"LockoutEnabled", service.Bool(true),
			"AccessFailedCount", service.Int32(2)),
		// IdentityRoleModel, id Role|{roleId}.
		row("IdentityRoleModel", "Role|"+r,
			"RoleId", service.String(r),
			"Name", service.String("Admin"),
			"NormalizedName", service.String("ADMIN"),
			"ConcurrencyStamp", service.String("9c1d2e3f-4a5b-4c6d-8e7f-a0b1c2d3e4f5")),
		// IdentityUserRoleModel, id {userId}|{roleId}.
		row("IdentityUserRoleModel", u+"|"+r,
			"UserId", service.String(u),
			"RoleId", service.String(r)),
		// IdentityUserClaimModel, id {userId}|{md5("friendly-name-Bob")}.
		row("IdentityUserClaimModel", u+"|9872af6969e880b1438106f4a6e7cf32",
			"ClaimId", service.Int32(0),
			"UserId", service.String(u),
			"ClaimType", service.String("friendly-name"),
			"ClaimValue", service.String("Bob")),
		// IdentityRoleClaimModel, id {roleId}|{md5("perm-read")}.
		row("IdentityRoleClaimModel", r+"|d95564ddfe8b558513601ba05961f3e4",
			"ClaimId", service.Int32(0),
			"RoleId", service.String(r),
			"ClaimType", service.String("perm"),
			"ClaimValue", service.String("read")),
		// IdentityUserLoginModel, id {provider}|{md5("12345")} (the seed's login section).
		row("IdentityUserLoginModel", "Google|827ccb0eea8a706c4c34a16891f84e7b",
			"UserId", service.String(u),
			"LoginProvider", service.String("Google"),
			"ProviderKey", service.String("12345"),
			"ProviderDisplayName", service.String("Google")),
		// IdentityUserTokenModel, id {userId}|{md5(provider + "-" + name)}.
		row("IdentityUserTokenModel", u+"|a92660cffb43f1f88f52617e09118370",
			"UserId", service.String(u),
			"LoginProvider", service.String("Google"),
			"Name", service.String("AuthenticatorKey"),
			"Value", service.String("g-token")),
		row("IdentityUserTokenModel", u+"|8a9241f1bbf2e5277025ddcdd81e016c",
			"UserId", service.String(u),
			"LoginProvider", service.String("[AspNetUserStore]"),
			"Name", service.String("AuthenticatorKey"),
			"Value", service.String("JBSWY3DPEHPK3PXP")),
		row("IdentityUserTokenModel", u+"|32b95be551a680668dfdf5177b09851f",
			"UserId", service.String(u),
			"LoginProvider", service.String("[AspNetUserStore]"),
			"Name", service.String("RecoveryCodes"),
			"Value", service.String("a1b2c-3d4e5;f6g7h-8i9j0")),
	}
}

// indexRows are the keys of the index rows these stores add (not the .NET package): the
// user's name and email (both ALICE@EXAMPLE.COM, MD5 bb4a…) and the role's name (ADMIN).
var indexRows = map[string][]string{
	"IdentityUserModel": {"bb4a3a241d023b031e53d235fc679a1b|email", "bb4a3a241d023b031e53d235fc679a1b|username"},
	"IdentityRoleModel": {"73acd9a5972130b75066c82595a1fae3|rolename"},
}

var isIndexRow = regexp.MustCompile(`^[0-9a-f]{32}$`)

// writeDotnetData stores, through the stores, the data the .NET rows describe.
func writeDotnetData(ctx context.Context, t *testing.T, us *UserStore, rs *RoleStore) {
	t.Helper()
	steps := []struct {
		what string
		err  func() error
	}{
		{"create user", func() error { return us.Create(ctx, goldenAlice()) }},
		{"create role", func() error {
			return rs.Create(ctx, &Role{RoleId: goldenRole, Name: "Admin", NormalizedName: "ADMIN",
				ConcurrencyStamp: "9c1d2e3f-4a5b-4c6d-8e7f-a0b1c2d3e4f5"})
		}},
		{"add to role", func() error { return us.AddToRole(ctx, goldenUser, "ADMIN") }},
		{"add claim", func() error { return us.AddClaims(ctx, goldenUser, Claim{"friendly-name", "Bob"}) }},
		{"add role claim", func() error { return rs.AddClaim(ctx, goldenRole, Claim{"perm", "read"}) }},
		{"add login", func() error {
			return us.AddLogin(ctx, goldenUser, UserLoginInfo{LoginProvider: "Google", ProviderKey: "12345", ProviderDisplayName: "Google"})
		}},
		{"set token", func() error { return us.SetToken(ctx, goldenUser, "Google", "AuthenticatorKey", "g-token") }},
		{"set authenticator key", func() error {
			return us.SetToken(ctx, goldenUser, InternalLoginProvider, AuthenticatorKeyTokenName, "JBSWY3DPEHPK3PXP")
		}},
		{"set recovery codes", func() error {
			return us.ReplaceRecoveryCodes(ctx, goldenUser, []string{"a1b2c-3d4e5", "f6g7h-8i9j0"})
		}},
	}
	for _, s := range steps {
		if err := s.err(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
	}
}

// diffRow describes how got differs from want, cell for cell ("" when it does not).
func diffRow(want, got service.Row) []string {
	var out []string
	key := want.PartitionKey + "|" + want.RowKey
	for _, p := range want.Properties {
		g, ok := got.Get(p.Name)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: no %s (want %v)", key, p.Name, p.Value))
		case g.Kind() != p.Value.Kind():
			out = append(out, fmt.Sprintf("%s: %s is an %v, want an %v", key, p.Name, g.Kind(), p.Value.Kind()))
		case !g.Equal(p.Value):
			out = append(out, fmt.Sprintf("%s: %s = %v, want %v", key, p.Name, g, p.Value))
		}
	}
	for _, p := range got.Properties {
		if _, ok := want.Get(p.Name); !ok {
			out = append(out, fmt.Sprintf("%s: extra %s = %v", key, p.Name, p.Value))
		}
	}
	return out
}

// TestStoresWriteTheDotnetRows writes the data through the stores and compares each table's
// rows with the .NET rows, cell for cell; the only other rows allowed are the index rows.
// It runs under both id modes: with ids kept as written, the case of every key part shows
// (the "User" and "Role" partitions, the provider, the hex digits of the hashes).
func TestStoresWriteTheDotnetRows(t *testing.T) {
	for _, asWritten := range []bool{false, true} {
		t.Run(fmt.Sprintf("asWritten=%v", asWritten), func(t *testing.T) {
			ctx := context.Background()
			svc := memservice.New()
			opts := &tables.Options{Now: func() time.Time { return goldenTime }}
			if asWritten {
				opts.IDs = tables.IDsAsWritten
			}
			us, rs := stores(t, memTablesWith(t, svc, opts))
			writeDotnetData(ctx, t, us, rs)

			want := map[string]map[string]service.Row{}
			for _, d := range dotnetIdentityRows(asWritten) {
				if want[d.table] == nil {
					want[d.table] = map[string]service.Row{}
				}
				want[d.table][d.row.PartitionKey+"|"+d.row.RowKey] = d.row
			}
			for _, table := range tableNames {
				var diffs, index []string
				seen := map[string]bool{}
				for _, g := range allRows(ctx, t, svc, table) {
					key := g.PartitionKey + "|" + g.RowKey
					w, ok := want[table][key]
					switch {
					case ok:
						seen[key] = true
						diffs = append(diffs, diffRow(w, g)...)
					case isIndexRow.MatchString(g.PartitionKey):
						index = append(index, key)
					default:
						diffs = append(diffs, "a row the .NET package does not write: "+key)
					}
				}
				for key := range want[table] {
					if !seen[key] {
						diffs = append(diffs, "missing row "+key)
					}
				}
				sort.Strings(index)
				if got, w := strings.Join(index, " "), strings.Join(indexRows[table], " "); got != w {
					diffs = append(diffs, fmt.Sprintf("index rows %q, want %q", got, w))
				}
				if len(diffs) > 0 {
					sort.Strings(diffs)
					t.Errorf("%s differs from the .NET rows:\n  %s", table, strings.Join(diffs, "\n  "))
				}
			}
		})
	}
}

// TestStoresReadTheDotnetRows loads the .NET rows alone (no index rows: the .NET package
// writes none) and reads everything back through the stores.
func TestStoresReadTheDotnetRows(t *testing.T) {
	ctx := context.Background()
	svc := memservice.New()
	for _, d := range dotnetIdentityRows(false) {
		insertRows(ctx, t, svc, d.table, []service.Row{d.row})
	}
	for _, table := range tableNames {
		insertRows(ctx, t, svc, table, nil)
	}
	us, rs := stores(t, memTables(t, svc, nil))

	want := goldenAlice()
	for name, find := range map[string]func() (*User, error){
		"by id":    func() (*User, error) { return us.FindByID(ctx, goldenUser) },
		"by name":  func() (*User, error) { return us.FindByName(ctx, "ALICE@EXAMPLE.COM") },
		"by email": func() (*User, error) { return us.FindByEmail(ctx, "ALICE@EXAMPLE.COM") },
		"by login": func() (*User, error) { return us.FindByLogin(ctx, "Google", "12345") },
	} {
		got, err := find()
		if err != nil {
			t.Errorf("find %s: %v", name, err)
			continue
		}
		got.Entity = want.Entity
		if !reflect.DeepEqual(got, want) {
			t.Errorf("find %s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, %v; want %v", what, got, err, want)
		}
	}
	role, err := rs.FindByName(ctx, "ADMIN")
	check("role by name", role.RoleId+" "+role.Name, goldenRole+" Admin", err)
	in, err := us.IsInRole(ctx, goldenUser, "ADMIN")
	check("is in role", in, true, err)
	roles, err := us.Roles(ctx, goldenUser)
	check("roles", roles, []string{"Admin"}, err)
	members, err := us.UsersInRole(ctx, "ADMIN")
	check("users in role", ids(members), []string{goldenUser}, err)
	claims, err := us.Claims(ctx, goldenUser)
	check("claims", claims, []Claim{{"friendly-name", "Bob"}}, err)
	holders, err := us.UsersForClaim(ctx, Claim{"friendly-name", "Bob"})
	check("users for claim", ids(holders), []string{goldenUser}, err)
	rclaims, err := rs.Claims(ctx, goldenRole)
	check("role claims", rclaims, []Claim{{"perm", "read"}}, err)
	logins, err := us.Logins(ctx, goldenUser)
	check("logins", logins, []UserLoginInfo{{"Google", "12345", "Google"}}, err)
	tok, err := us.Token(ctx, goldenUser, "Google", "AuthenticatorKey")
	check("token", tok, "g-token", err)
	key, err := us.AuthenticatorKey(ctx, goldenUser)
	check("authenticator key", key, "JBSWY3DPEHPK3PXP", err)
	n, err := us.CountRecoveryCodes(ctx, goldenUser)
	check("recovery codes", n, 2, err)

	// A name or email a .NET user holds (without an index row) is taken.
	dup := us.Create(ctx, &User{UserName: "ALICE@example.com", Email: "someone@example.com"})
	check("a second user with the name", fmt.Sprint(errors.Is(dup, ErrDuplicateUserName)), "true", nil)
	dup = rs.Create(ctx, &Role{Name: "admin"})
	check("a second role with the name", fmt.Sprint(errors.Is(dup, ErrDuplicateRoleName)), "true", nil)

	// Deleting the user removes every row the .NET package wrote for it.
	if err := us.Delete(ctx, goldenUser); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"IdentityUserModel", "IdentityUserRoleModel", "IdentityUserClaimModel", "IdentityUserLoginModel", "IdentityUserTokenModel"} {
		if rows := allRows(ctx, t, svc, table); len(rows) != 0 {
			t.Errorf("%s keeps %d rows after the user's deletion", table, len(rows))
		}
	}
}
