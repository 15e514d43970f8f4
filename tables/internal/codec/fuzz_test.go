package codec_test

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// fuzzCustomer builds a reference entity from fuzz inputs.
func fuzzCustomer(s string, i int64, u uint64, f float64, b bool, data []byte, ts int64) *Customer {
	valid := strings.ToValidUTF8(s, "\uFFFD") // JSON cannot carry invalid UTF-8
	c := &Customer{
		Entity:  abstractions.Entity{ID: s, CreatedAt: fuzzTime(ts, u), UpdatedAt: fuzzTime(i, uint64(ts))},
		Name:    s,
		Email:   strings.ToUpper(s),
		Age:     int32(i),
		Visits:  i,
		Level:   uint8(u),
		Flags:   u,
		Score:   float32(f),
		Balance: f,
		Active:  b,
		Timeout: time.Duration(ts),
		Avatar:  data,
		Tier:    Tier(u % 3),
		Home:    Address{Street: s, City: valid, Geo: Geo{Lat: -f, Lon: float64(i)}},
	}
	if math.Abs(f) > math.MaxFloat32 && !math.IsInf(f, 0) {
		c.Score = float32(math.Copysign(math.MaxFloat32, f))
	}
	copy(c.Key[:], data)
	if b {
		c.Nick = &s
		c.Tags = strings.Split(valid, ",")
	}
	c.Birthday = fuzzTime(ts^int64(u), uint64(i))
	return c
}

// fuzzTime maps fuzz numbers to a storable time, or to the zero time.
func fuzzTime(sec int64, frac uint64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	const first = -11644473600 + 1 // 1601-01-01T00:00:01Z
	const last = 253402300799      // 9999-12-31T23:59:59Z
	span := uint64(last - first + 1)
	s := first + int64(uint64(sec)%span)
	return time.Unix(s, int64(frac%1e7)*100).UTC()
}

func FuzzRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string, i int64, u uint64, fl float64, b bool, data []byte, ts int64) {
		in := fuzzCustomer(s, i, u, fl, b, data, ts)
		pk, rk := splitID(in.ID)
		row, err := codec.EncodeRow(in, pk, rk, nil)
		if errors.Is(err, abstractions.ErrOversizedCell) {
			t.Skip("too large for a cell")
		}
		if !utf8.ValidString(s) {
			// Text that is not UTF-8 cannot be stored; it is refused, never changed.
			if !errors.Is(err, abstractions.ErrInvalidArgument) {
				t.Fatalf("EncodeRow of invalid UTF-8: %v, want ErrInvalidArgument", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("EncodeRow: %v", err)
		}
		out, err := codec.Decode[Customer](&row, nil)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if !sameValue(reflect.ValueOf(out).Elem(), reflect.ValueOf(in).Elem()) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", out, in)
		}
	})
}

// sameValue is reflect.DeepEqual with floats compared as the codec keeps them: NaN equals
// NaN, and 0 differs from -0.
func sameValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return (math.IsNaN(x) && math.IsNaN(y)) || (x == y && math.Signbit(x) == math.Signbit(y))
	case reflect.Struct:
		if a.Type() == reflect.TypeFor[time.Time]() {
			return reflect.DeepEqual(a.Interface(), b.Interface())
		}
		for i := 0; i < a.NumField(); i++ {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// fuzzNames are the column names a fuzzed row draws from: columns of the decoded types, their
// JSON and gzip forms, aliases, reserved names.
var fuzzNames = []string{
	"Id", "CreatedAt", "UpdatedAt", "Created", "Modified", "Name", "Email", "Age", "Visits", "Level", "Flags",
	"Score", "Balance", "Active", "Birthday", "Timeout", "Key", "Avatar", "Tier", "Nick", "Home_Street",
	"Home_City", "Home_Geo_Lat", "Tags__Json", "Tags__GZip", "Name__GZip", "Tier__GZip", "_TypeName", "S",
	"T", "D", "G", "U64", "F32", "I8", "Arr", "Bytes", "Addr_City", "PP__Json", "Any__Json", "Scores__Json",
	"Pair__Json", "Work_Geo_Lon", "FullName", "Labels__GZip", "Total", "LegacyStamp", "Next__Json", "Value",
}

// fuzzRow turns bytes into a row: each property takes a name byte, a kind byte and a value.
func fuzzRow(data []byte, pk, rk string) service.Row {
	row := service.Row{PartitionKey: pk, RowKey: rk, ETag: "e"}
	for len(data) >= 2 {
		nb, kb := data[0], data[1]
		data = data[2:]
		take := func(n int) []byte {
			n = min(n, len(data))
			b := data[:n]
			data = data[n:]
			return b
		}
		num := func() uint64 {
			var buf [8]byte
			copy(buf[:], take(8))
			return binary.LittleEndian.Uint64(buf[:])
		}
		str := func() string {
			n := 0
			if len(data) > 0 {
				n = int(take(1)[0])
			}
			return string(take(n))
		}
		name := fuzzNames[int(nb)%len(fuzzNames)]
		if nb >= 240 {
			name = str()
		}
		var v service.Value
		switch kb % 12 {
		case 0:
			v = service.String(str())
		case 1:
			v = service.Binary([]byte(str()))
		case 2:
			v = service.Bool(num()&1 == 1)
		case 3:
			v = service.Int32(int32(num()))
		case 4:
			v = service.Int64(int64(num()))
		case 5:
			v = service.Double(math.Float64frombits(num()))
		case 6:
			v = service.DateTime(time.Unix(int64(num()%(1<<38))-(1<<37), int64(num()%1e9)))
		case 7:
			var g [16]byte
			copy(g[:], take(16))
			v = service.Guid(g)
		case 8:
			v = service.Binary(gzipOf(nopTB{}, str()))
		case 9:
			v = service.String(`["` + str() + `"]`)
		case 10:
			v = service.String("2024-01-0" + str())
		default:
			// the invalid zero Value
		}
		row.Properties = append(row.Properties, service.Property{Name: name, Value: v})
	}
	return row
}

func FuzzDecode(f *testing.F) {
	reg := new(abstractions.TypeRegistry)
	if err := abstractions.RegisterType[OrderPlaced](reg, "placed"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, pk, rk string) {
		row := fuzzRow(data, pk, rk)
		// Errors are fine; a panic fails the fuzzer.
		_, _ = codec.Decode[Customer](&row, nil)
		_, _ = codec.Decode[Scalars](&row, nil)
		_, _ = codec.Decode[Pointers](&row, nil)
		_, _ = codec.Decode[JSONish](&row, nil)
		_, _ = codec.Decode[Nested](&row, nil)
		_, _ = codec.Decode[aliased](&row, nil)
		_, _ = codec.Decode[Node](&row, nil)
		_, _ = codec.DecodeAs[Event](&row, reg, nil)
		if c, err := codec.Decode[Customer](&row, nil); err == nil && serviceText(&row) {
			// Whatever decoded from a row the service can hold must encode again (a stored
			// time before 1601 excepted).
			if _, err := codec.Encode(c, nil); err != nil && !strings.Contains(err.Error(), "1601") &&
				!errors.Is(err, abstractions.ErrOversizedCell) {
				t.Fatalf("a decoded value does not encode: %v", err)
			}
		}
	})
}

// serviceText reports whether the row's keys and strings are valid UTF-8, as those of every
// row the service returns are (it stores text).
func serviceText(row *service.Row) bool {
	if !utf8.ValidString(row.PartitionKey) || !utf8.ValidString(row.RowKey) {
		return false
	}
	for _, p := range row.Properties {
		if p.Value.Kind() == service.KindString && !utf8.ValidString(p.Value.Str()) {
			return false
		}
	}
	return true
}

// nopTB lets gzipOf run outside a test; writing to memory does not fail.
type nopTB struct{ testing.TB }

func (nopTB) Helper()           {}
func (nopTB) Fatal(args ...any) { panic(args) }
