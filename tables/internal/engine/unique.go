package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/claims"
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

// claimRows are the claim rows of the unique index sp, for the protocol of package claims:
// a value is its claim partition, an owner the id of the entity's row.
type claimRows struct {
	t  *Table
	sp *indexrow.Spec
}

// claims returns the protocol over the claim rows of sp.
func (s *Table) claims(sp *indexrow.Spec) claims.Index[service.Row, struct{}] {
	return claims.Index[service.Row, struct{}]{Rows: claimRows{s, sp}, Attempts: SplitAttempts, Wait: SplitRetry.Wait}
}

// classified is a service error with the sentinel the protocol expects of it.
type classified struct{ kind, err error }

func (e classified) Error() string   { return e.err.Error() }
func (e classified) Unwrap() []error { return []error{e.kind, e.err} }

// classify gives err the sentinel of the outcomes the protocol handles.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case abstractions.HasStatus(err, http.StatusConflict, "EntityAlreadyExists"):
		return classified{abstractions.ErrDuplicateKey, err}
	case abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound"):
		return classified{abstractions.ErrNotFound, err}
	case abstractions.HasStatus(err, http.StatusPreconditionFailed, ""):
		return classified{abstractions.ErrConcurrencyConflict, err}
	}
	return err
}

func (c claimRows) Create(ctx context.Context, cpk, owner string) error {
	pk, rk := abstractions.SplitID(owner)
	_, err := c.t.Acct.Tables.Write(ctx, c.t.Name, service.Action{Op: service.OpInsert, Row: indexrow.ClaimRow(cpk, pk, rk)})
	return classify(err)
}

func (c claimRows) Read(ctx context.Context, cpk string) (claims.Claim[service.Row], error) {
	r, err := c.t.Acct.Tables.GetRow(ctx, c.t.Name, cpk, indexrow.ClaimRowKey, nil)
	if err != nil {
		return claims.Claim[service.Row]{}, classify(err)
	}
	return claimOf(&r), nil
}

// claimOf returns what the claim row r says.
func claimOf(r *service.Row) claims.Claim[service.Row] {
	owner := "" // a claim without its owner's cells names no row: stale
	if pk, rk, ok := indexrow.ClaimOwner(r); ok {
		owner = pk + abstractions.IDSeparator + rk
	}
	return claims.Claim[service.Row]{Value: r.PartitionKey, Owner: owner, Version: r.ETag, Row: *r}
}

func (c claimRows) Replace(ctx context.Context, cpk, owner string, cur claims.Claim[service.Row]) error {
	pk, rk := abstractions.SplitID(owner)
	_, err := c.t.Acct.Tables.Write(ctx, c.t.Name, service.Action{Op: service.OpReplace, Row: indexrow.ClaimRow(cpk, pk, rk), IfMatch: cur.Version})
	return classify(err)
}

func (c claimRows) Delete(ctx context.Context, cur claims.Claim[service.Row]) error {
	_, err := c.t.Acct.Tables.Write(ctx, c.t.Name, service.Action{Op: service.OpDelete,
		Row: service.Row{PartitionKey: cur.Value, RowKey: indexrow.ClaimRowKey}, IfMatch: cur.Version})
	return classify(err)
}

// Owner reads the value column of the row owner names, and reports whether it holds the
// value whose claim partition is cpk. An owner whose row expired (expiry.go) holds nothing,
// as a deleted one: its claim is stale.
func (c claimRows) Owner(ctx context.Context, owner, cpk string) (struct{}, bool, error) {
	pk, rk := abstractions.SplitID(owner)
	if owner == "" || CheckKey(pk) != "" || CheckKey(rk) != "" {
		return struct{}{}, false, nil
	}
	r, err := c.t.Acct.Tables.GetRow(ctx, c.t.Name, pk, rk, c.t.WithExpiry([]string{c.sp.Column}))
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return struct{}{}, false, nil
	}
	if err != nil {
		return struct{}{}, false, err
	}
	held, _, err := UniqueValue(c.sp, &r)
	return struct{}{}, err == nil && held == cpk && !c.t.Expired(&r), nil
}

func (claimRows) Same(a, b string) bool { return a == b }

// Claim makes the claim of the value v (claim partition cpk) of the unique index sp name
// the owner pk, rk, whose row holds v already. A live claim of another owner fails with
// ErrDuplicateKey naming the index and the value.
// With again set the owner's previous row held v too (claims.Index.Reclaim).
func (s *Table) Claim(ctx context.Context, op string, sp *indexrow.Spec, cpk string, v service.Value, pk, rk string, again bool) error {
	x, owner := s.claims(sp), pk+abstractions.IDSeparator+rk
	var err error
	if again {
		err = x.Reclaim(ctx, cpk, owner)
	} else {
		err = x.Claim(ctx, cpk, owner)
	}
	var held *claims.Held
	var busy *claims.Contended
	switch {
	case err == nil:
		return nil
	case errors.As(err, &held):
		return &abstractions.StoreError{Kind: abstractions.ErrDuplicateKey, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Index: sp.Name,
			Message: fmt.Sprintf("the unique index %q holds the value %v for %s already (the entity %s); nothing of this write was kept",
				sp.Name, v, sp.Field, held.Owner)}
	case errors.As(err, &busy):
		return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Err: busy.Err,
			Message: fmt.Sprintf("the claim of the unique index %q kept changing during %d attempts; retry", sp.Name, busy.Attempts)}
	}
	return s.Translate(op, pk, rk, err)
}

// Release deletes the claim of partition cpk of the unique index sp when it names the owner
// pk, rk, on condition of the version read; a claim of another owner, or none, is left as
// it is.
func (s *Table) Release(ctx context.Context, sp *indexrow.Spec, cpk, pk, rk string) error {
	return s.claims(sp).Release(ctx, cpk, pk+abstractions.IDSeparator+rk)
}

// LookupClaim returns the owner of the live claim of the value v of the unique index sp.
func (s *Table) LookupClaim(ctx context.Context, sp *indexrow.Spec, v service.Value) (pk, rk string, found bool, err error) {
	cpk, err := sp.ClaimPartition(v)
	if err != nil {
		return "", "", false, err
	}
	owner, _, found, err := s.claims(sp).Lookup(ctx, cpk)
	if err != nil || !found {
		return "", "", false, err
	}
	pk, rk = abstractions.SplitID(owner)
	return pk, rk, true, nil
}

// ReadClaim returns what the claim row of partition cpk of the unique index sp says: the
// owner it names, whether there is one (exists) and whether it is live (its owner's row
// exists and holds the value).
func (s *Table) ReadClaim(ctx context.Context, sp *indexrow.Spec, cpk string) (pk, rk string, exists, live bool, err error) {
	x := s.claims(sp)
	c, err := x.Rows.Read(ctx, cpk)
	if errors.Is(err, abstractions.ErrNotFound) {
		return "", "", false, false, nil
	}
	if err != nil {
		return "", "", false, false, s.Translate("read claim", cpk, indexrow.ClaimRowKey, err)
	}
	stale, err := x.Stale(ctx, c)
	if err != nil {
		return "", "", false, false, s.Translate("read claim", cpk, indexrow.ClaimRowKey, err)
	}
	pk, rk = abstractions.SplitID(c.Owner)
	return pk, rk, true, !stale, nil
}

// SweepClaims deletes the stale claims of the unique index sp, each on condition of the
// version read, and returns how many it deleted. It reads the index's claim partitions
// only, not the table's entities.
func (s *Table) SweepClaims(ctx context.Context, sp *indexrow.Spec) (int, error) {
	return s.StaleClaims(ctx, sp, "", nil, true)
}

// StaleClaims counts the stale claims of the unique index sp (of the owners of partition
// ownerPK only, when it is not ""), leaving out the claim partitions skip reports, and with
// del deletes each on condition of the version read; it returns how many it found (with
// del, deleted).
func (s *Table) StaleClaims(ctx context.Context, sp *indexrow.Spec, ownerPK string, skip func(cpk string) bool, del bool) (int, error) {
	lo := indexrow.ClaimPrefix + sp.Name + "."
	hi := indexrow.ClaimPrefix + sp.Name + "/"
	filter := "PartitionKey ge " + service.QuoteString(lo) + " and PartitionKey lt " + service.QuoteString(hi) +
		" and RowKey eq " + service.QuoteString(indexrow.ClaimRowKey)
	if ownerPK != "" {
		filter += " and " + indexrow.ClaimPKColumn + " eq " + service.QuoteString(ownerPK)
	}
	var rows []service.Row
	if err := s.Scan(ctx, service.Query{Filter: filter}, func(r *service.Row) error {
		if skip == nil || !skip(r.PartitionKey) {
			rows = append(rows, r.Clone())
		}
		return nil
	}); err != nil {
		return 0, s.Translate("sweep claims", "", "", err)
	}
	x := s.claims(sp)
	n := 0
	for i := range rows {
		c := claimOf(&rows[i])
		stale, err := x.Stale(ctx, c)
		if err != nil {
			return n, s.Translate("sweep claims", rows[i].PartitionKey, rows[i].RowKey, err)
		}
		if !stale {
			continue
		}
		if !del {
			n++
			continue
		}
		err = x.Rows.Delete(ctx, c)
		switch {
		case err == nil:
			n++
		case errors.Is(err, abstractions.ErrNotFound) || errors.Is(err, abstractions.ErrConcurrencyConflict):
			// gone, or claimed again meanwhile
		default:
			return n, s.Translate("sweep claims", rows[i].PartitionKey, rows[i].RowKey, err)
		}
	}
	return n, nil
}
