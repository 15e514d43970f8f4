package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

// loginKeys checks a login's provider and key and returns the provider's key part.
func loginKeys(provider, providerKey string) (string, error) {
	p, err := keyPart("login provider", provider)
	if err != nil {
		return "", err
	}
	if providerKey == "" {
		return "", fmt.Errorf("%w: the provider key of the %s login is empty", abstractions.ErrInvalidArgument, provider)
	}
	return p, nil
}

// AddLogin gives the user an external login. The login's row (keyed by provider and
// hashed provider key, holding the owner in UserId) is created, never upserted: when
// another user owns the login, the call fails with ErrLoginTaken and changes nothing, so an
// external identity can never move silently from one account to another. Adding a login
// the user already has succeeds. A login whose owner no longer exists (a user deleted
// part-way) is taken over. A missing user fails with an error matching
// abstractions.ErrNotFound.
func (s *UserStore) AddLogin(ctx context.Context, userID string, login UserLoginInfo) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	p, err := loginKeys(login.LoginProvider, login.ProviderKey)
	if err != nil {
		return err
	}
	u, err := s.FindByID(ctx, userID)
	if err != nil {
		return err
	}
	id := loginID(p, login.ProviderKey)
	return s.createOwner(ctx, k, id, &UserLogin{Entity: abstractions.Entity{ID: id}, LoginProvider: login.LoginProvider,
		ProviderKey: login.ProviderKey, ProviderDisplayName: login.ProviderDisplayName, UserId: u.UserId})
}

// createOwner creates the row of a login for user k.
func (s *UserStore) createOwner(ctx context.Context, k, id string, want *UserLogin) error {
	var lastErr error
	for attempt := 0; attempt < s.attempts; attempt++ {
		v := *want
		err := s.t.UserLogins.Create(ctx, &v)
		if err == nil {
			return nil
		}
		if !errors.Is(err, abstractions.ErrDuplicateKey) {
			return err
		}
		lastErr = err
		cur, err := s.t.UserLogins.One(ctx, id)
		if errors.Is(err, abstractions.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		owner, kerr := userKey(cur.UserId)
		if kerr == nil && sameKey(owner, k) && cur.ProviderKey == want.ProviderKey {
			return nil // the user's already
		}
		live := false
		if kerr == nil {
			switch err := s.exists(ctx, owner); {
			case err == nil:
				live = true
			case !errors.Is(err, abstractions.ErrNotFound):
				return err
			}
		}
		if live {
			what := "the " + want.LoginProvider + " login with this provider key"
			if cur.ProviderKey != want.ProviderKey {
				what = "another " + want.LoginProvider + " login whose key has the same digest"
			}
			return fmt.Errorf("%w: %s belongs to user %q; sign in as that user, or remove it there first: %w",
				ErrLoginTaken, what, cur.UserId, lastErr)
		}
		// The owner is gone: take the row over, on condition of the version read.
		v = *want
		v.ETag, v.CreatedAt = cur.ETag, cur.CreatedAt
		err = s.t.UserLogins.Update(ctx, &v, abstractions.Strict)
		if err == nil {
			return nil
		}
		if !errors.Is(err, abstractions.ErrConcurrencyConflict) && !errors.Is(err, abstractions.ErrNotFound) {
			return err
		}
		lastErr = err
	}
	return fmt.Errorf("%w: the login's row kept changing during %d attempts; try again: %w",
		abstractions.ErrConcurrencyConflict, s.attempts, lastErr)
}

// RemoveLogin removes an external login from the user and gives the user a new security
// stamp. From then on the login signs nobody in; a login the user does not own is left
// alone. Removing a login the user does not have is not an error.
func (s *UserStore) RemoveLogin(ctx context.Context, userID, loginProvider, providerKey string) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	if _, err := loginKeys(loginProvider, providerKey); err != nil {
		return err
	}
	if err := s.removeLogin(ctx, k, loginProvider, providerKey); err != nil {
		return err
	}
	_, err = s.UpdateSecurityStamp(ctx, userID)
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil
	}
	return err
}

// removeLogin deletes the row of a login when user k owns it.
func (s *UserStore) removeLogin(ctx context.Context, k, loginProvider, providerKey string) error {
	p, err := loginKeys(loginProvider, providerKey)
	if err != nil {
		return nil // no row can have this key
	}
	id := loginID(p, providerKey)
	cur, err := s.t.UserLogins.One(ctx, id)
	switch {
	case errors.Is(err, abstractions.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	if owner, err := userKey(cur.UserId); err != nil || !sameKey(owner, k) || cur.ProviderKey != providerKey {
		return nil
	}
	_, err = s.t.UserLogins.Delete(ctx, id, "")
	return err
}

var loginUserID = abstractions.Field(func(l *UserLogin) *string { return &l.UserId })

// loginRows returns the rows of the logins user k (whose UserId column is userID) owns,
// with a query of the login table filtered on UserId, as the .NET package lists them.
func (s *UserStore) loginRows(ctx context.Context, k, userID string) ([]*UserLogin, error) {
	rows, err := s.t.UserLogins.Query(ctx, abstractions.Query[UserLogin]{Where: loginUserID.Eq(userID)})
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, l := range rows {
		p, err := loginKeys(l.LoginProvider, l.ProviderKey)
		if err != nil {
			continue
		}
		if owner, err := userKey(l.UserId); err == nil && sameKey(owner, k) && sameKey(l.ID, loginID(p, l.ProviderKey)) {
			out = append(out, l)
		}
	}
	return out, nil
}

// Logins returns the user's external logins, in the order of their keys (none for a missing
// user), with a query of the login table filtered on the user's id: a login's key names its
// provider, not its user.
func (s *UserStore) Logins(ctx context.Context, userID string) ([]UserLoginInfo, error) {
	k, err := userKey(userID)
	if err != nil {
		return nil, err
	}
	u, err := s.FindByID(ctx, userID)
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := s.loginRows(ctx, k, u.UserId)
	if err != nil {
		return nil, err
	}
	var out []UserLoginInfo
	for _, l := range rows {
		out = append(out, UserLoginInfo{LoginProvider: l.LoginProvider, ProviderKey: l.ProviderKey, ProviderDisplayName: l.ProviderDisplayName})
	}
	return out, nil
}

// FindByLogin returns the user that owns an external login, with a point read of the
// login's row and one of the user row, or an error matching abstractions.ErrNotFound.
func (s *UserStore) FindByLogin(ctx context.Context, loginProvider, providerKey string) (*User, error) {
	p, err := loginKeys(loginProvider, providerKey)
	if err != nil {
		return nil, err
	}
	id := loginID(p, providerKey)
	cur, err := s.t.UserLogins.One(ctx, id)
	if err != nil {
		return nil, err
	}
	if cur.ProviderKey != providerKey {
		pk, rk := abstractions.SplitID(id)
		return nil, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "find by login", Table: s.t.UserLogins.Table(),
			PartitionKey: pk, RowKey: rk, Message: "no user has this login (the row holds another key with the same digest)"}
	}
	return s.FindByID(ctx, cur.UserId)
}
