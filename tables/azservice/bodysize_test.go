package azservice

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// The large-value planner keeps rows within the emulator's limit and the in-memory service
// applies the 4 MiB limit to single-row writes with service.BodySize. The body on the wire
// is not the adapter's JSON: the SDK decodes it into a map[string]any and encodes that with
// json.Marshal, which HTML-escapes <, > and & and drops the ".0" of a whole double. BodySize
// must never be below that body, and above it by no more than the two bytes of a ".0" per
// double property. A transaction's entities are the adapter's own JSON (see Transact), which
// service.ActionBodySize counts exactly.
func TestBodySizeIsWhatTheSDKSends(t *testing.T) {
	g, _ := service.ParseGuid("0f8fad5b-d9cb-469f-a165-70867728950e")
	rows := []service.Row{
		{PartitionKey: "", RowKey: ""},
		{PartitionKey: "p\"\\<>&\x01\n", RowKey: "é😀\u2028", Properties: []service.Property{
			{Name: "S", Value: service.String("a\"b<c\x7f\u00e9\t")},
			{Name: "H", Value: service.String(strings.Repeat("<&>", 100))},
			{Name: "B", Value: service.Binary([]byte{0, 1, 2, 3, 4})},
			{Name: "T", Value: service.Bool(true)},
			{Name: "I", Value: service.Int32(math.MinInt32)},
			{Name: "L", Value: service.Int64(math.MinInt64)},
			{Name: "D1", Value: service.Double(5)},
			{Name: "D2", Value: service.Double(1e-7)},
			{Name: "D3", Value: service.Double(math.Inf(-1))},
			{Name: "D4", Value: service.Double(1e20)},
			{Name: "D5", Value: service.Double(-2.5)},
			{Name: "W", Value: service.DateTime(time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC))},
			{Name: "G", Value: g},
		}},
	}
	for _, r := range rows {
		b, err := appendEntity(nil, r.PartitionKey, r.RowKey, r.Properties)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		sent, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		doubles := 0
		for _, p := range r.Properties {
			if p.Value.Kind() == service.KindDouble {
				doubles++
			}
		}
		got := service.BodySize(&service.Action{Op: service.OpInsert, Row: r})
		if got < len(sent) || got > len(sent)+2*doubles {
			t.Errorf("BodySize = %d, the SDK sends %d bytes (%d doubles): %s", got, len(sent), doubles, sent)
		}
		if got < len(b) {
			t.Errorf("BodySize = %d, below the %d bytes the adapter wrote: %s", got, len(b), b)
		}
		a := service.Action{Op: service.OpInsert, Row: r}
		if got := service.ActionBodySize(&a) - service.ActionFramingSize(&a); got != len(b) {
			t.Errorf("a transaction's entity counts %d bytes; the adapter wrote %d: %s", got, len(b), b)
		}
	}
}
