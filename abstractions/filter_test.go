package abstractions

import (
	"errors"
	"reflect"
	"testing"

	"github.com/unified-data/gotables/abstractions/internal/backend"
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
		ref  backend.Field
		off  uintptr
		want reflect.Type
	}{
		{name.field(), sfName.Offset, reflect.TypeFor[string]()},
		{zip.field(), sfHome.Offset + sfZip.Offset, reflect.TypeFor[int]()},
		{id.field(), 0, reflect.TypeFor[string]()},
	} {
		if c.ref.Err != nil || c.ref.Offset != c.off || c.ref.Type != c.want || c.ref.Owner != typ {
			t.Errorf("ref %+v, want offset %d type %v", c.ref, c.off, c.want)
		}
	}
}

func TestFieldResolutionFailures(t *testing.T) {
	if ref := Field(func(r *fRow) *string { return &r.Away.City }).field(); !errors.Is(ref.Err, ErrNotSupported) {
		t.Errorf("below a pointer: %v", ref.Err)
	}
	if ref := Field[fRow, string](nil).field(); !errors.Is(ref.Err, ErrInvalidArgument) {
		t.Errorf("nil selector: %v", ref.Err)
	}
	if ref := Field(func(*fRow) *string { return nil }).field(); !errors.Is(ref.Err, ErrInvalidArgument) {
		t.Errorf("nil address: %v", ref.Err)
	}
	if ref := Field(func(*fRow) *string { return new(string) }).field(); !errors.Is(ref.Err, ErrNotSupported) {
		t.Errorf("outside address: %v", ref.Err)
	}
	if ref := NullableField(func(r *fRow) **fAddr { return &r.Away }).field(); ref.Err != nil || ref.Type != reflect.TypeFor[*fAddr]() {
		t.Errorf("nullable: %+v", ref)
	}
	var zero TypedField[fRow, string]
	if ref := zero.field(); !errors.Is(ref.Err, ErrInvalidArgument) || ref.Owner != reflect.TypeFor[fRow]() {
		t.Errorf("zero TypedField: %+v", ref)
	}
	if ref := zero.Eq("x").root().Field; !errors.Is(ref.Err, ErrInvalidArgument) {
		t.Errorf("zero TypedField in a filter: %+v", ref)
	}
}

func TestFilterTree(t *testing.T) {
	name := Field(func(r *fRow) *string { return &r.Name })
	f := And(name.Eq("a"), Not(Or(name.Lt("b"), IsTrue(Field(func(r *fRow) *bool { return new(bool) })))))
	root := f.root()
	if root.Op != backend.OpAnd || len(root.Operands) != 2 || root.Operands[0].Op != backend.OpEq || root.Operands[0].Value != "a" {
		t.Fatalf("tree %+v", root)
	}
	not := root.Operands[1]
	if not.Op != backend.OpNot || not.Operands[0].Op != backend.OpOr || not.Operands[0].Operands[1].Op != backend.OpTrue || not.Operands[0].Operands[1].Field.Err == nil {
		t.Fatalf("not %+v", not)
	}
	var zero Filter[fRow]
	if !zero.IsZero() || zero.root() != nil || f.IsZero() {
		t.Error("IsZero")
	}
	for op, s := range map[backend.Op]string{backend.OpEq: "eq", backend.OpGe: "ge", backend.OpNot: "not", backend.OpTrue: "true", 0: "Op(?)"} {
		if op.String() != s {
			t.Errorf("%d: %s", op, op.String())
		}
	}
	if (Page[fRow]{}).HasMore() || !(Page[fRow]{Cursor: "x"}).HasMore() {
		t.Error("HasMore")
	}
}
