package engine

import (
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Handle carries a store's Table to the packages of the tables module that build on a
// store (tables/index): tables.Store embeds it through an unexported alias. Its methods are
// unexported, so the store shows nothing for them, and only this module's packages, through
// Of and Decode, reach the Table; the compiler checks every call (see abstractions/driver
// for the technique).
type Handle struct {
	t      *Table
	decode func(*service.Row) (any, error)
}

// NewHandle returns the handle of t; decode turns a whole row of t into a *T of the
// store's type, as the store's own reads decode it (nil for a store of no one type).
func NewHandle(t *Table, decode func(*service.Row) (any, error)) Handle {
	return Handle{t, decode}
}

func (h Handle) engineTable() *Table { return h.t }
func (h Handle) engineDecode(r *service.Row) (any, error) {
	if h.decode == nil {
		return nil, fmt.Errorf("%w: this store decodes no rows into one Go type (a polymorphic store)", abstractions.ErrNotSupported)
	}
	return h.decode(r)
}

// Holder is a value that embeds a Handle: a store.
type Holder interface {
	engineTable() *Table
	engineDecode(*service.Row) (any, error)
}

// Of returns the Table a store's handle carries.
func Of(h Holder) *Table { return h.engineTable() }

// Decode decodes a whole row of a store's table (Materialize's, for a split-aware type) into
// the *T of the store's type, as the store's reads do.
func Decode[T any](h Holder, r *service.Row) (*T, error) {
	v, err := h.engineDecode(r)
	if err != nil {
		return nil, err
	}
	return v.(*T), nil
}
