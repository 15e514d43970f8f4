package engine

// Handle carries a store's Table to the packages of the tables module that build on a
// store (tables/index): tables.Store embeds it through an unexported alias. Its one method
// is unexported, so the store shows nothing for it, and only this module's packages, through
// Of, reach the Table; the compiler checks every call (see abstractions/driver for the
// technique).
type Handle struct{ t *Table }

// NewHandle returns the handle of t.
func NewHandle(t *Table) Handle { return Handle{t} }

func (h Handle) engineTable() *Table { return h.t }

// Holder is a value that embeds a Handle: a store.
type Holder interface{ engineTable() *Table }

// Of returns the Table a store's handle carries.
func Of(h Holder) *Table { return h.engineTable() }
