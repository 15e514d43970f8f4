// Package codec converts Go structs to table cells and back: the serializer every store,
// both backends, the cache and the large-value planner share. What it does to each Go type,
// as a user sees it, is documented in docs/mapping.md; this comment keeps what only the
// engine needs.
//
//	row, err := codec.EncodeRow(&customer, "eu", "alice", nil)
//	back, err := codec.Decode[Customer](&row, nil)
//
// The codec produces typed cells (service.Value); it writes no JSON of its own for the wire.
// The Azure adapter writes the request body from the cells with explicit EDM annotations, and
// a read converts each cell by the type of the field it lands in.
//
// # Plans
//
// The first use of a type builds its Plan by reflection (which fields, which columns, which
// converter for each) and caches it, as encoding/json does. Encode and Decode then run from the
// plan: each column is reached through precomputed byte offsets (and the pointers to follow
// for a struct held by pointer) and converted by a function chosen when the plan was built, so
// the hot path performs no reflection lookups by name. A type the codec cannot map is refused
// when its plan is built, with a *PlanError naming the field and the remedy, and stays refused.
// PlanOf exposes a plan's fields, with their columns, EDM types and byte offsets: a selector
// func(*T) *V called on a zero T yields the offset that Plan.FieldByOffset turns into a column.
//
// # Large values and files
//
// A type with a large value, or a type-level large-value option, is split-aware
// (Plan.LargeValues): EncodeLarge hands its large values whole to the planner of package
// largevalue, without the oversized policy. The codec neither writes nor reads a file field
// (Encode refuses one with ErrNotSupported, Decode leaves it nil): EncodeLarge hands the
// *File to the store, and the store sets what it reads with SetFile.
//
// # Type discriminator
//
// With Options.WriteTypeName, Encode adds the _TypeName column; DecodeAs reads such a row as
// the type its name resolves to in an abstractions.TypeRegistry and refuses a type not
// assignable to the requested base with an error matching abstractions.ErrIntegrity.
//
// # Errors
//
// *PlanError (matching abstractions.ErrNotSupported) reports a type the codec refuses;
// *ValueError a value that cannot be written or a cell that does not fit its field;
// *OversizedCellError a value too large for one cell. Decode never panics, whatever a row
// holds.
package codec
