package fidelity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/identity"
	"github.com/unified-data/gotables/identity/identitytables"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// The identity scenarios run the identity module's user and role stores, the whole store
// suite, on each backend, built by identitytables.For. Each scenario has seven tables of its
// own, the .NET tables' names plus the run's suffix (Options.TableName); the rows they leave
// behind are recorded with the random stamps masked, so both backends' logs compare.

// identityRun is one scenario run's stores.
type identityRun struct {
	t      identity.Tables
	names  []string
	users  *identity.UserStore
	roles  *identity.RoleStore
	hasher *identity.PasswordHasher
}

func identityStores(e *Env) *identityRun {
	e.t.Helper()
	acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock})
	run := &identityRun{}
	var err error
	run.t, err = identitytables.For(acct, &identitytables.Options{TableName: func(base string) string {
		n := e.Name(base)
		run.names = append(run.names, n)
		return n
	}})
	if err != nil {
		e.Fatalf("identity stores: %v", err)
	}
	if run.users, err = identity.NewUserStore(run.t, nil); err != nil {
		e.Fatalf("user store: %v", err)
	}
	if run.roles, err = identity.NewRoleStore(run.t, nil); err != nil {
		e.Fatalf("role store: %v", err)
	}
	// Few iterations: the scenarios check the stored format, not the hash's strength.
	if run.hasher, err = identity.NewPasswordHasher(&identity.PasswordHasherOptions{Iterations: 1000}); err != nil {
		e.Fatalf("hasher: %v", err)
	}
	return run
}

// dump records the rows of the seven tables, with the values that are random on each run
// (security and concurrency stamps, password hashes) shown by presence only.
func (r *identityRun) dump(ctx context.Context, e *Env) {
	e.t.Helper()
	random := map[string]bool{"SecurityStamp": true, "ConcurrencyStamp": true, "PasswordHash": true}
	for _, n := range r.names {
		rows, err := storedRows(ctx, e.Tables, n, service.Query{})
		if err != nil {
			e.ObserveErr("rows of "+n[:len(n)-len(e.Suffix)], err)
			continue
		}
		for i := range rows {
			rows[i] = rows[i].Clone()
			for j, p := range rows[i].Properties {
				if random[p.Name] && p.Value.Str() != "" {
					rows[i].Properties[j].Value = service.String("<random>")
				}
			}
		}
		e.Observe("rows of "+n[:len(n)-len(e.Suffix)], rows)
	}
}

// Fixed ids, so that the rows left behind are the same on both backends.
const (
	aliceID = "a11ce000-0000-4000-8000-000000000001"
	bobID   = "b0b00000-0000-4000-8000-000000000002"
	adminID = "ad000000-0000-4000-8000-000000000003"
)

func (r *identityRun) alice(ctx context.Context, e *Env) *identity.User {
	e.t.Helper()
	u := &identity.User{UserId: aliceID, UserName: "alice", Email: "Alice@Example.com", LockoutEnabled: true}
	e.OK("create alice", r.users.Create(ctx, u))
	return u
}

func (r *identityRun) bob(ctx context.Context, e *Env) *identity.User {
	e.t.Helper()
	u := &identity.User{UserId: bobID, UserName: "bob", Email: "bob@example.com"}
	e.OK("create bob", r.users.Create(ctx, u))
	return u
}

// who renders a user found (or not) by a lookup.
func who(u *identity.User, err error) string {
	if err != nil {
		return describeError(err)
	}
	return u.UserId + " " + u.NormalizedUserName + " " + u.NormalizedEmail
}

func whoAll(us []*identity.User, err error) string {
	if err != nil {
		return describeError(err)
	}
	ids := []string{}
	for _, u := range us {
		ids = append(ids, u.UserId)
	}
	return fmt.Sprint(ids)
}

func identityScenarios() []Scenario {
	return []Scenario{
		{
			Name: "identity/users-create-and-find", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				a := r.alice(ctx, e)
				e.Equal("filled in", fmt.Sprint(a.ID, " ", a.NormalizedUserName, " ", a.NormalizedEmail, " ",
					len(a.SecurityStamp), " ", len(a.ConcurrencyStamp), " ", a.ETag != ""),
					"user|"+aliceID+" ALICE ALICE@EXAMPLE.COM 32 36 true")
				e.Equal("by id", who(r.users.FindByID(ctx, aliceID)), aliceID+" ALICE ALICE@EXAMPLE.COM")
				e.Equal("by name", who(r.users.FindByName(ctx, "ALICE")), aliceID+" ALICE ALICE@EXAMPLE.COM")
				e.Equal("by email", who(r.users.FindByEmail(ctx, "ALICE@EXAMPLE.COM")), aliceID+" ALICE ALICE@EXAMPLE.COM")
				_, err := r.users.FindByName(ctx, "alice")
				e.Is("names compare exactly", err, abstractions.ErrNotFound)
				_, err = r.users.FindByID(ctx, bobID)
				e.Is("missing id", err, abstractions.ErrNotFound)

				err = r.users.Create(ctx, &identity.User{UserName: "ALICE"})
				e.Is("taken name", err, identity.ErrDuplicateUserName)
				err = r.users.Create(ctx, &identity.User{UserName: "alice2", Email: "alice@example.COM"})
				e.Is("taken email", err, identity.ErrDuplicateEmail)
				err = r.users.Create(ctx, &identity.User{UserId: aliceID, UserName: "other"})
				e.Is("taken id", err, abstractions.ErrDuplicateKey)
				err = r.users.Create(ctx, &identity.User{UserId: "a/b", UserName: "slash"})
				e.Is("id the service refuses", err, abstractions.ErrInvalidKey)
				r.bob(ctx, e)
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/users-update-and-stamps", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				r.bob(ctx, e)
				first, err := r.users.FindByID(ctx, aliceID)
				e.OK("read", err)
				second := *first
				first.UserName, first.NormalizedUserName, first.PhoneNumber = "alicia", "", "+1 555 0100"
				e.OK("update", r.users.Update(ctx, first))
				e.Equal("new stamp", first.ConcurrencyStamp != second.ConcurrencyStamp, true)
				second.PhoneNumber = "+1 555 0199"
				e.Is("stale stamp", r.users.Update(ctx, &second), identity.ErrConcurrencyFailure)
				_, err = r.users.FindByName(ctx, "ALICE")
				e.Is("old name gone", err, abstractions.ErrNotFound)
				e.Equal("new name", who(r.users.FindByName(ctx, "ALICIA")), aliceID+" ALICIA ALICE@EXAMPLE.COM")

				b, err := r.users.FindByID(ctx, bobID)
				e.OK("read bob", err)
				b.Email, b.NormalizedEmail, b.PhoneNumber = "alice@example.com", "", "+44"
				e.Is("email taken", r.users.Update(ctx, b), identity.ErrDuplicateEmail)
				e.Equal("bob unchanged", who(r.users.FindByEmail(ctx, "BOB@EXAMPLE.COM")), bobID+" BOB BOB@EXAMPLE.COM")

				hash, err := r.hasher.Hash("correct horse")
				e.OK("hash", err)
				u, err := r.users.SetPasswordHash(ctx, aliceID, hash)
				e.OK("set password", err)
				stamp := u.SecurityStamp
				e.Equal("password verifies", r.hasher.Verify(u.PasswordHash, "correct horse").String(), "VerificationSuccess")
				_, err = r.users.SetEmailConfirmed(ctx, aliceID, true)
				e.OK("confirm email", err)
				_, err = r.users.SetPhoneNumberConfirmed(ctx, aliceID, true)
				e.OK("confirm phone", err)
				_, err = r.users.SetTwoFactorEnabled(ctx, aliceID, true)
				e.OK("two factor", err)
				_, err = r.users.SetLockoutEnd(ctx, aliceID, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
				e.OK("lockout end", err)
				u, err = r.users.UpdateSecurityStamp(ctx, aliceID)
				e.OK("new security stamp", err)
				e.Equal("stamp changed", u.SecurityStamp != stamp, true)
				e.Equal("locked out", u.IsLockedOut(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), true)
				_, err = r.users.SetPhoneNumber(ctx, "nobody", "+1")
				e.Is("missing user", err, abstractions.ErrNotFound)
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/failed-sign-ins-concurrent", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				var wg sync.WaitGroup
				var failed atomic.Int32
				for range 16 {
					wg.Go(func() {
						if _, err := r.users.IncrementAccessFailedCount(ctx, aliceID); err != nil {
							failed.Add(1)
							e.Errorf("increment: %v", err)
						}
					})
				}
				wg.Wait()
				e.Equal("calls failed", failed.Load(), int32(0))
				u, err := r.users.FindByID(ctx, aliceID)
				e.OK("read", err)
				e.Equal("failed count", u.AccessFailedCount, int32(16))
				u, err = r.users.ResetAccessFailedCount(ctx, aliceID)
				e.OK("reset", err)
				e.Equal("after reset", u.AccessFailedCount, int32(0))
				r.dump(ctx, e)
			},
		},
		{
			// Lockout is the application's: docs/identity.md's recipe counts each failure and
			// starts the lockout at the limit in one Modify. Of 12 concurrent failures with a
			// limit of 5, exactly 5 are counted, the fifth starts the lockout, and the other 7
			// find the user locked out and write nothing.
			Name: "identity/lockout-concurrent", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				const maxFailed, lockoutFor = 5, 5 * time.Minute
				at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
				errLockedOut := errors.New("locked out")
				var wg sync.WaitGroup
				var counted, refused, failed atomic.Int32
				for range 12 {
					wg.Go(func() {
						_, err := r.users.Modify(ctx, aliceID, func(u *identity.User) error {
							if u.IsLockedOut(at) {
								return errLockedOut
							}
							u.AccessFailedCount++
							if u.LockoutEnabled && u.AccessFailedCount >= maxFailed {
								u.LockoutEnd, u.AccessFailedCount = at.Add(lockoutFor), 0
							}
							return nil
						})
						switch {
						case err == nil:
							counted.Add(1)
						case errors.Is(err, errLockedOut):
							refused.Add(1)
						default:
							failed.Add(1)
							e.Errorf("failed sign-in: %v", err)
						}
					})
				}
				wg.Wait()
				e.Equal("counted, refused, failed", fmt.Sprint(counted.Load(), refused.Load(), failed.Load()), "5 7 0")
				u, err := r.users.FindByID(ctx, aliceID)
				e.OK("read", err)
				e.Equal("locked out until", u.LockoutEnd, at.Add(lockoutFor))
				e.Equal("count after the lockout", u.AccessFailedCount, int32(0))
				e.Equal("locked out at the time", u.IsLockedOut(at), true)
				e.Equal("not after its end", u.IsLockedOut(at.Add(lockoutFor)), false)
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/logins", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				r.bob(ctx, e)
				google := identity.UserLoginInfo{LoginProvider: "Google", ProviderKey: "1098/7654#321?", ProviderDisplayName: "Google"}
				e.OK("add", r.users.AddLogin(ctx, aliceID, google))
				e.OK("add again", r.users.AddLogin(ctx, aliceID, google))
				e.Equal("by login", who(r.users.FindByLogin(ctx, "GOOGLE", google.ProviderKey)), aliceID+" ALICE ALICE@EXAMPLE.COM")
				_, err := r.users.FindByLogin(ctx, "Google", "other")
				e.Is("unknown login", err, abstractions.ErrNotFound)
				e.Is("another user", r.users.AddLogin(ctx, bobID, google), identity.ErrLoginTaken)
				logins, err := r.users.Logins(ctx, aliceID)
				e.OK("logins", err)
				e.Observe("alice's logins", logins)
				e.Is("missing user", r.users.AddLogin(ctx, "nobody", google), abstractions.ErrNotFound)

				// Two users race for one login: exactly one gets it.
				gh := identity.UserLoginInfo{LoginProvider: "GitHub", ProviderKey: "octocat"}
				errs := make([]error, 2)
				var wg sync.WaitGroup
				for i, id := range []string{aliceID, bobID} {
					wg.Go(func() { errs[i] = r.users.AddLogin(ctx, id, gh) })
				}
				wg.Wait()
				e.Equal("exactly one won", (errs[0] == nil) != (errs[1] == nil), true)
				winner, lost := aliceID, errs[1]
				if errs[0] != nil {
					winner, lost = bobID, errs[0]
				}
				e.Equal("the loser was told", errors.Is(lost, identity.ErrLoginTaken), true)
				owner, err := r.users.FindByLogin(ctx, "GitHub", "octocat")
				e.Equal("the winner owns it", err == nil && owner.UserId == winner, true)
				// Leave the same rows on both backends, whoever won.
				e.OK("winner removes it", r.users.RemoveLogin(ctx, winner, "GitHub", "octocat"))
				e.OK("remove google", r.users.RemoveLogin(ctx, aliceID, "Google", google.ProviderKey))
				e.OK("remove a login bob does not have", r.users.RemoveLogin(ctx, bobID, "Google", google.ProviderKey))
				_, err = r.users.FindByLogin(ctx, "Google", google.ProviderKey)
				e.Is("removed", err, abstractions.ErrNotFound)
				e.OK("bob takes it now", r.users.AddLogin(ctx, bobID, google))
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/claims", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				r.bob(ctx, e)
				name := identity.Claim{Type: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", Value: "Alice / #1?"}
				scope := identity.Claim{Type: "scope", Value: "orders.read"}
				e.OK("add", r.users.AddClaims(ctx, aliceID, name, scope))
				e.OK("add again", r.users.AddClaims(ctx, aliceID, scope))
				e.OK("bob", r.users.AddClaims(ctx, bobID, scope))
				claims, err := r.users.Claims(ctx, aliceID)
				e.OK("claims", err)
				e.Observe("alice's claims", claims)
				e.Equal("users for scope", whoAll(r.users.UsersForClaim(ctx, scope)), fmt.Sprint([]string{aliceID, bobID}))
				e.OK("replace", r.users.ReplaceClaim(ctx, aliceID, scope, identity.Claim{Type: "scope", Value: "orders.write"}))
				e.OK("replace one she lacks", r.users.ReplaceClaim(ctx, aliceID, scope, identity.Claim{Type: "x", Value: "y"}))
				e.Equal("users for scope after", whoAll(r.users.UsersForClaim(ctx, scope)), fmt.Sprint([]string{bobID}))
				e.OK("remove", r.users.RemoveClaims(ctx, aliceID, name))
				claims, err = r.users.Claims(ctx, aliceID)
				e.OK("claims after", err)
				e.Observe("alice's claims after", claims)
				e.Is("missing user", r.users.AddClaims(ctx, "nobody", scope), abstractions.ErrNotFound)
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/roles", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				r.bob(ctx, e)
				e.Is("add to a missing role", r.users.AddToRole(ctx, aliceID, "ADMIN"), identity.ErrRoleNotFound)
				in, err := r.users.IsInRole(ctx, aliceID, "ADMIN")
				e.Equal("in a missing role", fmt.Sprint(in, " ", describeError(err)), "false ok")
				e.OK("remove from a missing role", r.users.RemoveFromRole(ctx, aliceID, "ADMIN"))
				e.Equal("members of a missing role", whoAll(r.users.UsersInRole(ctx, "ADMIN")), "[]")

				role := &identity.Role{RoleId: adminID, Name: "Admin"}
				e.OK("create role", r.roles.Create(ctx, role))
				e.Is("taken role name", r.roles.Create(ctx, &identity.Role{Name: "admin"}), identity.ErrDuplicateRoleName)
				e.OK("add alice", r.users.AddToRole(ctx, aliceID, "ADMIN"))
				e.OK("add alice again", r.users.AddToRole(ctx, aliceID, "ADMIN"))
				e.OK("add bob", r.users.AddToRole(ctx, bobID, "ADMIN"))
				names, err := r.users.Roles(ctx, aliceID)
				e.OK("roles", err)
				e.Observe("alice's roles", names)
				e.Equal("members", whoAll(r.users.UsersInRole(ctx, "ADMIN")), fmt.Sprint([]string{aliceID, bobID}))
				e.OK("remove bob", r.users.RemoveFromRole(ctx, bobID, "ADMIN"))
				in, err = r.users.IsInRole(ctx, bobID, "ADMIN")
				e.Equal("bob in role", fmt.Sprint(in, " ", describeError(err)), "false ok")

				e.OK("role claim", r.roles.AddClaim(ctx, adminID, identity.Claim{Type: "permission", Value: "users/delete"}))
				e.OK("role claim 2", r.roles.AddClaim(ctx, adminID, identity.Claim{Type: "permission", Value: "users/create"}))
				e.OK("remove role claim", r.roles.RemoveClaim(ctx, adminID, identity.Claim{Type: "permission", Value: "users/create"}))
				rc, err := r.roles.Claims(ctx, adminID)
				e.OK("role claims", err)
				e.Observe("role claims", rc)

				stale := *role
				role.Name, role.NormalizedName = "Administrators", ""
				e.OK("rename role", r.roles.Update(ctx, role))
				stale.Name = "Root"
				e.Is("stale role stamp", r.roles.Update(ctx, &stale), identity.ErrConcurrencyFailure)
				got, err := r.roles.FindByName(ctx, "ADMINISTRATORS")
				e.Equal("by new name", err == nil && got.RoleId == adminID, true)
				in, err = r.users.IsInRole(ctx, aliceID, "ADMINISTRATORS")
				e.Equal("alice after the rename", fmt.Sprint(in, " ", describeError(err)), "true ok")
				r.dump(ctx, e)

				e.OK("delete role", r.roles.Delete(ctx, adminID))
				names, err = r.users.Roles(ctx, aliceID)
				e.OK("roles after delete", err)
				e.Observe("alice's roles after the delete", names)
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/tokens-and-recovery-codes", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				e.OK("set token", r.users.SetToken(ctx, aliceID, "Google", "access_token", "ya29.a0/x#y?"))
				v, err := r.users.Token(ctx, aliceID, "Google", "access_token")
				e.Equal("token", fmt.Sprint(v, " ", describeError(err)), "ya29.a0/x#y? ok")
				_, err = r.users.Token(ctx, aliceID, "google", "ACCESS_TOKEN")
				e.Is("provider and name compare exactly", err, abstractions.ErrNotFound)
				e.OK("remove token", r.users.RemoveToken(ctx, aliceID, "Google", "access_token"))
				_, err = r.users.Token(ctx, aliceID, "Google", "access_token")
				e.Is("removed token", err, abstractions.ErrNotFound)
				e.OK("authenticator key", r.users.SetAuthenticatorKey(ctx, aliceID, "JBSWY3DPEHPK3PXP"))
				key, err := r.users.AuthenticatorKey(ctx, aliceID)
				e.Equal("key", fmt.Sprint(key, " ", describeError(err)), "JBSWY3DPEHPK3PXP ok")

				codes := []string{"1111-aaaa", "2222-bbbb", "3333-cccc"}
				e.OK("codes", r.users.ReplaceRecoveryCodes(ctx, aliceID, codes))
				var wins, losses atomic.Int32
				var wg sync.WaitGroup
				for range 16 {
					wg.Go(func() {
						ok, err := r.users.RedeemRecoveryCode(ctx, aliceID, "2222-bbbb")
						switch {
						case err != nil:
							e.Errorf("redeem: %v", err)
						case ok:
							wins.Add(1)
						default:
							losses.Add(1)
						}
					})
				}
				wg.Wait()
				e.Equal("redeemed once", fmt.Sprint(wins.Load(), " ", losses.Load()), "1 15")
				ok, err := r.users.RedeemRecoveryCode(ctx, aliceID, "nope")
				e.Equal("unknown code", fmt.Sprint(ok, " ", describeError(err)), "false ok")
				n, err := r.users.CountRecoveryCodes(ctx, aliceID)
				e.Equal("left", fmt.Sprint(n, " ", describeError(err)), "2 ok")
				ok, err = r.users.RedeemRecoveryCode(ctx, bobID, "1111-aaaa")
				e.Equal("a user without codes", fmt.Sprint(ok, " ", describeError(err)), "false ok")
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/delete-user", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				r.bob(ctx, e)
				e.OK("role", r.roles.Create(ctx, &identity.Role{RoleId: adminID, Name: "Admin"}))
				e.OK("membership", r.users.AddToRole(ctx, aliceID, "ADMIN"))
				e.OK("claim", r.users.AddClaims(ctx, aliceID, identity.Claim{Type: "scope", Value: "a"}))
				e.OK("login", r.users.AddLogin(ctx, aliceID, identity.UserLoginInfo{LoginProvider: "Google", ProviderKey: "g1"}))
				e.OK("token", r.users.ReplaceRecoveryCodes(ctx, aliceID, []string{"x"}))
				e.OK("delete", r.users.Delete(ctx, aliceID))
				e.OK("delete again", r.users.Delete(ctx, aliceID))
				_, err := r.users.FindByName(ctx, "ALICE")
				e.Is("gone by name", err, abstractions.ErrNotFound)
				e.Equal("members", whoAll(r.users.UsersInRole(ctx, "ADMIN")), "[]")
				e.OK("bob takes her login", r.users.AddLogin(ctx, bobID, identity.UserLoginInfo{LoginProvider: "Google", ProviderKey: "g1"}))
				r.dump(ctx, e)
			},
		},
		{
			Name: "identity/stale-index-rows", NoTable: true,
			Run: func(ctx context.Context, e *Env) {
				r := identityStores(e)
				r.alice(ctx, e)
				e.OK("login", r.users.AddLogin(ctx, aliceID, identity.UserLoginInfo{LoginProvider: "Google", ProviderKey: "g1"}))
				// A delete that stopped after the user row: the index and login rows are stale.
				e.Deleted("delete the user row only", true)(r.t.Users.Delete(ctx, "User|"+aliceID, ""))
				_, err := r.users.FindByEmail(ctx, "ALICE@EXAMPLE.COM")
				e.Is("a stale index row finds nobody", err, abstractions.ErrNotFound)
				_, err = r.users.FindByLogin(ctx, "Google", "g1")
				e.Is("a stale login finds nobody", err, abstractions.ErrNotFound)
				u := &identity.User{UserId: bobID, UserName: "alice", Email: "alice@example.com"}
				e.OK("a new user takes the name and email", r.users.Create(ctx, u))
				e.OK("and the login", r.users.AddLogin(ctx, bobID, identity.UserLoginInfo{LoginProvider: "Google", ProviderKey: "g1"}))
				e.Equal("by name", who(r.users.FindByName(ctx, "ALICE")), bobID+" ALICE ALICE@EXAMPLE.COM")
				e.Equal("by login", who(r.users.FindByLogin(ctx, "Google", "g1")), bobID+" ALICE ALICE@EXAMPLE.COM")
				r.dump(ctx, e)
			},
		},
	}
}
