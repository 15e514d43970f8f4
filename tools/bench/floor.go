package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	azruntime "github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// The floor is what a single-row operation costs with nothing between the program and the
// table service but net/http: a client that builds each request itself, signs it with the
// account key (SharedKeyLite, as the table service documents it) or appends the
// connection string's SAS, keeps connections alive, encodes the entity with encoding/json
// into a struct with the OData type annotations as fields, and decodes a read the same way.
// No SDK, no retries, no logging, no telemetry. It sends the headers the Azure SDK sends
// (x-ms-version, DataServiceVersion, Accept, Prefer: return-no-content on inserts), so the
// service does the same work for both.

// floorAPIVersion is the x-ms-version of every request: the one aztables sends.
const floorAPIVersion = "2019-02-02"

// floorClient is the plain net/http client of the floor workloads, over one table.
type floorClient struct {
	http    *http.Client
	base    string // the table's URL: endpoint + "/" + table
	path    string // the escaped path of base, for the signature
	account string
	sas     string // the SAS query, without "?", when the account has no key
	macs    sync.Pool
}

// newFloorClient returns the floor client of the table on the account of a connection
// string (an account key or a SAS, and a table endpoint or an account name).
func newFloorClient(conn, table string, hc *http.Client) (*floorClient, error) {
	kv := map[string]string{}
	for _, part := range strings.Split(rawConnectionString(conn), ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok {
			kv[strings.ToLower(k)] = v
		}
	}
	endpoint := strings.TrimSuffix(kv["tableendpoint"], "/")
	if endpoint == "" && kv["accountname"] != "" {
		proto, suffix := kv["defaultendpointsprotocol"], kv["endpointsuffix"]
		if proto == "" {
			proto = "https"
		}
		if suffix == "" {
			suffix = "core.windows.net"
		}
		endpoint = proto + "://" + kv["accountname"] + ".table." + suffix
	}
	u, err := url.Parse(endpoint + "/" + table)
	if err != nil || endpoint == "" {
		return nil, errors.New("floor: the connection string names no table endpoint")
	}
	c := &floorClient{http: hc, base: u.String(), path: u.EscapedPath(), account: kv["accountname"],
		sas: strings.TrimPrefix(kv["sharedaccesssignature"], "?")}
	switch {
	case kv["accountkey"] != "":
		key, err := base64.StdEncoding.DecodeString(kv["accountkey"])
		if err != nil {
			return nil, errors.New("floor: the AccountKey is not base64")
		}
		c.macs.New = func() any { return hmac.New(sha256.New, key) }
	case c.sas == "":
		return nil, errors.New("floor: the connection string has neither an AccountKey nor a SharedAccessSignature")
	}
	return c, nil
}

// floorOrder is Order as the floor's JSON holds it: the keys, the OData annotations of the
// values JSON cannot type by itself, and on a read the ETag and Timestamp.
type floorOrder struct {
	PartitionKey  string    `json:"PartitionKey"`
	RowKey        string    `json:"RowKey"`
	ETag          string    `json:"odata.etag,omitempty"`
	Timestamp     time.Time `json:"Timestamp,omitzero"`
	ID            string    `json:"Id"`
	CreatedAt     time.Time `json:"CreatedAt"`
	CreatedAtType string    `json:"CreatedAt@odata.type"`
	UpdatedAt     time.Time `json:"UpdatedAt"`
	UpdatedAtType string    `json:"UpdatedAt@odata.type"`
	Customer      string    `json:"Customer"`
	Status        string    `json:"Status"`
	Notes         string    `json:"Notes"`
	Quantity      int32     `json:"Quantity"`
	Sequence      int64     `json:"Sequence,string"`
	SequenceType  string    `json:"Sequence@odata.type"`
	Amount        float64   `json:"Amount"`
	AmountType    string    `json:"Amount@odata.type"`
	Paid          bool      `json:"Paid"`
}

// newFloorOrder is newOrder for the floor.
func newFloorOrder(partition, rowKey string, i int) *floorOrder {
	o := newOrder(partition, rowKey, i)
	return &floorOrder{
		PartitionKey: partition, RowKey: rowKey, ID: o.ID,
		Customer: o.Customer, Status: o.Status, Notes: o.Notes,
		Quantity: o.Quantity, Sequence: o.Sequence, Amount: o.Amount, Paid: o.Paid,
	}
}

// marshal stamps the times, as every write of the library does, and encodes the entity.
func (o *floorOrder) marshal(now time.Time) ([]byte, error) {
	now = now.UTC()
	if o.CreatedAt.IsZero() {
		o.CreatedAt = now
	}
	o.UpdatedAt = now
	o.CreatedAtType, o.UpdatedAtType, o.SequenceType, o.AmountType = "Edm.DateTime", "Edm.DateTime", "Edm.Int64", "Edm.Double"
	etag, ts := o.ETag, o.Timestamp
	o.ETag, o.Timestamp = "", time.Time{}
	b, err := json.Marshal(o)
	o.ETag, o.Timestamp = etag, ts
	return b, err
}

// rowURL is the URL path suffix that addresses one row: keys quoted as OData strings
// (a quote doubled) and escaped for a path.
func rowURL(pk, rk string) string {
	q := func(k string) string { return url.PathEscape(strings.ReplaceAll(k, "'", "''")) }
	return "(PartitionKey='" + q(pk) + "',RowKey='" + q(rk) + "')"
}

// do sends one request to the table (suffix "" for the table itself, rowURL for a row)
// and returns the response when its status is want; any other status is an error with the
// service's answer.
func (c *floorClient) do(ctx context.Context, method, suffix string, body []byte, hdr map[string]string, want int) (*http.Response, error) {
	u := c.base + suffix
	if c.sas != "" {
		u += "?" + c.sas
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	c.prepare(req.Header, suffix, body != nil, hdr)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	return c.check(method, suffix, resp, want)
}

// prepare sets the headers of a request to the table (suffix as for do), dates it and signs
// it.
func (c *floorClient) prepare(h http.Header, suffix string, body bool, hdr map[string]string) {
	date := time.Now().UTC().Format(http.TimeFormat)
	h["X-Ms-Date"] = []string{date}
	h["X-Ms-Version"] = []string{floorAPIVersion}
	h["Dataserviceversion"] = []string{"3.0"}
	h["Accept"] = []string{"application/json;odata=minimalmetadata"}
	if body {
		h["Content-Type"] = []string{"application/json"}
	}
	for k, v := range hdr {
		h.Set(k, v)
	}
	if c.macs.New != nil {
		h["Authorization"] = []string{c.sign(date, c.path+suffix)}
	}
}

// check returns the response when its status is want; any other status is an error with
// the service's answer.
func (c *floorClient) check(method, suffix string, resp *http.Response, want int) (*http.Response, error) {
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("floor: %s %s: status %d: %s", method, suffix, resp.StatusCode, bytes.TrimSpace(msg))
	}
	return resp, nil
}

// sign returns the Authorization header of a request made at date to the escaped path:
// SharedKeyLite for the table service, whose string to sign is the date and the
// canonicalized resource ("/" + account + path; these requests name no ?comp=).
func (c *floorClient) sign(date, path string) string {
	mac := c.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write([]byte(date + "\n/" + c.account + path))
	var sum [sha256.Size]byte
	sig := base64.StdEncoding.EncodeToString(mac.Sum(sum[:0]))
	c.macs.Put(mac)
	return "SharedKeyLite " + c.account + ":" + sig
}

// get reads one row and decodes it.
func (c *floorClient) get(ctx context.Context, pk, rk string) (*floorOrder, error) {
	resp, err := c.do(ctx, http.MethodGet, rowURL(pk, rk), nil, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	o := &floorOrder{}
	if err := json.Unmarshal(body, o); err != nil {
		return nil, err
	}
	if o.ETag == "" {
		o.ETag = resp.Header.Get("ETag")
	}
	return o, nil
}

// insert adds the row without the echo of the entity, as the library does.
func (c *floorClient) insert(ctx context.Context, o *floorOrder, now time.Time) error {
	body, err := o.marshal(now)
	if err != nil {
		return err
	}
	resp, err := c.do(ctx, http.MethodPost, "", body, map[string]string{"Prefer": "return-no-content"}, http.StatusNoContent)
	return c.done(resp, err, o)
}

// replace writes the row whole: under If-Match when ifMatch is set (an update), as an
// insert-or-replace otherwise (an upsert).
func (c *floorClient) replace(ctx context.Context, o *floorOrder, ifMatch string, now time.Time) error {
	body, err := o.marshal(now)
	if err != nil {
		return err
	}
	var hdr map[string]string
	if ifMatch != "" {
		hdr = map[string]string{"If-Match": ifMatch}
	}
	resp, err := c.do(ctx, http.MethodPut, rowURL(o.PartitionKey, o.RowKey), body, hdr, http.StatusNoContent)
	return c.done(resp, err, o)
}

// done takes the new ETag of a write and lets the connection go back to the pool.
func (c *floorClient) done(resp *http.Response, err error, o *floorOrder) error {
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	o.ETag = resp.Header.Get("ETag")
	if o.ETag == "" {
		return errors.New("floor: the write's response has no ETag")
	}
	return nil
}

// azcoreFloor sends the floor's upsert, built, signed and encoded as the floor does, through
// a bare azcore pipeline (runtime.NewPipeline with the run's client options: the SDK's
// telemetry, retry, logging, tracing and body download policies, and nothing of the
// library's). Against the floor it measures what the SDK's pipeline alone adds to a
// request, which the library keeps for the promises it keeps (docs/performance.md, "Against
// the floor"). Like the library's, its bodies reach net/http as bytes in memory.
type azcoreFloor struct {
	*floorClient
	pl azruntime.Pipeline
}

func newAzcoreFloor(c *floorClient, co *azcore.ClientOptions) *azcoreFloor {
	pl := azruntime.NewPipeline("bench", "v1.0.0", azruntime.PipelineOptions{PerRetry: []policy.Policy{inMemoryBody{}}}, co)
	return &azcoreFloor{floorClient: c, pl: pl}
}

func (a *azcoreFloor) upsert(ctx context.Context, o *floorOrder, now time.Time) error {
	body, err := o.marshal(now)
	if err != nil {
		return err
	}
	suffix := rowURL(o.PartitionKey, o.RowKey)
	u := a.base + suffix
	if a.sas != "" {
		u += "?" + a.sas
	}
	req, err := azruntime.NewRequest(ctx, http.MethodPut, u)
	if err != nil {
		return err
	}
	b := &bytesBody{}
	b.Reset(body)
	if err := req.SetBody(b, "application/json"); err != nil {
		return err
	}
	// net/http writes Content-Length from the request's ContentLength; the floor's map
	// does not hold it either.
	delete(req.Raw().Header, "Content-Length")
	a.prepare(req.Raw().Header, suffix, true, nil)
	resp, err := a.pl.Do(req)
	if err != nil {
		return err
	}
	resp, err = a.check(http.MethodPut, suffix, resp, http.StatusNoContent)
	return a.done(resp, err, o)
}

// bytesBody is a request body of bytes in memory, for azcore's SetBody.
type bytesBody struct{ bytes.Reader }

func (*bytesBody) Close() error { return nil }

// inMemoryBody hands each try to the transport with a body net/http knows to be in memory
// (the retry policy wraps it in a type of its own, for which net/http would write the
// headers and the body apart), as the library's row client does.
type inMemoryBody struct{}

func (inMemoryBody) Do(req *policy.Request) (*http.Response, error) {
	if b, ok := req.Body().(*bytesBody); ok {
		req.Raw().Body = io.NopCloser(&b.Reader)
	}
	return req.Next()
}
