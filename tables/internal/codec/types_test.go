package codec_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/codec/codectest"
	"github.com/unified-data/gotables/tables/service"
)

// The reference entity and the types it is built of are shared with the Azure adapter's
// benchmarks (package codectest); the other shapes here use them too.
type (
	Tier     = codectest.Tier
	Geo      = codectest.Geo
	Address  = codectest.Address
	Customer = codectest.Customer
)

const (
	Bronze = codectest.Bronze
	Silver = codectest.Silver
	Gold   = codectest.Gold
)

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

func ptr[T any](v T) *T { return &v }

func mustGUID(s string) abstractions.GUID {
	g, err := abstractions.ParseGUID(s)
	if err != nil {
		panic(err)
	}
	return g
}

var refTime = time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC)

// roundTrip encodes in into a row with keys from its ID (or fixed keys) and decodes it back.
func roundTrip[T any](t *testing.T, in *T, opts *codec.Options) (*T, service.Row) {
	t.Helper()
	pk, rk := "pk", "rk"
	if b, ok := any(in).(interface{ Base() *abstractions.Entity }); ok {
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
