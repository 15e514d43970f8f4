package abstractions

import (
	"fmt"
	"reflect"
	"runtime"
)

// A FieldRef identifies one field of a stored type by where it sits in the struct, which is
// how a store finds the field's column without expression trees: a selector such as
// func(c *Customer) *string { return &c.Name } is called once on a zero value, and the
// address it returns, minus the struct's own address, is the field's offset.
//
// FieldRefs are made by Field and NullableField; stores read them.
type FieldRef struct {
	// Owner is the stored type the selector takes.
	Owner reflect.Type
	// Type is the selected field's Go type.
	Type reflect.Type
	// Offset is the field's byte offset from the start of Owner.
	Offset uintptr
	// Err says why the selector could not be resolved (it panicked on a zero value, which
	// is what a field below a pointer-held struct does, or it returned an address outside
	// its argument). A store refuses a query that uses such a field, before sending it.
	Err error
}

// resolve calls sel on a zero T and turns the address it returns into an offset.
func resolve[T, V any](sel func(*T) *V) (ref FieldRef) {
	ref.Owner, ref.Type = reflect.TypeFor[T](), reflect.TypeFor[V]()
	if sel == nil {
		ref.Err = fmt.Errorf("%w: the field selector is nil", ErrInvalidArgument)
		return ref
	}
	zero := new(T)
	defer func() {
		if r := recover(); r != nil {
			ref.Err = fmt.Errorf("%w: the selector of a %v field of %v failed on a zero %v (%v); "+
				"a field below a struct held by pointer has no fixed column position: hold the nested struct by value, "+
				"or filter on another field", ErrNotSupported, ref.Type, ref.Owner, ref.Owner, r)
		}
	}()
	p := sel(zero)
	if p == nil {
		ref.Err = fmt.Errorf("%w: the selector of a %v field of %v returned nil; return the field's address, as in &v.Name",
			ErrInvalidArgument, ref.Type, ref.Owner)
		return ref
	}
	base := reflect.ValueOf(zero).Pointer()
	addr := reflect.ValueOf(p).Pointer()
	runtime.KeepAlive(zero)
	if addr < base || addr+ref.Type.Size() > base+ref.Owner.Size() || (ref.Type.Size() == 0 && addr == base+ref.Owner.Size()) {
		ref.Err = fmt.Errorf("%w: the selector of a %v field of %v returned an address outside its argument; "+
			"return the address of one of its fields (held by value), as in &v.Address.City", ErrNotSupported, ref.Type, ref.Owner)
		return ref
	}
	ref.Offset = addr - base
	return ref
}

// A Selector names a field of T for a projection (Query.Select). TypedField implements it;
// selecting a nested struct selects all its columns.
type Selector[T any] interface {
	// Ref returns the field the selector names.
	Ref() FieldRef
}

// TypedField is a field of T holding values of type V, from which filters are built:
//
//	name := abstractions.Field(func(c *Customer) *string { return &c.Name })
//	q := abstractions.Query[Customer]{Where: name.Eq("Alice")}
//
// Build it once (a package-level variable, say) and reuse it.
type TypedField[T, V any] struct {
	ref FieldRef
}

// Field returns the field sel selects. sel must return the address of a field of its
// argument, reached without following a pointer: &c.Name or &c.Address.City, not
// &c.Home.City when Home is a *Address. A selector that breaks the rule does not fail here:
// every query that uses the field is refused with an error saying why.
func Field[T, V any](sel func(*T) *V) TypedField[T, V] {
	return TypedField[T, V]{ref: resolve(sel)}
}

// NullableField returns the field of pointer type *V that sel selects, compared with plain
// values of V: NullableField(func(c *Customer) **string { return &c.Nickname }).Eq("Al").
// A nil pointer stores no column, so the rules for absent columns apply: Ne, and any
// comparison under Not, are refused.
func NullableField[T, V any](sel func(*T) **V) TypedField[T, V] {
	return TypedField[T, V]{ref: resolve(sel)}
}

// Ref returns the field's reference.
func (f TypedField[T, V]) Ref() FieldRef { return f.ref }

func (f TypedField[T, V]) cmp(op FilterOp, v V) Filter[T] {
	return Filter[T]{node: &FilterNode{Op: op, Field: f.ref, Value: v}}
}

// Eq selects the rows whose field equals v.
func (f TypedField[T, V]) Eq(v V) Filter[T] { return f.cmp(FilterEq, v) }

// Ne selects the rows whose field differs from v. It is refused on string, time and pointer
// fields: a row without the column (written before the field existed, or a nil pointer)
// would not match on the service, although its Go value differs from v.
func (f TypedField[T, V]) Ne(v V) Filter[T] { return f.cmp(FilterNe, v) }

// Lt selects the rows whose field is less than v, in the stored order. Ordering is refused on
// text-stored types (enums), uint and uint64 (stored as signed bits) and GUIDs.
func (f TypedField[T, V]) Lt(v V) Filter[T] { return f.cmp(FilterLt, v) }

// Le selects the rows whose field is at most v; see Lt.
func (f TypedField[T, V]) Le(v V) Filter[T] { return f.cmp(FilterLe, v) }

// Gt selects the rows whose field is greater than v; see Lt.
func (f TypedField[T, V]) Gt(v V) Filter[T] { return f.cmp(FilterGt, v) }

// Ge selects the rows whose field is at least v; see Lt.
func (f TypedField[T, V]) Ge(v V) Filter[T] { return f.cmp(FilterGe, v) }

// IsTrue selects the rows whose bool field sel selects is true (a bare Boolean condition).
func IsTrue[T any](sel func(*T) *bool) Filter[T] {
	return Filter[T]{node: &FilterNode{Op: FilterTrue, Field: resolve(sel)}}
}

// FilterOp is the operation of a FilterNode.
type FilterOp uint8

// The filter operations.
const (
	// FilterEq holds when the field equals the value.
	FilterEq FilterOp = iota + 1
	// FilterNe holds when the field differs from the value.
	FilterNe
	// FilterLt holds when the field is less than the value.
	FilterLt
	// FilterLe holds when the field is at most the value.
	FilterLe
	// FilterGt holds when the field is greater than the value.
	FilterGt
	// FilterGe holds when the field is at least the value.
	FilterGe
	// FilterAnd holds when every operand holds.
	FilterAnd
	// FilterOr holds when an operand holds.
	FilterOr
	// FilterNot holds when its one operand does not.
	FilterNot
	// FilterTrue holds when the Boolean field is true.
	FilterTrue
)

// String returns the operation's OData name.
func (o FilterOp) String() string {
	switch o {
	case FilterEq:
		return "eq"
	case FilterNe:
		return "ne"
	case FilterLt:
		return "lt"
	case FilterLe:
		return "le"
	case FilterGt:
		return "gt"
	case FilterGe:
		return "ge"
	case FilterAnd:
		return "and"
	case FilterOr:
		return "or"
	case FilterNot:
		return "not"
	case FilterTrue:
		return "true"
	}
	return "FilterOp(?)"
}

// A FilterNode is one node of a filter's tree. Filters are built with the methods of
// TypedField and with And, Or, Not and IsTrue; stores translate the tree to the service's
// filter language. Nodes are immutable once built.
type FilterNode struct {
	// Op is the node's operation.
	Op FilterOp
	// Field is the compared field (comparisons and FilterTrue).
	Field FieldRef
	// Value is the value a comparison compares with, of the field's type (or, for a
	// NullableField, of the type it points to).
	Value any
	// Operands are the operands of FilterAnd, FilterOr (any number) and FilterNot (one).
	Operands []*FilterNode
}

// Filter is a condition on rows of T, evaluated by the table service. The zero Filter
// selects every row.
//
// The service compares a column's cells in the type the field stores (an Int64 cell also
// with the value of a field stored as Edm.Int32, a Double cell with that of any integer
// field). A cell of another type, which another program or an older version of T wrote,
// ranks below every value: Eq, Gt and Ge never select its row, and Ne, Lt and Le always do,
// whatever it holds. Such a row then fails with ErrIntegrity when its cell does not fit the
// field, as every read of it does, and is returned as read when the field takes the cell (an
// Edm.Int32 cell under an int field), although the filter never looked at its value. The
// emulator, Azurite, compares such cells loosely and selects other rows.
type Filter[T any] struct {
	node *FilterNode
}

// IsZero reports whether the filter is the zero Filter, which selects every row.
func (f Filter[T]) IsZero() bool { return f.node == nil }

// Root returns the filter's tree, nil for the zero Filter.
func (f Filter[T]) Root() *FilterNode { return f.node }

func combine[T any](op FilterOp, fs []Filter[T]) Filter[T] {
	n := &FilterNode{Op: op, Operands: make([]*FilterNode, 0, len(fs))}
	for _, f := range fs {
		n.Operands = append(n.Operands, f.node)
	}
	return Filter[T]{node: n}
}

// And holds when every filter holds. It needs at least one filter, and none may be the zero
// Filter; a store refuses it otherwise.
func And[T any](fs ...Filter[T]) Filter[T] { return combine(FilterAnd, fs) }

// Or holds when any filter holds. It needs at least one filter, and none may be the zero
// Filter; a store refuses it otherwise.
func Or[T any](fs ...Filter[T]) Filter[T] { return combine(FilterOr, fs) }

// Not holds when f does not. Under Not, comparisons on string, time and pointer fields are
// refused: a row without the column would match on the service although its Go value may
// equal the one compared with.
func Not[T any](f Filter[T]) Filter[T] {
	return Filter[T]{node: &FilterNode{Op: FilterNot, Operands: []*FilterNode{f.node}}}
}
