package codec

import (
	"fmt"
	"reflect"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// discriminator is the name a row of type t is written under: the name types writes it under, or,
// for a type types does not name (or a nil types), the name abstractions.RegisterType would
// give it by default (its package path and name).
func discriminator(types *abstractions.TypeRegistry, t reflect.Type) string {
	if n, ok := types.NameOf(t); ok {
		return n
	}
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
func DecodeAs[Base any](row *service.Row, reg *abstractions.TypeRegistry, opts *Options) (Base, error) {
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
	t, ok := reg.Lookup(name)
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
