// Package claims is the protocol that keeps a value unique among the rows of a table: each
// value an owner holds is claimed by a row of its own that names the owner. It is written
// once for the libraries that need it — the stores' unique indexes (tables, `unique=` tags)
// and the identity stores' user names, emails and role names — which differ only in where
// the claim rows live and how they are read and written ([Rows]). Applications do not import
// it: they declare a unique index on a field, or use the identity stores.
//
// The rules:
//
//   - the owner's row is written first and the value claimed after, so a claim is valid only
//     while its owner's row exists and holds the value: a crash between the two leaves the
//     value unclaimed (the next claimer wins), never a valid claim without its owner;
//   - a claim row is created, never upserted, so two racing claimers cannot both win; a
//     stale claim (its owner gone, or holding another value) is taken over by a write on
//     condition of the version read;
//   - a release deletes the claim only when it names the releasing owner and is stale (the
//     owner's row no longer holds the value), on condition of the version read, so it never
//     removes a claim another owner took over meanwhile, nor one a later write of the same
//     owner confirmed; a release that does not happen leaves a stale claim, which lookups
//     treat as absent;
//   - a lookup checks the claim row and the owner's row, so a stale claim, and a row that
//     claims another value sharing its key, are never taken for a match.
package claims

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

// A Claim is what a claim row says: the value it claims (a row's key may be shared by two
// values, as when it is a digest of the value), the owner it names, the row's version, and
// the row as Rows read it (so that a takeover keeps what the row holds besides the claim).
type Claim[C any] struct {
	Value, Owner, Version string
	Row                   C
}

// Rows reads and writes the claim rows (C) of one unique index, and reads its owners' rows
// (O). Errors are classified as the stores classify them: a method's documented outcome is
// an error matching the sentinel it names; any other error ends the protocol's call.
type Rows[C, O any] interface {
	// Create writes the claim of value naming owner; a row already in its place fails with
	// an error matching abstractions.ErrDuplicateKey.
	Create(ctx context.Context, value, owner string) error
	// Read returns the claim row in value's place; none fails with abstractions.ErrNotFound.
	Read(ctx context.Context, value string) (Claim[C], error)
	// Replace makes the claim row cur, read in value's place, claim value for owner, on
	// condition of its version; another version fails with
	// abstractions.ErrConcurrencyConflict, none with abstractions.ErrNotFound.
	Replace(ctx context.Context, value, owner string, cur Claim[C]) error
	// Delete deletes the claim row cur on condition of its version, with the same errors as
	// Replace.
	Delete(ctx context.Context, cur Claim[C]) error
	// Owner returns the row of owner when it exists and holds value (ok false otherwise).
	Owner(ctx context.Context, owner, value string) (row O, ok bool, err error)
	// Same reports whether two owner ids name one owner.
	Same(a, b string) bool
}

// Index runs the protocol over the claim rows of one unique index.
type Index[C, O any] struct {
	Rows Rows[C, O]
	// Attempts bounds a claim's loop of create, read and take over (at least 1).
	Attempts int
	// Wait, when set, is called before each attempt (attempt counts from 1) and may pace the
	// retries; its error ends the claim.
	Wait func(ctx context.Context, attempt int) error
}

// Held is the error of a claim of a value a live claim names another owner for.
type Held struct {
	Value, Owner string
}

func (e *Held) Error() string {
	return fmt.Sprintf("the value %q is claimed by %q", e.Value, e.Owner)
}

// Contended is the error of a claim whose row kept changing during every attempt.
type Contended struct {
	Attempts int
	Err      error // the last attempt's
}

func (e *Contended) Error() string {
	return fmt.Sprintf("the claim kept changing during %d attempts: %v", e.Attempts, e.Err)
}

func (e *Contended) Unwrap() error { return e.Err }

// Claim makes the claim of value name owner, whose row holds value already. A live claim of
// another owner fails with a *[Held]; a claim that names the owner already is confirmed by a
// write on condition of its version (so that a takeover decided on an older look at the
// owner's row fails); a claim row that kept changing fails with a *[Contended].
func (x Index[C, O]) Claim(ctx context.Context, value, owner string) error {
	return x.claim(ctx, value, owner, false)
}

// Reclaim is Claim for an owner whose previous row held value too: it reads the claim first
// (one read and one write when it is the owner's, instead of a refused create, a read and a
// write). An owner that writes a row holding a value it held must claim it again all the
// same: the previous row may have been a refused write's, whose value another owner claims,
// or the value's claim may have been taken over while the owner's row held another.
func (x Index[C, O]) Reclaim(ctx context.Context, value, owner string) error {
	return x.claim(ctx, value, owner, true)
}

func (x Index[C, O]) claim(ctx context.Context, value, owner string, readFirst bool) error {
	attempts := max(x.Attempts, 1)
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		if x.Wait != nil {
			if err := x.Wait(ctx, attempt); err != nil {
				return err
			}
		}
		if !readFirst {
			err := x.Rows.Create(ctx, value, owner)
			if !errors.Is(err, abstractions.ErrDuplicateKey) {
				return err // nil: claimed
			}
			lastErr = err
		}
		readFirst = false
		cur, err := x.Rows.Read(ctx, value)
		if errors.Is(err, abstractions.ErrNotFound) {
			continue // released meanwhile: create it again
		}
		if err != nil {
			return err
		}
		if cur.Value != value || !x.Rows.Same(cur.Owner, owner) {
			live, err := x.live(ctx, cur)
			if err != nil {
				return err
			}
			if live {
				return &Held{Value: value, Owner: cur.Owner}
			}
		}
		// Ours already (confirmed), or a stale claim taken over: on condition of the
		// version read either way.
		err = x.Rows.Replace(ctx, value, owner, cur)
		if !errors.Is(err, abstractions.ErrConcurrencyConflict) && !errors.Is(err, abstractions.ErrNotFound) {
			return err
		}
		lastErr = err
	}
	return &Contended{Attempts: attempts, Err: lastErr}
}

// live reports whether the claim c is valid: its owner's row exists and holds the value c
// claims.
func (x Index[C, O]) live(ctx context.Context, c Claim[C]) (bool, error) {
	_, ok, err := x.Rows.Owner(ctx, c.Owner, c.Value)
	return ok, err
}

// Release deletes the claim of value when it names owner and the owner's row no longer
// holds value, on condition of the version read; a claim of another owner or another value,
// or none, is left as it is, and so is the claim of an owner whose row holds the value again
// (a later write of the owner that confirmed it: deleting it would leave the row holding an
// unclaimed value). Release the values a failed write claimed after putting its row back.
func (x Index[C, O]) Release(ctx context.Context, value, owner string) error {
	cur, err := x.Rows.Read(ctx, value)
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.Value != value || !x.Rows.Same(cur.Owner, owner) {
		return nil
	}
	// The owner's row is read after the claim: a write of the owner that holds the value
	// again and confirms its claim after this look changes the claim's version, and the
	// delete below fails.
	if live, err := x.live(ctx, cur); err != nil || live {
		return err
	}
	err = x.Rows.Delete(ctx, cur)
	if errors.Is(err, abstractions.ErrNotFound) || errors.Is(err, abstractions.ErrConcurrencyConflict) {
		return nil // gone, or taken over meanwhile
	}
	return err
}

// Lookup returns the owner the live claim of value names and its row; ok is false when
// value has no claim, or a stale one.
func (x Index[C, O]) Lookup(ctx context.Context, value string) (owner string, row O, ok bool, err error) {
	var zero O
	cur, err := x.Rows.Read(ctx, value)
	if errors.Is(err, abstractions.ErrNotFound) {
		return "", zero, false, nil
	}
	if err != nil || cur.Value != value {
		return "", zero, false, err
	}
	row, ok, err = x.Rows.Owner(ctx, cur.Owner, value)
	if err != nil || !ok {
		return "", zero, false, err
	}
	return cur.Owner, row, true, nil
}

// Stale reports whether the claim c is stale: its owner's row is gone or holds another
// value. A sweep deletes such a claim with Rows.Delete, on condition of its version.
func (x Index[C, O]) Stale(ctx context.Context, c Claim[C]) (bool, error) {
	live, err := x.live(ctx, c)
	return !live && err == nil, err
}
