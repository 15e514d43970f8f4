package service

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func row(pk, rk string, props ...Property) Row {
	return Row{PartitionKey: pk, RowKey: rk, Properties: props}
}

func prop(name string, v Value) Property { return Property{Name: name, Value: v} }

var t0 = time.Date(2026, 11, 29, 18, 30, 11, 123456700, time.UTC)

// marshalRow encodes r the way it is sent, with encoding/json: compact JSON with the HTML
// escapes of json.Marshal (the SDK re-encodes the adapter's JSON with it), an @odata.type
// annotation for the types JSON cannot carry, and whole doubles with a ".0" (which the
// SDK's re-encoding drops, so BodySize may count two bytes more per double). Test strings
// avoid \b and \f, which encoding/json shortens and BodySize does not.
func marshalRow(t *testing.T, r Row) []byte {
	t.Helper()
	m := map[string]any{"PartitionKey": r.PartitionKey, "RowKey": r.RowKey}
	for _, p := range r.Properties {
		v := p.Value
		var x any
		switch v.Kind() {
		case KindString:
			x = v.Str()
		case KindBinary:
			x = base64.StdEncoding.EncodeToString(v.Bytes())
		case KindBool:
			x = v.Bool()
		case KindInt32:
			x = v.Int32()
		case KindInt64:
			x = strconv.FormatInt(v.Int64(), 10)
		case KindDouble:
			f := v.Float()
			switch {
			case math.IsNaN(f):
				x = "NaN"
			case math.IsInf(f, 1):
				x = "Infinity"
			case math.IsInf(f, -1):
				x = "-Infinity"
			default:
				b, _ := json.Marshal(f)
				if !strings.ContainsAny(string(b), ".e") {
					b = append(b, ".0"...)
				}
				x = json.RawMessage(b)
			}
		case KindDateTime:
			x = FormatDateTime(v.Time())
		case KindGuid:
			x = v.Str()
		}
		m[p.Name] = x
		if annotated(v.Kind()) {
			m[p.Name+"@odata.type"] = v.Kind().String()
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBodySizeMatchesJSON(t *testing.T) {
	rows := []Row{
		row("", ""),
		row("p\"\\<>&\x01\x1f\n\t\r", "é😀\u2028\u2029\xff", prop("s", String("a\"b<c\x7f\u00e9")), prop("h", String("<<&&>>"))),
		row("p", "r",
			prop("b", Binary([]byte{0, 1, 2, 3, 4})),
			prop("t", Bool(true)), prop("u", Bool(false)),
			prop("i", Int32(math.MinInt32)), prop("l", Int64(math.MinInt64)),
			prop("f1", Double(1.5)), prop("f2", Double(1e21)), prop("f3", Double(1e-7)),
			prop("f4", Double(1e20)), prop("f5", Double(-0.000001)), prop("f6", Double(123456789e-300)),
			prop("w1", Double(5)), prop("w2", Double(math.Copysign(0, -1))), prop("w3", Double(0)), prop("w4", Double(1e20)),
			prop("n1", Double(math.NaN())), prop("n2", Double(math.Inf(1))), prop("n3", Double(math.Inf(-1))),
			prop("d", DateTime(t0)), prop("g", Guid([16]byte{0xab})),
		),
	}
	for _, r := range rows {
		want := len(marshalRow(t, r))
		if got := BodySize(&Action{Op: OpInsert, Row: r}); got != want {
			t.Errorf("BodySize(%q/%q) = %d, want %d (%s)", r.PartitionKey, r.RowKey, got, want, marshalRow(t, r))
		}
	}
}

func TestJSONStringLen(t *testing.T) {
	for s, want := range map[string]int{
		"":           2,
		"abc":        5,
		"<>&":        20,
		"a<b":        10,
		"\b\f":       14,
		"\"\\\n\r\t": 12,
		"\x7f":       3,
		"é😀":         8,
		"\u2028":     8,
		"a\xffb":     10,
	} {
		if got := jsonStringLen(s); got != want {
			t.Errorf("jsonStringLen(%q) = %d, want %d", s, got, want)
		}
	}
	// The adapter's own JSON (a transaction's entities) has no HTML escapes.
	for s, want := range map[string]int{"<>&": 5, "a<b": 5, "\b": 8, "é😀": 8} {
		if got := adapterJSON.stringLen(s); got != want {
			t.Errorf("adapterJSON.stringLen(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestActionBodySizeCountsEncodedKeys(t *testing.T) {
	plain := ActionBodySize(&Action{Op: OpDelete, Row: row("pk", "rk")})
	for _, tc := range []struct {
		pk, rk string
		extra  int
	}{
		{"pk", "rk", 0},
		{"a-b._~", "rk", 4},
		{"p k", "r/k", 2 + 3 + 2 + 3 - 4},
		{"p'k", "é", 2 + 6 + 6 - 4},
	} {
		got := ActionBodySize(&Action{Op: OpDelete, Row: row(tc.pk, tc.rk)}) - plain
		if got != tc.extra {
			t.Errorf("keys %q/%q: ActionBodySize grows by %d, want %d", tc.pk, tc.rk, got, tc.extra)
		}
		// An insert carries its keys in the body only.
		ins := ActionBodySize(&Action{Op: OpInsert, Row: row(tc.pk, tc.rk)})
		if want := txActionOverhead + BodySize(&Action{Op: OpInsert, Row: row(tc.pk, tc.rk)}); ins != want {
			t.Errorf("insert %q/%q: ActionBodySize = %d, want %d", tc.pk, tc.rk, ins, want)
		}
	}
}
