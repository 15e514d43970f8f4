package identity

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// These tests run on the in-memory backend; the same behaviours run on Azurite and on the
// memory service in the fidelity suite (fidelity/scenarios_identity.go).

func TestNewUserStoreRefusesACachingUserStore(t *testing.T) {
	acct := inmemory.NewAccount(&tables.Options{Cache: tables.Sliding(time.Minute)})
	tb := memTables(t, nil, nil)
	cached, err := tables.For[User](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb.Users = cached
	if _, err := NewUserStore(tb, nil); !errors.Is(err, ErrUserCacheEnabled) || !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Fatalf("NewUserStore over a caching user store: %v, want ErrUserCacheEnabled", err)
	}
	// The same account with the user store's cache turned off is accepted; the other
	// tables may cache.
	off, err := tables.For[User](acct, &tables.StoreOptions{Cache: tables.Disabled})
	if err != nil {
		t.Fatal(err)
	}
	tb.Users = off
	tb.Roles = must(tables.For[Role](acct, nil))(t)
	if _, err := NewUserStore(tb, nil); err != nil {
		t.Fatalf("NewUserStore with the user cache off: %v", err)
	}
}

func TestConstructorsRefuseMissingTables(t *testing.T) {
	full := memTables(t, nil, nil)
	for _, field := range []string{"Users", "Roles", "UserRoles", "UserClaims", "RoleClaims", "UserLogins", "UserTokens"} {
		tb := full
		switch field {
		case "Users":
			tb.Users = nil
		case "Roles":
			tb.Roles = nil
		case "UserRoles":
			tb.UserRoles = nil
		case "UserClaims":
			tb.UserClaims = nil
		case "RoleClaims":
			tb.RoleClaims = nil
		case "UserLogins":
			tb.UserLogins = nil
		case "UserTokens":
			tb.UserTokens = nil
		}
		_, uerr := NewUserStore(tb, nil)
		_, rerr := NewRoleStore(tb, nil)
		userNeeds := field != "RoleClaims"
		roleNeeds := field == "Roles" || field == "RoleClaims" || field == "UserRoles"
		if userNeeds != errors.Is(uerr, abstractions.ErrInvalidArgument) {
			t.Errorf("NewUserStore without %s: %v", field, uerr)
		}
		if roleNeeds != errors.Is(rerr, abstractions.ErrInvalidArgument) {
			t.Errorf("NewRoleStore without %s: %v", field, rerr)
		}
	}
}

func newUser(t *testing.T, us *UserStore, name string) *User {
	t.Helper()
	u := &User{UserName: name, Email: name + "@example.com"}
	if err := us.Create(context.Background(), u); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return u
}

// TestConcurrentRecoveryCodeRedemption: 16 goroutines redeem one code; exactly one wins.
func TestConcurrentRecoveryCodeRedemption(t *testing.T) {
	ctx := context.Background()
	us, _ := stores(t, memTables(t, nil, nil))
	u := newUser(t, us, "alice")
	if err := us.ReplaceRecoveryCodes(ctx, u.UserId, []string{"aaaa-1111", "bbbb-2222", "cccc-3333"}); err != nil {
		t.Fatal(err)
	}
	var wins, losses int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			ok, err := us.RedeemRecoveryCode(ctx, u.UserId, "bbbb-2222")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("redeem: %v", err)
			case ok:
				wins++
			default:
				losses++
			}
		})
	}
	wg.Wait()
	if wins != 1 || losses != 15 {
		t.Fatalf("%d redemptions succeeded and %d failed; want 1 and 15", wins, losses)
	}
	if n, err := us.CountRecoveryCodes(ctx, u.UserId); err != nil || n != 2 {
		t.Fatalf("codes left: %d, %v; want 2", n, err)
	}
	if v, _ := us.Token(ctx, u.UserId, InternalLoginProvider, RecoveryCodeTokenName); v != "aaaa-1111;cccc-3333" {
		t.Fatalf("stored codes %q", v)
	}
}

// TestConcurrentFailedSignIns: 16 concurrent increments lose none.
func TestConcurrentFailedSignIns(t *testing.T) {
	ctx := context.Background()
	us, _ := stores(t, memTables(t, nil, nil))
	u := newUser(t, us, "alice")
	var wg sync.WaitGroup
	seen := make(chan int, 16)
	for range 16 {
		wg.Go(func() {
			n, err := us.IncrementAccessFailedCount(ctx, u.UserId)
			if err != nil {
				t.Errorf("increment: %v", err)
			}
			seen <- n
		})
	}
	wg.Wait()
	close(seen)
	counts := map[int]bool{}
	for n := range seen {
		counts[n] = true
	}
	got, err := us.FindByID(ctx, u.UserId)
	if err != nil || got.AccessFailedCount != 16 {
		t.Fatalf("count %d, %v; want 16", got.AccessFailedCount, err)
	}
	if len(counts) != 16 {
		t.Fatalf("the calls returned %d distinct counts, want 16: %v", len(counts), counts)
	}
}

// TestConcurrentLoginClaims: two users add the same external login; exactly one gets it.
func TestConcurrentLoginClaims(t *testing.T) {
	ctx := context.Background()
	us, _ := stores(t, memTables(t, nil, nil))
	a, b := newUser(t, us, "alice"), newUser(t, us, "bob")
	login := UserLoginInfo{LoginProvider: "GitHub", ProviderKey: "12345", ProviderDisplayName: "GitHub"}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, u := range []*User{a, b} {
		wg.Go(func() { errs[i] = us.AddLogin(ctx, u.UserId, login) })
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("want exactly one success: %v / %v", errs[0], errs[1])
	}
	winner, loser := a, b
	if errs[0] != nil {
		winner, loser = b, a
	}
	for _, err := range errs {
		if err != nil && !(errors.Is(err, ErrLoginTaken) && errors.Is(err, abstractions.ErrDuplicateKey)) {
			t.Fatalf("the loser's error %v does not match ErrLoginTaken and ErrDuplicateKey", err)
		}
	}
	owner, err := us.FindByLogin(ctx, "github", "12345")
	if err != nil || owner.UserId != winner.UserId {
		t.Fatalf("owner %v, %v; want %s", owner, err, winner.UserId)
	}
	if l, _ := us.Logins(ctx, loser.UserId); len(l) != 0 {
		t.Fatalf("the loser lists %v", l)
	}
	// Adding it again to the owner is not an error.
	if err := us.AddLogin(ctx, winner.UserId, login); err != nil {
		t.Fatalf("add again: %v", err)
	}
}

func TestStaleConcurrencyStampIsRefused(t *testing.T) {
	ctx := context.Background()
	us, _ := stores(t, memTables(t, nil, nil))
	u := newUser(t, us, "alice")
	first, _ := us.FindByID(ctx, u.UserId)
	second, _ := us.FindByID(ctx, u.UserId)
	first.PhoneNumber = "+1 555 0100"
	if err := us.Update(ctx, first); err != nil {
		t.Fatal(err)
	}
	second.PhoneNumber = "+1 555 0199"
	err := us.Update(ctx, second)
	if !errors.Is(err, ErrConcurrencyFailure) || !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		t.Fatalf("update with a stale stamp: %v", err)
	}
	if want := strconv.Quote(strings.ToLower(u.UserId)); !strings.Contains(err.Error(), want) {
		t.Errorf("the error %q does not name the user %s", err, want)
	}
	got, _ := us.FindByID(ctx, u.UserId)
	if got.PhoneNumber != "+1 555 0100" || got.ConcurrencyStamp != first.ConcurrencyStamp || first.ConcurrencyStamp == u.ConcurrencyStamp {
		t.Fatalf("stored %q stamp %s; the first update's stamp %s", got.PhoneNumber, got.ConcurrencyStamp, first.ConcurrencyStamp)
	}
	// A write through Modify rotates the stamp too, so a copy read before it is stale.
	if _, err := us.IncrementAccessFailedCount(ctx, u.UserId); err != nil {
		t.Fatal(err)
	}
	first.PhoneNumber = "+1 555 0111"
	if err := us.Update(ctx, first); !errors.Is(err, ErrConcurrencyFailure) {
		t.Fatalf("update after an increment: %v", err)
	}
}

func TestRenameMovesTheIndexAndRefusesATakenName(t *testing.T) {
	ctx := context.Background()
	us, _ := stores(t, memTables(t, nil, nil))
	a, b := newUser(t, us, "alice"), newUser(t, us, "bob")
	a.UserName, a.NormalizedUserName = "alicia", ""
	if err := us.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := us.FindByName(ctx, "ALICE"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("old name: %v", err)
	}
	if got, err := us.FindByName(ctx, "ALICIA"); err != nil || got.UserId != a.UserId {
		t.Fatalf("new name: %v %v", got, err)
	}
	// The old name is free again.
	if err := us.Create(ctx, &User{UserName: "alice"}); err != nil {
		t.Fatalf("reuse the old name: %v", err)
	}
	// Taking bob's name fails and changes nothing.
	b2, _ := us.FindByID(ctx, b.UserId)
	b2.UserName, b2.NormalizedUserName, b2.PhoneNumber = "alicia", "", "+1"
	if err := us.Update(ctx, b2); !errors.Is(err, ErrDuplicateUserName) {
		t.Fatalf("rename onto a taken name: %v", err)
	}
	got, _ := us.FindByID(ctx, b.UserId)
	if got.NormalizedUserName != "BOB" || got.PhoneNumber != "" {
		t.Fatalf("the refused update left %+v", got)
	}
	if got, err := us.FindByName(ctx, "BOB"); err != nil || got.UserId != b.UserId {
		t.Fatalf("bob by name after the refused rename: %v %v", got, err)
	}
	// Duplicate email at creation.
	err := us.Create(ctx, &User{UserName: "carol", Email: "BOB@example.com"})
	if !errors.Is(err, ErrDuplicateEmail) {
		t.Fatalf("create with a taken email: %v", err)
	}
	if _, err := us.FindByName(ctx, "CAROL"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("the refused user is findable: %v", err)
	}
}

// TestStaleIndexIsTakenOver: an index row left by a user deleted part-way does not block
// the name, and a lookup never returns its user.
func TestStaleIndexIsTakenOver(t *testing.T) {
	ctx := context.Background()
	tb := memTables(t, nil, nil)
	us, _ := stores(t, tb)
	a := newUser(t, us, "alice")
	if _, err := tb.Users.Delete(ctx, userRowID(a.UserId), ""); err != nil { // the user row only
		t.Fatal(err)
	}
	if _, err := us.FindByName(ctx, "ALICE"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("lookup through a stale index row: %v", err)
	}
	b := newUser(t, us, "alice")
	if got, err := us.FindByEmail(ctx, "ALICE@EXAMPLE.COM"); err != nil || got.UserId != b.UserId {
		t.Fatalf("the new owner: %v %v", got, err)
	}
}

func TestAddToRole(t *testing.T) {
	ctx := context.Background()
	us, rs := stores(t, memTables(t, nil, nil))
	u := newUser(t, us, "alice")
	err := us.AddToRole(ctx, u.UserId, "ADMIN")
	if !errors.Is(err, ErrRoleNotFound) || !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("add to a missing role: %v", err)
	}
	// The other calls stay quiet about a missing role.
	if in, err := us.IsInRole(ctx, u.UserId, "ADMIN"); in || err != nil {
		t.Fatalf("is in a missing role: %v %v", in, err)
	}
	if err := us.RemoveFromRole(ctx, u.UserId, "ADMIN"); err != nil {
		t.Fatalf("remove from a missing role: %v", err)
	}
	if m, err := us.UsersInRole(ctx, "ADMIN"); len(m) != 0 || err != nil {
		t.Fatalf("users in a missing role: %v %v", m, err)
	}
	role := &Role{Name: "Admin"}
	if err := rs.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	if err := us.AddToRole(ctx, u.UserId, "ADMIN"); err != nil {
		t.Fatal(err)
	}
	if err := us.AddToRole(ctx, "no-such-user", "ADMIN"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("add a missing user: %v", err)
	}
	// Deleting the role ends the membership.
	if err := rs.Delete(ctx, role.RoleId); err != nil {
		t.Fatal(err)
	}
	if names, err := us.Roles(ctx, u.UserId); len(names) != 0 || err != nil {
		t.Fatalf("roles after the role's deletion: %v %v", names, err)
	}
}

func TestDeleteUserRemovesItsRows(t *testing.T) {
	ctx := context.Background()
	tb := memTables(t, nil, nil)
	us, rs := stores(t, tb)
	u := newUser(t, us, "alice")
	if err := rs.Create(ctx, &Role{Name: "Admin"}); err != nil {
		t.Fatal(err)
	}
	steps := []error{
		us.AddToRole(ctx, u.UserId, "ADMIN"),
		us.AddClaims(ctx, u.UserId, Claim{"email", "alice@example.com"}, Claim{"scope", "a/b"}),
		us.AddLogin(ctx, u.UserId, UserLoginInfo{LoginProvider: "Google", ProviderKey: "k/1"}),
		us.SetAuthenticatorKey(ctx, u.UserId, "KEY"),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := us.Delete(ctx, u.UserId); err != nil {
		t.Fatal(err)
	}
	if err := us.Delete(ctx, u.UserId); err != nil {
		t.Fatalf("delete again: %v", err)
	}
	counts := map[string]func() (int, error){
		"users":       func() (int, error) { return tb.Users.CountAll(ctx) },
		"memberships": func() (int, error) { return tb.UserRoles.CountAll(ctx) },
		"claims":      func() (int, error) { return tb.UserClaims.CountAll(ctx) },
		"logins":      func() (int, error) { return tb.UserLogins.CountAll(ctx) },
		"tokens":      func() (int, error) { return tb.UserTokens.CountAll(ctx) },
	}
	for what, count := range counts {
		if n, err := count(); err != nil || n != 0 {
			t.Errorf("%s left: %d, %v", what, n, err)
		}
	}
}

func TestInvalidInputIsRefusedBeforeAnythingIsSent(t *testing.T) {
	ctx := context.Background()
	us, rs := stores(t, memTables(t, nil, nil))
	u := newUser(t, us, "alice")
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"nil user", us.Create(ctx, nil), abstractions.ErrInvalidArgument},
		{"id with |", us.Create(ctx, &User{UserId: "a|b"}), abstractions.ErrInvalidKey},
		{"id with /", us.Create(ctx, &User{UserId: "a/b"}), abstractions.ErrInvalidKey},
		{"provider with /", us.AddLogin(ctx, u.UserId, UserLoginInfo{LoginProvider: "https://idp", ProviderKey: "k"}), abstractions.ErrInvalidKey},
		{"empty provider key", us.AddLogin(ctx, u.UserId, UserLoginInfo{LoginProvider: "Google"}), abstractions.ErrInvalidArgument},
		{"claim without type", us.AddClaims(ctx, u.UserId, Claim{Value: "v"}), abstractions.ErrInvalidArgument},
		{"code with ;", us.ReplaceRecoveryCodes(ctx, u.UserId, []string{"a;b"}), abstractions.ErrInvalidArgument},
		{"empty name lookup", second(us.FindByName(ctx, "")), abstractions.ErrInvalidArgument},
		{"nil role", rs.Create(ctx, nil), abstractions.ErrInvalidArgument},
		{"modify the name", second(us.Modify(ctx, u.UserId, func(u *User) error {
			u.NormalizedUserName = "X"
			return nil
		})), abstractions.ErrInvalidArgument},
		{"token of a missing user", us.SetToken(ctx, "nobody", "p", "n", "v"), abstractions.ErrNotFound},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestModifyAndFieldSetters(t *testing.T) {
	ctx := context.Background()
	us, _ := stores(t, memTables(t, nil, nil))
	u := newUser(t, us, "alice")
	end := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	calls := []struct {
		name  string
		call  func() (*User, error)
		check func(*User) bool
		stamp bool // a new security stamp
	}{
		{"password", func() (*User, error) { return us.SetPasswordHash(ctx, u.UserId, "hash") },
			func(v *User) bool { return v.PasswordHash == "hash" }, true},
		{"email confirmed", func() (*User, error) { return us.SetEmailConfirmed(ctx, u.UserId, true) },
			func(v *User) bool { return v.EmailConfirmed }, false},
		{"phone", func() (*User, error) { return us.SetPhoneNumber(ctx, u.UserId, "+44") },
			func(v *User) bool { return v.PhoneNumber == "+44" && !v.PhoneNumberConfirmed }, true},
		{"phone confirmed", func() (*User, error) { return us.SetPhoneNumberConfirmed(ctx, u.UserId, true) },
			func(v *User) bool { return v.PhoneNumberConfirmed }, false},
		{"two factor", func() (*User, error) { return us.SetTwoFactorEnabled(ctx, u.UserId, true) },
			func(v *User) bool { return v.TwoFactorEnabled }, true},
		{"lockout enabled", func() (*User, error) { return us.SetLockoutEnabled(ctx, u.UserId, true) },
			func(v *User) bool { return v.LockoutEnabled }, false},
		{"lockout end", func() (*User, error) { return us.SetLockoutEnd(ctx, u.UserId, end) },
			func(v *User) bool {
				return v.LockoutEnd.Equal(end) && v.IsLockedOut(end.Add(-time.Second)) && !v.IsLockedOut(end)
			}, false},
		{"reset count", func() (*User, error) { return us.ResetAccessFailedCount(ctx, u.UserId) },
			func(v *User) bool { return v.AccessFailedCount == 0 }, false},
		{"security stamp", func() (*User, error) { return us.UpdateSecurityStamp(ctx, u.UserId) },
			func(v *User) bool { return true }, true},
	}
	prev, _ := us.FindByID(ctx, u.UserId)
	for _, c := range calls {
		got, err := c.call()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		stored, _ := us.FindByID(ctx, u.UserId)
		if !c.check(got) || !c.check(stored) {
			t.Errorf("%s: returned %+v, stored %+v", c.name, got, stored)
		}
		if stored.ConcurrencyStamp == prev.ConcurrencyStamp {
			t.Errorf("%s: the concurrency stamp did not change", c.name)
		}
		if (stored.SecurityStamp != prev.SecurityStamp) != c.stamp {
			t.Errorf("%s: security stamp changed = %v, want %v", c.name, stored.SecurityStamp != prev.SecurityStamp, c.stamp)
		}
		prev = stored
	}
	if _, err := us.SetEmailConfirmed(ctx, "nobody", true); !errors.Is(err, abstractions.ErrNotFound) {
		t.Errorf("a setter on a missing user: %v", err)
	}
	wantErr := fmt.Errorf("stop")
	if _, err := us.Modify(ctx, u.UserId, func(*User) error { return wantErr }); !errors.Is(err, wantErr) {
		t.Errorf("Modify's own error: %v", err)
	}
}
