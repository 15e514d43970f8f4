package codec_test

import (
	"encoding/json"
	"math"
	"math/big"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/codec/codectest"
	"github.com/unified-data/gotables/tables/service"
)

// rtCase is one round trip: run encodes and decodes a value and checks the cells it stored.
type rtCase struct {
	name string
	run  func(t *testing.T)
}

// rt returns a case that round-trips in and checks that the row holds exactly wantKinds.
func rt[T any](name string, in *T, wantKinds map[string]service.Kind) rtCase {
	return rtCase{name, func(t *testing.T) {
		out, row := roundTrip(t, in, nil)
		mustEqual(t, out, in)
		if wantKinds != nil {
			if got := kinds(row.Properties); !reflect.DeepEqual(got, wantKinds) {
				t.Fatalf("cells:\n got %v\nwant %v", got, wantKinds)
			}
		}
	}}
}

const (
	kS   = service.KindString
	kBin = service.KindBinary
	kB   = service.KindBool
	k32  = service.KindInt32
	k64  = service.KindInt64
	kD   = service.KindDouble
	kT   = service.KindDateTime
	kG   = service.KindGuid
)

func TestRoundTrip(t *testing.T) {
	scalarKinds := map[string]service.Kind{
		"S": kS, "B": kB, "I8": k32, "I16": k32, "I32": k32, "I": k64, "I64": k64,
		"U8": k32, "U16": k32, "U32": k64, "U": k64, "U64": k64, "F32": kD, "F64": kD,
		"T": kT, "D": k64, "G": kG, "Bytes": kBin, "Arr": kBin, "Tier": kS,
	}
	zeroKinds := maps(scalarKinds, "T", "Bytes") // the zero time and a nil slice store nothing
	cases := []rtCase{
		rt("scalars", &Scalars{
			S: "héllo 😀", B: true, I8: -128, I16: math.MaxInt16, I32: math.MinInt32, I: -1 << 62,
			I64: math.MaxInt64, U8: 255, U16: math.MaxUint16, U32: math.MaxUint32, U: math.MaxUint,
			U64: math.MaxUint64, F32: -1.5e38, F64: 1e308, T: refTime, D: -3 * time.Hour,
			G: mustGUID("00112233-4455-6677-8899-aabbccddeeff"), Bytes: []byte{0, 1, 255}, Arr: [4]byte{9, 8, 7, 6},
			Tier: Silver,
		}, scalarKinds),
		rt("scalars zero", &Scalars{}, zeroKinds),
		rt("empty bytes stay empty", &Scalars{Bytes: []byte{}}, maps(scalarKinds, "T")),
		rt("whole double stays double", &Scalars{F64: 5, F32: 3}, zeroKinds),
		rt("time before the epoch", &Scalars{T: time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC)}, maps(scalarKinds, "Bytes")),
		rt("time at year 9999", &Scalars{T: time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)}, maps(scalarKinds, "Bytes")),
		rt("pointers set", &Pointers{
			S: ptr(""), B: ptr(false), I: ptr(int64(-7)), U64: ptr(uint64(math.MaxUint64)), F: ptr(0.25),
			T: ptr(refTime), D: ptr(time.Duration(1)), G: ptr(abstractions.GUID{}), Tier: ptr(Bronze),
			Tags: ptr([]string{"a"}), Addr: &Address{City: "Cork"}, PP: ptr(ptr(3)),
		}, map[string]service.Kind{
			"S": kS, "B": kB, "I": k64, "U64": k64, "F": kD, "T": kT, "D": k64, "G": kG, "Tier": kS,
			"Tags__Json": kS, "Addr_Street": kS, "Addr_City": kS, "Addr_Geo_Lat": kD, "Addr_Geo_Lon": kD, "PP__Json": kS,
		}),
		rt("pointers nil", &Pointers{}, map[string]service.Kind{}),
		rt("nested", &Nested{
			Home: Address{Street: "a", City: "b", Geo: Geo{Lat: 1, Lon: 2}},
			Work: &Address{Street: "c", City: "d", Geo: Geo{Lat: 3, Lon: 4}},
		}, map[string]service.Kind{
			"Home_Street": kS, "Home_City": kS, "Home_Geo_Lat": kD, "Home_Geo_Lon": kD,
			"Work_Street": kS, "Work_City": kS, "Work_Geo_Lat": kD, "Work_Geo_Lon": kD,
		}),
		rt("nested nil pointer", &Nested{}, map[string]service.Kind{
			"Home_Street": kS, "Home_City": kS, "Home_Geo_Lat": kD, "Home_Geo_Lon": kD,
		}),
		rt("embedded", &Embedded{
			Entity: abstractions.Entity{ID: "p|r", CreatedAt: refTime, UpdatedAt: refTime.Add(time.Hour)},
			Audit:  Audit{By: "bob", At: refTime}, Extra: &Extra{Note: "n"}, Name: "x",
		}, map[string]service.Kind{"Id": kS, "CreatedAt": kT, "UpdatedAt": kT, "By": kS, "At": kT, "Note": kS, "Name": kS}),
		rt("embedded nil pointer", &Embedded{Entity: abstractions.Entity{ID: "a"}}, map[string]service.Kind{
			"Id": kS, "By": kS, "Name": kS,
		}),
		rt("json", &JSONish{
			Tags: []string{"x", "y"}, Scores: map[string]int{"a": 1}, Any: map[string]any{"k": []any{1.5, "s"}},
			Matrix: [][]int{{1}, {}}, Pair: [2]string{"l", "r"}, Points: []Geo{{Lat: 1, Lon: 2}}, Empty: []int{},
		}, map[string]service.Kind{
			"Tags__Json": kS, "Scores__Json": kS, "Any__Json": kS, "Matrix__Json": kS, "Pair__Json": kS,
			"Points__Json": kS, "Empty__Json": kS,
		}),
		rt("json nil", &JSONish{}, map[string]service.Kind{"Pair__Json": kS}),
		rt("recursive", &Node{Value: 1, Next: &Node{Value: 2, Next: &Node{Value: 3}}}, map[string]service.Kind{
			"Value": k64, "Next__Json": kS,
		}),
		rt("reference entity", codectest.Reference(), nil),
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// maps returns m without the named keys.
func maps(m map[string]service.Kind, drop ...string) map[string]service.Kind {
	out := map[string]service.Kind{}
	for k, v := range m {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	return out
}

// money implements json.Marshaler, so it is stored as JSON instead of being flattened.
type money struct {
	units int64
	cur   string
}

func (m money) MarshalJSON() ([]byte, error) {
	return json.Marshal(strconv.FormatInt(m.units, 10) + " " + m.cur)
}

func (m *money) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, cur, _ := strings.Cut(s, " ")
	units, err := strconv.ParseInt(n, 10, 64)
	*m = money{units, cur}
	return err
}

type textStructs struct {
	Big   big.Int
	BigP  *big.Int
	Addr  netip.Addr
	Price money
	Cost  *money
}

func TestTextAndJSONStructs(t *testing.T) {
	in := &textStructs{Addr: netip.MustParseAddr("10.0.0.1"), BigP: big.NewInt(-5), Price: money{12, "EUR"}}
	in.Big.SetString("123456789012345678901234567890", 10)
	out, row := roundTrip(t, in, nil)
	if out.Big.Cmp(&in.Big) != 0 || out.BigP.Cmp(in.BigP) != 0 || out.Addr != in.Addr || out.Price != in.Price || out.Cost != nil {
		t.Fatalf("got %+v", out)
	}
	want := map[string]service.Kind{"Big": kS, "BigP": kS, "Addr": kS, "Price__Json": kS}
	if got := kinds(row.Properties); !reflect.DeepEqual(got, want) {
		t.Fatalf("cells %v", got)
	}
}

func TestNaNRoundTrips(t *testing.T) {
	in := &Scalars{F64: math.NaN(), F32: float32(math.Inf(-1))}
	out, _ := roundTrip(t, in, nil)
	if math.Float64bits(out.F64) != math.Float64bits(in.F64) || !math.IsInf(float64(out.F32), -1) {
		t.Fatalf("got %v %v", out.F64, out.F32)
	}
}

func TestUint64KeepsBits(t *testing.T) {
	props, err := codec.Encode(&Scalars{U64: math.MaxUint64, U: 1 << 63}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range props {
		switch p.Name {
		case "U64":
			if p.Value.Int64() != -1 {
				t.Errorf("U64 stored as %v, want the bits of MaxUint64 (-1)", p.Value)
			}
		case "U":
			if p.Value.Int64() != math.MinInt64 {
				t.Errorf("U stored as %v", p.Value)
			}
		}
	}
}

func TestTimeIsStoredInUTC(t *testing.T) {
	loc := time.FixedZone("x", 5*3600)
	in := &Scalars{T: time.Date(2024, 1, 1, 10, 0, 0, 123456789, loc)}
	props, err := codec.Encode(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := service.Row{Properties: props}
	v, _ := row.Get("T")
	if got := service.FormatDateTime(v.Time()); got != "2024-01-01T05:00:00.1234567Z" {
		t.Fatalf("stored %s", got)
	}
	out, err := codec.Decode[Scalars](&row, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.T.Equal(in.T.Truncate(100)) || out.T.Location() != time.UTC {
		t.Fatalf("read %v", out.T)
	}
}

func TestEncodeAcceptsValueAndPointer(t *testing.T) {
	c := codectest.Reference()
	a, err := codec.Encode(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := codec.Encode(*c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(a, b, func(x, y service.Property) bool { return x.Name == y.Name && x.Value.Equal(y.Value) }) {
		t.Fatal("a struct and a pointer to it encode differently")
	}
	for _, bad := range []any{nil, 5, (*Customer)(nil), []Customer{}, ptr(5)} {
		_, err := codec.Encode(bad, nil)
		wantErrIs(t, err, abstractions.ErrNotSupported)
	}
}

func TestEncodeDoesNotAlias(t *testing.T) {
	in := &Scalars{Bytes: []byte{1, 2, 3}}
	row, err := codec.EncodeRow(in, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Bytes[0] = 9
	out, err := codec.Decode[Scalars](&row, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Bytes[0] != 1 {
		t.Fatal("the stored cell shares the caller's slice")
	}
	out.Bytes[1] = 9
	v, _ := row.Get("Bytes")
	if v.Bytes()[1] != 2 {
		t.Fatal("the decoded field shares the cell's bytes")
	}
}

func TestEntityBase(t *testing.T) {
	ts := time.Date(2025, 5, 5, 5, 5, 5, 0, time.UTC)
	in := &Embedded{Entity: abstractions.Entity{ID: "eu|alice|x", ETag: "stale", Timestamp: ts}}
	props, err := codec.Encode(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range props {
		if p.Name == "ETag" || p.Name == "Timestamp" {
			t.Fatalf("%s is stored as a column", p.Name)
		}
	}
	cases := []struct {
		name, pk, rk, wantID string
		drop                 bool
	}{
		{name: "stored id names the keys", pk: "eu", rk: "alice|x", wantID: "eu|alice|x"},
		{name: "stored id names other keys", pk: "us", rk: "bob", wantID: "us|bob"},
		{name: "no id column", pk: "us", rk: "bob", wantID: "us|bob", drop: true},
		{name: "no id column, equal keys", pk: "a", rk: "a", wantID: "a|a", drop: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row := service.Row{PartitionKey: tc.pk, RowKey: tc.rk, ETag: `W/"x"`, Timestamp: ts,
				Properties: slices.Clone(props)}
			if tc.drop {
				row.Properties = slices.DeleteFunc(row.Properties, func(p service.Property) bool { return p.Name == "Id" })
			}
			out, err := codec.Decode[Embedded](&row, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.ID != tc.wantID || out.ETag != `W/"x"` || !out.Timestamp.Equal(ts) {
				t.Fatalf("got ID %q ETag %q Timestamp %v", out.ID, out.ETag, out.Timestamp)
			}
		})
	}
	t.Run("lone id", func(t *testing.T) {
		out, _ := roundTrip(t, &Embedded{Entity: abstractions.Entity{ID: "single"}}, nil)
		if out.ID != "single" {
			t.Fatalf("ID %q", out.ID)
		}
	})
}

func TestDecodeIntoKeepsAbsentFields(t *testing.T) {
	row := service.Row{Properties: []service.Property{
		{Name: "S", Value: service.String("new")},
		{Name: "Tags__Json", Value: service.String(`["z"]`)},
	}}
	dst := &struct {
		S, Other string
		Tags     []string
		Scores   map[string]int
	}{S: "old", Other: "kept", Tags: []string{"a", "b"}, Scores: map[string]int{"k": 1}}
	if err := codec.DecodeInto(&row, dst, nil); err != nil {
		t.Fatal(err)
	}
	if dst.S != "new" || dst.Other != "kept" || !slices.Equal(dst.Tags, []string{"z"}) || dst.Scores["k"] != 1 {
		t.Fatalf("got %+v", dst)
	}
	for _, bad := range []any{nil, dst.S, &dst.S, (*Customer)(nil)} {
		wantErrIs(t, codec.DecodeInto(&row, bad, nil), abstractions.ErrNotSupported)
	}
}

func TestDecodeTolerance(t *testing.T) {
	cases := []struct {
		name string
		cell service.Property
		want func(s *Scalars) bool
	}{
		{"int32 into int64", service.Property{Name: "I64", Value: service.Int32(-5)}, func(s *Scalars) bool { return s.I64 == -5 }},
		{"int64 into int32", service.Property{Name: "I32", Value: service.Int64(7)}, func(s *Scalars) bool { return s.I32 == 7 }},
		{"int64 into int8", service.Property{Name: "I8", Value: service.Int64(-128)}, func(s *Scalars) bool { return s.I8 == -128 }},
		{"int32 into uint64", service.Property{Name: "U64", Value: service.Int32(9)}, func(s *Scalars) bool { return s.U64 == 9 }},
		{"int32 into float", service.Property{Name: "F64", Value: service.Int32(5)}, func(s *Scalars) bool { return s.F64 == 5 }},
		{"int32 into float32", service.Property{Name: "F32", Value: service.Int32(-5)}, func(s *Scalars) bool { return s.F32 == -5 }},
		{"rfc3339 string into time", service.Property{Name: "T", Value: service.String("2024-02-29T13:14:15.1234567Z")},
			func(s *Scalars) bool { return s.T.Equal(refTime) }},
		{"offset string into time", service.Property{Name: "T", Value: service.String("2024-02-29T15:14:15.1234567+02:00")},
			func(s *Scalars) bool { return s.T.Equal(refTime) && s.T.Location() == time.UTC }},
		{"zoneless string into time", service.Property{Name: "T", Value: service.String("2024-02-29T13:14:15.1234567")},
			func(s *Scalars) bool { return s.T.Equal(refTime) }},
		{"date string into time", service.Property{Name: "T", Value: service.String("2024-02-29")},
			func(s *Scalars) bool { return s.T.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) }},
		{"empty string into time", service.Property{Name: "T", Value: service.String("")},
			func(s *Scalars) bool { return s.T.IsZero() }},
		{"unset .NET date", service.Property{Name: "T", Value: service.DateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC))},
			func(s *Scalars) bool { return s.T.IsZero() }},
		{"timespan string", service.Property{Name: "D", Value: service.String("-1.02:03:04.5")},
			func(s *Scalars) bool { return s.D == -(26*time.Hour + 3*time.Minute + 4500*time.Millisecond) }},
		{"timespan string no days", service.Property{Name: "D", Value: service.String("00:00:00.0000001")},
			func(s *Scalars) bool { return s.D == 100 }},
		{"go duration string", service.Property{Name: "D", Value: service.String("1h30m")},
			func(s *Scalars) bool { return s.D == 90*time.Minute }},
		{"int32 duration", service.Property{Name: "D", Value: service.Int32(1000)},
			func(s *Scalars) bool { return s.D == time.Microsecond }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row := service.Row{Properties: []service.Property{tc.cell}}
			out, err := codec.Decode[Scalars](&row, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(out) {
				t.Fatalf("got %+v", out)
			}
		})
	}
}

func TestDecodeMismatch(t *testing.T) {
	cases := []struct {
		cell service.Property
		want string // parts of the message
	}{
		{service.Property{Name: "S", Value: service.Int32(1)}, `column "S" holds Edm.Int32`},
		{service.Property{Name: "I8", Value: service.Int32(200)}, "200 is out of the range of int8"},
		{service.Property{Name: "U8", Value: service.Int32(-1)}, "out of the range of uint8"},
		{service.Property{Name: "U32", Value: service.Int64(1 << 33)}, "out of the range of uint32"},
		{service.Property{Name: "U64", Value: service.Int32(-1)}, "out of the range of uint64"},
		{service.Property{Name: "F32", Value: service.Double(1e300)}, "out of the range of float32"},
		{service.Property{Name: "I64", Value: service.Double(1)}, "Edm.Int32 or Edm.Int64"},
		{service.Property{Name: "F64", Value: service.Int64(1)}, "Edm.Double or Edm.Int32"},
		{service.Property{Name: "B", Value: service.String("true")}, "field B (bool)"},
		{service.Property{Name: "T", Value: service.String("yesterday")}, "not an RFC 3339"},
		{service.Property{Name: "T", Value: service.Bool(true)}, "Edm.DateTime or an RFC 3339"},
		{service.Property{Name: "D", Value: service.String("soon")}, "not a duration"},
		{service.Property{Name: "G", Value: service.String("00112233-4455-6677-8899-aabbccddeeff")}, "Edm.Guid"},
		{service.Property{Name: "Bytes", Value: service.String("AQID")}, "Edm.Binary"},
		{service.Property{Name: "Arr", Value: service.Binary([]byte{1})}, "holds 1 bytes, the field 4"},
		{service.Property{Name: "Tier", Value: service.String("platinum")}, `unknown tier "platinum"`},
		{service.Property{Name: "S__GZip", Value: service.Binary([]byte("nope"))}, "does not hold gzip"},
		{service.Property{Name: "S__GZip", Value: service.Binary([]byte{0x1f, 0x8b, 0, 0})}, "damaged"},
		{service.Property{Name: "S__GZip", Value: service.String("x")}, "Edm.String (or its gzip form"},
		{service.Property{Name: "S", Value: service.Value{}}, "Edm.Invalid(0)"},
	}
	for _, tc := range cases {
		t.Run(tc.cell.Name+" "+tc.cell.Value.String(), func(t *testing.T) {
			row := service.Row{Properties: []service.Property{tc.cell}}
			_, err := codec.Decode[Scalars](&row, nil)
			var ve *codec.ValueError
			if !errorsAs(err, &ve) || ve.Column != tc.cell.Name {
				t.Fatalf("error %v, want a *ValueError for %s", err, tc.cell.Name)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks %q", err, tc.want)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		row := service.Row{Properties: []service.Property{{Name: "Tags__Json", Value: service.String("{")}}}
		_, err := codec.Decode[JSONish](&row, nil)
		if err == nil || !strings.Contains(err.Error(), `"Tags__Json"`) {
			t.Fatalf("error %v", err)
		}
	})
	if _, err := codec.Decode[Scalars](nil, nil); err == nil {
		t.Fatal("a nil row decodes")
	}
}

func TestEncodeRefusesTimes(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 99, time.UTC), // truncates to the unset date
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(100_000, 1, 1, 0, 0, 0, 0, time.UTC), // beyond what a cell's ticks count
		time.Date(-100_000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(1<<62, 0),
	} {
		_, err := codec.Encode(&Scalars{T: tm}, nil)
		var ve *codec.ValueError
		if !errorsAs(err, &ve) || ve.Field != "T" || !strings.Contains(err.Error(), "1601") {
			t.Errorf("%v: error %v", tm, err)
		}
	}
	_, err := codec.Encode(&Scalars{Tier: Tier(9)}, nil)
	if err == nil || !strings.Contains(err.Error(), "Tier") {
		t.Errorf("a failing MarshalText gives %v", err)
	}
	_, err = codec.Encode(&JSONish{Any: func() {}}, nil)
	if err == nil || !strings.Contains(err.Error(), "Any__Json") {
		t.Errorf("a value encoding/json refuses gives %v", err)
	}
}

// Text that is not UTF-8 is refused as a caller error, since the service would change it.
func TestInvalidUTF8IsRefused(t *testing.T) {
	type withText struct {
		abstractions.Entity
		Note string
	}
	_, err := codec.Encode(&withText{Note: "a\xffb"}, nil)
	wantErrIs(t, err, abstractions.ErrInvalidArgument)
	var ve *codec.ValueError
	if !errorsAs(err, &ve) || ve.Column != "Note" {
		t.Fatalf("Encode: %v", err)
	}
}

func TestReservedColumnsAreNotRead(t *testing.T) {
	type T struct{ TypeName, Name string }
	row := service.Row{Properties: []service.Property{
		{Name: "_TypeName", Value: service.String("x")},
		{Name: "_Name", Value: service.String("y")},
		{Name: "Name", Value: service.String("z")},
	}}
	out, err := codec.Decode[T](&row, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.TypeName != "" || out.Name != "z" {
		t.Fatalf("got %+v", out)
	}
}
