package indexrow

import (
	"bytes"
	"encoding/base32"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// compare orders two values of one kind as the index promises.
func compare(a, b service.Value) int {
	switch a.Kind() {
	case service.KindBool:
		return cmpInt(btoi(a.Bool()), btoi(b.Bool()))
	case service.KindInt32, service.KindInt64:
		return cmpInt(a.Int64(), b.Int64())
	case service.KindDateTime:
		return a.Time().Compare(b.Time())
	case service.KindDouble:
		x, y := a.Float(), b.Float()
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case service.KindGuid:
		return strings.Compare(a.Str(), b.Str())
	case service.KindString:
		return strings.Compare(a.Str(), b.Str())
	case service.KindBinary:
		return bytes.Compare(a.Bytes(), b.Bytes())
	}
	panic(a.Kind())
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func randomValue(r *rand.Rand, kind service.Kind) service.Value {
	switch kind {
	case service.KindBool:
		return service.Bool(r.IntN(2) == 1)
	case service.KindInt64:
		switch r.IntN(4) {
		case 0:
			return service.Int64(int64(r.IntN(5)) - 2)
		case 1:
			return service.Int64([]int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)])
		}
		return service.Int64(int64(r.Uint64()))
	case service.KindDouble:
		switch r.IntN(4) {
		case 0:
			return service.Double([]float64{math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, -math.MaxFloat64}[r.IntN(6)])
		case 1:
			return service.Double(float64(r.IntN(7) - 3))
		}
		return service.Double((r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20)))
	case service.KindDateTime:
		return service.DateTime(time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).UTC())
	case service.KindGuid:
		var g [16]byte
		for i := range g {
			g[i] = byte(r.IntN(3) * 127)
		}
		return service.Guid(g)
	case service.KindString:
		alphabet := []rune{'a', 'b', 'z', 'A', ' ', '.', '~', 'é', '€', '𝄞', 0xFFFD, '0'}
		n := r.IntN(6)
		var sb strings.Builder
		for range n {
			sb.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return service.String(sb.String())
	case service.KindBinary:
		b := make([]byte, r.IntN(7))
		for i := range b {
			b[i] = []byte{0, 1, 0x7f, 0x80, 0xff}[r.IntN(5)]
		}
		return service.Binary(b)
	}
	panic(kind)
}

// TestKeysSortAsValues: for every kind and both directions, sorting index keys sorts the
// values (the entity's row key breaking ties), and Equal and Between select exactly the
// values they name.
func TestKeysSortAsValues(t *testing.T) {
	for seed := range uint64(6) {
		keysSortAsValues(t, rand.New(rand.NewPCG(seed, 2)))
	}
}

func keysSortAsValues(t *testing.T, r *rand.Rand) {
	kinds := []service.Kind{service.KindBool, service.KindInt64, service.KindDouble, service.KindDateTime,
		service.KindGuid, service.KindString, service.KindBinary}
	for _, kind := range kinds {
		for _, desc := range []bool{false, true} {
			sp := Spec{Name: "ix", Column: "C", Field: "C", Kind: kind, Desc: desc}
			type item struct {
				v   service.Value
				rk  string
				key string
			}
			var items []item
			for i := range 400 {
				v := randomValue(r, kind)
				rk := string(rune('a' + i%7))
				k, err := sp.Key(v, rk)
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, item{v, rk, k})
			}
			sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
			for i := 1; i < len(items); i++ {
				c := compare(items[i-1].v, items[i].v)
				if desc {
					c = -c
				}
				if c > 0 || c == 0 && items[i-1].rk > items[i].rk {
					t.Fatalf("%v desc=%v: key order puts %v (%s) before %v (%s)", kind, desc, items[i-1].v, items[i-1].rk, items[i].v, items[i].rk)
				}
			}
			for range 50 {
				a, b := items[r.IntN(len(items))].v, items[r.IntN(len(items))].v
				eq, err := sp.Equal(a)
				if err != nil {
					t.Fatal(err)
				}
				btw, err := sp.Between(a, b)
				if err != nil {
					t.Fatal(err)
				}
				all := sp.All()
				for _, it := range items {
					in := func(rg Range) bool { return it.key >= rg.From && it.key < rg.To }
					if !in(all) {
						t.Fatalf("%v: key %q outside the index's range", kind, it.key)
					}
					if in(eq) != (compare(it.v, a) == 0) {
						t.Fatalf("%v desc=%v: Equal(%v) and %v disagree", kind, desc, a, it.v)
					}
					want := compare(it.v, a) >= 0 && compare(it.v, b) < 0
					if desc {
						want = compare(it.v, a) <= 0 && compare(it.v, b) > 0
					}
					if in(btw) != want {
						t.Fatalf("%v desc=%v: Between(%v, %v) and %v disagree: in=%v", kind, desc, a, b, it.v, in(btw))
					}
				}
			}
		}
	}
}

func TestIntKindsShareOneOrder(t *testing.T) {
	sp := Spec{Name: "n", Kind: service.KindInt64}
	a, err := sp.Key(service.Int32(-5), "r")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sp.Key(service.Int64(-5), "r")
	if a != b {
		t.Fatalf("Int32 and Int64 of one number differ: %q %q", a, b)
	}
}

func TestRefusals(t *testing.T) {
	sp := Spec{Name: "n", Field: "N", Kind: service.KindDouble}
	if _, err := sp.Key(service.Double(math.NaN()), "r"); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("NaN: %v", err)
	}
	if _, err := sp.Key(service.String("x"), "r"); err == nil {
		t.Fatal("a string in a double index was accepted")
	}
	long := Spec{Name: "s", Field: "S", Kind: service.KindString}
	if _, err := long.Key(service.String(strings.Repeat("x", 400)), "r"); err == nil || !strings.Contains(err.Error(), "limit is 512") {
		t.Fatalf("long value: %v", err)
	}
	for _, bad := range []string{"", "a-b", "é", strings.Repeat("a", 33)} {
		if checkName(bad) == "" {
			t.Errorf("name %q accepted", bad)
		}
	}
}

func TestKeysAndStored(t *testing.T) {
	specs := []Spec{{Name: "a", Column: "A", Kind: service.KindString}, {Name: "b", Column: "B", Kind: service.KindInt64}}
	r := service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{{Name: "A", Value: service.String("x")}}}
	ks, err := Keys(specs, &r)
	if err != nil || len(ks) != 1 || !IsKey(ks[0]) || !strings.HasSuffix(ks[0], "r") {
		t.Fatalf("Keys = %v, %v", ks, err)
	}
	r.Properties = append(r.Properties, service.Property{Name: Column, Value: service.String(Join(append(ks, "not-an-index-key")))})
	if got := Stored(&r); len(got) != 1 || got[0] != ks[0] {
		t.Fatalf("Stored = %v", got)
	}
	ir := Row("p", ks[0], "r")
	if of, ok := Of(&ir); !ok || of != "r" {
		t.Fatalf("Of = %q %v", of, ok)
	}
}

// TestEncodeIsBase32Hex: the key digits are RFC 4648's extended-hex base32, unpadded.
func TestEncodeIsBase32Hex(t *testing.T) {
	want := base32.HexEncoding.WithPadding(base32.NoPadding)
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		if got, w := encode(b, false), want.EncodeToString(b); got != w {
			t.Fatalf("encode(%x) = %q, want %q", b, got, w)
		}
	}
}

// TestPrefix: the range of a prefix holds exactly the keys of the values that start with it,
// ascending and descending, for prefixes whose encoding ends inside a base32 digit, that
// end in a partial UTF-8 sequence or in 0xFF bytes, and the empty prefix.
func TestPrefix(t *testing.T) {
	values := []string{"", "a", "ab", "abc", "abd", "ab\x00", "ab\xff", "ab\xff\xff", "ac", "b", "\xff", "\xff\xff", "\xff\xff\x00",
		"é", "éa", "e", "f", "中", "中文", "中\xff", "\U0010FFFF", "\U0010FFFFz", "\uFFFF", "~", "abcde", "abcdef", "abcdeg"}
	prefixes := []string{"", "a", "ab", "abc", "abcd", "abcde", "ab\xff", "\xff", "\xff\xff", "é", "\xc3", "中", "\xe4\xb8", "\U0010FFFF", "\xf4\x8f\xbf", "z"}
	for _, kind := range []service.Kind{service.KindString, service.KindBinary, 0} {
		for _, desc := range []bool{false, true} {
			sp := Spec{Name: "p", Column: "V", Kind: kind, Desc: desc}
			for _, p := range prefixes {
				r, err := sp.Prefix([]byte(p))
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range values {
					val := service.String(v)
					if kind == service.KindBinary {
						val = service.Binary([]byte(v))
					}
					k, err := sp.Key(val, "rk")
					if err != nil {
						t.Fatal(err)
					}
					if in, want := k >= r.From && k < r.To, strings.HasPrefix(v, p); in != want {
						t.Errorf("kind %v desc %v: prefix %q, value %q: in the range is %v, has the prefix is %v", kind, desc, p, v, in, want)
					}
				}
			}
		}
	}
	if _, err := (&Spec{Name: "n", Kind: service.KindInt64}).Prefix([]byte("1")); err == nil {
		t.Fatal("a prefix of an integer index was accepted")
	}
}
