package abstractions_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/unified-data/gotables/abstractions"
)

type regPlaced struct{ Order string }

type regShipped struct{ Carrier string }

func TestTypeRegistry(t *testing.T) {
	var reg abstractions.TypeRegistry // the zero value is ready to use
	placed, shipped := reflect.TypeFor[regPlaced](), reflect.TypeFor[regShipped]()
	if _, ok := reg.Lookup("placed"); ok {
		t.Fatal("an empty registry knows a name")
	}
	if _, ok := reg.NameOf(placed); ok {
		t.Fatal("an empty registry names a type")
	}
	for _, err := range []error{
		abstractions.RegisterType[regPlaced](&reg, "placed"),
		abstractions.RegisterType[regPlaced](&reg, "placed.v0"), // an old name, still read
		abstractions.RegisterType[regPlaced](&reg, "placed"),    // again: nothing happens
		abstractions.RegisterType[regShipped](&reg, ""),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, ok := reg.NameOf(placed); !ok || n != "placed" {
		t.Errorf("placed is written as %q, %v; want the first name", n, ok)
	}
	for _, name := range []string{"placed", "placed.v0"} {
		if got, ok := reg.Lookup(name); !ok || got != placed {
			t.Errorf("Lookup(%q) = %v, %v", name, got, ok)
		}
	}
	def, ok := reg.NameOf(shipped)
	if want := "github.com/unified-data/gotables/abstractions_test.regShipped"; !ok || def != want {
		t.Errorf("default name %q, want %q", def, want)
	}
	if got, ok := reg.Lookup(def); !ok || got != shipped {
		t.Errorf("the default name resolves to %v, %v", got, ok)
	}

	refused := map[string]error{
		"a name another type has": abstractions.RegisterType[regShipped](&reg, "placed"),
		"a pointer":               abstractions.RegisterType[*regPlaced](&reg, "ptr"),
		"an interface":            abstractions.RegisterType[fmt.Stringer](&reg, "stringer"),
		"an int":                  abstractions.RegisterType[int](&reg, "int"),
		"a nil registry":          abstractions.RegisterType[regPlaced](nil, "x"),
	}
	for what, err := range refused {
		if !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	if err := refused["a name another type has"]; err == nil || !strings.Contains(err.Error(), "regPlaced") {
		t.Errorf("the refusal does not name the type holding the name: %v", err)
	}
	for _, name := range []string{"ptr", "stringer", "int", "x"} {
		if _, ok := reg.Lookup(name); ok {
			t.Errorf("a refused registration left the name %q behind", name)
		}
	}
	if got, _ := reg.Lookup("placed"); got != placed {
		t.Error("a refused registration took the name over")
	}

	// The fallback answers names no registration knows, and only those.
	reg.SetFallback(func(name string) (reflect.Type, bool) {
		switch name {
		case "Legacy.Placed, Legacy", "placed":
			return shipped, true
		}
		return nil, false
	})
	if got, ok := reg.Lookup("Legacy.Placed, Legacy"); !ok || got != shipped {
		t.Errorf("fallback: %v, %v", got, ok)
	}
	if got, _ := reg.Lookup("placed"); got != placed {
		t.Error("the fallback overrides a registered name")
	}
	if _, ok := reg.Lookup("other"); ok {
		t.Error("a name neither knows resolves")
	}
	if _, ok := reg.NameOf(reflect.TypeFor[int]()); ok {
		t.Error("NameOf names an unregistered type")
	}
	reg.SetFallback(nil)
	if _, ok := reg.Lookup("Legacy.Placed, Legacy"); ok {
		t.Error("a removed fallback still answers")
	}

	var none *abstractions.TypeRegistry
	if _, ok := none.Lookup("placed"); ok {
		t.Error("a nil registry knows a name")
	}
	if _, ok := none.NameOf(placed); ok {
		t.Error("a nil registry names a type")
	}
}

// Registrations from many goroutines at once: one name, many types; exactly one wins it.
func TestTypeRegistryConcurrent(t *testing.T) {
	var reg abstractions.TypeRegistry
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, register := range []func() error{
		func() error { return abstractions.RegisterType[regPlaced](&reg, "event") },
		func() error { return abstractions.RegisterType[regShipped](&reg, "event") },
	} {
		wg.Go(func() { errs[i] = register() })
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("both or neither registered the name: %v, %v", errs[0], errs[1])
	}
	got, _ := reg.Lookup("event")
	if want := map[bool]reflect.Type{true: reflect.TypeFor[regPlaced](), false: reflect.TypeFor[regShipped]()}[errs[0] == nil]; got != want {
		t.Errorf("the name resolves to %v, want the winner %v", got, want)
	}
}
