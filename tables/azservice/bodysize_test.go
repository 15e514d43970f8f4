package azservice

import (
	"math"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// The engine sizes transactions and the in-memory service applies the 4 MiB limit with
// service.BodySize; it must count exactly the bytes this adapter writes.
func TestBodySizeIsWhatTheAdapterWrites(t *testing.T) {
	g, _ := service.ParseGuid("0f8fad5b-d9cb-469f-a165-70867728950e")
	rows := []service.Row{
		{PartitionKey: "", RowKey: ""},
		{PartitionKey: "p\"\\<>&\x01\n", RowKey: "é😀\u2028", Properties: []service.Property{
			{Name: "S", Value: service.String("a\"b<c\x7f\u00e9\t")},
			{Name: "B", Value: service.Binary([]byte{0, 1, 2, 3, 4})},
			{Name: "T", Value: service.Bool(true)},
			{Name: "I", Value: service.Int32(math.MinInt32)},
			{Name: "L", Value: service.Int64(math.MinInt64)},
			{Name: "D1", Value: service.Double(5)},
			{Name: "D2", Value: service.Double(1e-7)},
			{Name: "D3", Value: service.Double(math.Inf(-1))},
			{Name: "W", Value: service.DateTime(time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC))},
			{Name: "G", Value: g},
		}},
	}
	for _, r := range rows {
		b, err := appendEntity(nil, r.PartitionKey, r.RowKey, r.Properties)
		if err != nil {
			t.Fatal(err)
		}
		if got := service.BodySize(&service.Action{Op: service.OpInsert, Row: r}); got != len(b) {
			t.Errorf("BodySize = %d, the adapter wrote %d bytes: %s", got, len(b), b)
		}
	}
}
