package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/codec"
	"github.com/unified-data/gotables/tables/service"
)

type patchAddr struct {
	City, Country string
}

type patchee struct {
	abstractions.Entity
	Name   string `table:",alias=FullName"`
	Tags   []string
	Home   patchAddr
	Work   *patchAddr
	When   time.Time
	Pay    int64  `table:",protected=admin"`
	Secret []byte `table:",protected=admin"`
	Big    string `table:",split=gzip"`
}

func patchStore(t *testing.T, opts *Options) *Store[patchee] {
	t.Helper()
	o := Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	if opts != nil {
		o.Oversized = opts.Oversized
	}
	s, err := New[patchee](NewAccount("test", &pageTables{}, nil, &o), &StoreOptions{Table: "Patchees"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func noRefusal(kind error, cause error, format string, args ...any) error {
	return &abstractions.StoreError{Kind: kind, Err: cause, Message: format}
}

func rowText(r service.Row) string {
	var parts []string
	for _, p := range r.Properties {
		parts = append(parts, p.Name+"="+p.Value.String())
	}
	return strings.Join(parts, " ")
}

func TestPatchRowCells(t *testing.T) {
	s := patchStore(t, nil)
	p := abstractions.NewPatch[patchee]()
	abstractions.Set(p, func(x *patchee) *string { return &x.Home.City }, "Lviv")
	abstractions.Set(p, func(x *patchee) *[]string { return &x.Tags }, []string{"a"})
	abstractions.Set(p, func(x *patchee) *string { return &x.Name }, "N")
	row, _, err := s.patchRow(p, "p", "r", noRefusal)
	if err != nil {
		t.Fatal(err)
	}
	want := `Home_City=Edm.String("Lviv") Tags__Json=Edm.String("[\"a\"]") Name=Edm.String("N") UpdatedAt=Edm.DateTime(2026-01-02T03:04:05.0000000Z)`
	if got := rowText(row); got != want {
		t.Fatalf("cells:\n got %s\nwant %s", got, want)
	}
	// Setting UpdatedAt itself replaces the stamp.
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	p = abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *time.Time { return &x.UpdatedAt }, at)
	row, _, err = s.patchRow(p, "p", "r", noRefusal)
	if err != nil || rowText(row) != "UpdatedAt=Edm.DateTime(2020-01-01T00:00:00.0000000Z)" {
		t.Fatalf("explicit UpdatedAt: %s %v", rowText(row), err)
	}
}

func TestPatchRowRefusals(t *testing.T) {
	s := patchStore(t, nil)
	cases := []struct {
		name string
		p    *abstractions.Patch[patchee]
		kind error
	}{
		{"nested struct", abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *patchAddr { return &x.Home }, patchAddr{}), abstractions.ErrNotSupported},
		{"zero time", abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *time.Time { return &x.When }, time.Time{}), abstractions.ErrNotSupported},
		{"nil pointer", abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) **patchAddr { return &x.Work }, nil), abstractions.ErrNotSupported},
		{"timestamp", abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *time.Time { return &x.Timestamp }, time.Now()), abstractions.ErrNotSupported},
		{"large value", abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *string { return &x.Big }, "b"), abstractions.ErrNotSupported},
		{"protected", abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *int64 { return &x.Pay }, 1), abstractions.ErrProtectedProperty},
		{"oversized", abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *string { return &x.Name }, strings.Repeat("y", 40000)), abstractions.ErrOversizedCell},
	}
	for _, c := range cases {
		_, _, err := s.patchRow(c.p, "p", "r", noRefusal)
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.kind)
		}
	}
	p := abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *int64 { return &x.Pay }, 1).AllowProtected()
	if _, _, err := s.patchRow(p, "p", "r", noRefusal); err != nil {
		t.Errorf("AllowProtected: %v", err)
	}
	gz := patchStore(t, &Options{Oversized: codec.OversizedCompress})
	p = abstractions.Set(abstractions.NewPatch[patchee](), func(x *patchee) *string { return &x.Name }, strings.Repeat("y", 40000))
	if _, _, err := gz.patchRow(p, "p", "r", noRefusal); !errors.Is(err, abstractions.ErrNotSupported) {
		t.Errorf("compressed: got %v", err)
	}
}

func TestProtectedCellsCompare(t *testing.T) {
	s := patchStore(t, nil)
	prot := s.protectedFields()
	if len(prot) != 2 || prot[0].Name != "Pay" || prot[1].Name != "Secret" {
		t.Fatalf("protected fields: %v", prot)
	}
	enc := func(v *patchee) []service.Property {
		props, err := codec.Encode(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		return props
	}
	a := enc(&patchee{Secret: []byte{1, 2}})
	b := enc(&patchee{Secret: append([]byte(nil), 1, 2)})
	c := enc(&patchee{Secret: []byte{1, 3}})
	if !sameCells(cellsOf(a, "Secret"), cellsOf(b, "Secret")) || sameCells(cellsOf(a, "Secret"), cellsOf(c, "Secret")) {
		t.Fatal("bytes compare by content")
	}
	long := &patchee{Name: strings.Repeat("é", 100), Secret: make([]byte, 100)}
	for _, f := range []string{"Name", "Secret"} {
		fld, _ := s.plan.Field(f)
		d := describeField(reflectValue(long), fld)
		if len(d) > 200 || !strings.Contains(d, "100") {
			t.Errorf("%s described as %q", f, d)
		}
	}
}

func reflectValue(v *patchee) reflect.Value { return reflect.ValueOf(v).Elem() }
