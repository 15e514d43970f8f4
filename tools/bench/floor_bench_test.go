package bench

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// answerTransport answers every request as the table service answers a write or a point
// read of the benchmark's entity, without a network: the body read to its end, a 204 with an
// ETag for a write, a 200 with the entity for a read.
type answerTransport struct{}

const answerETag = `W/"datetime'2026-12-03T10%3A00%3A00.0000000Z'"`

const answerEntity = `{"odata.etag":"W/\"datetime'2026-12-03T10%3A00%3A00.0000000Z'\"","PartitionKey":"read","RowKey":"r","Timestamp":"2026-12-03T10:00:00.0000000Z","ID":"read|r","CreatedAt@odata.type":"Edm.DateTime","CreatedAt":"2026-12-03T10:00:00.0000000Z","UpdatedAt@odata.type":"Edm.DateTime","UpdatedAt":"2026-12-03T10:00:00.0000000Z","Customer":"customer-1","Status":"shipped","Notes":"leave at the door; ring twice","Quantity":2,"Sequence@odata.type":"Edm.Int64","Sequence":"1000003","Amount@odata.type":"Edm.Double","Amount":1.25,"Paid":false}`

func (answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	h := http.Header{"Etag": {answerETag}, "X-Ms-Version": {floorAPIVersion}}
	if r.Method == http.MethodGet {
		h["Content-Type"] = []string{"application/json;odata=minimalmetadata"}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader(answerEntity)),
			ContentLength: int64(len(answerEntity)), Request: r}, nil
	}
	return &http.Response{StatusCode: http.StatusNoContent, Header: h, Body: http.NoBody, Request: r}, nil
}

// BenchmarkWithoutNetwork runs the harness's single-row workloads through the library and
// through the floor client on a transport that answers at once (answerTransport): the
// client's own work per operation, which is what the harness's CPU columns compare, without
// the network's and the emulator's noise. upsert/azcore is the floor's upsert through a
// bare azcore pipeline (azcoreFloor): what the SDK's pipeline alone adds.
func BenchmarkWithoutNetwork(b *testing.B) {
	ctx := context.Background()
	hc := &http.Client{Transport: answerTransport{}}
	acct, err := tables.NewAccount(DevelopmentConnectionString, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: hc}})
	if err != nil {
		b.Fatal(err)
	}
	store, err := tables.For[Order](acct, &tables.StoreOptions{Table: "Orders"})
	if err != nil {
		b.Fatal(err)
	}
	floor, err := newFloorClient(DevelopmentConnectionString, "Orders", hc)
	if err != nil {
		b.Fatal(err)
	}
	viaAzcore := newAzcoreFloor(floor, &azcore.ClientOptions{Transport: hc})
	run := func(name string, op func(i int) error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := op(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	run("read/library", func(int) error { _, err := store.One(ctx, "read|r"); return err })
	run("read/floor", func(int) error { _, err := floor.get(ctx, "read", "r"); return err })
	run("insert/library", func(i int) error { return store.Create(ctx, newOrder("ins", "k"+strconv.Itoa(i), i)) })
	run("insert/floor", func(i int) error {
		return floor.insert(ctx, newFloorOrder("ins", "k"+strconv.Itoa(i), i), time.Now())
	})
	run("upsert/library", func(i int) error { return store.Upsert(ctx, newOrder("ups", rowKey(i%100), i)) })
	run("upsert/floor", func(i int) error {
		return floor.replace(ctx, newFloorOrder("ups", rowKey(i%100), i), "", time.Now())
	})
	run("upsert/azcore", func(i int) error {
		return viaAzcore.upsert(ctx, newFloorOrder("ups", rowKey(i%100), i), time.Now())
	})
	lib := newOrder("upd", "r", 1)
	lib.ETag = answerETag
	fl := newFloorOrder("upd", "r", 1)
	fl.ETag = answerETag
	run("update/library", func(int) error { return store.Update(ctx, lib, abstractions.Strict) })
	run("update/floor", func(int) error { return floor.replace(ctx, fl, fl.ETag, time.Now()) })
}
