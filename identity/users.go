package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

// UserStore keeps users and what belongs to them (claims, roles, external logins, tokens)
// in the seven identity tables, through any backend's stores. It is safe for concurrent use.
//
// Reads return an error matching abstractions.ErrNotFound for a user that does not exist.
// Calls about a user's claims, logins, roles and tokens that write refuse a missing user with
// the same error; the reads of them return an empty result.
type UserStore struct {
	t        Tables
	retry    *abstractions.RetryOptions
	attempts int
	names    *index[User, *User]
	emails   *index[User, *User]
	rows     *stamped[User, *User]
	roles    *index[Role, *Role]
}

// NewUserStore returns the user store over t. It needs every table but RoleClaims (Roles to
// resolve role names). A nil store is refused with an error matching
// abstractions.ErrInvalidArgument, and so is a user store whose read cache is on
// (ErrUserCacheEnabled): user rows must be read from the table every time. A nil opts means
// the defaults.
func NewUserStore(t Tables, opts *Options) (*UserStore, error) {
	for _, m := range []struct {
		name string
		nil  bool
	}{{"Users", t.Users == nil}, {"Roles", t.Roles == nil}, {"UserRoles", t.UserRoles == nil}, {"UserClaims", t.UserClaims == nil},
		{"UserLogins", t.UserLogins == nil}, {"UserTokens", t.UserTokens == nil}} {
		if m.nil {
			return nil, missing(m.name)
		}
	}
	if err := checkUserCache(t.Users); err != nil {
		return nil, err
	}
	retry := opts.retry()
	attempts := retry.Attempts
	if attempts <= 0 {
		attempts = defaultAttempts
	}
	return &UserStore{t: t, retry: retry, attempts: attempts,
		names:  userIndex(t.Users, "user name", userNameIndexRow, ErrDuplicateUserName, attempts, func(u *User) *string { return &u.NormalizedUserName }),
		emails: userIndex(t.Users, "email", emailIndexRow, ErrDuplicateEmail, attempts, func(u *User) *string { return &u.NormalizedEmail }),
		rows: &stamped[User, *User]{store: t.Users, what: "user", attempts: attempts,
			stamp: func(u *User) *string { return &u.ConcurrencyStamp }, assign: assignUser},
		roles: roleIndex(t.Roles, attempts),
	}, nil
}

func userIndex(s abstractions.Storage[User], what, row string, dup error, attempts int,
	field func(*User) *string) *index[User, *User] {
	f := abstractions.Field(field)
	return &index[User, *User]{store: s, what: what, owner: "user", row: row, dup: dup, attempts: attempts,
		value:   func(u *User) string { return *field(u) },
		ownerOf: func(u *User) string { return u.UserId },
		rowID:   userRowID,
		holders: func(ctx context.Context, value string) ([]*User, error) {
			return s.Query(ctx, abstractions.Query[User]{Partition: userPartition, Where: f.Eq(value)})
		},
		point: func(u *User, id, owner, value string) {
			*u = User{Entity: abstractions.Entity{ID: id, CreatedAt: u.CreatedAt, ETag: u.ETag}, UserId: owner}
			*field(u) = value
		}}
}

// assignUser copies what a caller may change of a user: everything but the entity base and
// the id.
func assignUser(dst, src *User) {
	base, id := dst.Entity, dst.UserId
	*dst = *src
	dst.Entity, dst.UserId = base, id
}

// userKey returns the key part of a user id.
func userKey(userID string) (string, error) { return idPart("user id", userID) }

// normalize fills the normalised name and email from the plain ones when they are empty.
func normalizeUser(u *User) {
	if u.NormalizedUserName == "" && u.UserName != "" {
		u.NormalizedUserName = NormalizeName(u.UserName)
	}
	if u.NormalizedEmail == "" && u.Email != "" {
		u.NormalizedEmail = NormalizeName(u.Email)
	}
}

// detached returns a context for clean-up after a failure: ctx's values without its
// cancellation, so an undo still runs when the caller's context ended.
func detached(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// Create stores a new user. An empty UserId is set to a new GUID, an empty
// ConcurrencyStamp to a new GUID and an empty SecurityStamp to a new stamp; an empty
// NormalizedUserName or NormalizedEmail is set from UserName or Email with NormalizeName. A
// normalised name or email another user holds fails with ErrDuplicateUserName or
// ErrDuplicateEmail and stores nothing; an id another user has fails with an error matching
// abstractions.ErrDuplicateKey. u is updated only on success.
func (s *UserStore) Create(ctx context.Context, u *User) error {
	if u == nil {
		return fmt.Errorf("%w: the user is nil", abstractions.ErrInvalidArgument)
	}
	v := *u
	if v.UserId == "" {
		v.UserId = newGUID()
	}
	k, err := userKey(v.UserId)
	if err != nil {
		return err
	}
	normalizeUser(&v)
	if v.ConcurrencyStamp == "" {
		v.ConcurrencyStamp = newGUID()
	}
	if v.SecurityStamp == "" {
		v.SecurityStamp = NewSecurityStamp()
	}
	v.ID, v.ETag = userRowID(k), ""
	if err := s.t.Users.Create(ctx, &v); err != nil {
		if errors.Is(err, abstractions.ErrDuplicateKey) {
			return fmt.Errorf("identity: a user with the id %q exists: %w", v.UserId, err)
		}
		return err
	}
	if err := s.names.claim(ctx, v.UserId, v.NormalizedUserName); err != nil {
		_, _ = s.t.Users.Delete(detached(ctx), v.ID, "")
		return err
	}
	if err := s.emails.claim(ctx, v.UserId, v.NormalizedEmail); err != nil {
		// The row goes first: a release keeps the claim of a value the row still holds.
		_, _ = s.t.Users.Delete(detached(ctx), v.ID, "")
		_ = s.names.release(detached(ctx), v.UserId, v.NormalizedUserName)
		return err
	}
	*u = v
	return nil
}

// Update replaces the stored user with u (every field but UserId and the entity base), when
// the stored ConcurrencyStamp is u's, and gives it a new ConcurrencyStamp. A stale stamp
// fails with ErrConcurrencyFailure (also when another write wins the race meanwhile): read
// the user again and reapply the change. A missing user fails with an error matching
// abstractions.ErrNotFound. A new normalised name or email that another user holds fails
// with ErrDuplicateUserName or ErrDuplicateEmail, and the update is undone. Update does not
// change the SecurityStamp on its own: set a new one (NewSecurityStamp) when the change
// concerns credentials. u is updated only on success.
func (s *UserStore) Update(ctx context.Context, u *User) error {
	if u == nil {
		return fmt.Errorf("%w: the user is nil", abstractions.ErrInvalidArgument)
	}
	k, err := userKey(u.UserId)
	if err != nil {
		return err
	}
	v := *u
	normalizeUser(&v)
	id := userRowID(k)
	old, stored, err := s.rows.replace(ctx, id, &v)
	if err != nil {
		return err
	}
	var moved []*index[User, *User]
	for _, x := range []*index[User, *User]{s.names, s.emails} {
		if x.value(old) == x.value(stored) {
			continue
		}
		if err := x.claim(ctx, stored.UserId, x.value(stored)); err != nil {
			// The row is put back first: a release keeps the claim of a value the row
			// still holds.
			s.rows.restore(detached(ctx), id, old, stored)
			for _, m := range moved {
				_ = m.release(detached(ctx), stored.UserId, m.value(stored))
			}
			return err
		}
		moved = append(moved, x)
	}
	for _, x := range moved {
		// A release that fails leaves a stale index row, which the next claim of the value
		// takes over.
		_ = x.release(ctx, old.UserId, x.value(old))
	}
	*u = *stored
	return nil
}

// Delete deletes the user and everything that belongs to it: its index rows, role
// memberships, claims, external logins and tokens. Deleting a missing user is not an
// error. The user row goes first, so a failure part-way leaves rows that no lookup returns
// (a stale login or name is taken over by the next claim); call Delete again to finish.
// The user's logins are found by a query of the login table filtered on UserId, as the
// .NET package finds them (a login row's key names the provider, not the user).
func (s *UserStore) Delete(ctx context.Context, userID string) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	u, err := s.t.Users.One(ctx, userRowID(k))
	if errors.Is(err, abstractions.ErrNotFound) {
		u = &User{UserId: userID}
	} else if err != nil {
		return err
	} else if _, err := s.t.Users.Delete(ctx, userRowID(k), ""); err != nil {
		return err
	}
	if err := s.names.release(ctx, u.UserId, u.NormalizedUserName); err != nil {
		return err
	}
	if err := s.emails.release(ctx, u.UserId, u.NormalizedEmail); err != nil {
		return err
	}
	if _, err := s.t.UserRoles.DeletePartition(ctx, k); err != nil {
		return err
	}
	if _, err := s.t.UserClaims.DeletePartition(ctx, k); err != nil {
		return err
	}
	logins, err := s.loginRows(ctx, k, u.UserId)
	if err != nil {
		return err
	}
	for _, l := range logins {
		if err := s.removeLogin(ctx, k, l.LoginProvider, l.ProviderKey); err != nil {
			return err
		}
	}
	_, err = s.t.UserTokens.DeletePartition(ctx, k)
	return err
}

// FindByID returns the user with the id, or an error matching abstractions.ErrNotFound.
func (s *UserStore) FindByID(ctx context.Context, userID string) (*User, error) {
	k, err := userKey(userID)
	if err != nil {
		return nil, err
	}
	return s.t.Users.One(ctx, userRowID(k))
}

// FindByName returns the user whose NormalizedUserName is normalizedUserName (compared
// exactly: normalise it with NormalizeName first), or an error matching
// abstractions.ErrNotFound. A user this store created costs one point read of its index row
// and one of the user row; a user the .NET package created (it writes no index row), or a
// name no user has, costs a query of the user partition filtered on the name besides.
func (s *UserStore) FindByName(ctx context.Context, normalizedUserName string) (*User, error) {
	return s.names.lookup(ctx, normalizedUserName)
}

// FindByEmail returns the user whose NormalizedEmail is normalizedEmail, as FindByName does
// for names.
func (s *UserStore) FindByEmail(ctx context.Context, normalizedEmail string) (*User, error) {
	return s.emails.lookup(ctx, normalizedEmail)
}

// Modify applies change to the stored user and writes it on condition of the version read,
// with a new ConcurrencyStamp, reading and applying again after a lost race (see
// abstractions.Mutate, and Options.Retry for the attempts). It returns the user as stored.
// change runs once per attempt on a fresh read and must compute its change from the user it
// is given; its error ends the call with nothing written. A change of UserId,
// NormalizedUserName or NormalizedEmail is refused with abstractions.ErrInvalidArgument (use
// Update, which moves the index rows). A missing user fails with ErrNotFound, a row that
// kept changing with ErrConcurrencyConflict.
func (s *UserStore) Modify(ctx context.Context, userID string, change func(u *User) error) (*User, error) {
	if change == nil {
		return nil, fmt.Errorf("%w: the change function is nil", abstractions.ErrInvalidArgument)
	}
	k, err := userKey(userID)
	if err != nil {
		return nil, err
	}
	return abstractions.Mutate(ctx, s.t.Users, userRowID(k), func(u *User) error {
		before := *u
		if err := change(u); err != nil {
			return err
		}
		if u.UserId != before.UserId || u.NormalizedUserName != before.NormalizedUserName || u.NormalizedEmail != before.NormalizedEmail {
			return fmt.Errorf("%w: Modify cannot change UserId, NormalizedUserName or NormalizedEmail; use Update",
				abstractions.ErrInvalidArgument)
		}
		u.ConcurrencyStamp = newGUID()
		return nil
	}, s.retry)
}

// exists refuses a missing user, for the calls that write rows belonging to one.
func (s *UserStore) exists(ctx context.Context, k string) error {
	ok, err := s.t.Users.Exists(ctx, userRowID(k))
	if err != nil {
		return err
	}
	if !ok {
		pk, rk := abstractions.SplitID(userRowID(k))
		return &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "find user", Table: s.t.Users.Table(),
			PartitionKey: pk, RowKey: rk, Message: "no user has this id; create the user first"}
	}
	return nil
}

// membershipOf returns the role id of a user-role row in user k's partition, when it is
// one of k's memberships.
func membershipOf(k string, m *UserRole) (string, bool) {
	u, err1 := userKey(m.UserId)
	r, err2 := idPart("role id", m.RoleId)
	return r, err1 == nil && err2 == nil && sameKey(u, k) && sameKey(m.ID, userRoleID(k, r))
}
