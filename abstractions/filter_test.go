package abstractions

import (
	"errors"
	"reflect"
	"testing"
)

type fAddr struct {
	City string
	Zip  int
}

type fRow struct {
	Entity
	Name string
	Home fAddr
	Away *fAddr
}

func TestFieldResolvesOffsets(t *testing.T) {
	name := Field(func(r *fRow) *string { return &r.Name })
	zip := Field(func(r *fRow) *int { return &r.Home.Zip })
	id := Field(func(r *fRow) *string { return &r.ID })
	typ := reflect.TypeFor[fRow]()
	sfName, _ := typ.FieldByName("Name")
	sfHome, _ := typ.FieldByName("Home")
	sfZip, _ := reflect.TypeFor[fAddr]().FieldByName("Zip")
	for _, c := range []struct {
		ref  FieldRef
		off  uintptr
		want reflect.Type
	}{
		{name.Ref(), sfName.Offset, reflect.TypeFor[string]()},
		{zip.Ref(), sfHome.Offset + sfZip.Offset, reflect.TypeFor[int]()},
		{id.Ref(), 0, reflect.TypeFor[string]()},
	} {
		if c.ref.Err != nil || c.ref.Offset != c.off || c.ref.Type != c.want || c.ref.Owner != typ {
			t.Errorf("ref %+v, want offset %d type %v", c.ref, c.off, c.want)
		}
	}
}

func TestFieldResolutionFailures(t *testing.T) {
	if ref := Field(func(r *fRow) *string { return &r.Away.City }).Ref(); !errors.Is(ref.Err, ErrNotSupported) {
		t.Errorf("below a pointer: %v", ref.Err)
	}
	if ref := Field[fRow, string](nil).Ref(); !errors.Is(ref.Err, ErrInvalidArgument) {
		t.Errorf("nil selector: %v", ref.Err)
	}
	if ref := Field(func(*fRow) *string { return nil }).Ref(); !errors.Is(ref.Err, ErrInvalidArgument) {
		t.Errorf("nil address: %v", ref.Err)
	}
	if ref := Field(func(*fRow) *string { return new(string) }).Ref(); !errors.Is(ref.Err, ErrNotSupported) {
		t.Errorf("outside address: %v", ref.Err)
	}
	if ref := NullableField(func(r *fRow) **fAddr { return &r.Away }).Ref(); ref.Err != nil || ref.Type != reflect.TypeFor[*fAddr]() {
		t.Errorf("nullable: %+v", ref)
	}
}

func TestFilterTree(t *testing.T) {
	name := Field(func(r *fRow) *string { return &r.Name })
	f := And(name.Eq("a"), Not(Or(name.Lt("b"), IsTrue(func(r *fRow) *bool { return new(bool) }))))
	root := f.Root()
	if root.Op != FilterAnd || len(root.Operands) != 2 || root.Operands[0].Op != FilterEq || root.Operands[0].Value != "a" {
		t.Fatalf("tree %+v", root)
	}
	not := root.Operands[1]
	if not.Op != FilterNot || not.Operands[0].Op != FilterOr || not.Operands[0].Operands[1].Field.Err == nil {
		t.Fatalf("not %+v", not)
	}
	var zero Filter[fRow]
	if !zero.IsZero() || zero.Root() != nil || f.IsZero() {
		t.Error("IsZero")
	}
	for op, s := range map[FilterOp]string{FilterEq: "eq", FilterGe: "ge", FilterNot: "not", FilterTrue: "true", 0: "FilterOp(?)"} {
		if op.String() != s {
			t.Errorf("%d: %s", op, op.String())
		}
	}
	if (Page[fRow]{}).HasMore() || !(Page[fRow]{Cursor: "x"}).HasMore() {
		t.Error("HasMore")
	}
}
