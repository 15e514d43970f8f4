package memservice

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/unified-data/gotables/tables/service"
)

// marshalRow encodes r the way the Azure adapter does, with encoding/json: compact JSON
// without HTML escapes, an @odata.type annotation for the types JSON cannot carry, and whole
// doubles with a ".0". Test strings avoid \b and \f, which encoding/json shortens and the
// adapter does not.
func marshalRow(t *testing.T, r service.Row) []byte {
	t.Helper()
	m := map[string]any{"PartitionKey": r.PartitionKey, "RowKey": r.RowKey}
	for _, p := range r.Properties {
		v := p.Value
		var x any
		switch v.Kind() {
		case service.KindString:
			x = v.Str()
		case service.KindBinary:
			x = base64.StdEncoding.EncodeToString(v.Bytes())
		case service.KindBool:
			x = v.Bool()
		case service.KindInt32:
			x = v.Int32()
		case service.KindInt64:
			x = strconv.FormatInt(v.Int64(), 10)
		case service.KindDouble:
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
		case service.KindDateTime:
			x = service.FormatDateTime(v.Time())
		case service.KindGuid:
			x = v.Str()
		}
		m[p.Name] = x
		if annotated(v.Kind()) {
			m[p.Name+"@odata.type"] = v.Kind().String()
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestBodySizeMatchesJSON(t *testing.T) {
	rows := []service.Row{
		row("", ""),
		row("p\"\\<>&\x01\x1f\n\t\r", "é😀\u2028\u2029\xff", prop("s", service.String("a\"b<c\x7f\u00e9"))),
		row("p", "r",
			prop("b", service.Binary([]byte{0, 1, 2, 3, 4})),
			prop("t", service.Bool(true)), prop("u", service.Bool(false)),
			prop("i", service.Int32(math.MinInt32)), prop("l", service.Int64(math.MinInt64)),
			prop("f1", service.Double(1.5)), prop("f2", service.Double(1e21)), prop("f3", service.Double(1e-7)),
			prop("f4", service.Double(1e20)), prop("f5", service.Double(-0.000001)), prop("f6", service.Double(123456789e-300)),
			prop("w1", service.Double(5)), prop("w2", service.Double(math.Copysign(0, -1))), prop("w3", service.Double(0)), prop("w4", service.Double(1e20)),
			prop("n1", service.Double(math.NaN())), prop("n2", service.Double(math.Inf(1))), prop("n3", service.Double(math.Inf(-1))),
			prop("d", service.DateTime(t0)), prop("g", service.Guid([16]byte{0xab})),
		),
	}
	for _, r := range rows {
		want := len(marshalRow(t, r))
		if got := bodySize(&service.Action{Op: service.OpInsert, Row: r}); got != want {
			t.Errorf("bodySize(%q/%q) = %d, want %d (%s)", r.PartitionKey, r.RowKey, got, want, marshalRow(t, r))
		}
	}
}

// bodyOf returns properties whose JSON is about n bytes, in 32,000-character strings of a
// control character JSON escapes to six bytes.
func bodyOf(n int) []service.Property {
	var props []service.Property
	chunk := service.String(strings.Repeat("\x01", 32000))
	for i := 0; n > 0; i++ {
		props = append(props, prop("p"+strconv.Itoa(i), chunk))
		n -= 6 * 32000
	}
	return props
}

func TestTransactionBodyTooLarge(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	// Each action alone is under 4 MiB; together they are over it.
	actions := []service.Action{
		insert(row("p", "a", bodyOf(2_200_000)...)),
		insert(row("p", "b", bodyOf(2_200_000)...)),
	}
	err := s.Transact(ctx, "Tab1", actions)
	wantStatus(t, err, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	// Alone, each one is a valid write.
	mustWrite(t, s, actions[0])
	if err := s.Transact(ctx, "Tab1", actions[1:]); err != nil {
		t.Fatal(err)
	}
}

func TestJSONStringLen(t *testing.T) {
	for s, want := range map[string]int{
		"":           2,
		"abc":        5,
		"<>&":        5,
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
}
