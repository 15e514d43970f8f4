package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

// checkClaims refuses claims without a type.
func checkClaims(claims []Claim) error {
	for _, c := range claims {
		if c.Type == "" {
			return fmt.Errorf("%w: a claim has an empty type (its value is %q)", abstractions.ErrInvalidArgument, c.Value)
		}
	}
	return nil
}

// AddClaims gives the user the claims. A claim is a type and a value; adding one the user
// has already changes nothing (claim rows are upserted, in the user's partition). A claim
// with an empty type is refused with abstractions.ErrInvalidArgument, a missing user with
// an error matching ErrNotFound.
func (s *UserStore) AddClaims(ctx context.Context, userID string, claims ...Claim) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	if err := checkClaims(claims); err != nil {
		return err
	}
	u, err := s.FindByID(ctx, userID)
	if err != nil {
		return err
	}
	for _, c := range claims {
		if err := s.addClaim(ctx, k, u.UserId, c); err != nil {
			return err
		}
	}
	return nil
}

// addClaim writes the row of a claim of user k. ClaimId is ASP.NET Core Identity's own
// surrogate number, which the .NET package stores as 0 for every claim it adds; so does
// this one.
func (s *UserStore) addClaim(ctx context.Context, k, userID string, c Claim) error {
	return s.t.UserClaims.Upsert(ctx, &UserClaim{Entity: abstractions.Entity{ID: userClaimID(k, c)},
		UserId: userID, ClaimType: c.Type, ClaimValue: c.Value})
}

// removeClaim removes the row of a claim of user k, when it holds that claim (another claim
// whose type and value join to the same text has the same key).
func (s *UserStore) removeClaim(ctx context.Context, k string, c Claim) error {
	id := userClaimID(k, c)
	cur, err := s.t.UserClaims.One(ctx, id)
	switch {
	case errors.Is(err, abstractions.ErrNotFound):
		return nil
	case err != nil:
		return err
	case cur.ClaimType != c.Type || cur.ClaimValue != c.Value:
		return nil
	}
	_, err = s.t.UserClaims.Delete(ctx, id, "")
	return err
}

// RemoveClaims removes the claims from the user. Removing a claim the user does not have is
// not an error.
func (s *UserStore) RemoveClaims(ctx context.Context, userID string, claims ...Claim) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	if err := checkClaims(claims); err != nil {
		return err
	}
	for _, c := range claims {
		if err := s.removeClaim(ctx, k, c); err != nil {
			return err
		}
	}
	return nil
}

// ReplaceClaim replaces the user's claim old by claim new; when the user does not have old,
// it does nothing. The new claim is added before the old one is removed, so the user never
// has neither.
func (s *UserStore) ReplaceClaim(ctx context.Context, userID string, old, new Claim) error {
	k, err := userKey(userID)
	if err != nil {
		return err
	}
	if err := checkClaims([]Claim{old, new}); err != nil {
		return err
	}
	cur, err := s.t.UserClaims.One(ctx, userClaimID(k, old))
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.ClaimType != old.Type || cur.ClaimValue != old.Value || old == new {
		return nil
	}
	if err := s.addClaim(ctx, k, cur.UserId, new); err != nil {
		return err
	}
	if userClaimID(k, new) == userClaimID(k, old) {
		return nil // one key: the new row replaced the old one
	}
	return s.removeClaim(ctx, k, old)
}

// userClaimOf reports whether a row of user k's partition is one of its claims.
func userClaimOf(k string, c *UserClaim) bool {
	u, err := userKey(c.UserId)
	return err == nil && sameKey(u, k) && sameKey(c.ID, userClaimID(k, Claim{c.ClaimType, c.ClaimValue}))
}

// Claims returns the user's claims, in key order (none for a missing user).
func (s *UserStore) Claims(ctx context.Context, userID string) ([]Claim, error) {
	k, err := userKey(userID)
	if err != nil {
		return nil, err
	}
	rows, err := s.t.UserClaims.List(ctx, k)
	if err != nil {
		return nil, err
	}
	var out []Claim
	for _, c := range rows {
		if userClaimOf(k, c) {
			out = append(out, Claim{c.ClaimType, c.ClaimValue})
		}
	}
	return out, nil
}

var (
	userClaimType  = abstractions.Field(func(c *UserClaim) *string { return &c.ClaimType })
	userClaimValue = abstractions.Field(func(c *UserClaim) *string { return &c.ClaimValue })
)

// UsersForClaim returns the users that have the claim, with a query of the claim table
// filtered on the claim's type and value (as the .NET package finds them) and a point read
// per user, in the order of their keys.
func (s *UserStore) UsersForClaim(ctx context.Context, c Claim) ([]*User, error) {
	if err := checkClaims([]Claim{c}); err != nil {
		return nil, err
	}
	rows, err := s.t.UserClaims.Query(ctx, abstractions.Query[UserClaim]{
		Where: abstractions.And(userClaimType.Eq(c.Type), userClaimValue.Eq(c.Value))})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range rows {
		if u, err := userKey(r.UserId); err == nil && userClaimOf(u, r) {
			ids = append(ids, r.UserId)
		}
	}
	return s.users(ctx, ids)
}

// users reads the users with the ids, skipping those that no longer exist.
func (s *UserStore) users(ctx context.Context, ids []string) ([]*User, error) {
	var out []*User
	for _, id := range ids {
		u, err := s.FindByID(ctx, id)
		if errors.Is(err, abstractions.ErrNotFound) || errors.Is(err, abstractions.ErrInvalidKey) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}
