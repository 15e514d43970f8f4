package emulator

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Clients that increment one counter with read, then replace with If-Match, retrying on
// 412, lose no increment: conditional writes over HTTP are as atomic as in memory.
func TestConcurrentIncrements(t *testing.T) {
	srv := server(t, nil)
	c := devClient(t, srv)
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"counters"}`), 201)
	wantStatus(t, "insert", c.do("POST", "counters", `{"PartitionKey":"p","RowKey":"c","N":0}`), 201)
	const workers, each = 6, 20
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := devClient(t, srv)
			for done := 0; done < each; {
				r := w.do("GET", "counters(PartitionKey='p',RowKey='c')", "")
				var e struct{ N int }
				if r.status != 200 || json.Unmarshal([]byte(r.body), &e) != nil {
					errs <- fmt.Sprintf("get: %d %s", r.status, r.body)
					return
				}
				r = w.do("PUT", "counters(PartitionKey='p',RowKey='c')", fmt.Sprintf(`{"N":%d}`, e.N+1), "If-Match", r.header.Get("ETag"))
				switch r.status {
				case 204:
					done++
				case 412:
				default:
					errs <- fmt.Sprintf("replace: %d %s", r.status, r.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	r := c.do("GET", "counters(PartitionKey='p',RowKey='c')", "")
	if want := fmt.Sprintf(`"N":%d`, workers*each); !strings.Contains(r.body, want) {
		t.Errorf("the counter ends as %s, want %s", r.body, want)
	}
}
