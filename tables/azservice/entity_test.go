package azservice

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func prop(name string, v service.Value) service.Property {
	return service.Property{Name: name, Value: v}
}

func mustGuid(t testing.TB, s string) service.Value {
	t.Helper()
	v, err := service.ParseGuid(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// everyKind returns properties covering every kind and the awkward values of each.
func everyKind(t testing.TB) []service.Property {
	return []service.Property{
		prop("S", service.String("plain")),
		prop("SQuotes", service.String(`say "hi" \ 'there'`)),
		prop("SControl", service.String("a\x00b\x01c\nd\re\tf\x1f\x7f")),
		prop("SLineSep", service.String("one\u2028two\u2029three")),
		prop("SUnicode", service.String("é 日本 😀 \uFFFF \U0010FFFF")),
		prop("SEmpty", service.String("")),
		prop("SHTML", service.String("<a href='x'>&amp;</a>")),
		prop("Bin", service.Binary([]byte{0, 1, 2, 0xfe, 0xff})),
		prop("BinEmpty", service.Binary(nil)),
		prop("True", service.Bool(true)),
		prop("False", service.Bool(false)),
		prop("I32", service.Int32(7)),
		prop("I32Min", service.Int32(math.MinInt32)),
		prop("I32Max", service.Int32(math.MaxInt32)),
		prop("I64", service.Int64(42)),
		prop("I64Min", service.Int64(math.MinInt64)),
		prop("I64Max", service.Int64(math.MaxInt64)),
		prop("DWhole", service.Double(5)),
		prop("DZero", service.Double(0)),
		prop("DNegZero", service.Double(math.Copysign(0, -1))),
		prop("DFrac", service.Double(0.1)),
		prop("DBig", service.Double(1e300)),
		prop("DSmall", service.Double(-1.5e-9)),
		prop("DMax", service.Double(math.MaxFloat64)),
		prop("DTiny", service.Double(math.SmallestNonzeroFloat64)),
		prop("D2p53", service.Double(1<<53)),
		prop("DNaN", service.Double(math.NaN())),
		prop("DInf", service.Double(math.Inf(1))),
		prop("DNegInf", service.Double(math.Inf(-1))),
		prop("DT", service.DateTime(time.Date(2021, 4, 6, 21, 3, 31, 923127100, time.UTC))),
		prop("DTWhole", service.DateTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))),
		prop("DTZone", service.DateTime(time.Date(2021, 4, 6, 23, 3, 31, 100, time.FixedZone("x", 2*3600)))),
		prop("G", mustGuid(t, "00112233-4455-6677-8899-AABBCCDDEEFF")),
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	props := everyKind(t)
	body, err := appendEntity(nil, "pk 'q' \u2028", "rk\"\\", props)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	row, err := decodeEntityBody(body)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if row.PartitionKey != "pk 'q' \u2028" || row.RowKey != "rk\"\\" {
		t.Errorf("keys = %q, %q", row.PartitionKey, row.RowKey)
	}
	if len(row.Properties) != len(props) {
		t.Fatalf("got %d properties, want %d:\n%v", len(row.Properties), len(props), row.Properties)
	}
	for i, p := range props {
		got := row.Properties[i]
		if got.Name != p.Name || !got.Value.Equal(p.Value) {
			t.Errorf("property %d = %s %v, want %s %v", i, got.Name, got.Value, p.Name, p.Value)
		}
	}
}

func TestEncodeShapes(t *testing.T) {
	tests := []struct {
		name string
		v    service.Value
		want string // the members after the keys
	}{
		{"string", service.String("x"), `"P":"x"`},
		{"bool", service.Bool(true), `"P":true`},
		{"int32", service.Int32(-12), `"P":-12`},
		{"int64", service.Int64(math.MaxInt64), `"P@odata.type":"Edm.Int64","P":"9223372036854775807"`},
		{"int64 min", service.Int64(math.MinInt64), `"P@odata.type":"Edm.Int64","P":"-9223372036854775808"`},
		{"whole double", service.Double(5), `"P@odata.type":"Edm.Double","P":5.0`},
		{"negative zero", service.Double(math.Copysign(0, -1)), `"P@odata.type":"Edm.Double","P":-0.0`},
		{"fraction", service.Double(2.5), `"P@odata.type":"Edm.Double","P":2.5`},
		{"exponent", service.Double(1e21), `"P@odata.type":"Edm.Double","P":1e+21`},
		{"small exponent", service.Double(1e-7), `"P@odata.type":"Edm.Double","P":1e-7`},
		{"NaN", service.Double(math.NaN()), `"P@odata.type":"Edm.Double","P":"NaN"`},
		{"Infinity", service.Double(math.Inf(1)), `"P@odata.type":"Edm.Double","P":"Infinity"`},
		{"-Infinity", service.Double(math.Inf(-1)), `"P@odata.type":"Edm.Double","P":"-Infinity"`},
		{"datetime", service.DateTime(time.Date(2021, 4, 6, 21, 3, 31, 923127100, time.UTC)),
			`"P@odata.type":"Edm.DateTime","P":"2021-04-06T21:03:31.9231271Z"`},
		{"datetime whole", service.DateTime(time.Date(2021, 4, 6, 21, 3, 31, 0, time.UTC)),
			`"P@odata.type":"Edm.DateTime","P":"2021-04-06T21:03:31.0000000Z"`},
		{"datetime zone", service.DateTime(time.Date(2021, 4, 7, 1, 3, 31, 0, time.FixedZone("x", 4*3600))),
			`"P@odata.type":"Edm.DateTime","P":"2021-04-06T21:03:31.0000000Z"`},
		{"guid", mustGuid(t, "00112233-4455-6677-8899-AABBCCDDEEFF"),
			`"P@odata.type":"Edm.Guid","P":"00112233-4455-6677-8899-aabbccddeeff"`},
		{"binary", service.Binary([]byte("hi!")), `"P@odata.type":"Edm.Binary","P":"aGkh"`},
		{"escapes", service.String("\"\\\n\r\t\x01\x1f\u2028\u2029/<>&"), `"P":"\"\\\n\r\t\u0001\u001f\u2028\u2029/<>&"`},
		{"invalid UTF-8", service.String("a\xffb"), `"P":"a\ufffdb"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := appendEntity(nil, "p", "r", []service.Property{prop("P", tc.v)})
			if err != nil {
				t.Fatal(err)
			}
			want := `{"PartitionKey":"p","RowKey":"r",` + tc.want + `}`
			if string(body) != want {
				t.Errorf("got  %s\nwant %s", body, want)
			}
			if !json.Valid(body) {
				t.Errorf("invalid JSON: %s", body)
			}
		})
	}
}

func TestEncodeRefuses(t *testing.T) {
	for _, name := range []string{"PartitionKey", "RowKey", "Timestamp"} {
		_, err := appendEntity(nil, "p", "r", []service.Property{prop(name, service.String("x"))})
		if !errors.Is(err, errReservedName) {
			t.Errorf("property %s: err = %v, want errReservedName", name, err)
		}
	}
	if _, err := appendEntity(nil, "p", "r", []service.Property{prop("Zero", service.Value{})}); err == nil {
		t.Error("an invalid Value was encoded")
	}
}

// TestEncodeStringMatchesEncodingJSON checks that appendString and encoding/json produce
// strings that decode to the same text, for awkward inputs.
func TestEncodeStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range stringSeeds {
		checkString(t, s)
	}
}

var stringSeeds = []string{
	"", "a", `"`, `\`, "\x00", "\x1f", "\x7f", "\u2028\u2029", "😀", "\xff", "\xed\xa0\x80",
	"a\xc3", "日本語", "\ufeff", "</script>", "\U0010FFFF", "\\u0041",
}

func checkString(t *testing.T, s string) {
	t.Helper()
	mine := appendString(nil, s)
	var fromMine string
	if err := json.Unmarshal(mine, &fromMine); err != nil {
		t.Fatalf("appendString(%q) = %s is not JSON: %v", s, mine, err)
	}
	std, _ := json.Marshal(s)
	var fromStd string
	if err := json.Unmarshal(std, &fromStd); err != nil {
		t.Fatal(err)
	}
	if fromMine != fromStd {
		t.Fatalf("appendString(%q) decodes to %q, encoding/json's to %q", s, fromMine, fromStd)
	}
	// Our own decoder reads both encodings the same way.
	for _, enc := range [][]byte{mine, std} {
		l := lexer[string]{s: string(enc)}
		var buf []byte
		got, err := l.str(&buf)
		if err != nil || got != fromStd {
			t.Fatalf("lexer.str(%s) = %q, %v; want %q", enc, got, err, fromStd)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkString(t, s) })
}

func TestDecodeEntity(t *testing.T) {
	const body = `{
		"odata.metadata":"http://host/acct/$metadata#t/@Element",
		"odata.etag":"W/\"datetime'2026-11-29T18%3A37%3A16.1704100Z'\"",
		"odata.type":"acct.t", "odata.id":"x", "odata.editLink":"y",
		"PartitionKey":"p","RowKey":"r",
		"Timestamp@odata.type":"Edm.DateTime",
		"Timestamp":"2026-11-29T18:37:16.1704100Z",
		"I":7, "Neg":-2147483648, "Wide":3000000000, "F":7.0, "E":1e3, "NegZero":-0,
		"L@odata.type":"Edm.Int64","L":"-9223372036854775808",
		"D":5.0,
		"DN@odata.type":"Edm.Double","DN":"NaN",
		"DI@odata.type":"Edm.Double","DI":"Infinity",
		"DM@odata.type":"Edm.Double","DM":"-Infinity",
		"DW@odata.type":"Edm.Double","DW":5,
		"After":"annotation follows", "After@odata.type":"Edm.String",
		"S":"a\u2028b\ud83d\ude00\"", "Lone":"\ud800x",
		"B":true, "NotB":false,
		"Null":null,
		"T@odata.type":"Edm.DateTime","T":"2021-04-06T21:03:31.9231271Z",
		"G@odata.type":"Edm.Guid","G":"00112233-4455-6677-8899-AABBCCDDEEFF",
		"X@odata.type":"Edm.Binary","X":"AAEC",
		"I32@odata.type":"Edm.Int32","I32":12,
		"Bo@odata.type":"Edm.Boolean","Bo":false,
		"Media@odata.mediaEditLink":"ignored"
	}`
	row, err := decodeEntityBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if row.PartitionKey != "p" || row.RowKey != "r" {
		t.Errorf("keys %q %q", row.PartitionKey, row.RowKey)
	}
	if row.ETag != `W/"datetime'2026-11-29T18%3A37%3A16.1704100Z'"` {
		t.Errorf("ETag %q", row.ETag)
	}
	if want := time.Date(2026, 11, 29, 18, 37, 16, 170410000, time.UTC); !row.Timestamp.Equal(want) {
		t.Errorf("Timestamp %v", row.Timestamp)
	}
	want := []service.Property{
		prop("I", service.Int32(7)),
		prop("Neg", service.Int32(math.MinInt32)),
		prop("Wide", service.Double(3e9)),
		prop("F", service.Double(7)),
		prop("E", service.Double(1000)),
		prop("NegZero", service.Int32(0)),
		prop("L", service.Int64(math.MinInt64)),
		prop("D", service.Double(5)),
		prop("DN", service.Double(math.NaN())),
		prop("DI", service.Double(math.Inf(1))),
		prop("DM", service.Double(math.Inf(-1))),
		prop("DW", service.Double(5)),
		prop("After", service.String("annotation follows")),
		prop("S", service.String("a\u2028b😀\"")),
		prop("Lone", service.String("\uFFFDx")),
		prop("B", service.Bool(true)),
		prop("NotB", service.Bool(false)),
		prop("T", service.DateTime(time.Date(2021, 4, 6, 21, 3, 31, 923127100, time.UTC))),
		prop("G", mustGuid(t, "00112233-4455-6677-8899-aabbccddeeff")),
		prop("X", service.Binary([]byte{0, 1, 2})),
		prop("I32", service.Int32(12)),
		prop("Bo", service.Bool(false)),
	}
	if len(row.Properties) != len(want) {
		t.Fatalf("got %d properties, want %d: %v", len(row.Properties), len(want), row.Properties)
	}
	for i := range want {
		if g := row.Properties[i]; g.Name != want[i].Name || !g.Value.Equal(want[i].Value) {
			t.Errorf("property %d = %s %v, want %s %v", i, g.Name, g.Value, want[i].Name, want[i].Value)
		}
	}
}

func TestDecodeEntityErrors(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		integrity bool
	}{
		{"not an object", `[1]`, false},
		{"truncated", `{"PartitionKey":"p"`, false},
		{"trailing", `{"PartitionKey":"p"} x`, false},
		{"nested", `{"A":{"b":1}}`, false},
		{"array", `{"A":[1]}`, false},
		{"bad number", `{"A":01}`, false},
		{"bad literal", `{"A":tru}`, false},
		{"control in string", "{\"A\":\"a\x01\"}", false},
		{"bad escape", `{"A":"\q"}`, false},
		{"numeric key", `{"PartitionKey":1}`, false},
		{"bad timestamp", `{"Timestamp":"yesterday"}`, false},
		{"unknown type", `{"A@odata.type":"Edm.Decimal","A":"1"}`, true},
		{"bad int64", `{"A@odata.type":"Edm.Int64","A":"abc"}`, true},
		{"int64 overflow", `{"A@odata.type":"Edm.Int64","A":"9223372036854775808"}`, true},
		{"bad int32", `{"A@odata.type":"Edm.Int32","A":3000000000}`, true},
		{"bad guid", `{"A@odata.type":"Edm.Guid","A":"not-a-guid"}`, true},
		{"bad binary", `{"A@odata.type":"Edm.Binary","A":"***"}`, true},
		{"bad datetime", `{"A@odata.type":"Edm.DateTime","A":"notadate"}`, true},
		{"bad double", `{"A@odata.type":"Edm.Double","A":"lots"}`, true},
		{"bool as double", `{"A@odata.type":"Edm.Double","A":true}`, true},
		{"number as string", `{"A@odata.type":"Edm.String","A":1}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeEntityBody([]byte(tc.body))
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, abstractions.ErrIntegrity); got != tc.integrity {
				t.Fatalf("err = %v; ErrIntegrity %v, want %v", err, got, tc.integrity)
			}
			if !tc.integrity && !errors.Is(err, errSyntax) {
				t.Fatalf("err = %v, want errSyntax", err)
			}
		})
	}
}

func TestDecodeEntityList(t *testing.T) {
	const body = `{"odata.metadata":"http://host/acct/$metadata#t","extra":{"nested":[1,{"a":null},"x"]},"value":[
		{"odata.etag":"W/\"datetime'2026-11-29T18%3A37%3A16.1704100Z'\"","PartitionKey":"p","RowKey":"1","Timestamp":"2026-11-29T18:37:16.1704100Z","D":5.0},
		{"odata.etag":"e2","PartitionKey":"p","RowKey":"2","Timestamp":"2026-11-29T18:37:16.1704100Z","Missing":null},
		{"PartitionKey":"p","RowKey":"3","S":"x"}
	]}`
	rows, err := decodeEntityList([]byte(body), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("got %d rows", len(rows))
	}
	if rows[0].RowKey != "1" || len(rows[0].Properties) != 1 || !rows[0].Properties[0].Value.Equal(service.Double(5)) {
		t.Errorf("row 0 = %+v", rows[0])
	}
	if rows[1].ETag != "e2" || rows[1].Properties != nil {
		t.Errorf("row 1 = %+v", rows[1])
	}
	if rows[2].RowKey != "3" || len(rows[2].Properties) != 1 {
		t.Errorf("row 2 = %+v", rows[2])
	}

	for _, empty := range []string{`{"value":[]}`, `{}`, ` { "odata.metadata" : "m" , "value" : [ ] } `} {
		rows, err := decodeEntityList([]byte(empty), 0)
		if err != nil || len(rows) != 0 {
			t.Errorf("%s: %v, %v", empty, rows, err)
		}
	}
	for _, bad := range []string{``, `{"value":[}`, `{"value":[{"A":[]}]}`, `{"value":[1,]}`, `{"value":[]`, `{"value":[]}}`} {
		if _, err := decodeEntityList([]byte(bad), 0); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestDecodeKeepsSubstrings(t *testing.T) {
	// A long plain string must not be copied again after the entity's one conversion.
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	long := strings.Repeat("x", 1000)
	body := []byte(`{"PartitionKey":"p","RowKey":"r","S":"` + long + `"}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := decodeEntityBody(body); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("decode allocates %v times, want at most 2 (the entity text and the properties)", allocs)
	}
}

// FuzzDecodeEntity checks that the entity decoder never panics and accepts nothing that is
// not JSON.
func FuzzDecodeEntity(f *testing.F) {
	f.Add(`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":"1","B":2.5,"C":null}`)
	f.Add(`{"value":[{"PartitionKey":"p"}]}`)
	f.Add(`{"A":"\ud83d\ude00","B":[1,{"x":2}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		if _, err := decodeEntityBody([]byte(in)); err == nil && !json.Valid([]byte(in)) {
			t.Fatalf("decodeEntityBody accepted invalid JSON %q", in)
		}
		if _, err := decodeEntityList([]byte(in), 0); err == nil && !json.Valid([]byte(in)) {
			t.Fatalf("decodeEntityList accepted invalid JSON %q", in)
		}
	})
}
