package identity

import (
	"context"
	"time"
)

// The calls below change one field of a stored user at once, through Modify: on condition of
// the version read, retried after a lost race, with a new ConcurrencyStamp, returning the
// user as stored. The ones that change a credential (the password, the phone number,
// two-factor sign-in, and, in logins.go and tokens.go, removing a login or resetting the
// authenticator key) also give the user a new SecurityStamp, as ASP.NET Core Identity's
// UserManager does, so sessions issued before the change stop validating.

// SetPasswordHash stores a password hash (from PasswordHasher.Hash; "" removes the
// password) and a new security stamp.
func (s *UserStore) SetPasswordHash(ctx context.Context, userID, passwordHash string) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.PasswordHash = passwordHash
		u.SecurityStamp = NewSecurityStamp()
		return nil
	})
}

// UpdateSecurityStamp gives the user a new security stamp: every session issued under the
// old one stops validating (sign the user out everywhere).
func (s *UserStore) UpdateSecurityStamp(ctx context.Context, userID string) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.SecurityStamp = NewSecurityStamp()
		return nil
	})
}

// SetEmailConfirmed records whether the user confirmed the email.
func (s *UserStore) SetEmailConfirmed(ctx context.Context, userID string, confirmed bool) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.EmailConfirmed = confirmed
		return nil
	})
}

// SetPhoneNumber stores a phone number, not confirmed, and a new security stamp.
func (s *UserStore) SetPhoneNumber(ctx context.Context, userID, phoneNumber string) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.PhoneNumber, u.PhoneNumberConfirmed = phoneNumber, false
		u.SecurityStamp = NewSecurityStamp()
		return nil
	})
}

// SetPhoneNumberConfirmed records whether the user confirmed the phone number.
func (s *UserStore) SetPhoneNumberConfirmed(ctx context.Context, userID string, confirmed bool) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.PhoneNumberConfirmed = confirmed
		return nil
	})
}

// SetTwoFactorEnabled turns two-factor sign-in on or off, with a new security stamp.
func (s *UserStore) SetTwoFactorEnabled(ctx context.Context, userID string, enabled bool) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.TwoFactorEnabled = enabled
		u.SecurityStamp = NewSecurityStamp()
		return nil
	})
}

// SetLockoutEnabled records whether failed sign-ins can lock the user out.
func (s *UserStore) SetLockoutEnabled(ctx context.Context, userID string, enabled bool) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.LockoutEnabled = enabled
		return nil
	})
}

// SetLockoutEnd locks the user out until end (stored in UTC, to the service's 100 ns); the
// zero time, or a time in the past, ends a lockout.
func (s *UserStore) SetLockoutEnd(ctx context.Context, userID string, end time.Time) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.LockoutEnd = end
		return nil
	})
}

// IncrementAccessFailedCount adds one to the user's failed sign-in count and returns the new
// count. Concurrent calls never lose an increment: each is a write on condition of the
// version read, retried after a lost race (ErrConcurrencyConflict only when every attempt
// of Options.Retry lost).
func (s *UserStore) IncrementAccessFailedCount(ctx context.Context, userID string) (int, error) {
	u, err := s.Modify(ctx, userID, func(u *User) error {
		u.AccessFailedCount++
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(u.AccessFailedCount), nil
}

// ResetAccessFailedCount sets the user's failed sign-in count to zero (after a successful
// sign-in, or when a lockout starts).
func (s *UserStore) ResetAccessFailedCount(ctx context.Context, userID string) (*User, error) {
	return s.Modify(ctx, userID, func(u *User) error {
		u.AccessFailedCount = 0
		return nil
	})
}
