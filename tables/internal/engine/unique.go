package engine

import (
	"context"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/service"
)

// Unique indexes.
//
// A unique index keeps, for each value an entity holds, one claim row in a partition of its
// own (indexrow.ClaimPartition) naming the owner. The rules are the identity stores': the
// owner's row is written first and the value claimed after, so a claim is valid only while
// its owner's row exists and holds the value; a claim is created, never upserted, so two
// racing claims cannot both win; a stale claim (its owner gone or holding another value) is
// taken over on condition of the version read; a lookup checks the claim and the owner's
// row. A crash between the owner's write and the claim leaves the value unclaimed (the next
// claimer wins); a crash before a release leaves a stale claim, which lookups treat as
// absent and SweepClaims removes.

// UniqueValue returns the claim partition of the value the row holds for the unique index
// sp ("" when it holds none), and the value.
func UniqueValue(sp *indexrow.Spec, r *service.Row) (string, service.Value, error) {
	v, ok := r.Get(sp.Column)
	if !ok || !v.IsValid() {
		return "", service.Value{}, nil
	}
	cpk, err := sp.ClaimPartition(v)
	return cpk, v, err
}

// claimLive reports whether the claim row cur is valid: its owner's row exists and holds
// the value whose claim partition cur is in.
func (s *Table) claimLive(ctx context.Context, sp *indexrow.Spec, cur *service.Row) (bool, error) {
	pk, rk, ok := indexrow.ClaimOwner(cur)
	if !ok || CheckKey(pk) != "" || CheckKey(rk) != "" {
		return false, nil
	}
	owner, err := s.Acct.Tables.GetRow(ctx, s.Name, pk, rk, []string{sp.Column})
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	held, _, err := UniqueValue(sp, &owner)
	return err == nil && held == cur.PartitionKey, nil
}

// Claim makes the claim of the value v (claim partition cpk) of the unique index sp name
// the owner pk, rk, whose row holds v already. A live claim of another owner fails with
// ErrDuplicateKey naming the index and the value.
func (s *Table) Claim(ctx context.Context, op string, sp *indexrow.Spec, cpk string, v service.Value, pk, rk string) error {
	var lastErr error
	for attempt := 1; attempt <= SplitAttempts; attempt++ {
		if err := SplitRetry.Wait(ctx, attempt); err != nil {
			return err
		}
		_, err := s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpInsert, Row: indexrow.ClaimRow(cpk, pk, rk)})
		if err == nil {
			return nil
		}
		if !abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists") {
			return s.Translate(op, pk, rk, err)
		}
		lastErr = err
		cur, err := s.Acct.Tables.GetRow(ctx, s.Name, cpk, indexrow.ClaimRowKey, nil)
		if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			continue // released meanwhile: create it again
		}
		if err != nil {
			return s.Translate(op, pk, rk, err)
		}
		if opk, ork, ok := indexrow.ClaimOwner(&cur); ok && opk == pk && ork == rk {
			return nil // ours already (a retried call)
		}
		live, err := s.claimLive(ctx, sp, &cur)
		if err != nil {
			return s.Translate(op, pk, rk, err)
		}
		if live {
			opk, ork, _ := indexrow.ClaimOwner(&cur)
			return &abstractions.StoreError{Kind: abstractions.ErrDuplicateKey, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Index: sp.Name,
				Message: fmt.Sprintf("the unique index %q holds the value %v for %s already (the entity %s); nothing of this write was kept",
					sp.Name, v, sp.Field, opk+abstractions.IDSeparator+ork)}
		}
		// A stale claim: take it over on condition of the version read.
		_, err = s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpReplace, Row: indexrow.ClaimRow(cpk, pk, rk), IfMatch: cur.ETag})
		if err == nil {
			return nil
		}
		if !abstractions.HasStatus(err, http.StatusPreconditionFailed, "") && !abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			return s.Translate(op, pk, rk, err)
		}
		lastErr = err
	}
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Err: lastErr,
		Message: fmt.Sprintf("the claim of the unique index %q kept changing during %d attempts; retry", sp.Name, SplitAttempts)}
}

// Release deletes the claim of partition cpk when it names the owner pk, rk, on condition
// of the version read; a claim of another owner, or none, is left as it is.
func (s *Table) Release(ctx context.Context, cpk, pk, rk string) error {
	cur, err := s.Acct.Tables.GetRow(ctx, s.Name, cpk, indexrow.ClaimRowKey, nil)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return nil
	}
	if err != nil {
		return err
	}
	if opk, ork, ok := indexrow.ClaimOwner(&cur); !ok || opk != pk || ork != rk {
		return nil
	}
	_, err = s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: cpk, RowKey: indexrow.ClaimRowKey}, IfMatch: cur.ETag})
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") || abstractions.HasStatus(err, http.StatusPreconditionFailed, "") {
		return nil // gone, or taken over meanwhile
	}
	return err
}

// LookupClaim returns the owner of the live claim of the value v of the unique index sp.
func (s *Table) LookupClaim(ctx context.Context, sp *indexrow.Spec, v service.Value) (pk, rk string, found bool, err error) {
	cpk, err := sp.ClaimPartition(v)
	if err != nil {
		return "", "", false, err
	}
	cur, err := s.Acct.Tables.GetRow(ctx, s.Name, cpk, indexrow.ClaimRowKey, nil)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	live, err := s.claimLive(ctx, sp, &cur)
	if err != nil || !live {
		return "", "", false, err
	}
	pk, rk, _ = indexrow.ClaimOwner(&cur)
	return pk, rk, true, nil
}

// SweepClaims deletes the stale claims of the unique index sp, each on condition of the
// version read, and returns how many it deleted. It reads the index's claim partitions
// only, not the table's entities.
func (s *Table) SweepClaims(ctx context.Context, sp *indexrow.Spec) (int, error) {
	lo := indexrow.ClaimPrefix + sp.Name + "."
	hi := indexrow.ClaimPrefix + sp.Name + "/"
	filter := "PartitionKey ge " + service.QuoteString(lo) + " and PartitionKey lt " + service.QuoteString(hi) +
		" and RowKey eq " + service.QuoteString(indexrow.ClaimRowKey)
	var claims []service.Row
	if err := s.Scan(ctx, service.Query{Filter: filter}, func(r *service.Row) error {
		claims = append(claims, r.Clone())
		return nil
	}); err != nil {
		return 0, s.Translate("sweep claims", "", "", err)
	}
	n := 0
	for i := range claims {
		live, err := s.claimLive(ctx, sp, &claims[i])
		if err != nil {
			return n, s.Translate("sweep claims", claims[i].PartitionKey, claims[i].RowKey, err)
		}
		if live {
			continue
		}
		_, err = s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpDelete,
			Row: service.Row{PartitionKey: claims[i].PartitionKey, RowKey: indexrow.ClaimRowKey}, IfMatch: claims[i].ETag})
		switch {
		case err == nil:
			n++
		case abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") || abstractions.HasStatus(err, http.StatusPreconditionFailed, ""):
			// gone, or claimed again meanwhile
		default:
			return n, s.Translate("sweep claims", claims[i].PartitionKey, claims[i].RowKey, err)
		}
	}
	return n, nil
}
