package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

// RoleStore keeps roles and their claims. It is safe for concurrent use.
type RoleStore struct {
	t     Tables
	names *index[Role, *Role]
	rows  *stamped[Role, *Role]
}

// NewRoleStore returns the role store over t. It needs Roles, RoleClaims and UserRoles (to
// end a deleted role's memberships); a nil one is refused with an error matching
// abstractions.ErrInvalidArgument. A nil opts means the defaults.
func NewRoleStore(t Tables, opts *Options) (*RoleStore, error) {
	switch {
	case t.Roles == nil:
		return nil, missing("Roles")
	case t.RoleClaims == nil:
		return nil, missing("RoleClaims")
	case t.UserRoles == nil:
		return nil, missing("UserRoles")
	}
	attempts := opts.retry().Attempts
	if attempts <= 0 {
		attempts = defaultAttempts
	}
	return &RoleStore{t: t, names: roleIndex(t.Roles, attempts),
		rows: &stamped[Role, *Role]{store: t.Roles, what: "role", attempts: attempts,
			stamp: func(r *Role) *string { return &r.ConcurrencyStamp },
			assign: func(dst, src *Role) {
				dst.Name, dst.NormalizedName = src.Name, src.NormalizedName
			}}}, nil
}

func roleKey(roleID string) (string, error) { return idPart("role id", roleID) }

func normalizeRole(r *Role) {
	if r.NormalizedName == "" && r.Name != "" {
		r.NormalizedName = NormalizeName(r.Name)
	}
}

// Create stores a new role. An empty RoleId is set to a new GUID, an empty ConcurrencyStamp
// to a new GUID, an empty NormalizedName to NormalizeName(Name). A normalised name another
// role has fails with ErrDuplicateRoleName and stores nothing; an id another role has, with
// an error matching abstractions.ErrDuplicateKey. r is updated only on success.
func (s *RoleStore) Create(ctx context.Context, r *Role) error {
	if r == nil {
		return fmt.Errorf("%w: the role is nil", abstractions.ErrInvalidArgument)
	}
	v := *r
	if v.RoleId == "" {
		v.RoleId = newGUID()
	}
	k, err := roleKey(v.RoleId)
	if err != nil {
		return err
	}
	normalizeRole(&v)
	if v.ConcurrencyStamp == "" {
		v.ConcurrencyStamp = newGUID()
	}
	v.ID, v.ETag = roleRowID(k), ""
	if err := s.t.Roles.Create(ctx, &v); err != nil {
		if errors.Is(err, abstractions.ErrDuplicateKey) {
			return fmt.Errorf("identity: a role with the id %q exists: %w", v.RoleId, err)
		}
		return err
	}
	if err := s.names.claim(ctx, v.RoleId, v.NormalizedName); err != nil {
		_, _ = s.t.Roles.Delete(detached(ctx), v.ID, "")
		return err
	}
	*r = v
	return nil
}

// Update renames the role to r's Name and NormalizedName, when the stored ConcurrencyStamp
// is r's, with a new stamp. A stale stamp fails with ErrConcurrencyFailure, a missing role
// with an error matching abstractions.ErrNotFound, a name another role has with
// ErrDuplicateRoleName (and the update is undone). r is updated only on success.
func (s *RoleStore) Update(ctx context.Context, r *Role) error {
	if r == nil {
		return fmt.Errorf("%w: the role is nil", abstractions.ErrInvalidArgument)
	}
	k, err := roleKey(r.RoleId)
	if err != nil {
		return err
	}
	v := *r
	normalizeRole(&v)
	id := roleRowID(k)
	old, stored, err := s.rows.replace(ctx, id, &v)
	if err != nil {
		return err
	}
	if old.NormalizedName != stored.NormalizedName {
		if err := s.names.claim(ctx, stored.RoleId, stored.NormalizedName); err != nil {
			s.rows.restore(detached(ctx), id, old, stored)
			return err
		}
		_ = s.names.release(ctx, old.RoleId, old.NormalizedName)
	}
	*r = *stored
	return nil
}

// Delete deletes the role, its claims and every membership of it (found, as the .NET
// package finds them, by a query of the membership table filtered on the role's id).
// Deleting a missing role is not an error. The role row goes first; call Delete again to
// finish after a failure.
func (s *RoleStore) Delete(ctx context.Context, roleID string) error {
	k, err := roleKey(roleID)
	if err != nil {
		return err
	}
	r, err := s.t.Roles.One(ctx, roleRowID(k))
	switch {
	case isNotFound(err):
		r = &Role{RoleId: roleID}
	case err != nil:
		return err
	default:
		if _, err := s.t.Roles.Delete(ctx, roleRowID(k), ""); err != nil {
			return err
		}
	}
	if err := s.names.release(ctx, r.RoleId, r.NormalizedName); err != nil {
		return err
	}
	rows, err := memberships(ctx, s.t.UserRoles, k, r.RoleId)
	if err != nil {
		return err
	}
	for _, m := range rows {
		if _, err := s.t.UserRoles.Delete(ctx, m.ID, ""); err != nil {
			return err
		}
	}
	claims, err := s.t.RoleClaims.List(ctx, k)
	if err != nil {
		return err
	}
	for _, c := range claims {
		if roleClaimOf(k, c) {
			if _, err := s.t.RoleClaims.Delete(ctx, c.ID, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// FindByID returns the role with the id, or an error matching abstractions.ErrNotFound.
func (s *RoleStore) FindByID(ctx context.Context, roleID string) (*Role, error) {
	k, err := roleKey(roleID)
	if err != nil {
		return nil, err
	}
	return s.t.Roles.One(ctx, roleRowID(k))
}

// FindByName returns the role whose NormalizedName is normalizedName (compared exactly), or
// an error matching abstractions.ErrNotFound: a point read of its index row and one of the
// role row, and for a role the .NET package created (which has no index row) a query of the
// role partition filtered on the name besides.
func (s *RoleStore) FindByName(ctx context.Context, normalizedName string) (*Role, error) {
	return s.names.lookup(ctx, normalizedName)
}

// AddClaim gives the role a claim; adding one it has changes nothing. A claim with an empty
// type is refused with abstractions.ErrInvalidArgument, a missing role with an error
// matching ErrNotFound. ClaimId is stored as 0, as the .NET package stores it.
func (s *RoleStore) AddClaim(ctx context.Context, roleID string, c Claim) error {
	k, err := roleKey(roleID)
	if err != nil {
		return err
	}
	if err := checkClaims([]Claim{c}); err != nil {
		return err
	}
	r, err := s.FindByID(ctx, roleID)
	if err != nil {
		return err
	}
	return s.t.RoleClaims.Upsert(ctx, &RoleClaim{Entity: abstractions.Entity{ID: roleClaimID(k, c)},
		RoleId: r.RoleId, ClaimType: c.Type, ClaimValue: c.Value})
}

// RemoveClaim removes a claim from the role; removing one it does not have is not an error.
// A row with the claim's key that holds another claim (whose type and value join to the
// same text) is left alone.
func (s *RoleStore) RemoveClaim(ctx context.Context, roleID string, c Claim) error {
	k, err := roleKey(roleID)
	if err != nil {
		return err
	}
	if err := checkClaims([]Claim{c}); err != nil {
		return err
	}
	id := roleClaimID(k, c)
	cur, err := s.t.RoleClaims.One(ctx, id)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return err
	case cur.ClaimType != c.Type || cur.ClaimValue != c.Value:
		return nil
	}
	_, err = s.t.RoleClaims.Delete(ctx, id, "")
	return err
}

func roleClaimOf(k string, c *RoleClaim) bool {
	r, err := roleKey(c.RoleId)
	return err == nil && sameKey(r, k) && sameKey(c.ID, roleClaimID(k, Claim{c.ClaimType, c.ClaimValue}))
}

// Claims returns the role's claims, in key order (none for a missing role).
func (s *RoleStore) Claims(ctx context.Context, roleID string) ([]Claim, error) {
	k, err := roleKey(roleID)
	if err != nil {
		return nil, err
	}
	rows, err := s.t.RoleClaims.List(ctx, k)
	if err != nil {
		return nil, err
	}
	var out []Claim
	for _, c := range rows {
		if roleClaimOf(k, c) {
			out = append(out, Claim{c.ClaimType, c.ClaimValue})
		}
	}
	return out, nil
}
