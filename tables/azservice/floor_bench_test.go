package azservice

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// The write path without the network: an insert of a small row through the row client's
// pipeline (Service.Write), and the same request built, signed and handed to the same
// transport by hand, as the harness's floor client does (tools/bench/floor.go). The
// difference is what the azcore pipeline adds to each request; docs/performance.md
// ("Against the floor") says which promise each part keeps.

var floorBenchRow = service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{
	{Name: "S", Value: service.String("hello")}, {Name: "N", Value: service.Int64(5)}}}

func BenchmarkWritePipeline(b *testing.B) {
	ctx := context.Background()
	svc, _ := wireClients(b, &wireTransport{})
	row := floorBenchRow
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Write(ctx, "Customers", service.Action{Op: service.OpInsert, Row: row}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteByHand(b *testing.B) {
	ctx := context.Background()
	tr := &wireTransport{}
	sk := newSharedKeyLite("acct", []byte("bench-key"))
	row := floorBenchRow
	b.ReportAllocs()
	for b.Loop() {
		body, _ := appendEntity(make([]byte, 0, 512), row.PartitionKey, row.RowKey, row.Properties)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://acct.table.core.windows.net/Customers", bytes.NewReader(body))
		h := req.Header
		h["x-ms-version"] = version
		h["DataServiceVersion"] = dataService
		h["Accept"] = acceptMinimal
		h["Prefer"] = noEcho
		h["Content-Type"] = []string{"application/json"}
		date := time.Now().UTC().Format(http.TimeFormat)
		h["x-ms-date"] = []string{date}
		h["Authorization"] = []string{sk.authorization(date, req)}
		resp, err := tr.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Header.Get("ETag")
	}
}
