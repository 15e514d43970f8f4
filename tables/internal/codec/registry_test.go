package codec_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

type Event interface{ Kind() string }

type OrderPlaced struct {
	abstractions.Entity
	Order string
}

func (*OrderPlaced) Kind() string { return "placed" }

type OrderShipped struct {
	abstractions.Entity
	Carrier string
}

func (OrderShipped) Kind() string { return "shipped" }

type Unrelated struct{ X int }

func TestDecodeAs(t *testing.T) {
	reg := new(abstractions.TypeRegistry)
	for _, err := range []error{
		abstractions.RegisterType[OrderPlaced](reg, "placed"),
		abstractions.RegisterType[OrderPlaced](reg, "placed.v0"), // an old name, still read
		abstractions.RegisterType[OrderShipped](reg, ""),
		abstractions.RegisterType[Unrelated](reg, "unrelated"),
		abstractions.RegisterType[badChan](reg, "bad"), // the registry knows nothing of the codec
	} {
		if err != nil {
			t.Fatal(err)
		}
	}

	opts := &codec.Options{WriteTypeName: true, Types: reg}
	placed := &OrderPlaced{Entity: abstractions.Entity{ID: "v7"}, Order: "o1"}
	row, err := codec.EncodeRow(placed, "orders", "0000099", opts)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := row.Get(codec.TypeNameColumn); v.Str() != "placed" {
		t.Fatalf("_TypeName %v", v)
	}
	ev, err := codec.DecodeAs[Event](&row, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := ev.(*OrderPlaced)
	if !ok || got.Order != "o1" || got.ID != "v7" {
		t.Fatalf("got %#v (the ID must not be recomputed from the keys)", ev)
	}
	// A type whose value implements the interface still comes back as a pointer.
	row2, _ := codec.EncodeRow(&OrderShipped{Carrier: "c"}, "p", "r", opts)
	if ev, err := codec.DecodeAs[Event](&row2, reg, nil); err != nil || ev.(*OrderShipped).Carrier != "c" {
		t.Fatalf("%v %v", ev, err)
	}
	if v, err := codec.DecodeAs[OrderShipped](&row2, reg, nil); err != nil || v.Carrier != "c" {
		t.Fatalf("%v %v", v, err)
	}
	if v, err := codec.DecodeAs[*OrderPlaced](&row, reg, nil); err != nil || v.Order != "o1" {
		t.Fatalf("%v %v", v, err)
	}
	// An old name resolves.
	old := row.Clone()
	old.Properties[len(old.Properties)-1].Value = service.String("placed.v0")
	if _, err := codec.DecodeAs[Event](&old, reg, nil); err != nil {
		t.Fatal(err)
	}

	// A type registered without a name is written under its package path and name.
	if v, _ := row2.Get(codec.TypeNameColumn); v.Str() != "github.com/unified-data/gotables/tables/internal/codec_test.OrderShipped" {
		t.Fatalf("_TypeName of a type registered without a name: %v", v)
	}

	unrelated, _ := codec.EncodeRow(&Unrelated{X: 1}, "p", "r", opts)
	refused := []struct {
		name string
		row  service.Row
		reg  *abstractions.TypeRegistry
	}{
		{"not assignable", unrelated, reg},
		{"no discriminator", service.Row{}, reg},
		{"not a string", service.Row{Properties: []service.Property{{Name: "_TypeName", Value: service.Int32(1)}}}, reg},
		{"unregistered", service.Row{Properties: []service.Property{{Name: "_TypeName", Value: service.String("os/exec.Cmd")}}}, reg},
		{"no registry", row, nil},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := codec.DecodeAs[Event](&tc.row, tc.reg, nil)
			wantErrIs(t, err, abstractions.ErrIntegrity)
		})
	}
	if _, err := codec.DecodeAs[Event](nil, reg, nil); err == nil {
		t.Fatal("a nil row decodes")
	}
	// A registered type the codec cannot map is refused when a row names it.
	bad := service.Row{Properties: []service.Property{{Name: "_TypeName", Value: service.String("bad")}}}
	if _, err := codec.DecodeAs[any](&bad, reg, nil); !errors.Is(err, abstractions.ErrNotSupported) {
		t.Fatalf("a row naming an unmappable type: %v, want ErrNotSupported", err)
	}

	// The fallback maps names no registration knows, and its answer is checked too.
	reg.SetFallback(func(name string) (reflect.Type, bool) {
		switch name {
		case "Legacy.OrderPlaced, Legacy":
			return reflect.TypeFor[OrderPlaced](), true
		case "Legacy.Unrelated, Legacy":
			return reflect.TypeFor[Unrelated](), true
		case "Legacy.Int":
			return reflect.TypeFor[int](), true
		}
		return nil, false
	})
	for name, ok := range map[string]bool{
		"Legacy.OrderPlaced, Legacy": true, "Legacy.Unrelated, Legacy": false, "Legacy.Int": false, "Other": false,
	} {
		r := row.Clone()
		r.Properties[len(r.Properties)-1].Value = service.String(name)
		_, err := codec.DecodeAs[Event](&r, reg, nil)
		if (err == nil) != ok {
			t.Errorf("%s: %v", name, err)
		}
	}
	reg.SetFallback(nil)

	// Without a registry the type's package path and name are written, and an unnamed
	// type's Go spelling.
	row3, _ := codec.EncodeRow(&Unrelated{}, "p", "r", &codec.Options{WriteTypeName: true})
	if v, _ := row3.Get(codec.TypeNameColumn); v.Str() != "github.com/unified-data/gotables/tables/internal/codec_test.Unrelated" {
		t.Fatalf("_TypeName %v", v)
	}
	row4, _ := codec.EncodeRow(&struct{ A int }{}, "p", "r", &codec.Options{WriteTypeName: true})
	if v, _ := row4.Get(codec.TypeNameColumn); v.Str() != "struct { A int }" {
		t.Fatalf("unnamed type name %v", v)
	}
}
