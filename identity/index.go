package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

// index maps a normalised value (a user name, an email, a role name) to the one row that
// holds it. The .NET package finds such a row with a query of the user (or role) partition
// filtered on the value; these stores keep, besides, an index row in the same table
// (partition HashKey(value), row key a constant), so that a lookup is two point reads and
// two stores claiming one value at once cannot both win. The index rows are this module's
// own: the .NET package never reads those partitions, and does not write index rows, so a
// lookup that finds none (or a stale one) falls back to the .NET package's query. Its rules:
//
//   - the owner's row is written first and the index row claimed after, so an index row is
//     valid only while its owner's row exists and holds the value (a crash between the two
//     steps leaves a stale index row, never a valid row without its index);
//   - a claim first queries the owners' partition for another row holding the value (one a
//     .NET service wrote has no index row), then creates the index row, never upserting it:
//     a live one makes the claim fail with the index's duplicate error; a stale one is taken
//     over by a write on condition of the version read, so two racing claims cannot both
//     win;
//   - a lookup checks the value on the index row and on the owner's row, so a stale index
//     row, and two values with one digest, are never taken for a match.
type index[T any] struct {
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

func (x *index[T]) id(value string) string { return HashKey(value) + "|" + x.row }

// ownerRow reads the row of the owner an index row names.
func (x *index[T]) ownerRow(ctx context.Context, owner string) (*T, error) {
	k, err := idPart(x.owner+" id", owner)
	if err != nil {
		return nil, err
	}
	return x.store.One(ctx, x.rowID(k))
}

// live reports whether the index row cur is valid: its owner's row exists and holds the
// value the index row names.
func (x *index[T]) live(ctx context.Context, cur *T) (bool, error) {
	o, err := x.ownerRow(ctx, x.ownerOf(cur))
	switch {
	case errors.Is(err, abstractions.ErrNotFound), errors.Is(err, abstractions.ErrInvalidKey):
		return false, nil
	case err != nil:
		return false, err
	}
	return x.value(o) == x.value(cur), nil
}

// claim makes the index row of value point to owner (whose row already holds value).
func (x *index[T]) claim(ctx context.Context, owner, value string) error {
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
	id := x.id(value)
	var lastErr error
	for attempt := 0; attempt < x.attempts; attempt++ {
		var row T
		x.point(&row, id, owner, value)
		err := x.store.Create(ctx, &row)
		if err == nil {
			return nil
		}
		if !errors.Is(err, abstractions.ErrDuplicateKey) {
			return err
		}
		lastErr = err
		cur, err := x.store.One(ctx, id)
		if errors.Is(err, abstractions.ErrNotFound) {
			continue // released meanwhile: create it again
		}
		if err != nil {
			return err
		}
		if x.value(cur) == value && sameKey(x.ownerOf(cur), owner) {
			return nil // ours already (a retried call)
		}
		live, err := x.live(ctx, cur)
		if err != nil {
			return err
		}
		if live {
			return fmt.Errorf("%w: the %s %q belongs to %s %q; choose another: %w", x.dup, x.what, value, x.owner, x.ownerOf(cur), lastErr)
		}
		// A stale row (its owner is gone or moved on): take it over, on condition of the
		// version read.
		x.point(cur, id, owner, value)
		err = x.store.Update(ctx, cur, abstractions.Strict)
		if err == nil {
			return nil
		}
		if !errors.Is(err, abstractions.ErrConcurrencyConflict) && !errors.Is(err, abstractions.ErrNotFound) {
			return err
		}
		lastErr = err
	}
	return fmt.Errorf("%w: the index row of the %s %q kept changing during %d attempts; try again: %w",
		abstractions.ErrConcurrencyConflict, x.what, value, x.attempts, lastErr)
}

// release deletes the index row of value when it points to owner.
func (x *index[T]) release(ctx context.Context, owner, value string) error {
	if value == "" {
		return nil
	}
	id := x.id(value)
	cur, err := x.store.One(ctx, id)
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if x.value(cur) != value || !sameKey(x.ownerOf(cur), owner) {
		return nil // another owner's
	}
	_, err = x.store.Delete(ctx, id, "")
	return err
}

// lookup returns the owner row that holds value, or an error matching ErrNotFound: the
// owner its index row names when that row holds the value, and otherwise the first row of
// the owners' partition that holds it (a row a .NET service wrote, which has no index row).
func (x *index[T]) lookup(ctx context.Context, value string) (*T, error) {
	if value == "" {
		return nil, fmt.Errorf("%w: the normalised %s to look up is empty", abstractions.ErrInvalidArgument, x.what)
	}
	id := x.id(value)
	cur, err := x.store.One(ctx, id)
	switch {
	case err == nil && x.value(cur) == value:
		o, err := x.ownerRow(ctx, x.ownerOf(cur))
		switch {
		case err == nil && x.value(o) == value:
			return o, nil
		case err != nil && !errors.Is(err, abstractions.ErrNotFound) && !errors.Is(err, abstractions.ErrInvalidKey):
			return nil, err
		}
	case err != nil && !errors.Is(err, abstractions.ErrNotFound):
		return nil, err
	}
	rows, err := x.holders(ctx, value)
	if err != nil {
		return nil, err
	}
	if len(rows) > 0 {
		return rows[0], nil
	}
	pk, rk := abstractions.SplitID(id)
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
