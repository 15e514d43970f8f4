package azservice

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
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

type benchTier int

var benchTierNames = []string{"bronze", "silver", "gold"}

func (t benchTier) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(benchTierNames) {
		return nil, fmt.Errorf("tier %d has no name", int(t))
	}
	return []byte(benchTierNames[t]), nil
}

func (t *benchTier) UnmarshalText(b []byte) error {
	for i, n := range benchTierNames {
		if n == string(b) {
			*t = benchTier(i)
			return nil
		}
	}
	return fmt.Errorf("unknown tier %q", b)
}

type benchGeo struct{ Lat, Lon float64 }

type benchAddress struct {
	Street string
	City   string
	Geo    benchGeo
}

// benchCustomer has 20 fields: the three stored fields of the entity base and 17 of its
// own, among them one nested struct (Home) and one slice (Tags).
type benchCustomer struct {
	abstractions.Entity
	Name     string
	Email    string
	Age      int32
	Visits   int64
	Level    uint8
	Flags    uint64
	Score    float32
	Balance  float64
	Active   bool
	Birthday time.Time
	Timeout  time.Duration
	Key      abstractions.GUID
	Avatar   []byte
	Tier     benchTier
	Nick     *string
	Home     benchAddress
	Tags     []string
}

const (
	benchPK = "eu"
	benchRK = "alice"
)

func newBenchCustomer(tb testing.TB) *benchCustomer {
	key, err := abstractions.ParseGUID("00112233-4455-6677-8899-aabbccddeeff")
	if err != nil {
		tb.Fatal(err)
	}
	nick := "ali"
	return &benchCustomer{
		Entity: abstractions.Entity{
			ID:        benchPK + "|" + benchRK,
			CreatedAt: time.Date(2020, 1, 2, 3, 4, 5, 600000000, time.UTC),
			UpdatedAt: time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC),
		},
		Name:     "Alice Example",
		Email:    "alice@example.com",
		Age:      41,
		Visits:   1 << 40,
		Level:    7,
		Flags:    1<<63 | 5,
		Score:    2.5,
		Balance:  1234.5,
		Active:   true,
		Birthday: time.Date(1983, 7, 14, 0, 0, 0, 0, time.UTC),
		Timeout:  90 * time.Second,
		Key:      key,
		Avatar:   []byte("\x89PNG\r\n\x1a\n0123456789abcdef"),
		Tier:     2,
		Nick:     &nick,
		Home:     benchAddress{Street: "1 Main St", City: "Dublin", Geo: benchGeo{Lat: 53.35, Lon: -6.26}},
		Tags:     []string{"vip", "beta", "newsletter"},
	}
}

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
func codecWrite(ctx context.Context, svc *Service, c *benchCustomer) error {
	row, err := codec.EncodeRow(c, benchPK, benchRK, nil)
	if err != nil {
		return err
	}
	_, err = svc.Write(ctx, "Customers", service.Action{Op: service.OpInsert, Row: row})
	return err
}

// handWrite is the insert aztables users write: the map, encoding/json, AddEntity.
func handWrite(ctx context.Context, client *aztables.Client, c *benchCustomer) error {
	body, err := handToJSON(c)
	if err != nil {
		return err
	}
	_, err = client.AddEntity(ctx, body, nil)
	return err
}

// codecToJSON is the codec's write path: cells from the plan, then the body writer.
func codecToJSON(c *benchCustomer, buf []byte) ([]byte, error) {
	props, err := codec.Encode(c, nil)
	if err != nil {
		return buf, err
	}
	return appendEntity(buf, benchPK, benchRK, props)
}

// codecFromJSON is the codec's read path: the response decoder, then the plan.
func codecFromJSON(body []byte) (*benchCustomer, error) {
	row, err := decodeEntityBody(body)
	if err != nil {
		return nil, err
	}
	return codec.Decode[benchCustomer](&row, nil)
}

// handToMap is the write conversion SDK users write: a map with an annotation for every
// value whose type the service would not infer from the JSON token.
func handToMap(c *benchCustomer) (map[string]any, error) {
	tier, err := c.Tier.MarshalText()
	if err != nil {
		return nil, err
	}
	tags, err := json.Marshal(c.Tags)
	if err != nil {
		return nil, err
	}
	m := map[string]any{
		"PartitionKey":            benchPK,
		"RowKey":                  benchRK,
		"Id":                      c.ID,
		"Name":                    c.Name,
		"Email":                   c.Email,
		"Age":                     c.Age,
		"Visits":                  strconv.FormatInt(c.Visits, 10),
		"Visits@odata.type":       "Edm.Int64",
		"Level":                   int32(c.Level),
		"Flags":                   strconv.FormatInt(int64(c.Flags), 10),
		"Flags@odata.type":        "Edm.Int64",
		"Score":                   float64(c.Score),
		"Score@odata.type":        "Edm.Double",
		"Balance":                 c.Balance,
		"Balance@odata.type":      "Edm.Double",
		"Active":                  c.Active,
		"Timeout":                 strconv.FormatInt(int64(c.Timeout), 10),
		"Timeout@odata.type":      "Edm.Int64",
		"Key":                     c.Key.String(),
		"Key@odata.type":          "Edm.Guid",
		"Tier":                    string(tier),
		"Home_Street":             c.Home.Street,
		"Home_City":               c.Home.City,
		"Home_Geo_Lat":            c.Home.Geo.Lat,
		"Home_Geo_Lat@odata.type": "Edm.Double",
		"Home_Geo_Lon":            c.Home.Geo.Lon,
		"Home_Geo_Lon@odata.type": "Edm.Double",
		"Tags__Json":              string(tags),
	}
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"CreatedAt", c.CreatedAt}, {"UpdatedAt", c.UpdatedAt}, {"Birthday", c.Birthday}} {
		if !t.at.IsZero() {
			m[t.name] = service.FormatDateTime(t.at)
			m[t.name+odataType] = "Edm.DateTime"
		}
	}
	if c.Avatar != nil {
		m["Avatar"] = base64.StdEncoding.EncodeToString(c.Avatar)
		m["Avatar"+odataType] = "Edm.Binary"
	}
	if c.Nick != nil {
		m["Nick"] = *c.Nick
	}
	return m, nil
}

// handToJSON is the whole hand-written write path.
func handToJSON(c *benchCustomer) ([]byte, error) {
	m, err := handToMap(c)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// handFromJSON is the read conversion SDK users write: json.Unmarshal into a map, then
// each field converted from what encoding/json made of its token.
func handFromJSON(body []byte) (*benchCustomer, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) float64 { f, _ := m[k].(float64); return f }
	i64 := func(k string) (int64, error) { return strconv.ParseInt(str(k), 10, 64) }
	tm := func(k string) (time.Time, error) {
		if _, ok := m[k]; !ok {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, str(k))
		return t.UTC(), err
	}
	c := &benchCustomer{}
	var err error
	c.ID, c.ETag = str("Id"), str("odata.etag")
	if c.Timestamp, err = tm("Timestamp"); err != nil {
		return nil, err
	}
	if c.CreatedAt, err = tm("CreatedAt"); err != nil {
		return nil, err
	}
	if c.UpdatedAt, err = tm("UpdatedAt"); err != nil {
		return nil, err
	}
	if c.Birthday, err = tm("Birthday"); err != nil {
		return nil, err
	}
	c.Name, c.Email = str("Name"), str("Email")
	c.Age, c.Level = int32(num("Age")), uint8(num("Level"))
	if c.Visits, err = i64("Visits"); err != nil {
		return nil, err
	}
	flags, err := i64("Flags")
	if err != nil {
		return nil, err
	}
	c.Flags = uint64(flags)
	c.Score, c.Balance = float32(num("Score")), num("Balance")
	c.Active, _ = m["Active"].(bool)
	timeout, err := i64("Timeout")
	if err != nil {
		return nil, err
	}
	c.Timeout = time.Duration(timeout)
	if c.Key, err = abstractions.ParseGUID(str("Key")); err != nil {
		return nil, err
	}
	if _, ok := m["Avatar"]; ok {
		if c.Avatar, err = base64.StdEncoding.DecodeString(str("Avatar")); err != nil {
			return nil, err
		}
	}
	if err := c.Tier.UnmarshalText([]byte(str("Tier"))); err != nil {
		return nil, err
	}
	if _, ok := m["Nick"]; ok {
		nick := str("Nick")
		c.Nick = &nick
	}
	c.Home.Street, c.Home.City = str("Home_Street"), str("Home_City")
	c.Home.Geo.Lat, c.Home.Geo.Lon = num("Home_Geo_Lat"), num("Home_Geo_Lon")
	if s, ok := m["Tags__Json"].(string); ok {
		if err := json.Unmarshal([]byte(s), &c.Tags); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// TestCodecAndHandConversionsAgree checks that the benchmarks compare like with like: both
// write paths send the same typed cells, and both read paths return the original value.
func TestCodecAndHandConversionsAgree(t *testing.T) {
	want := newBenchCustomer(t)
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
	c := newBenchCustomer(b)
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
	c := newBenchCustomer(b)
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
	body, err := codecToJSON(newBenchCustomer(b), nil)
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
