package azservice

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// benchRow is a typical 20-property row: names, amounts, counters, dates, flags, an id
// and a small blob.
func benchRow(b *testing.B) service.Row {
	g := mustGuid(b, "6f9619ff-8b86-d011-b42d-00c04fc964ff")
	at := time.Date(2026, 11, 29, 18, 30, 11, 123456700, time.UTC)
	return service.Row{PartitionKey: "customer-0042", RowKey: "order-2026-11-29-000017", Properties: []service.Property{
		prop("Id", service.String("customer-0042|order-2026-11-29-000017")),
		prop("CustomerName", service.String("Ada Lovelace")),
		prop("Street", service.String("12 St James's Square")),
		prop("City", service.String("London")),
		prop("Country", service.String("GB")),
		prop("Notes", service.String(`Leave at the door; ring twice. "Fragile" items inside.`)),
		prop("Status", service.String("Shipped")),
		prop("Quantity", service.Int32(3)),
		prop("Lines", service.Int32(12)),
		prop("Version", service.Int64(1234567890123)),
		prop("Sequence", service.Int64(42)),
		prop("Amount", service.Double(1234.5)),
		prop("Tax", service.Double(246.9)),
		prop("Discount", service.Double(0)),
		prop("CreatedAt", service.DateTime(at)),
		prop("UpdatedAt", service.DateTime(at.Add(time.Hour))),
		prop("Paid", service.Bool(true)),
		prop("Gift", service.Bool(false)),
		prop("TraceId", g),
		prop("Thumb", service.Binary([]byte(strings.Repeat("\x89PNG", 16)))),
	}}
}

// wireRow is the row as the service sends it back (minimal metadata).
func wireRow(b *testing.B, r service.Row) []byte {
	body, err := appendEntity(nil, r.PartitionKey, r.RowKey, r.Properties)
	if err != nil {
		b.Fatal(err)
	}
	prefix := `{"odata.metadata":"https://acct.table.core.windows.net/$metadata#Orders/@Element",` +
		`"odata.etag":"W/\"datetime'2026-11-29T18%3A30%3A11.1234567Z'\"",` +
		`"Timestamp":"2026-11-29T18:30:11.1234567Z",`
	return append([]byte(prefix), body[1:]...)
}

func BenchmarkEncodeRow(b *testing.B) {
	r := benchRow(b)
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendEntity(buf[:0], r.PartitionKey, r.RowKey, r.Properties); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeRow(b *testing.B) {
	body := wireRow(b, benchRow(b))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeEntityBody(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePage100(b *testing.B) {
	row := wireRow(b, benchRow(b))
	var page []byte
	page = append(page, `{"odata.metadata":"https://acct.table.core.windows.net/$metadata#Orders","value":[`...)
	for i := range 100 {
		if i > 0 {
			page = append(page, ',')
		}
		page = append(page, row...)
	}
	page = append(page, "]}"...)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		rows, err := decodeEntityList(page, 100)
		if err != nil || len(rows) != 100 {
			b.Fatal(len(rows), err)
		}
	}
}

// The two benchmarks below are the reference the hand-written codec is measured against:
// the generic route through a map and encoding/json (what EDMEntity and the SDK do).

func BenchmarkEncodeRowViaMap(b *testing.B) {
	r := benchRow(b)
	b.ReportAllocs()
	for b.Loop() {
		m := make(map[string]any, 2*len(r.Properties)+2)
		m["PartitionKey"], m["RowKey"] = r.PartitionKey, r.RowKey
		for _, p := range r.Properties {
			v := p.Value
			switch v.Kind() {
			case service.KindString:
				m[p.Name] = v.Str()
			case service.KindBool:
				m[p.Name] = v.Bool()
			case service.KindInt32:
				m[p.Name] = v.Int32()
			case service.KindInt64:
				m[p.Name], m[p.Name+odataType] = fmt.Sprint(v.Int64()), "Edm.Int64"
			case service.KindDouble:
				m[p.Name], m[p.Name+odataType] = v.Float(), "Edm.Double"
			case service.KindDateTime:
				m[p.Name], m[p.Name+odataType] = service.FormatDateTime(v.Time()), "Edm.DateTime"
			case service.KindGuid:
				m[p.Name], m[p.Name+odataType] = v.Str(), "Edm.Guid"
			case service.KindBinary:
				m[p.Name], m[p.Name+odataType] = base64.StdEncoding.EncodeToString(v.Bytes()), "Edm.Binary"
			}
		}
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRowViaMap(b *testing.B) {
	body := wireRow(b, benchRow(b))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			b.Fatal(err)
		}
	}
}
