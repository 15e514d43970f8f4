package abstractions

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// Patch is a partial update of one row of T: the fields to write, each named by a
// [TypedField] (the same fields filters use), and the conditions of the write. Build it with
// [Set]; the zero value is an empty patch ready to use. A Patch is not safe for concurrent
// modification, but a built one may be sent by several goroutines.
//
//	balance := abstractions.Field(func(c *Customer) *float64 { return &c.Balance })
//	city := abstractions.Field(func(c *Customer) *string { return &c.Address.City })
//
//	p := abstractions.NewPatch[Customer]().WithETag(read.ETag)
//	abstractions.Set(p, balance, 250)
//	abstractions.Set(p, city, "Lviv")
//	etag, err := customers.Patch(ctx, "eu|alice", p)
//
// A field of a nested struct writes its flattened column (Address.City → Address_City) and
// leaves the sibling columns alone. Concurrent patches of disjoint fields all land: the
// merge is atomic per request and touches only the cells it names.
type Patch[T any] struct {
	patchPart
}

// patchPart holds what the patch sets and its conditions, which driver.PatchOf reads.
type patchPart = backend.Part[backend.Patch]

// view is what p holds.
func (p *Patch[T]) view() backend.Patch { return backend.Read(p) }

// keep makes v what p holds.
func (p *Patch[T]) keep(v backend.Patch) { p.patchPart = backend.NewPart(v) }

// NewPatch returns an empty patch of T.
func NewPatch[T any]() *Patch[T] { return &Patch[T]{} }

// Set records that p writes v into the field f and returns p, so calls chain. For a field
// made by [NullableField] the field is a *V, and Set stores a pointer to a copy of v. A field
// that could not be resolved (see [Field]), or the zero TypedField, makes the patch fail when
// it is sent: with ErrInvalidArgument for a nil selector, one that returned nil or the zero
// TypedField, with ErrNotSupported for a selector that panicked on a zero T (it followed a
// nil pointer) or returned an address outside its argument. Setting one field twice keeps
// the last value.
func Set[T, V any](p *Patch[T], f TypedField[T, V], v V) *Patch[T] {
	held := p.view()
	if held.Err != nil {
		return p
	}
	ref := f.field()
	if ref.Err != nil {
		held.Err = ref.Err
		p.keep(held)
		return p
	}
	val := reflect.New(reflect.TypeFor[V]())
	val.Elem().Set(reflect.ValueOf(&v).Elem())
	if !f.nullable {
		val = val.Elem()
	}
	pf := backend.PatchField{Offset: ref.Offset, Type: ref.Type, Path: fieldPath(ref.Owner, ref.Offset, ref.Type), Value: val}
	for i := range held.Fields {
		if held.Fields[i].Offset == pf.Offset && held.Fields[i].Type == pf.Type {
			held.Fields[i] = pf
			return p
		}
	}
	held.Fields = append(held.Fields, pf)
	p.keep(held)
	return p
}

// WithETag makes the patch conditional: it applies only while the stored row still has this
// version (the ETag of the entity you read), so a patch based on a stale read fails with
// ErrConcurrencyConflict instead of overwriting. An empty etag makes it unconditional again;
// a value that is not an entity tag (unquoted, "*", control characters) makes the patch fail
// with ErrInvalidArgument when it is sent.
// Like Set, it changes p itself and returns it; build a patch fully before sharing it.
func (p *Patch[T]) WithETag(etag string) *Patch[T] {
	v := p.view()
	v.ETag = etag
	p.keep(v)
	return p
}

// AllowProtected lets the patch write protected fields; it changes p itself and returns it. Patches do not consult the
// account's Authorizer (they read nothing to compare with), so call this only after the
// caller's right to change them has been checked.
func (p *Patch[T]) AllowProtected() *Patch[T] {
	v := p.view()
	v.AllowProtected = true
	p.keep(v)
	return p
}

// fieldPath names the field of type vt at offset off of struct t, following structs held by
// value, or describes the address when no field matches.
func fieldPath(t reflect.Type, off uintptr, vt reflect.Type) string {
	var parts []string
	for t.Kind() == reflect.Struct {
		found := false
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if off < sf.Offset || off >= sf.Offset+max(sf.Type.Size(), 1) {
				continue
			}
			parts = append(parts, sf.Name)
			if off == sf.Offset && sf.Type == vt {
				return strings.Join(parts, ".")
			}
			t, off, found = sf.Type, off-sf.Offset, true
			break
		}
		if !found {
			break
		}
	}
	return fmt.Sprintf("(the %v at byte %d of %s)", vt, off, strings.Join(parts, "."))
}
