package identity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
)

// The names ASP.NET Core Identity's stores use for the tokens they keep for themselves.
const (
	// InternalLoginProvider is the login provider of the authenticator key and the recovery
	// codes.
	InternalLoginProvider = "[AspNetUserStore]"
	// AuthenticatorKeyTokenName names the token holding the authenticator (TOTP) key.
	AuthenticatorKeyTokenName = "AuthenticatorKey"
	// RecoveryCodeTokenName names the token holding the recovery codes, joined by ";".
	RecoveryCodeTokenName = "RecoveryCodes"
)

// tokenKey checks a token's address and returns its id: the user's key part and the hash
// of the provider and the name joined by "-", as the .NET package keys tokens.
func tokenKey(userID, loginProvider, name string) (string, error) {
	k, err := userKey(userID)
	if err != nil {
		return "", err
	}
	for _, part := range []struct{ what, v string }{{"login provider", loginProvider}, {"name", name}} {
		if part.v == "" || !utf8.ValidString(part.v) {
			return "", fmt.Errorf("%w: the token's %s is empty or not valid UTF-8", abstractions.ErrInvalidArgument, part.what)
		}
	}
	return tokenID(k, loginProvider, name), nil
}

// SetToken stores a named token of the user for a login provider, replacing one of the same
// name (token rows are upserted). Provider and name may hold any text but must not be
// empty; they are compared exactly (the key holds their hash). A missing user fails with an
// error matching abstractions.ErrNotFound.
func (s *UserStore) SetToken(ctx context.Context, userID, loginProvider, name, value string) error {
	id, err := tokenKey(userID, loginProvider, name)
	if err != nil {
		return err
	}
	u, err := s.FindByID(ctx, userID)
	if err != nil {
		return err
	}
	return s.t.UserTokens.Upsert(ctx, &UserToken{Entity: abstractions.Entity{ID: id}, UserId: u.UserId,
		LoginProvider: loginProvider, Name: name, Value: value})
}

// RemoveToken deletes a named token of the user; deleting a missing one is not an error.
func (s *UserStore) RemoveToken(ctx context.Context, userID, loginProvider, name string) error {
	id, err := tokenKey(userID, loginProvider, name)
	if err != nil {
		return err
	}
	_, err = s.t.UserTokens.Delete(ctx, id, "")
	return err
}

// Token returns the value of a named token of the user, or an error matching
// abstractions.ErrNotFound.
func (s *UserStore) Token(ctx context.Context, userID, loginProvider, name string) (string, error) {
	id, err := tokenKey(userID, loginProvider, name)
	if err != nil {
		return "", err
	}
	t, err := s.t.UserTokens.One(ctx, id)
	if err != nil {
		return "", err
	}
	return t.Value, nil
}

// SetAuthenticatorKey stores the user's authenticator key (the shared secret of a TOTP app)
// and gives the user a new security stamp, as resetting the key does in ASP.NET Core
// Identity.
func (s *UserStore) SetAuthenticatorKey(ctx context.Context, userID, key string) error {
	if err := s.SetToken(ctx, userID, InternalLoginProvider, AuthenticatorKeyTokenName, key); err != nil {
		return err
	}
	_, err := s.UpdateSecurityStamp(ctx, userID)
	return err
}

// AuthenticatorKey returns the user's authenticator key, or an error matching
// abstractions.ErrNotFound when none is set.
func (s *UserStore) AuthenticatorKey(ctx context.Context, userID string) (string, error) {
	return s.Token(ctx, userID, InternalLoginProvider, AuthenticatorKeyTokenName)
}

// ReplaceRecoveryCodes replaces the user's recovery codes, stored as one token joined by
// ";" as ASP.NET Core Identity stores them. A code that is empty or holds ";" is refused
// with abstractions.ErrInvalidArgument.
func (s *UserStore) ReplaceRecoveryCodes(ctx context.Context, userID string, codes []string) error {
	for _, c := range codes {
		if c == "" || strings.Contains(c, ";") {
			return fmt.Errorf("%w: a recovery code is empty or holds \";\", which separates the stored codes", abstractions.ErrInvalidArgument)
		}
	}
	return s.SetToken(ctx, userID, InternalLoginProvider, RecoveryCodeTokenName, strings.Join(codes, ";"))
}

// RedeemRecoveryCode uses up one of the user's recovery codes (compared exactly) and reports
// whether it was valid. The token is rewritten on condition of the version read (its ETag),
// so however many calls redeem one code at once, exactly one of them gets true. A user
// without recovery codes, or a missing user, gets false. When every attempt of
// Options.Retry lost its race to other redemptions of other codes, the error matches
// abstractions.ErrConcurrencyConflict.
func (s *UserStore) RedeemRecoveryCode(ctx context.Context, userID, code string) (bool, error) {
	id, err := tokenKey(userID, InternalLoginProvider, RecoveryCodeTokenName)
	if err != nil {
		return false, err
	}
	if code == "" {
		return false, nil
	}
	out, err := abstractions.TryTransition(ctx, s.t.UserTokens, id,
		func(t *UserToken) bool { return slices.Contains(strings.Split(t.Value, ";"), code) },
		func(t *UserToken) error {
			kept := slices.DeleteFunc(strings.Split(t.Value, ";"), func(c string) bool { return c == code })
			t.Value = strings.Join(kept, ";")
			return nil
		}, s.retry)
	if err != nil {
		return false, err
	}
	switch out.Status {
	case abstractions.OutcomeUpdated:
		return true, nil
	case abstractions.OutcomeConflicted:
		pk, rk := abstractions.SplitID(id)
		return false, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: "redeem recovery code",
			Table: s.t.UserTokens.Table(), PartitionKey: pk, RowKey: rk,
			Message: fmt.Sprintf("the recovery codes changed during each of %d attempts; try again", out.Attempts)}
	}
	return false, nil
}

// CountRecoveryCodes returns how many recovery codes the user has left (0 for none, and for
// a missing user).
func (s *UserStore) CountRecoveryCodes(ctx context.Context, userID string) (int, error) {
	v, err := s.Token(ctx, userID, InternalLoginProvider, RecoveryCodeTokenName)
	if err != nil {
		if isNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	if v == "" {
		return 0, nil
	}
	return strings.Count(v, ";") + 1, nil
}
