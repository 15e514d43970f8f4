package codec_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Tier is an enum stored as its text.
type Tier int

const (
	Bronze Tier = iota
	Silver
	Gold
)

var tierNames = []string{"bronze", "silver", "gold"}

func (t Tier) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(tierNames) {
		return nil, fmt.Errorf("tier %d has no name", int(t))
	}
	return []byte(tierNames[t]), nil
}

func (t *Tier) UnmarshalText(b []byte) error {
	for i, n := range tierNames {
		if n == string(b) {
			*t = Tier(i)
			return nil
		}
	}
	return fmt.Errorf("unknown tier %q", b)
}

type Geo struct {
	Lat, Lon float64
}

type Address struct {
	Street string
	City   string
	Geo    Geo
}

// Scalars holds one field of every scalar mapping.
type Scalars struct {
	S     string
	B     bool
	I8    int8
	I16   int16
	I32   int32
	I     int
	I64   int64
	U8    uint8
	U16   uint16
	U32   uint32
	U     uint
	U64   uint64
	F32   float32
	F64   float64
	T     time.Time
	D     time.Duration
	G     abstractions.GUID
	Bytes []byte
	Arr   [4]byte
	Tier  Tier
}

type Pointers struct {
	S    *string
	B    *bool
	I    *int64
	U64  *uint64
	F    *float64
	T    *time.Time
	D    *time.Duration
	G    *abstractions.GUID
	Tier *Tier
	Tags *[]string
	Addr *Address
	PP   **int
}

type Nested struct {
	Home Address
	Work *Address
}

type Audit struct {
	By string
	At time.Time
}

type Extra struct {
	Note string
}

type Embedded struct {
	abstractions.Entity
	Audit
	*Extra
	Name string
}

type JSONish struct {
	Tags   []string
	Scores map[string]int
	Any    any
	Matrix [][]int
	Pair   [2]string
	Points []Geo
	Empty  []int
}

// Node is recursive: its Next is stored as JSON.
type Node struct {
	Value int
	Next  *Node
}

// Customer is the reference entity of the golden file and the benchmarks: 20 fields with one
// nested struct and one slice.
type Customer struct {
	abstractions.Entity
	Name     string
	Email    string
	Age      int32
	Visits   int64
	Level    uint8
	Flags    uint64
	Score    float32
	Balance  float64
	Active   bool
	Birthday time.Time
	Timeout  time.Duration
	Key      abstractions.GUID
	Avatar   []byte
	Tier     Tier
	Nick     *string
	Home     Address
	Tags     []string
}

func ptr[T any](v T) *T { return &v }

func mustGUID(s string) abstractions.GUID {
	g, err := abstractions.ParseGUID(s)
	if err != nil {
		panic(err)
	}
	return g
}

var refTime = time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC)

func referenceCustomer() *Customer {
	return &Customer{
		Entity: abstractions.Entity{
			ID:        "eu|alice",
			CreatedAt: time.Date(2020, 1, 2, 3, 4, 5, 600000000, time.UTC),
			UpdatedAt: refTime,
		},
		Name:     "Alice",
		Email:    "alice@example.com",
		Age:      41,
		Visits:   1 << 40,
		Level:    7,
		Flags:    1<<63 | 5,
		Score:    2.5,
		Balance:  1234.5,
		Active:   true,
		Birthday: time.Date(1983, 7, 14, 0, 0, 0, 0, time.UTC),
		Timeout:  90 * time.Second,
		Key:      mustGUID("00112233-4455-6677-8899-aabbccddeeff"),
		Avatar:   []byte{1, 2, 3},
		Tier:     Gold,
		Nick:     ptr("ali"),
		Home:     Address{Street: "1 Main St", City: "Dublin", Geo: Geo{Lat: 53.35, Lon: -6.26}},
		Tags:     []string{"vip", "beta"},
	}
}

// roundTrip encodes in into a row with keys from its ID (or fixed keys) and decodes it back.
func roundTrip[T any](t *testing.T, in *T, opts *codec.Options) (*T, service.Row) {
	t.Helper()
	pk, rk := "pk", "rk"
	if b, ok := any(in).(abstractions.EntityBase); ok {
		pk, rk = splitID(b.Base().ID)
	}
	row, err := codec.EncodeRow(in, pk, rk, opts)
	if err != nil {
		t.Fatalf("EncodeRow: %v", err)
	}
	out, err := codec.Decode[T](&row, opts)
	if err != nil {
		t.Fatalf("Decode: %v\nrow: %v", err, row.Properties)
	}
	return out, row
}

func splitID(id string) (string, string) {
	for i := 0; i < len(id); i++ {
		if id[i] == '|' {
			return id[:i], id[i+1:]
		}
	}
	return id, id
}

func mustEqual(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n got: %+v\nwant: %+v", deref(got), deref(want))
	}
}

func deref(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return v
}

// cells renders a row's cells as "Name Kind" lines' names, in order.
func names(props []service.Property) []string {
	out := make([]string, len(props))
	for i, p := range props {
		out[i] = p.Name
	}
	return out
}

func kinds(props []service.Property) map[string]service.Kind {
	out := map[string]service.Kind{}
	for _, p := range props {
		out[p.Name] = p.Value.Kind()
	}
	return out
}

func wantErrIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v does not match %v", err, target)
	}
}

func errorsAs[T error](err error, target *T) bool { return errors.As(err, target) }

func gzipOf(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
