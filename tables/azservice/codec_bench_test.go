package azservice

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/codec/codectest"
	"github.com/unified-data/gotables/tables/service"
)

// These benchmarks measure a whole conversion between a struct and the JSON of a request
// or a response, both ways: the codec with this adapter's body writer and reader, against
// the conversion aztables users write by hand (a map[string]any with explicit @odata.type
// annotations and encoding/json). The entity has 20 fields, one nested struct and one
// slice.
//
// A write is measured up to the wire: both sides hand their body to aztables, which
// decodes it into a map and encodes it again, and then go through the SDK's pipeline
// (telemetry, retry, the shared-key signature) to a transport that takes the request
// without a network (wireTransport). A read is measured from the body the service sent.

// The entity is the codec's reference entity (codectest.Customer), written under its own keys.
const (
	benchPK = "eu"
	benchRK = "alice"
)

// The response's metadata and the service-assigned values, as the service sends them.
const (
	benchETag      = `W/"datetime'2026-11-29T18%3A30%3A11.1234567Z'"`
	benchTimestamp = "2026-11-29T18:30:11.1234567Z"
)

// benchResponse turns a request body into the response of a read of that entity.
func benchResponse(body []byte) []byte {
	prefix := `{"odata.metadata":"https://acct.table.core.windows.net/$metadata#Customers/@Element",` +
		`"odata.etag":` + strconv.Quote(benchETag) + `,"Timestamp":"` + benchTimestamp + `",`
	return append([]byte(prefix), body[1:]...)
}

// wireTransport stands where the network would be: it reads each request's body, as a
// connection writing it would, and answers as the service answers an insert that echoes
// nothing. With keep set it keeps the last body.
type wireTransport struct {
	keep bool
	last []byte
}

func (w *wireTransport) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		var err error
		if w.keep {
			w.last, err = io.ReadAll(req.Body)
		} else {
			_, err = io.Copy(io.Discard, req.Body)
		}
		if err != nil {
			return nil, err
		}
	}
	return &http.Response{StatusCode: http.StatusNoContent, Header: http.Header{"Etag": {benchETag}}, Body: http.NoBody, Request: req}, nil
}

// benchAccount is an Azure account (not the emulator's) behind the transport.
const benchAccount = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=YmVuY2gta2V5;TableEndpoint=https://acct.table.core.windows.net"

// wireClients returns this adapter and a plain aztables client of the same account, both
// sending to t.
func wireClients(tb testing.TB, t policy.Transporter) (*Service, *aztables.Client) {
	tb.Helper()
	svc, err := NewFromConnectionString(benchAccount, &Options{ClientOptions: azcore.ClientOptions{Transport: t}})
	if err != nil {
		tb.Fatal(err)
	}
	cred, err := aztables.NewSharedKeyCredential("acct", "YmVuY2gta2V5")
	if err != nil {
		tb.Fatal(err)
	}
	sc, err := aztables.NewServiceClientWithSharedKey("https://acct.table.core.windows.net", cred,
		&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: t}})
	if err != nil {
		tb.Fatal(err)
	}
	return svc, sc.NewClient("Customers")
}

// codecWrite is a Create as the engine sends it: the row from the plan, then Write.
func codecWrite(ctx context.Context, svc *Service, c *codectest.Customer) error {
	row, err := codec.EncodeRow(c, benchPK, benchRK, nil)
	if err != nil {
		return err
	}
	_, err = svc.Write(ctx, "Customers", service.Action{Op: service.OpInsert, Row: row})
	return err
}

// handWrite is the insert aztables users write: the map, encoding/json, AddEntity.
func handWrite(ctx context.Context, client *aztables.Client, c *codectest.Customer) error {
	body, err := handToJSON(c)
	if err != nil {
		return err
	}
	_, err = client.AddEntity(ctx, body, nil)
	return err
}

// codecToJSON is the codec's write path: cells from the plan, then the body writer.
func codecToJSON(c *codectest.Customer, buf []byte) ([]byte, error) {
	props, err := codec.Encode(c, nil)
	if err != nil {
		return buf, err
	}
	return appendEntity(buf, benchPK, benchRK, props)
}

// codecFromJSON is the codec's read path: the response decoder, then the plan.
func codecFromJSON(body []byte) (*codectest.Customer, error) {
	row, err := decodeEntityBody(body)
	if err != nil {
		return nil, err
	}
	return codec.Decode[codectest.Customer](&row, nil)
}

// handToJSON is the whole hand-written write path: the map, then encoding/json.
func handToJSON(c *codectest.Customer) ([]byte, error) {
	m, err := codectest.HandEncode(c, benchPK, benchRK)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// handFromJSON is the whole hand-written read path: encoding/json into a map, then each
// field converted.
func handFromJSON(body []byte) (*codectest.Customer, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	return codectest.HandDecode(m)
}

// TestCodecAndHandConversionsAgree checks that the benchmarks compare like with like: both
// write paths send the same typed cells, and both read paths return the original value.
func TestCodecAndHandConversionsAgree(t *testing.T) {
	want := codectest.Reference()
	codecBody, err := codecToJSON(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	handBody, err := handToJSON(want)
	if err != nil {
		t.Fatal(err)
	}
	// The service types each body by its tokens and annotations; this adapter's reader does
	// exactly that, so equal rows mean the service stores the same cells.
	codecRow, err := decodeEntityBody(codecBody)
	if err != nil {
		t.Fatal(err)
	}
	handRow, err := decodeEntityBody(handBody)
	if err != nil {
		t.Fatal(err)
	}
	if len(codecRow.Properties) != 19+4 { // 19 one-cell fields and the 4 cells of Home
		t.Errorf("the codec wrote %d cells, want 23", len(codecRow.Properties))
	}
	if len(codecRow.Properties) != len(handRow.Properties) {
		t.Errorf("the codec wrote %d cells, the hand-written code %d", len(codecRow.Properties), len(handRow.Properties))
	}
	for _, p := range codecRow.Properties {
		if v, ok := handRow.Get(p.Name); !ok || !v.Equal(p.Value) || v.Kind() != p.Value.Kind() {
			t.Errorf("cell %s: codec %v, hand-written %v (present %v)", p.Name, p.Value, v, ok)
		}
	}

	// What reaches the wire, after aztables re-encoded each body, holds the same cells too.
	wire := &wireTransport{keep: true}
	svc, client := wireClients(t, wire)
	ctx := context.Background()
	if err := codecWrite(ctx, svc, want); err != nil {
		t.Fatal(err)
	}
	codecWire, err := decodeEntityBody(wire.last)
	if err != nil {
		t.Fatal(err)
	}
	if err := handWrite(ctx, client, want); err != nil {
		t.Fatal(err)
	}
	handWire, err := decodeEntityBody(wire.last)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []service.Row{codecWire, handWire} {
		if got.PartitionKey != benchPK || got.RowKey != benchRK || len(got.Properties) != len(codecRow.Properties) {
			t.Errorf("(%q, %q) with %d cells reached the wire, want (%q, %q) with %d", got.PartitionKey, got.RowKey,
				len(got.Properties), benchPK, benchRK, len(codecRow.Properties))
		}
		for _, p := range codecRow.Properties {
			if v, ok := got.Get(p.Name); !ok || !v.Equal(p.Value) || v.Kind() != p.Value.Kind() {
				t.Errorf("cell %s on the wire: %v, want %v (present %v)", p.Name, v, p.Value, ok)
			}
		}
	}

	want.ETag = benchETag
	if want.Timestamp, err = time.Parse(time.RFC3339Nano, benchTimestamp); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"codec": codecBody, "hand": handBody} {
		resp := benchResponse(body)
		got, err := codecFromJSON(resp)
		if err != nil {
			t.Fatalf("codec read of the %s body: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("codec read of the %s body:\n got %+v\nwant %+v", name, got, want)
		}
		if got, err = handFromJSON(resp); err != nil {
			t.Fatalf("hand-written read of the %s body: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("hand-written read of the %s body:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// BenchmarkStructToJSON is a write up to the wire: the conversion, aztables' second pass
// over the body and the SDK's pipeline, on each side.
func BenchmarkStructToJSON(b *testing.B) {
	c := codectest.Reference()
	svc, client := wireClients(b, &wireTransport{})
	ctx := context.Background()
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := codecWrite(ctx, svc, c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := handWrite(ctx, client, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStructToBody is the conversion alone: the request body the adapter and the
// hand-written code build, before aztables sees it.
func BenchmarkStructToBody(b *testing.B) {
	c := codectest.Reference()
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// The adapter writes into a pooled buffer; so does the benchmark.
			bp := getBuf()
			body, err := codecToJSON(c, (*bp)[:0])
			if err != nil {
				b.Fatal(err)
			}
			*bp = body
			putBuf(bp)
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := handToJSON(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkJSONToStruct(b *testing.B) {
	body, err := codecToJSON(codectest.Reference(), nil)
	if err != nil {
		b.Fatal(err)
	}
	resp := benchResponse(body)
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codecFromJSON(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := handFromJSON(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
