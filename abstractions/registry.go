package abstractions

import (
	"fmt"
	"reflect"
	"sync"
)

// A TypeRegistry names the struct types a [PolyStorage] may write and create: the row of an
// item carries its type's name, and a read creates only the type that name is registered
// under (or that the registry's explicit fallback returns). A name stored in a row is data;
// resolving it any other way would let stored bytes choose what code runs.
//
// Register each type where it is defined, in the domain package, which needs no import but
// this one:
//
//	var Events abstractions.TypeRegistry
//
//	func init() {
//		if err := abstractions.RegisterType[Opened](&Events, "account.opened"); err != nil {
//			panic(err)
//		}
//	}
//
// The zero value is an empty registry, ready to use. A TypeRegistry is safe for concurrent
// use, and must not be copied after first use; register types before the reads that need
// them.
type TypeRegistry struct {
	mu       sync.RWMutex
	byName   map[string]reflect.Type
	byType   map[reflect.Type]string
	fallback func(name string) (reflect.Type, bool)
}

// RegisterType adds struct type T to r under name, or under its package path and name (such
// as "example.com/shop/orders.OrderPlaced") when name is empty. The first name a type is
// registered under is the one written; later names are read too, which keeps rows written
// under an old name readable. Registering a type again under a name it already has does
// nothing.
//
// Refused with an error matching ErrInvalidArgument: a nil r, a T that is not a struct (an
// item is stored as a struct; register S, not *S), and a name already given to another
// type. A struct the storage layer cannot map (a channel field, say) registers, and is
// refused by the store that first writes or reads it.
func RegisterType[T any](r *TypeRegistry, name string) error {
	t := reflect.TypeFor[T]()
	if r == nil {
		return fmt.Errorf("%w: registering %v in a nil TypeRegistry; declare one (var types abstractions.TypeRegistry) and pass its address",
			ErrInvalidArgument, t)
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("%w: %v is not a struct; register the struct type an item is (S, not *S), whose pointer implements the store's base",
			ErrInvalidArgument, t)
	}
	if name == "" {
		name = defaultTypeName(t)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.byName[name]; ok {
		if prev == t {
			return nil
		}
		return fmt.Errorf("%w: the type name %q is already registered for %v; give %v a name of its own", ErrInvalidArgument, name, prev, t)
	}
	if r.byName == nil {
		r.byName, r.byType = map[string]reflect.Type{}, map[reflect.Type]string{}
	}
	r.byName[name] = t
	if _, ok := r.byType[t]; !ok {
		r.byType[t] = name
	}
	return nil
}

// SetFallback sets a function consulted for a name no registration knows, such as one that
// maps the names an older writer used. A store checks what it returns as it checks a
// registered type: a struct whose pointer implements the store's base, or the read is
// refused. nil removes the fallback.
func (r *TypeRegistry) SetFallback(f func(name string) (reflect.Type, bool)) {
	r.mu.Lock()
	r.fallback = f
	r.mu.Unlock()
}

// Lookup returns the type registered under name, or the fallback's answer for a name no
// registration knows. A nil registry knows no name.
func (r *TypeRegistry) Lookup(name string) (reflect.Type, bool) {
	if r == nil {
		return nil, false
	}
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

// NameOf returns the name t is written under: the first it was registered with. It reports
// false for a type that is not registered (the fallback is not consulted) and in a nil
// registry.
func (r *TypeRegistry) NameOf(t reflect.Type) (string, bool) {
	if r == nil {
		return "", false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	n, ok := r.byType[t]
	return n, ok
}

// defaultTypeName is the name RegisterType gives a type registered without one: its package
// path and name, or, for an unnamed type, its Go spelling.
func defaultTypeName(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}
