package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

var roleNormalizedName = abstractions.Field(func(r *Role) *string { return &r.NormalizedName })

func roleIndex(s abstractions.Storage[Role], attempts int) *index[Role, *Role] {
	return &index[Role, *Role]{store: s, what: "role name", owner: "role", row: roleNameIndexRow, dup: ErrDuplicateRoleName,
		attempts: attempts,
		value:    func(r *Role) string { return r.NormalizedName },
		ownerOf:  func(r *Role) string { return r.RoleId },
		rowID:    roleRowID,
		holders: func(ctx context.Context, value string) ([]*Role, error) {
			return s.Query(ctx, abstractions.Query[Role]{Partition: rolePartition, Where: roleNormalizedName.Eq(value)})
		},
		point: func(r *Role, id, owner, value string) {
			*r = Role{Entity: abstractions.Entity{ID: id, CreatedAt: r.CreatedAt, ETag: r.ETag}, RoleId: owner, NormalizedName: value}
		}}
}

// role returns the role with the normalised name, or nil when there is none.
func (s *UserStore) role(ctx context.Context, normalizedRoleName string) (*Role, string, error) {
	r, err := s.roles.lookup(ctx, normalizedRoleName)
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	rk, err := idPart("role id", r.RoleId)
	if err != nil {
		return nil, "", nil
	}
	return r, rk, nil
}

// AddToRole makes the user a member of the role with the normalised name, with a row in
// the user's partition keyed by the role's id; adding a membership the user has changes
// nothing. A missing role fails with ErrRoleNotFound, as ASP.NET Core Identity's stores
// throw: the change cannot be made, and saying nothing would report success having
// assigned nothing. A missing user fails with an error matching abstractions.ErrNotFound.
func (s *UserStore) AddToRole(ctx context.Context, userID, normalizedRoleName string) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	role, r, err := s.role(ctx, normalizedRoleName)
	if err != nil {
		return err
	}
	if role == nil {
		return fmt.Errorf("%w: %q; create the role first (RoleStore.Create)", ErrRoleNotFound, normalizedRoleName)
	}
	u, err := s.FindByID(ctx, userID)
	if err != nil {
		return err
	}
	return s.t.UserRoles.Upsert(ctx, &UserRole{Entity: abstractions.Entity{ID: userRoleID(k, r)},
		UserId: u.UserId, RoleId: role.RoleId})
}

// RemoveFromRole ends the user's membership of the role with the normalised name. A missing
// role, or a membership the user does not have, is not an error.
func (s *UserStore) RemoveFromRole(ctx context.Context, userID, normalizedRoleName string) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	role, r, err := s.role(ctx, normalizedRoleName)
	if err != nil || role == nil {
		return err
	}
	_, err = s.t.UserRoles.Delete(ctx, userRoleID(k, r), "")
	return err
}

// IsInRole reports whether the user is a member of the role with the normalised name (false
// for a missing role).
func (s *UserStore) IsInRole(ctx context.Context, userID, normalizedRoleName string) (bool, error) {
	k, err := userKey(userID)
	if err != nil {
		return false, err
	}
	role, r, err := s.role(ctx, normalizedRoleName)
	if err != nil || role == nil {
		return false, err
	}
	return s.t.UserRoles.Exists(ctx, userRoleID(k, r))
}

// Roles returns the names of the user's roles, in the order of the roles' keys (none for a
// missing user), with a query of the user's partition and a point read per role. A
// membership of a role deleted meanwhile is skipped.
func (s *UserStore) Roles(ctx context.Context, userID string) ([]string, error) {
	k, err := userKey(userID)
	if err != nil {
		return nil, err
	}
	rows, err := s.t.UserRoles.List(ctx, k)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range rows {
		r, ok := membershipOf(k, m)
		if !ok {
			continue
		}
		role, err := s.t.Roles.One(ctx, roleRowID(r))
		if errors.Is(err, abstractions.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		names = append(names, role.Name)
	}
	return names, nil
}

// UsersInRole returns the members of the role with the normalised name (none for a missing
// role), with a query of the membership table filtered on the role's id (as the .NET
// package finds them: a membership's partition is its user) and a point read per user.
func (s *UserStore) UsersInRole(ctx context.Context, normalizedRoleName string) ([]*User, error) {
	role, r, err := s.role(ctx, normalizedRoleName)
	if err != nil || role == nil {
		return nil, err
	}
	rows, err := memberships(ctx, s.t.UserRoles, r, role.RoleId)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, m := range rows {
		ids[i] = m.UserId
	}
	return s.users(ctx, ids)
}

var userRoleRoleID = abstractions.Field(func(m *UserRole) *string { return &m.RoleId })

// memberships returns the membership rows of role r (whose RoleId column is roleID).
func memberships(ctx context.Context, userRoles abstractions.Storage[UserRole], r, roleID string) ([]*UserRole, error) {
	rows, err := userRoles.Query(ctx, abstractions.Query[UserRole]{Where: userRoleRoleID.Eq(roleID)})
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, m := range rows {
		u, err := userKey(m.UserId)
		if err != nil {
			continue
		}
		if rk, ok := membershipOf(u, m); ok && sameKey(rk, r) {
			out = append(out, m)
		}
	}
	return out, nil
}
