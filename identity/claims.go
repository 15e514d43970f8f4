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
// has already changes nothing (claim rows are upserted). Each claim is stored twice: in the
// user's partition, which Claims reads, and in the claim's, which UsersForClaim reads; the
// user's row is written first. A claim with an empty type is refused with
// abstractions.ErrInvalidArgument, a missing user with an error matching ErrNotFound.
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

func (s *UserStore) addClaim(ctx context.Context, k, userID string, c Claim) error {
	row := func(id string) *IdentityUserClaimModel {
		return &IdentityUserClaimModel{Entity: abstractions.Entity{ID: id}, UserId: userID, ClaimType: c.Type, ClaimValue: c.Value}
	}
	if err := s.t.UserClaims.Upsert(ctx, row(userClaimByUserID(k, c))); err != nil {
		return err
	}
	return s.t.UserClaims.Upsert(ctx, row(userClaimByClaimID(c, k)))
}

// removeClaim removes both rows of a claim; the claim's partition row goes first, so
// UsersForClaim never lists a user whose claims lack it.
func (s *UserStore) removeClaim(ctx context.Context, k string, c Claim) error {
	if err := s.t.UserClaims.Delete(ctx, userClaimByClaimID(c, k)); err != nil {
		return err
	}
	return s.t.UserClaims.Delete(ctx, userClaimByUserID(k, c))
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
	cur, err := s.t.UserClaims.One(ctx, userClaimByUserID(k, old))
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
	return s.removeClaim(ctx, k, old)
}

// userClaimOf reports whether a row of user k's partition is one of its claims (the
// partition of a claim whose key equals a user id holds that claim's rows too).
func userClaimOf(k string, c *IdentityUserClaimModel) bool {
	u, err := userKey(c.UserId)
	return err == nil && u == k && sameKey(c.ID, userClaimByUserID(k, Claim{c.ClaimType, c.ClaimValue}))
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

// UsersForClaim returns the users that have the claim, with one bounded query of the
// claim's partition and a point read per user, in the order of their keys.
func (s *UserStore) UsersForClaim(ctx context.Context, c Claim) ([]*IdentityUserModel, error) {
	if err := checkClaims([]Claim{c}); err != nil {
		return nil, err
	}
	rows, err := s.t.UserClaims.Query(ctx, abstractions.Query[IdentityUserClaimModel]{Partition: claimKey(c), RowKeyPrefix: reversePrefix})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range rows {
		if r.ClaimType == c.Type && r.ClaimValue == c.Value {
			ids = append(ids, r.UserId)
		}
	}
	return s.users(ctx, ids)
}

// users reads the users with the ids, skipping those that no longer exist.
func (s *UserStore) users(ctx context.Context, ids []string) ([]*IdentityUserModel, error) {
	var out []*IdentityUserModel
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
