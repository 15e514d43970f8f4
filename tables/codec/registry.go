package codec

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// A TypeRegistry names the struct types a polymorphic read may create. Only registered
// types (and those an explicit fallback returns) are ever created from the name a row
// carries: a name stored in a row is data, and resolving it any other way would let stored
// bytes choose what code runs. A TypeRegistry is safe for concurrent use; register types
// before the reads that need them.
type TypeRegistry struct {
	mu       sync.RWMutex
	byName   map[string]reflect.Type
	byType   map[reflect.Type]string
	fallback func(name string) (reflect.Type, bool)
}

// NewTypeRegistry returns an empty registry.
func NewTypeRegistry() *TypeRegistry {
	return &TypeRegistry{byName: map[string]reflect.Type{}, byType: map[reflect.Type]string{}}
}

// Register adds struct type T under name (DefaultTypeName(T) when name is empty). The first
// name a type is registered under is the one Options.WriteTypeName writes; later names are
// read too, which keeps rows written under an old name readable. Register refuses a name
// already given to another type, and a T the codec cannot map (with its *PlanError).
func Register[T any](r *TypeRegistry, name string) error {
	t := reflect.TypeFor[T]()
	if _, err := planFor(t); err != nil {
		return err
	}
	if name == "" {
		name = DefaultTypeName(t)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.byName[name]; ok {
		if prev == t {
			return nil
		}
		return fmt.Errorf("codec: the type name %q is already registered for %v", name, prev)
	}
	r.byName[name] = t
	if _, ok := r.byType[t]; !ok {
		r.byType[t] = name
	}
	return nil
}

// SetFallback sets a function consulted for a name that is not registered, such as one that
// maps the names an older writer used. What it returns is checked like a registered type.
// nil removes the fallback.
func (r *TypeRegistry) SetFallback(f func(name string) (reflect.Type, bool)) {
	r.mu.Lock()
	r.fallback = f
	r.mu.Unlock()
}

// Lookup returns the type registered under name, or the fallback's answer.
func (r *TypeRegistry) Lookup(name string) (reflect.Type, bool) {
	r.mu.RLock()
	t, ok := r.byName[name]
	f := r.fallback
	r.mu.RUnlock()
	if ok {
		return t, true
	}
	if f != nil {
		return f(name)
	}
	return nil, false
}

// NameOf returns the name t is written under: the first it was registered with.
func (r *TypeRegistry) NameOf(t reflect.Type) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n, ok := r.byType[t]
	return n, ok
}

func (r *TypeRegistry) nameOf(t reflect.Type) string {
	if r != nil {
		if n, ok := r.NameOf(t); ok {
			return n
		}
	}
	return DefaultTypeName(t)
}

// DefaultTypeName returns the name a type is written under when no registry names it: its
// package path and name, such as "example.com/shop/orders.OrderPlaced".
func DefaultTypeName(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// DecodeAs reads a row written with Options.WriteTypeName as the type its _TypeName column
// names, which must be registered in reg (or returned by its fallback), and returns it as a
// Base: a pointer to the new value when that is assignable to Base (an interface the pointer
// implements, or *S for the type S itself), else the value itself. A row without a
// _TypeName, a name reg does not resolve, or a type not assignable to Base is refused with an
// error matching abstractions.ErrIntegrity, before anything is decoded.
//
// Unlike Decode, DecodeAs does not recompute an entity's ID from the row keys: the keys of a
// polymorphic row (a version, an inverted tick count) need not say anything about the ID, so
// ID is the stored Id column as it is.
func DecodeAs[Base any](row *service.Row, reg *TypeRegistry, opts *Options) (Base, error) {
	var zero Base
	if row == nil {
		return zero, errNilRow
	}
	cell, ok := row.Get(TypeNameColumn)
	if !ok || cell.Kind() != service.KindString {
		return zero, fmt.Errorf("%w: the row (%q, %q) carries no %s string column", abstractions.ErrIntegrity,
			row.PartitionKey, row.RowKey, TypeNameColumn)
	}
	name := cell.Str()
	var t reflect.Type
	if reg != nil {
		t, ok = reg.Lookup(name)
	}
	if !ok || t == nil || t.Kind() != reflect.Struct {
		return zero, fmt.Errorf("%w: the row (%q, %q) names the type %.200q, which is not registered",
			abstractions.ErrIntegrity, row.PartitionKey, row.RowKey, name)
	}
	base := reflect.TypeFor[Base]()
	byPointer := reflect.PointerTo(t).AssignableTo(base)
	if !byPointer && !t.AssignableTo(base) {
		return zero, fmt.Errorf("%w: the row (%q, %q) names %v, which is not assignable to %v",
			abstractions.ErrIntegrity, row.PartitionKey, row.RowKey, t, base)
	}
	pl, err := planFor(t)
	if err != nil {
		return zero, err
	}
	v := reflect.New(t)
	if err := pl.decode(row, v.UnsafePointer(), false); err != nil {
		return zero, err
	}
	if byPointer {
		return v.Interface().(Base), nil
	}
	return v.Elem().Interface().(Base), nil
}
