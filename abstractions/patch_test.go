package abstractions

import (
	"errors"
	"reflect"
	"testing"
	"unsafe"
)

type addr struct {
	City    string
	Country string
}

type member struct {
	Entity
	Name    string
	Home    addr
	Work    *addr
	Balance float64
}

func TestPatchSelectors(t *testing.T) {
	var m member
	p := NewPatch[member]().WithETag(`W/"1"`).AllowProtected()
	Set(p, Field(func(x *member) *string { return &x.Name }), "Alice")
	Set(p, Field(func(x *member) *string { return &x.Home.City }), "Lviv")
	Set(p, Field(func(x *member) *float64 { return &x.Balance }), 1)
	Set(p, Field(func(x *member) *float64 { return &x.Balance }), 2)
	Set(p, Field(func(x *member) *string { return &x.ID }), "id")
	v := p.view()
	if v.Err != nil {
		t.Fatal(v.Err)
	}
	want := []struct {
		off  uintptr
		path string
		v    any
	}{
		{unsafe.Offsetof(m.Name), "Name", "Alice"},
		{unsafe.Offsetof(m.Home) + unsafe.Offsetof(m.Home.City), "Home.City", "Lviv"},
		{unsafe.Offsetof(m.Balance), "Balance", 2.0},
		{unsafe.Offsetof(m.ID), "Entity.ID", "id"},
	}
	fs := v.Fields
	if len(fs) != len(want) {
		t.Fatalf("%d fields, want %d", len(fs), len(want))
	}
	for i, w := range want {
		f := fs[i]
		if f.Offset != w.off || f.Path != w.path || !reflect.DeepEqual(f.Value.Interface(), w.v) || f.Type != reflect.TypeOf(w.v) {
			t.Errorf("field %d: got off=%d path=%q value=%v, want %d %q %v", i, f.Offset, f.Path, f.Value, w.off, w.path, w.v)
		}
	}
	if v.ETag != `W/"1"` || !v.AllowProtected {
		t.Fatal("conditions lost")
	}
}

func TestPatchBadSelectors(t *testing.T) {
	outside := "x"
	// The same sentinels as a filter's selector (they share one resolver): a selector that
	// cannot name a stored column is not supported; a nil one is a caller's mistake.
	for name, c := range map[string]struct {
		set  func(p *Patch[member])
		want error
	}{
		"below a nil pointer": {func(p *Patch[member]) { Set(p, Field(func(x *member) *string { return &x.Work.City }), "x") }, ErrNotSupported},
		"outside the struct":  {func(p *Patch[member]) { Set(p, Field(func(*member) *string { return &outside }), "x") }, ErrNotSupported},
		"nil result":          {func(p *Patch[member]) { Set(p, Field(func(*member) *string { return nil }), "x") }, ErrInvalidArgument},
		"nil selector":        {func(p *Patch[member]) { Set(p, Field[member, string](nil), "x") }, ErrInvalidArgument},
		"zero TypedField":     {func(p *Patch[member]) { Set(p, TypedField[member, string]{}, "x") }, ErrInvalidArgument},
	} {
		var p Patch[member]
		c.set(&p)
		Set(&p, Field(func(x *member) *string { return &x.Name }), "ok")
		if v := p.view(); !errors.Is(v.Err, c.want) {
			t.Errorf("%s: got %v, want %v", name, v.Err, c.want)
		}
		if len(p.view().Fields) != 0 {
			t.Errorf("%s: a failed patch kept fields", name)
		}
	}
}

func TestPatchInterfaceValue(t *testing.T) {
	type withAny struct {
		Entity
		X any
	}
	p := Set(NewPatch[withAny](), Field(func(x *withAny) *any { return &x.X }), nil)
	if f := p.view().Fields[0]; f.Value.Kind() != reflect.Interface || !f.Value.IsNil() {
		t.Fatalf("a nil interface value: %v", f.Value)
	}
}

func TestPatchNullableField(t *testing.T) {
	// A NullableField takes plain values and writes a pointer to a copy: the same field,
	// set through Field with a pointer, is one assignment (the last wins).
	work := NullableField(func(x *member) **addr { return &x.Work })
	v := addr{City: "Oslo"}
	p := Set(NewPatch[member](), work, v)
	v.City = "changed after Set"
	fs := p.view().Fields
	if len(fs) != 1 || fs[0].Type != reflect.TypeFor[*addr]() || fs[0].Path != "Work" {
		t.Fatalf("fields %+v", fs)
	}
	if got := fs[0].Value.Interface().(*addr); got == nil || got.City != "Oslo" {
		t.Fatalf("value %+v, want a pointer to a copy of the value set", got)
	}
	Set(p, Field(func(x *member) **addr { return &x.Work }), nil)
	if fs := p.view().Fields; len(fs) != 1 || !fs[0].Value.IsNil() {
		t.Fatalf("Field and NullableField of one field: %+v", fs)
	}
}
