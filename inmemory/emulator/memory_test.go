package emulator

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory/memservice"
)

// BenchmarkMemoryPer100kRows inserts 100,000 rows through the emulator (its handler, without
// a network) and reports the heap they hold: a row of two short keys and five properties (a
// 24-character string, an Int32, an Int64, a Double and a DateTime), about 200 bytes of
// JSON, in 100 partitions. docs/emulator.md quotes the figure.
//
//	go test -run '^$' -bench '^BenchmarkMemoryPer100kRows$' -benchtime 1x ./inmemory/emulator/
func BenchmarkMemoryPer100kRows(b *testing.B) {
	const rows = 100_000
	for b.Loop() {
		svc := memservice.New()
		h, err := New(&Options{Service: func(string) *memservice.Service { return svc }})
		if err != nil {
			b.Fatal(err)
		}
		c := devClient(nil, nil)
		send := func(method, path, body string, headers ...string) int {
			req := httptest.NewRequest(method, "http://127.0.0.1:10002/"+DevelopmentAccount+"/"+path, bytes.NewReader([]byte(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
			for i := 0; i+1 < len(headers); i += 2 {
				req.Header.Set(headers[i], headers[i+1])
			}
			c.sign(req)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w.Code
		}
		if code := send("POST", "Tables", `{"TableName":"mem"}`); code != 201 {
			b.Fatalf("create table: %d", code)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range rows {
			body := fmt.Sprintf(`{"PartitionKey":"p%03d","RowKey":"r%08d","Name":"customer name %010d","Age":%d,`+
				`"Big@odata.type":"Edm.Int64","Big":"%d","Score":%d.5,"When@odata.type":"Edm.DateTime","When":"2026-01-02T03:04:05.1234567Z"}`,
				i%100, i, i, i%90, int64(i)*1_000_003, i%1000)
			if code := send("POST", "mem", body, "Prefer", "return-no-content"); code != 204 {
				b.Fatalf("insert %d: %d", i, code)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/rows, "heap-bytes/row")
		runtime.KeepAlive(svc)
	}
}
