package identity

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/service"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from what the stores write")

// The golden rows (testdata/golden/<table>.json) pin what these stores write for one user,
// one role, a membership, claims, a login and tokens, index rows included, in the table
// service's JSON form: each entity's PartitionKey, RowKey and properties, with the
// @odata.type annotations the service gives where JSON alone cannot tell the type. They are
// this module's own output (go test -run Golden -update rewrites them), so they guard
// against unintended changes, not against a difference from the .NET package: that is
// dotnet_rows_test.go, whose rows are written by hand from the .NET package's description
// and source. dotnet_nulls.json is written by hand too: a user row as the .NET package
// stores one with null strings and no lockout end (absent columns) and, as it writes none,
// without index rows; the stores find it by name through the query of the user partition,
// and write such a user with empty strings instead (see the package documentation).
var goldenTime = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

const (
	goldenUser = "6f9619ff-8b86-d011-b42d-00cf4fc964ff"
	goldenRole = "0d4bfa1b-38b8-4bd7-9b49-0f3a9b4dd1c2"
)

func goldenAlice() *User {
	return &User{UserId: goldenUser, UserName: "alice@example.com", NormalizedUserName: "ALICE@EXAMPLE.COM",
		Email: "alice@example.com", NormalizedEmail: "ALICE@EXAMPLE.COM", EmailConfirmed: true,
		PasswordHash: v3SHA512Iter100kSalt128Sub256, SecurityStamp: "VVPCRDAS3MJWQD5CSW2GWPRADBSKGCVM",
		ConcurrencyStamp: "3a7e4b0c-5d6f-4e8a-9b1c-2d3e4f5a6b7c", PhoneNumber: "+1 555 0100", TwoFactorEnabled: true,
		LockoutEnd: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), LockoutEnabled: true, AccessFailedCount: 2}
}

var (
	goldenNameClaim = Claim{Type: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", Value: "Alice Smith"}
	goldenRoleClaim = Claim{Type: "permission", Value: "users/delete"}
	goldenLogin     = UserLoginInfo{LoginProvider: "Google", ProviderKey: "109876543210987654321", ProviderDisplayName: "Google"}
)

// writeGolden stores the golden data through the stores.
func writeGolden(ctx context.Context, t *testing.T, us *UserStore, rs *RoleStore) {
	t.Helper()
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check("create user", us.Create(ctx, goldenAlice()))
	check("create role", rs.Create(ctx, &Role{RoleId: goldenRole, Name: "Admin", NormalizedName: "ADMIN",
		ConcurrencyStamp: "9c1d2e3f-4a5b-4c6d-8e7f-a0b1c2d3e4f5"}))
	check("add to role", us.AddToRole(ctx, goldenUser, "ADMIN"))
	check("add claim", us.AddClaims(ctx, goldenUser, goldenNameClaim))
	check("add role claim", rs.AddClaim(ctx, goldenRole, goldenRoleClaim))
	check("add login", us.AddLogin(ctx, goldenUser, goldenLogin))
	check("set authenticator key", us.SetToken(ctx, goldenUser, InternalLoginProvider, AuthenticatorKeyTokenName, "JBSWY3DPEHPK3PXP"))
	check("set recovery codes", us.SetToken(ctx, goldenUser, InternalLoginProvider, RecoveryCodeTokenName, "a1b2c-3d4e5;f6g7h-8i9j0"))
}

func TestGoldenRowsAreWhatTheStoresWrite(t *testing.T) {
	ctx := context.Background()
	svc := memservice.New()
	us, rs := stores(t, memTables(t, svc, func() time.Time { return goldenTime }))
	writeGolden(ctx, t, us, rs)
	for _, table := range tableNames {
		got := allRows(ctx, t, svc, table)
		path := filepath.Join("testdata", "golden", table+".json")
		if *update {
			if err := os.WriteFile(path, encodeRows(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want := loadRows(t, path)
		if d := diffRows(want, got); d != "" {
			t.Errorf("%s: the stores write other rows than the golden ones (run go test -run Golden -update only for a deliberate change of format):\n%s", table, d)
		}
	}
}

func TestGoldenRowsRead(t *testing.T) {
	ctx := context.Background()
	svc := memservice.New()
	for _, table := range tableNames {
		insertRows(ctx, t, svc, table, loadRows(t, filepath.Join("testdata", "golden", table+".json")))
	}
	insertRows(ctx, t, svc, "IdentityUserModel", loadRows(t, filepath.Join("testdata", "golden", "dotnet_nulls.json")))
	us, rs := stores(t, memTables(t, svc, nil))

	want := goldenAlice()
	for _, find := range []struct {
		name string
		fn   func() (*User, error)
	}{
		{"by id", func() (*User, error) { return us.FindByID(ctx, strings.ToUpper(goldenUser)) }},
		{"by name", func() (*User, error) { return us.FindByName(ctx, "ALICE@EXAMPLE.COM") }},
		{"by email", func() (*User, error) { return us.FindByEmail(ctx, "ALICE@EXAMPLE.COM") }},
		{"by login", func() (*User, error) {
			return us.FindByLogin(ctx, goldenLogin.LoginProvider, goldenLogin.ProviderKey)
		}},
	} {
		got, err := find.fn()
		if err != nil {
			t.Fatalf("find %s: %v", find.name, err)
		}
		if got.ID != abstractions.NormalizeID(userRowID(goldenUser)) || !got.CreatedAt.Equal(goldenTime) || got.ETag == "" {
			t.Errorf("find %s: entity base %+v", find.name, got.Entity)
		}
		got.Entity = want.Entity
		if !reflect.DeepEqual(got, want) {
			t.Errorf("find %s:\n got %+v\nwant %+v", find.name, got, want)
		}
	}
	if r := hasher(t, nil).Verify(want.PasswordHash, vectorPassword); r != VerificationSuccess {
		t.Errorf("the stored password hash verifies as %v", r)
	}

	role, err := rs.FindByName(ctx, "ADMIN")
	if err != nil || role.RoleId != goldenRole || role.Name != "Admin" || role.ConcurrencyStamp != "9c1d2e3f-4a5b-4c6d-8e7f-a0b1c2d3e4f5" {
		t.Errorf("role: %+v, %v", role, err)
	}
	expect := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, %v; want %v", what, got, err, want)
		}
	}
	in, err := us.IsInRole(ctx, goldenUser, "ADMIN")
	expect("is in role", in, true, err)
	roles, err := us.Roles(ctx, goldenUser)
	expect("roles", roles, []string{"Admin"}, err)
	members, err := us.UsersInRole(ctx, "ADMIN")
	expect("users in role", ids(members), []string{goldenUser}, err)
	claims, err := us.Claims(ctx, goldenUser)
	expect("claims", claims, []Claim{goldenNameClaim}, err)
	holders, err := us.UsersForClaim(ctx, goldenNameClaim)
	expect("users for claim", ids(holders), []string{goldenUser}, err)
	rclaims, err := rs.Claims(ctx, goldenRole)
	expect("role claims", rclaims, []Claim{goldenRoleClaim}, err)
	logins, err := us.Logins(ctx, goldenUser)
	expect("logins", logins, []UserLoginInfo{goldenLogin}, err)
	key, err := us.AuthenticatorKey(ctx, goldenUser)
	expect("authenticator key", key, "JBSWY3DPEHPK3PXP", err)
	n, err := us.CountRecoveryCodes(ctx, goldenUser)
	expect("recovery codes", n, 2, err)

	bob, err := us.FindByName(ctx, "BOB")
	if err != nil {
		t.Fatalf("the user with null columns: %v", err)
	}
	if bob.Email != "" || bob.PhoneNumber != "" || bob.PasswordHash != "" || !bob.LockoutEnd.IsZero() || bob.AccessFailedCount != 0 ||
		bob.UserName != "bob" || !bob.LockoutEnabled {
		t.Errorf("the user with null columns reads as %+v", bob)
	}
}

func ids(us []*User) []string {
	out := []string{}
	for _, u := range us {
		out = append(out, u.UserId)
	}
	return out
}

func allRows(ctx context.Context, t *testing.T, svc *memservice.Service, table string) []service.Row {
	t.Helper()
	var rows []service.Row
	q := service.Query{}
	for {
		page, err := svc.Query(ctx, table, q)
		if err != nil {
			t.Fatalf("query %s: %v", table, err)
		}
		rows = append(rows, page.Rows...)
		if page.Next == nil {
			return rows
		}
		q.Continuation = page.Next
	}
}

func insertRows(ctx context.Context, t *testing.T, svc *memservice.Service, table string, rows []service.Row) {
	t.Helper()
	if err := svc.CreateTable(ctx, table); err != nil && !strings.Contains(err.Error(), "TableAlreadyExists") {
		t.Fatalf("create %s: %v", table, err)
	}
	for _, r := range rows {
		if _, err := svc.Write(ctx, table, service.Action{Op: service.OpInsert, Row: r}); err != nil {
			t.Fatalf("insert into %s: %v", table, err)
		}
	}
}

// loadRows reads a file of entities in the table service's JSON form.
func loadRows(t *testing.T, path string) []service.Row {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var entities []map[string]any
	if err := dec.Decode(&entities); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rows := make([]service.Row, 0, len(entities))
	for i, e := range entities {
		r, err := decodeEntity(e)
		if err != nil {
			t.Fatalf("%s: entity %d: %v", path, i, err)
		}
		rows = append(rows, r)
	}
	return rows
}

func decodeEntity(e map[string]any) (service.Row, error) {
	var r service.Row
	var ok bool
	if r.PartitionKey, ok = e["PartitionKey"].(string); !ok {
		return r, fmt.Errorf("no PartitionKey")
	}
	if r.RowKey, ok = e["RowKey"].(string); !ok {
		return r, fmt.Errorf("no RowKey")
	}
	names := make([]string, 0, len(e))
	for name := range e {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "PartitionKey" || name == "RowKey" || name == "Timestamp" || strings.HasPrefix(name, "odata.") || strings.Contains(name, "@") {
			continue
		}
		typ, _ := e[name+"@odata.type"].(string)
		v, err := decodeValue(e[name], typ)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.Properties = append(r.Properties, service.Property{Name: name, Value: v})
	}
	return r, nil
}

func decodeValue(x any, typ string) (service.Value, error) {
	s, _ := x.(string)
	switch typ {
	case "Edm.DateTime":
		tm, err := time.Parse(time.RFC3339Nano, s)
		return service.DateTime(tm), err
	case "Edm.Int64":
		n, err := strconv.ParseInt(s, 10, 64)
		return service.Int64(n), err
	case "Edm.Guid":
		return service.ParseGuid(s)
	case "Edm.Binary":
		b, err := base64.StdEncoding.DecodeString(s)
		return service.Binary(b), err
	case "Edm.Double":
		f, err := x.(json.Number).Float64()
		return service.Double(f), err
	case "":
	default:
		return service.Value{}, fmt.Errorf("unknown type %q", typ)
	}
	switch v := x.(type) {
	case string:
		return service.String(v), nil
	case bool:
		return service.Bool(v), nil
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 32); err == nil {
			return service.Int32(int32(n)), nil
		}
		f, err := v.Float64()
		return service.Double(f), err
	}
	return service.Value{}, fmt.Errorf("unexpected JSON value %v", x)
}

// encodeRows writes rows in the form loadRows reads: keys first, then each property with its
// annotation where the service gives one.
func encodeRows(rows []service.Row) []byte {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, r := range rows {
		b.WriteString("  {\n")
		fields := [][2]string{{"PartitionKey", quote(r.PartitionKey)}, {"RowKey", quote(r.RowKey)}}
		for _, p := range r.Properties {
			v := p.Value
			switch v.Kind() {
			case service.KindString:
				fields = append(fields, [2]string{p.Name, quote(v.Str())})
			case service.KindBool:
				fields = append(fields, [2]string{p.Name, strconv.FormatBool(v.Bool())})
			case service.KindInt32:
				fields = append(fields, [2]string{p.Name, strconv.Itoa(int(v.Int32()))})
			case service.KindInt64:
				fields = append(fields, [2]string{p.Name + "@odata.type", `"Edm.Int64"`}, [2]string{p.Name, quote(strconv.FormatInt(v.Int64(), 10))})
			case service.KindDouble:
				fields = append(fields, [2]string{p.Name + "@odata.type", `"Edm.Double"`}, [2]string{p.Name, strconv.FormatFloat(v.Float(), 'g', -1, 64)})
			case service.KindDateTime:
				fields = append(fields, [2]string{p.Name + "@odata.type", `"Edm.DateTime"`}, [2]string{p.Name, quote(service.FormatDateTime(v.Time()))})
			case service.KindGuid:
				g := v.GuidBytes()
				fields = append(fields, [2]string{p.Name + "@odata.type", `"Edm.Guid"`}, [2]string{p.Name, quote(fmt.Sprintf("%x-%x-%x-%x-%x", g[0:4], g[4:6], g[6:8], g[8:10], g[10:]))})
			case service.KindBinary:
				fields = append(fields, [2]string{p.Name + "@odata.type", `"Edm.Binary"`}, [2]string{p.Name, quote(base64.StdEncoding.EncodeToString(v.Bytes()))})
			}
		}
		for j, f := range fields {
			sep := ","
			if j == len(fields)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "    %s: %s%s\n", quote(f[0]), f[1], sep)
		}
		if i == len(rows)-1 {
			b.WriteString("  }\n")
		} else {
			b.WriteString("  },\n")
		}
	}
	b.WriteString("]\n")
	return b.Bytes()
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// diffRows describes how two sets of rows differ, cell by cell ("" when they do not).
func diffRows(want, got []service.Row) string {
	index := func(rows []service.Row) map[string]map[string]string {
		m := map[string]map[string]string{}
		for _, r := range rows {
			cells := map[string]string{}
			for _, p := range r.Properties {
				cells[p.Name] = p.Value.String()
			}
			m[r.PartitionKey+" | "+r.RowKey] = cells
		}
		return m
	}
	w, g := index(want), index(got)
	var out []string
	for k, wc := range w {
		gc, ok := g[k]
		if !ok {
			out = append(out, "missing row "+k)
			continue
		}
		for name, v := range wc {
			if gv, ok := gc[name]; !ok {
				out = append(out, fmt.Sprintf("row %s: missing %s = %s", k, name, v))
			} else if gv != v {
				out = append(out, fmt.Sprintf("row %s: %s = %s, want %s", k, name, gv, v))
			}
		}
		for name, v := range gc {
			if _, ok := wc[name]; !ok {
				out = append(out, fmt.Sprintf("row %s: extra %s = %s", k, name, v))
			}
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			out = append(out, "extra row "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
