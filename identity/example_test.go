package identity_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/identity"
	"github.com/unified-data/gotables/identity/identitytables"
	"github.com/unified-data/gotables/inmemory"
)

// maxFailed is how many failed sign-ins in a row lock a user out, and lockoutFor for how
// long (ASP.NET Core Identity's defaults). Lockout is the application's policy: the store
// keeps the count and the lockout's end.
const (
	maxFailed  = 5
	lockoutFor = 5 * time.Minute
)

// errLockedOut ends a failed sign-in's change of a user that is locked out already.
var errLockedOut = errors.New("locked out")

// signIn is a net/http handler that checks a user name and password posted as a form. It
// answers 200 and records the success, 401 for a wrong name or password (counting the
// failure, and locking the user out after maxFailed of them), and 423 while the user is
// locked out. A hash in an older format is replaced by one in the current format.
func signIn(users *identity.UserStore, hasher *identity.PasswordHasher, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		u, err := users.FindByName(ctx, identity.NormalizeName(r.PostFormValue("username")))
		if errors.Is(err, abstractions.ErrNotFound) {
			http.Error(w, "wrong user name or password", http.StatusUnauthorized)
			return
		}
		if err != nil {
			http.Error(w, "try again later", http.StatusServiceUnavailable)
			return
		}
		if u.IsLockedOut(now()) {
			http.Error(w, "locked out; try again later", http.StatusLocked)
			return
		}
		password := r.PostFormValue("password")
		switch hasher.Verify(u.PasswordHash, password) {
		case identity.VerificationFailed:
			// Count the failure and, at the limit, start the lockout, in one conditional write
			// that is made again on a fresh read after a lost race: concurrent failures are
			// all counted and exactly one starts the lockout.
			at := now()
			_, err := users.Modify(ctx, u.UserId, func(u *identity.User) error {
				if u.IsLockedOut(at) {
					return errLockedOut // a concurrent failure locked the user out
				}
				u.AccessFailedCount++
				if u.LockoutEnabled && u.AccessFailedCount >= maxFailed {
					u.LockoutEnd, u.AccessFailedCount = at.Add(lockoutFor), 0
				}
				return nil
			})
			switch {
			case errors.Is(err, errLockedOut):
				http.Error(w, "locked out; try again later", http.StatusLocked)
			case err != nil:
				http.Error(w, "try again later", http.StatusServiceUnavailable)
			default:
				http.Error(w, "wrong user name or password", http.StatusUnauthorized)
			}
			return
		case identity.VerificationSuccessRehashNeeded:
			if hash, err := hasher.Hash(password); err == nil {
				_, _ = users.SetPasswordHash(ctx, u.UserId, hash) // best effort: the next sign-in tries again
			}
		}
		if u.AccessFailedCount > 0 {
			if _, err := users.ResetAccessFailedCount(ctx, u.UserId); err != nil {
				http.Error(w, "try again later", http.StatusServiceUnavailable)
				return
			}
		}
		// A real handler issues a session here that carries u.SecurityStamp, and rejects
		// the session once the stored stamp differs.
		fmt.Fprintf(w, "welcome, %s", u.UserName)
	})
}

// A sign-in endpoint over the user store and the password hasher, on the in-memory backend.
// With an account from tables.NewAccount instead, the same handler runs on Azure Table
// Storage, sharing its users with an ASP.NET Core host.
func Example_signInHandler() {
	ctx := context.Background()
	acct := inmemory.NewAccount(nil)
	users := must(identity.NewUserStore(must(identitytables.For(acct, nil)), nil))
	hasher := must(identity.NewPasswordHasher(nil))

	// Alice's password hash was made by ASP.NET Core Identity (SHA-512, 100,000 iterations).
	alice := &identity.User{UserName: "alice", Email: "alice@example.com", LockoutEnabled: true,
		PasswordHash: "AQAAAAIAAYagAAAAEAABAgMEBQYHCAkKCwwNDg/Q8A0WMKbtHQJQ2DHCdoEeeFBrgNlldq6vH4qX/CGqGQ=="}
	if err := users.Create(ctx, alice); err != nil {
		log.Fatal(err)
	}

	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	h := signIn(users, hasher, now)
	post := func(user, password string) {
		form := url.Values{"username": {user}, "password": {password}}
		req := httptest.NewRequest(http.MethodPost, "/signin", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	post("mallory", "guess")
	post("Alice", "my password")
	for range maxFailed {
		post("alice", "guess")
	}
	post("alice", "my password")

	// Output:
	// 401 wrong user name or password
	// 200 welcome, alice
	// 401 wrong user name or password
	// 401 wrong user name or password
	// 401 wrong user name or password
	// 401 wrong user name or password
	// 401 wrong user name or password
	// 423 locked out; try again later
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
