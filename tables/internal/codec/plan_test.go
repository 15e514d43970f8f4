package codec_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

type (
	badUnderscore struct {
		Full_Name string
	}
	badNestedUnderscore struct {
		Home struct{ Zip_Code string }
	}
	badChan      struct{ C chan int }
	badInterface struct{ Label fmt.Stringer }
	badFunc      struct{ F func() }
	badComplex   struct{ Z complex128 }
	badUintptr   struct{ P uintptr }
	badTagName   struct {
		A string `table:"Other"`
	}
	badTagDash struct {
		A string `table:"-,alias=B"`
	}
	badTagOption struct {
		A string `table:",bogus=1"`
	}
	badTagEmpty struct {
		A string `table:",alias="`
	}
	badTagTwice struct {
		A string `table:",alias=B,alias=C"`
	}
	badAliasRes struct {
		A string `table:",alias=_B"`
	}
	badAliasDbl struct {
		A string `table:",alias=B__Json"`
	}
	badAliasCol struct {
		A string `table:",alias=B"`
		B string
	}
	badAliasSelf struct {
		A string `table:",alias=A"`
	}
	badAliasTwo struct {
		A string `table:",alias=Old"`
		B string `table:",alias=Old"`
	}
	badAliasJSON struct {
		A []int `table:",alias=Old"`
		B string
		C string `table:",alias=Old"` // Old__GZip is A's
	}
	badAliasNested struct {
		Home struct {
			City string `table:",alias=Town"`
		}
	}
	badAliasOnStruct struct {
		Home Address `table:",alias=House"`
	}
	badMarkerTarget struct {
		_ struct{} `table:",alias=Missing:Old"`
		A string
	}
	badMarkerNoTarget struct {
		_ struct{} `table:",alias=Old"`
		A string
	}
	badMarkerProtected struct {
		_ struct{} `table:",protected=admin"`
	}
	badEmptyNested struct {
		Lock struct{ mu int }
	}
	badSystemName   struct{ RowKey string }
	badTimestamp    struct{ Timestamp time.Time }
	badEntityPtr    struct{ *abstractions.Entity }
	Holder          struct{ abstractions.Entity }
	badEntityDeeper struct{ *Holder }
	badIDClash      struct {
		abstractions.Entity
		Id string
	}
	ambA        struct{ Name string }
	ambB        struct{ Name string }
	badAmbiguus struct {
		ambA
		ambB
	}
	badEmbeddedOpts struct {
		Address `table:",alias=X"`
	}
	markedAddress struct {
		_    struct{} `table:",alias=City:Town"`
		City string
	}
	badNestedMarker struct {
		Home markedAddress
	}
	badSplitTwice struct {
		_ struct{} `table:",split=text"`
		_ struct{} `table:",split=gzip"`
	}
	badOffloadTwice struct {
		_ struct{} `table:",offload=never"`
		_ struct{} `table:",offload=never"`
	}
	badGUIDArray struct {
		Embedded
		Full_Name string
	}
	badExpiresEmpty struct {
		At time.Time `table:",expires="`
	}
	badExpiresMarker struct {
		_  struct{} `table:",expires"`
		At time.Time
	}
)

func TestRefusedShapes(t *testing.T) {
	cases := []struct {
		typ   any
		field string
		want  string
	}{
		{badUnderscore{}, "Full_Name", "rename the field"},
		{badNestedUnderscore{}, "Home.Zip_Code", "cannot hold '_'"},
		{badChan{}, "C", `tag the field ` + "`" + `table:"-"`},
		{badInterface{}, "Label", "never read back"},
		{badFunc{}, "F", "a func has no cell form"},
		{badComplex{}, "Z", "complex128 has no cell form"},
		{badUintptr{}, "P", "uintptr has no cell form"},
		{badTagName{}, "A", "names no column"},
		{badTagDash{}, "A", "names no column"},
		{badTagOption{}, "A", "unknown option"},
		{badTagEmpty{}, "A", "needs a value"},
		{badTagTwice{}, "A", "repeats the option"},
		{badAliasRes{}, "A", "reserved"},
		{badAliasDbl{}, "A", `holds "__"`},
		{badAliasCol{}, "A", "already read by B"},
		{badAliasSelf{}, "A", "already read by A"},
		{badAliasTwo{}, "B", "already read by A"},
		{badAliasJSON{}, "C", "already read by A"},
		{badAliasNested{}, "Home.City", "top-level columns only"},
		{badAliasOnStruct{}, "Home", "put alias"},
		{badMarkerTarget{}, "_", "not a top-level column"},
		{badMarkerNoTarget{}, "_", "alias=Target:Old"},
		{badMarkerProtected{}, "_", "applies to a field"},
		{badEmptyNested{}, "Lock", "stores no column"},
		{badSystemName{}, "RowKey", "service's own properties"},
		{badTimestamp{}, "Timestamp", "service's own properties"},
		{badEntityPtr{}, "Entity", "by value"},
		{badEntityDeeper{}, "Holder.Entity", "by value"},
		{badIDClash{}, "Id", "also the column of Entity.ID"},
		{badAmbiguus{}, "ambA.Name", "same depth"},
		{badEmbeddedOpts{}, "Address", "embedded struct"},
		{badNestedMarker{}, "Home._", "stored type only"},
		{badSplitTwice{}, "_", "split= is declared twice"},
		{badOffloadTwice{}, "_", "offload= is declared twice"},
		{badGUIDArray{}, "Full_Name", "cannot hold '_'"},
		{badExpiresEmpty{}, "At", "needs a time to live"},
		{badExpiresMarker{}, "_", "applies to a field"},
	}
	for _, tc := range cases {
		typ := reflect.TypeOf(tc.typ)
		t.Run(typ.Name(), func(t *testing.T) {
			_, err := codec.PlanOf(typ)
			var pe *codec.PlanError
			if !errorsAs(err, &pe) {
				t.Fatalf("PlanOf: %v, want a *PlanError", err)
			}
			wantErrIs(t, err, abstractions.ErrNotSupported)
			if pe.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q (field %q), want field %q and %q", err, pe.Field, tc.field, tc.want)
			}
			// Every use refuses the type the same way, before anything else.
			_, err = codec.Encode(reflect.New(typ).Interface(), nil)
			if !errorsAs(err, &pe) {
				t.Fatalf("Encode: %v", err)
			}
			if err := codec.DecodeInto(&service.Row{}, reflect.New(typ).Interface(), nil); !errorsAs(err, &pe) {
				t.Fatalf("DecodeInto: %v", err)
			}
		})
	}
	if _, err := codec.PlanOf(reflect.TypeFor[int]()); err == nil {
		t.Error("PlanOf(int) succeeds")
	}
	if _, err := codec.Decode[*Customer](&service.Row{}, nil); err == nil {
		t.Error("Decode[*Customer] succeeds")
	}
}

type skipped struct {
	A      string
	B      string `table:"-"`
	hidden string
	C      chan int `table:"-"`
	Bad_   int      `table:"-"`
	Extra  `table:"-"`
	_      int
}

func TestSkippedFields(t *testing.T) {
	props, err := codec.Encode(&skipped{A: "a", B: "b", hidden: "h", Extra: Extra{"n"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(props); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("columns %v", got)
	}
}

type inner struct{ Name, Shadow string }
type deeper struct{ inner }
type promoted struct {
	deeper
	*Extra
	Shadow int // shadows inner.Shadow, as in Go
	time.Time
	Tier
}

func TestPromotion(t *testing.T) {
	pl, err := codec.PlanOf(reflect.TypeFor[promoted]())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range pl.Fields() {
		got = append(got, f.Name+" "+f.Path)
	}
	want := []string{"Name deeper.inner.Name", "Note Extra.Note", "Shadow Shadow", "Time Time", "Tier Tier"}
	if !slices.Equal(got, want) {
		t.Fatalf("fields\n got %q\nwant %q", got, want)
	}
	in := &promoted{Shadow: 3, Time: refTime, Tier: Gold}
	in.Name = "n"
	out, _ := roundTrip(t, in, nil)
	mustEqual(t, out, in)
}

type aliased struct {
	abstractions.Entity
	_     struct{} `table:",alias=CreatedAt:LegacyStamp|Stamp2|ID:Key"`
	Name  string   `table:",alias=FullName|Nom"`
	Tags  []string `table:",alias=Labels"`
	Count int64    `table:",alias=Total"`
}

func TestAliases(t *testing.T) {
	pl, err := codec.PlanOf(reflect.TypeFor[aliased]())
	if err != nil {
		t.Fatal(err)
	}
	f, _ := pl.Field("CreatedAt")
	if !slices.Equal(f.Aliases, []string{"LegacyStamp", "Stamp2", "Created"}) {
		t.Fatalf("CreatedAt aliases %q", f.Aliases)
	}
	f, _ = pl.Field("UpdatedAt")
	if !slices.Equal(f.Aliases, []string{"Modified"}) {
		t.Fatalf("UpdatedAt aliases %q", f.Aliases)
	}
	gz := gzipOf(t, `["g"]`)
	t0, t1 := refTime, refTime.Add(time.Hour)
	cases := []struct {
		name  string
		props []service.Property
		want  aliased
	}{
		{"old columns only", []service.Property{
			{Name: "FullName", Value: service.String("old")},
			{Name: "Labels__Json", Value: service.String(`["a"]`)},
			{Name: "Total", Value: service.Int32(4)},
			{Name: "Created", Value: service.DateTime(t0)},
			{Name: "Modified", Value: service.DateTime(t1)},
		}, aliased{Entity: abstractions.Entity{ID: "p|r", CreatedAt: t0, UpdatedAt: t1}, Name: "old", Tags: []string{"a"}, Count: 4}},
		{"canonical wins over the alias", []service.Property{
			{Name: "FullName", Value: service.String("old")},
			{Name: "Name", Value: service.String("new")},
			{Name: "Labels__Json", Value: service.String(`["a"]`)},
			{Name: "Tags__GZip", Value: service.BinaryNoCopy(gz)},
			{Name: "Total", Value: service.Int64(1)},
			{Name: "Count", Value: service.Int64(2)},
		}, aliased{Entity: abstractions.Entity{ID: "p|r"}, Name: "new", Tags: []string{"g"}, Count: 2}},
		{"aliases in declared order, type-level first", []service.Property{
			{Name: "Created", Value: service.DateTime(t1)},
			{Name: "Stamp2", Value: service.DateTime(t1)},
			{Name: "LegacyStamp", Value: service.DateTime(t0)},
			{Name: "Nom", Value: service.String("nom")},
			{Name: "Labels__GZip", Value: service.BinaryNoCopy(gz)},
			{Name: "Key", Value: service.String("p|r")},
		}, aliased{Entity: abstractions.Entity{ID: "p|r", CreatedAt: t0}, Name: "nom", Tags: []string{"g"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row := service.Row{PartitionKey: "p", RowKey: "r", Properties: tc.props}
			out, err := codec.Decode[aliased](&row, nil)
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, out, &tc.want)
		})
	}
	// Writes use the canonical names only.
	props, err := codec.Encode(&aliased{Name: "n", Tags: []string{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(props); !slices.Equal(got, []string{"Id", "Name", "Tags__Json", "Count"}) {
		t.Fatalf("columns %v", got)
	}
}

// ownCreated declares a field named like a built-in alias: the built-in alias yields.
type ownCreated struct {
	abstractions.Entity
	Created string
}

func TestBuiltinAliasYields(t *testing.T) {
	pl, err := codec.PlanOf(reflect.TypeFor[ownCreated]())
	if err != nil {
		t.Fatal(err)
	}
	f, _ := pl.Field("CreatedAt")
	if len(f.Aliases) != 0 {
		t.Fatalf("CreatedAt aliases %q", f.Aliases)
	}
}

type options struct {
	_      struct{} `table:",split=gzip,offload=never"`
	Salary float64  `table:",protected=admin|accountant"`
	Notes  string   `table:",split=text,offload=above"`
	Home   struct {
		Secret string `table:",protected=admin"`
	}
}

func TestReservedOptionsAreKept(t *testing.T) {
	pl, err := codec.PlanOf(reflect.TypeFor[options]())
	if err != nil {
		t.Fatal(err)
	}
	if pl.Split() != "gzip" || pl.Offload() != "never" {
		t.Fatalf("type-level %q %q", pl.Split(), pl.Offload())
	}
	f, _ := pl.Field("Salary")
	if !slices.Equal(f.Protected, []string{"admin", "accountant"}) {
		t.Fatalf("protected %q", f.Protected)
	}
	f, _ = pl.Field("Notes")
	if f.Split != "text" || f.Offload != "above" {
		t.Fatalf("Notes %q %q", f.Split, f.Offload)
	}
	f, _ = pl.Field("Home_Secret")
	if !slices.Equal(f.Protected, []string{"admin"}) {
		t.Fatalf("nested protected %q", f.Protected)
	}
}

func TestPlanFields(t *testing.T) {
	pl, err := codec.PlanOf(reflect.TypeFor[*Customer]())
	if err != nil {
		t.Fatal(err)
	}
	if pl.Type() != reflect.TypeFor[Customer]() {
		t.Fatal("plan type")
	}
	checks := []struct {
		name   string
		kind   service.Kind
		json   bool
		role   codec.Role
		path   string
		nested bool
		cells  []string // Cells; Cell is the first, Compressed the one ending in __GZip
	}{
		{"Id", service.KindString, false, codec.RoleID, "Entity.ID", false, []string{"Id", "Id__GZip"}},
		{"ETag", service.KindString, false, codec.RoleETag, "Entity.ETag", false, nil},
		{"Timestamp", service.KindDateTime, false, codec.RoleTimestamp, "Entity.Timestamp", false, nil},
		{"CreatedAt", service.KindDateTime, false, codec.RoleColumn, "Entity.CreatedAt", false, []string{"CreatedAt", "Created"}},
		{"Flags", service.KindInt64, false, codec.RoleColumn, "Flags", false, []string{"Flags"}},
		{"Tier", service.KindString, false, codec.RoleColumn, "Tier", false, []string{"Tier", "Tier__GZip"}},
		{"Nick", service.KindString, false, codec.RoleColumn, "Nick", false, []string{"Nick", "Nick__GZip"}},
		{"Home_Geo_Lat", service.KindDouble, false, codec.RoleColumn, "Home.Geo.Lat", true, []string{"Home_Geo_Lat"}},
		{"Home_City", service.KindString, false, codec.RoleColumn, "Home.City", true, []string{"Home_City", "Home_City__GZip"}},
		{"Tags", service.KindString, true, codec.RoleColumn, "Tags", false, []string{"Tags__Json", "Tags__GZip"}},
	}
	for _, c := range checks {
		f, ok := pl.Field(c.name)
		if !ok || f.Kind != c.kind || f.JSON != c.json || f.Role != c.role || f.Path != c.path || f.Nested != c.nested ||
			!slices.Equal(f.Cells, c.cells) {
			t.Errorf("%s: %+v", c.name, f)
			continue
		}
		cell, compressed := "", ""
		for _, n := range c.cells {
			switch {
			case cell == "":
				cell = n
			case strings.HasSuffix(n, "__GZip") && compressed == "":
				compressed = n
			}
		}
		if f.Cell != cell || f.Compressed != compressed {
			t.Errorf("%s: cell %q, compressed %q; want %q, %q", c.name, f.Cell, f.Compressed, cell, compressed)
		}
	}
	if _, ok := pl.Field("Nope"); ok {
		t.Error("unknown field found")
	}
	for _, r := range []codec.Role{codec.RoleColumn, codec.RoleID, codec.RoleETag, codec.RoleTimestamp, 9} {
		if r.String() == "" {
			t.Error("empty role name")
		}
	}
}

// offsetOf resolves a selector the way the filter builder will: call it on a zero T and
// subtract the struct's address.
func offsetOf[T, V any](sel func(*T) *V) (uintptr, reflect.Type) {
	var zero T
	return uintptr(unsafe.Pointer(sel(&zero))) - uintptr(unsafe.Pointer(&zero)), reflect.TypeFor[V]()
}

func TestFieldByOffset(t *testing.T) {
	pl, err := codec.PlanOf(reflect.TypeFor[Customer]())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		want string
		sel  func() (uintptr, reflect.Type)
	}{
		{"Id", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *string { return &c.ID }) }},
		{"Timestamp", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *time.Time { return &c.Timestamp }) }},
		{"Name", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *string { return &c.Name }) }},
		{"Nick", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) **string { return &c.Nick }) }},
		{"Home_Street", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *string { return &c.Home.Street }) }},
		{"Home_Geo_Lat", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *float64 { return &c.Home.Geo.Lat }) }},
		{"Tags", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *[]string { return &c.Tags }) }},
		{"", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *Address { return &c.Home }) }},
		{"", func() (uintptr, reflect.Type) { return offsetOf(func(c *Customer) *Geo { return &c.Home.Geo }) }},
	}
	for _, tc := range cases {
		off, typ := tc.sel()
		f, ok := pl.FieldByOffset(off, typ)
		switch {
		case tc.want == "" && ok:
			t.Errorf("offset %d %v resolves to %s", off, typ, f.Name)
		case tc.want != "" && (!ok || f.Name != tc.want):
			t.Errorf("offset %d %v: want %s, got %v", off, typ, tc.want, f)
		}
	}
	// A field below a pointer-held struct has no fixed offset.
	np, _ := codec.PlanOf(reflect.TypeFor[Nested]())
	f, _ := np.Field("Work_City")
	if !f.Indirect {
		t.Error("Work_City is not marked indirect")
	}
	if g, ok := np.FieldByOffset(f.Offset, f.Type); ok && g.Name == "Work_City" {
		t.Error("an indirect field resolves by offset")
	}
}

func TestPlanIsCached(t *testing.T) {
	a, _ := codec.PlanOf(reflect.TypeFor[Customer]())
	b, _ := codec.PlanOf(reflect.TypeFor[*Customer]())
	if a != b {
		t.Fatal("two plans for one type")
	}
}

// TestExpiresOption: the option stands alone or carries a default time to live, which the
// plan keeps as written (the engine checks it).
func TestExpiresOption(t *testing.T) {
	type session struct {
		Until time.Time `table:",expires=30m"`
		Other time.Time `table:",expires"`
	}
	pl, err := codec.PlanOf(reflect.TypeOf(session{}))
	if err != nil {
		t.Fatal(err)
	}
	fs := pl.Fields()
	if !fs[0].Expires || fs[0].ExpiresTTL != "30m" || !fs[1].Expires || fs[1].ExpiresTTL != "" {
		t.Errorf("fields: %+v %+v", fs[0], fs[1])
	}
}

// DecodeAt decodes as Decode does, into a value the caller placed, and refuses a plan of
// another type instead of writing through it.
func TestDecodeAt(t *testing.T) {
	type rowType struct {
		abstractions.Entity
		Name string
		N    int64
	}
	in := &rowType{Entity: abstractions.Entity{ID: "p|r"}, Name: "n", N: 7}
	row, err := codec.EncodeRow(in, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := codec.Decode[rowType](&row, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := codec.PlanOf(reflect.TypeFor[rowType]())
	if err != nil {
		t.Fatal(err)
	}
	values := make([]rowType, 2)
	if err := codec.DecodeAt(pl, &row, &values[1]); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&values[1], want) || values[0] != (rowType{}) {
		t.Fatalf("DecodeAt: %+v, Decode: %+v", values, want)
	}
	other, _ := codec.PlanOf(reflect.TypeFor[struct{ A int }]())
	var pe *codec.PlanError
	if err := codec.DecodeAt(other, &row, &values[0]); !errors.As(err, &pe) || values[0] != (rowType{}) {
		t.Fatalf("another type's plan: %v, %+v", err, values[0])
	}
	if err := codec.DecodeAt[rowType](nil, &row, &values[0]); !errors.As(err, &pe) {
		t.Fatalf("no plan: %v", err)
	}
}

// EncodeRowAt encodes as EncodeRow does, and refuses a plan of another type.
func TestEncodeRowAt(t *testing.T) {
	type rowType struct {
		abstractions.Entity
		Name string
		N    int64
	}
	in := &rowType{Entity: abstractions.Entity{ID: "p|r"}, Name: "n", N: 7}
	want, err := codec.EncodeRow(in, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := codec.PlanOf(reflect.TypeFor[rowType]())
	got, err := codec.EncodeRowAt(pl, make([]service.Property, 0, 1), in, "p", "r", nil)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("EncodeRowAt: %+v, %v; EncodeRow: %+v", got, err, want)
	}
	other, _ := codec.PlanOf(reflect.TypeFor[struct{ A int }]())
	var pe *codec.PlanError
	if _, err := codec.EncodeRowAt(other, nil, in, "p", "r", nil); !errors.As(err, &pe) {
		t.Fatalf("another type's plan: %v", err)
	}
	if _, err := codec.EncodeRowAt[rowType](pl, nil, nil, "p", "r", nil); !errors.As(err, &pe) {
		t.Fatalf("a nil value: %v", err)
	}
}
