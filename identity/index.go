package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/claims"
)

// index maps a normalised value (a user name, an email, a role name) to the one row that
// holds it. The .NET package finds such a row with a query of the user (or role) partition
// filtered on the value; these stores keep, besides, an index row in the same table
// (partition HashKey(value), row key a constant) that claims the value for its owner, so
// that a lookup is two point reads and two stores claiming one value at once cannot both
// win. The claims follow the protocol of package claims, the one the stores' unique indexes
// follow (owner first, claim after; created, never upserted; stale claims taken over on the
// version read; lookups check both rows); these index rows are its claim rows here. They
// are this module's own: the .NET package never reads those partitions, and does not write
// index rows, so before claiming a value the stores query the owners' partition for a row
// that holds it, and a lookup that finds no live claim falls back to that query.
type index[T any, P abstractions.EntityPtr[T]] struct {
	store abstractions.Storage[T]
	what  string // what the value is, for messages: "user name"
	owner string // what owns it, for messages: "user"
	row   string // the index rows' row key
	dup   error  // the error of a value another owner holds
	// value returns the indexed value of a row (owner row or index row).
	value func(*T) string
	// ownerOf returns the owner id a row holds (on an index row, the one it points to).
	ownerOf func(*T) string
	// rowID returns the id of the row of the owner with the key part k.
	rowID func(k string) string
	// holders returns the owner rows that hold value, by a query of the owners' partition.
	holders func(ctx context.Context, value string) ([]*T, error)
	// point makes v an index row of value pointing to owner, with the given id.
	point func(v *T, id, owner, value string)
	// attempts bounds the claim loop.
	attempts int
}

func (x *index[T, P]) id(value string) string { return HashKey(value) + "|" + x.row }

// claims returns the protocol over the index rows.
func (x *index[T, P]) claims() claims.Index[*T, *T] {
	return claims.Index[*T, *T]{Rows: claimRows[T, P]{x}, Attempts: x.attempts}
}

// claimRows are an index's rows for package claims: a value's claim row is its index row.
type claimRows[T any, P abstractions.EntityPtr[T]] struct{ x *index[T, P] }

func (r claimRows[T, P]) Create(ctx context.Context, value, owner string) error {
	var row T
	r.x.point(&row, r.x.id(value), owner, value)
	return r.x.store.Create(ctx, &row)
}

func (r claimRows[T, P]) Read(ctx context.Context, value string) (claims.Claim[*T], error) {
	cur, err := r.x.store.One(ctx, r.x.id(value))
	if err != nil {
		return claims.Claim[*T]{}, err
	}
	return claims.Claim[*T]{Value: r.x.value(cur), Owner: r.x.ownerOf(cur), Version: P(cur).Base().ETag, Row: cur}, nil
}

// Replace points the index row read over to owner, keeping its creation time.
func (r claimRows[T, P]) Replace(ctx context.Context, value, owner string, cur claims.Claim[*T]) error {
	row := *cur.Row
	r.x.point(&row, r.x.id(value), owner, value)
	return r.x.store.Update(ctx, &row, abstractions.Strict)
}

func (r claimRows[T, P]) Delete(ctx context.Context, cur claims.Claim[*T]) error {
	deleted, err := r.x.store.Delete(ctx, P(cur.Row).Base().ID, cur.Version)
	if err == nil && !deleted {
		return abstractions.ErrNotFound
	}
	return err
}

// Owner reads the row of the owner an index row names, and reports whether it holds value.
func (r claimRows[T, P]) Owner(ctx context.Context, owner, value string) (*T, bool, error) {
	k, err := idPart(r.x.owner+" id", owner)
	if err != nil {
		return nil, false, nil
	}
	o, err := r.x.store.One(ctx, r.x.rowID(k))
	switch {
	case errors.Is(err, abstractions.ErrNotFound), errors.Is(err, abstractions.ErrInvalidKey):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return o, r.x.value(o) == value, nil
}

func (claimRows[T, P]) Same(a, b string) bool { return sameKey(a, b) }

// claim makes the index row of value point to owner (whose row already holds value), unless
// a row of the owners' partition (one a .NET service wrote, without an index row) or a live
// index row gives it to another owner.
func (x *index[T, P]) claim(ctx context.Context, owner, value string) error {
	if value == "" {
		return nil
	}
	rows, err := x.holders(ctx, value)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if !sameKey(x.ownerOf(r), owner) {
			return fmt.Errorf("%w: the %s %q belongs to %s %q; choose another", x.dup, x.what, value, x.owner, x.ownerOf(r))
		}
	}
	err = x.claims().Claim(ctx, value, owner)
	var held *claims.Held
	var busy *claims.Contended
	switch {
	case errors.As(err, &held):
		return fmt.Errorf("%w: the %s %q belongs to %s %q; choose another", x.dup, x.what, value, x.owner, held.Owner)
	case errors.As(err, &busy):
		return fmt.Errorf("%w: the index row of the %s %q kept changing during %d attempts; try again: %w",
			abstractions.ErrConcurrencyConflict, x.what, value, busy.Attempts, busy.Err)
	}
	return err
}

// release deletes the index row of value when it points to owner.
func (x *index[T, P]) release(ctx context.Context, owner, value string) error {
	if value == "" {
		return nil
	}
	return x.claims().Release(ctx, value, owner)
}

// lookup returns the owner row that holds value, or an error matching ErrNotFound: the
// owner its live index row names, and otherwise the first row of the owners' partition that
// holds it (a row a .NET service wrote, which has no index row).
func (x *index[T, P]) lookup(ctx context.Context, value string) (*T, error) {
	if value == "" {
		return nil, fmt.Errorf("%w: the normalised %s to look up is empty", abstractions.ErrInvalidArgument, x.what)
	}
	_, o, found, err := x.claims().Lookup(ctx, value)
	if err != nil || found {
		return o, err
	}
	rows, err := x.holders(ctx, value)
	if err != nil {
		return nil, err
	}
	if len(rows) > 0 {
		return rows[0], nil
	}
	pk, rk := abstractions.SplitID(x.id(value))
	return nil, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "find by " + x.what, Table: x.store.Table(),
		PartitionKey: pk, RowKey: rk, Message: fmt.Sprintf("no %s has the %s %q", x.owner, x.what, value)}
}

// stamped is a row with a concurrency stamp: a user or a role.
type stamped[T any, P abstractions.EntityPtr[T]] struct {
	store abstractions.Storage[T]
	what  string
	// stamp returns the row's concurrency stamp field.
	stamp func(*T) *string
	// assign copies the fields a caller may change from src to dst.
	assign   func(dst, src *T)
	attempts int
}

// replace writes the caller-changeable fields of v over the stored row with the id, when the
// stored concurrency stamp is v's, with a new stamp. It returns the row as it was and as it
// is now. A missing row fails with ErrNotFound, another stamp with ErrConcurrencyFailure.
func (s *stamped[T, P]) replace(ctx context.Context, id string, v *T) (old, stored *T, err error) {
	want := *s.stamp(v)
	out, err := abstractions.TryTransition[T, P](ctx, s.store, id,
		func(cur *T) bool { return *s.stamp(cur) == want },
		func(cur *T) error {
			before := *cur
			old = &before
			s.assign(cur, v)
			*s.stamp(cur) = newGUID()
			return nil
		}, &abstractions.RetryOptions{Attempts: s.attempts})
	if err != nil {
		return nil, nil, err
	}
	return old, out.Value, s.outcome(id, out, "update")
}

// restore puts back the fields of old, when the row is still the version written as now.
func (s *stamped[T, P]) restore(ctx context.Context, id string, old, now *T) {
	written := *s.stamp(now)
	_, _ = abstractions.TryTransition[T, P](ctx, s.store, id,
		func(cur *T) bool { return *s.stamp(cur) == written },
		func(cur *T) error {
			s.assign(cur, old)
			*s.stamp(cur) = newGUID()
			return nil
		}, &abstractions.RetryOptions{Attempts: s.attempts})
}

// outcome turns the expected branches of an outcome verb into the store's errors.
func (s *stamped[T, P]) outcome(id string, out abstractions.Outcome[T], op string) error {
	pk, rk := abstractions.SplitID(id)
	switch out.Status {
	case abstractions.OutcomeUpdated:
		return nil
	case abstractions.OutcomeNotFound:
		return &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.store.Table(), PartitionKey: pk, RowKey: rk,
			Message: "no " + s.what + " has this id"}
	case abstractions.OutcomePreconditionFailed:
		return fmt.Errorf("%w: %s %q changed since it was read (another concurrency stamp is stored); read it again and reapply the change",
			ErrConcurrencyFailure, s.what, rk)
	}
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.store.Table(), PartitionKey: pk, RowKey: rk,
		Message: fmt.Sprintf("other writers changed the %s during each of %d attempts; try again", s.what, out.Attempts)}
}
