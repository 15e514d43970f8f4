package abstractions

import (
	"fmt"
	"reflect"
	"runtime"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// resolve calls sel on a zero T and turns the address it returns into an offset.
func resolve[T, V any](sel func(*T) *V) (ref backend.Field) {
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

// A Selector names a field of T for a projection ([Query.Select]): every [TypedField] of T
// is one, and nothing else is. Selecting a nested struct selects all its columns.
type Selector[T any] interface {
	selector
	of(*T) // only fields of T select in a query of T
}

// selector is the method through which driver.FieldOf reads the field a TypedField names
// (which its fieldRef holds).
type selector = backend.Selector

// TypedField is a field of T holding values of type V: the one way to name a field, in
// filters, projections ([Query.Select]) and patches ([Set]). Make it with [Field], or with
// [NullableField] for a pointer field used with plain values.
//
//	name := abstractions.Field(func(c *Customer) *string { return &c.Name })
//	q := abstractions.Query[Customer]{Where: name.Eq("Alice")}
//	abstractions.Set(p, name, "Alice")
//
// Build it once (a package-level variable, say) and reuse it. The zero TypedField names no
// field: a query or patch that uses it is refused with [ErrInvalidArgument].
type TypedField[T, V any] struct {
	fieldRef
	// nullable: made by NullableField, so the field is a *V and values are Vs.
	nullable bool
}

// Field returns the field sel selects. sel must return the address of a field of its
// argument, reached without following a pointer: &c.Name or &c.Address.City, not
// &c.Home.City when Home is a *Address. A selector that breaks the rule does not fail here:
// every query and patch that uses the field is refused with an error saying why
// (ErrInvalidArgument for a nil selector or one that returns nil, ErrNotSupported for one
// that panics on a zero T or returns an address outside it).
func Field[T, V any](sel func(*T) *V) TypedField[T, V] {
	return TypedField[T, V]{fieldRef: backend.NewFieldRef(resolve(sel))}
}

// NullableField returns the field of pointer type *V that sel selects, used with plain
// values of V: NullableField(func(c *Customer) **string { return &c.Nickname }).Eq("Al"),
// and Set(p, nickname, "Al") stores a pointer to a copy of "Al". A nil pointer stores no
// column, so the rules for absent columns apply: Ne, and any comparison under Not, are
// refused. ([Field] on the same selector names the field with *V values instead.)
func NullableField[T, V any](sel func(*T) **V) TypedField[T, V] {
	return TypedField[T, V]{fieldRef: backend.NewFieldRef(resolve(sel)), nullable: true}
}

// fieldRef names backend.FieldRef unexported, so that the field TypedField embeds (what
// driver.FieldOf reads) is unexported.
type fieldRef = backend.FieldRef

// field returns the field's reference; the zero TypedField's says it names no field (and,
// unlike driver.FieldOf's, which cannot know them, names T and V).
func (f TypedField[T, V]) field() backend.Field {
	ref := backend.RefField(f.fieldRef, ErrInvalidArgument)
	if ref.Owner == nil {
		ref.Owner, ref.Type = reflect.TypeFor[T](), reflect.TypeFor[V]()
	}
	return ref
}

func (TypedField[T, V]) of(*T) {}

func (f TypedField[T, V]) cmp(op backend.Op, v V) Filter[T] {
	return filterOf[T](&backend.Node{Op: op, Field: f.field(), Value: v})
}

// Eq selects the rows whose field equals v.
func (f TypedField[T, V]) Eq(v V) Filter[T] { return f.cmp(backend.OpEq, v) }

// Ne selects the rows whose field differs from v. It is refused on string, time and pointer
// fields: a row without the column (written before the field existed, or a nil pointer)
// would not match on the service, although its Go value differs from v.
func (f TypedField[T, V]) Ne(v V) Filter[T] { return f.cmp(backend.OpNe, v) }

// Lt selects the rows whose field is less than v, in the stored order. Ordering is refused on
// text-stored types (enums), uint and uint64 (stored as signed bits) and GUIDs.
func (f TypedField[T, V]) Lt(v V) Filter[T] { return f.cmp(backend.OpLt, v) }

// Le selects the rows whose field is at most v; see Lt.
func (f TypedField[T, V]) Le(v V) Filter[T] { return f.cmp(backend.OpLe, v) }

// Gt selects the rows whose field is greater than v; see Lt.
func (f TypedField[T, V]) Gt(v V) Filter[T] { return f.cmp(backend.OpGt, v) }

// Ge selects the rows whose field is at least v; see Lt.
func (f TypedField[T, V]) Ge(v V) Filter[T] { return f.cmp(backend.OpGe, v) }

// IsTrue selects the rows whose bool field f is true (a bare Boolean condition, where
// f.Eq(true) is a comparison). On a NullableField a row with a nil pointer does not match,
// and IsTrue under Not is refused.
func IsTrue[T any](f TypedField[T, bool]) Filter[T] {
	return filterOf[T](&backend.Node{Op: backend.OpTrue, Field: f.field()})
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
	tree
}

// tree is the filter's tree, nil for the zero Filter, which driver.Root reads.
type tree = backend.Part[*backend.Node]

func filterOf[T any](n *backend.Node) Filter[T] { return Filter[T]{backend.NewPart(n)} }

// IsZero reports whether the filter is the zero Filter, which selects every row.
func (f Filter[T]) IsZero() bool { return f.root() == nil }

// root is the filter's tree, nil for the zero Filter.
func (f Filter[T]) root() *backend.Node { return backend.Read(f) }

func combine[T any](op backend.Op, fs []Filter[T]) Filter[T] {
	n := &backend.Node{Op: op, Operands: make([]*backend.Node, 0, len(fs))}
	for _, f := range fs {
		n.Operands = append(n.Operands, f.root())
	}
	return filterOf[T](n)
}

// And holds when every filter holds. It needs at least one filter, and none may be the zero
// Filter; a store refuses it otherwise.
func And[T any](fs ...Filter[T]) Filter[T] { return combine(backend.OpAnd, fs) }

// Or holds when any filter holds. It needs at least one filter, and none may be the zero
// Filter; a store refuses it otherwise.
func Or[T any](fs ...Filter[T]) Filter[T] { return combine(backend.OpOr, fs) }

// Not holds when f does not. Under Not, comparisons on string, time and pointer fields are
// refused: a row without the column would match on the service although its Go value may
// equal the one compared with.
func Not[T any](f Filter[T]) Filter[T] {
	return filterOf[T](&backend.Node{Op: backend.OpNot, Operands: []*backend.Node{f.root()}})
}
