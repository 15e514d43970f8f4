package azservice

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"

	"github.com/unified-data/gotables/tables/internal/attempt"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// Entity requests (point reads and single-row writes) do not go through aztables' methods:
// AddEntity, UpdateEntity and UpsertEntity decode the body they are given into a map and
// encode the map again, and every call builds its request through generic URL and header
// code and parses response headers nobody reads. A rowClient sends the body this package
// already built, through an azcore pipeline of its own made from the same client options
// (transport, retries, per-call and per-retry policies, logging, telemetry, tracing) and
// the same credential (the account key, signed as aztables signs it; the SAS in the URL; or
// the token credential's bearer policy), with the request line, headers and span names
// aztables uses, and maps the answers the same way (azcore.ResponseError, then mapError).
// Transactions go the same way (rowClient.transact); tables and queries still go through
// aztables. docs/performance.md
// ("Against the floor: plain HTTP") has the figures behind this.

// The module name and version the pipeline reports in its telemetry (User-Agent) and
// tracing: aztables', whose requests these are, byte for byte.
const (
	aztablesModule  = "github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	aztablesVersion = "v1.4.1"
	apiVersion      = "2019-02-02"
	storageAudience = "https://storage.azure.com/.default"
)

// rowClient sends entity requests to one account.
type rowClient struct {
	pl       runtime.Pipeline
	tracer   tracing.Tracer
	endpoint string // the table endpoint, without a trailing "/" or a query
	query    string // "?" + the SAS when the account uses one, else ""
	// ascii makes entity bodies ASCII, for the emulator (see asciiBodies): the row client
	// escapes the body it wrote, where the policy would read it back first.
	ascii bool
}

// credential is how a rowClient authenticates: exactly one of key and token is set, or
// neither when the SAS in query does.
type credential struct {
	account string
	key     []byte
	token   azcore.TokenCredential
}

// newRowClient returns the rowClient of the endpoint, or nil when the endpoint is one
// aztables treats specially (an Azure Cosmos DB table endpoint, whose requests aztables
// rewrites): such accounts keep sending entity requests through aztables. For the emulator
// (emulator set) entity bodies are sent as ASCII, as aztables' are (see asciiBodies): the
// row client escapes the bodies it writes itself.
func newRowClient(endpoint, sas string, cred credential, opts *Options, emulator bool) (*rowClient, error) {
	if isCosmosEndpoint(endpoint) {
		return nil, nil
	}
	var co azcore.ClientOptions
	if opts != nil {
		co = opts.ClientOptions
	}
	co = azconn.Redacting(co)
	plOpts := runtime.PipelineOptions{Tracing: runtime.TracingOptions{Namespace: "Microsoft.Tables"}}
	tries := &eachTry{}
	switch {
	case cred.key != nil:
		tries.sign = newSharedKeyLite(cred.account, cred.key)
	case cred.token != nil:
		plOpts.PerRetry = []policy.Policy{runtime.NewBearerTokenPolicy(cred.token, []string{storageAudience}, nil)}
	}
	plOpts.PerRetry = append(plOpts.PerRetry, tries)
	client, err := azcore.NewClient(aztablesModule, aztablesVersion, plOpts, &co)
	if err != nil {
		return nil, err
	}
	c := &rowClient{pl: client.Pipeline(), tracer: client.Tracer(), endpoint: strings.TrimSuffix(endpoint, "/"), ascii: emulator}
	if sas != "" {
		c.query = "?" + strings.TrimPrefix(sas, "?")
	}
	return c, nil
}

// memBody is the body of every request whose body the package sets (setMemBody): bytes in
// memory, which the transport is told about (see eachTry).
type memBody struct {
	bytes.Reader
	asSent io.ReadCloser // the same reader, as net/http recognizes a body in memory
}

// Close implements io.Closer: the bytes need no closing.
func (*memBody) Close() error { return nil }

// setMemBody makes body, of contentType, the body of req, as a memBody: the one way the
// package sets a request's body. net/http writes Content-Length from the request's
// ContentLength, which SetBody sets, and never from the header map, so the map's entry is
// dropped: the map then stays small through each try's copy (three allocations less a try).
func setMemBody(req *policy.Request, body []byte, contentType string) error {
	m := &memBody{}
	m.Reset(body)
	m.asSent = io.NopCloser(&m.Reader)
	if err := req.SetBody(m, contentType); err != nil {
		return err
	}
	delete(req.Raw().Header, "Content-Length")
	return nil
}

// eachTry is the package's own per-retry policy, one policy for what each try needs (every
// policy of a pipeline costs a copy of the request per try), on the row client and on the
// aztables clients alike:
//
//   - it counts the try in the call's attempt.Attempts, so that the engine can tell a
//     refusal its own earlier, applied try caused;
//   - it hands the try to the rest of the pipeline with a body net/http knows to be in
//     memory. The retry policy wraps every body in a rewindable type of its own, and
//     net/http, not knowing a body of an unknown type to be ready, writes the headers in one
//     packet and the body in another: a second write on the client and a second read on the
//     service for every write. What the wrapper is for still holds: the retry policy
//     rewinds the same reader before every try, and the transport cannot close it. The
//     bodies the package sets are memBody; the aztables clients' own entity bodies (an
//     Azure Cosmos DB account's writes) are not, and pass unchanged;
//   - on the row client, it signs the try with the account key when the account has one
//     (sign).
type eachTry struct {
	sign *sharedKeyLite // nil when a SAS or a token credential authenticates, or aztables signs
}

func (p *eachTry) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	attempt.CountAttempt(raw.Context())
	if b, ok := req.Body().(*memBody); ok {
		raw.Body = b.asSent
	}
	if p.sign != nil {
		p.sign.signRequest(raw)
	}
	return req.Next()
}

// isCosmosEndpoint is aztables' test for an Azure Cosmos DB table endpoint (or its
// emulator): merges are sent there as POST with X-HTTP-Method, in transactions too.
func isCosmosEndpoint(u string) bool {
	return (strings.Contains(u, "localhost") && strings.Contains(u, "8902")) ||
		strings.Contains(u, ".table.cosmos.") || strings.Contains(u, ".table.cosmosdb.")
}

// rowPath returns the URL of one row of a table: the keys quoted as OData strings (a
// single quote doubled) and escaped for a path, as aztables writes them.
func (c *rowClient) rowURL(table, pk, rk string) string {
	var b strings.Builder
	b.Grow(len(c.endpoint) + len(table) + len(pk) + len(rk) + len(c.query) + 32)
	b.WriteString(c.endpoint)
	b.WriteByte('/')
	b.WriteString(url.PathEscape(table))
	b.WriteString("(PartitionKey='")
	b.WriteString(url.PathEscape(strings.ReplaceAll(pk, "'", "''")))
	b.WriteString("',RowKey='")
	b.WriteString(url.PathEscape(strings.ReplaceAll(rk, "'", "''")))
	b.WriteString("')")
	b.WriteString(c.query)
	return b.String()
}

// tableURL returns the URL of a table, where inserts go.
func (c *rowClient) tableURL(table string) string {
	return c.endpoint + "/" + url.PathEscape(table) + c.query
}

// Accept headers of the requests, as aztables sends them.
var (
	acceptMinimal = []string{"application/json;odata=minimalmetadata"}
	acceptJSON    = []string{"application/json"}
	version       = []string{apiVersion}
	dataService   = []string{"3.0"}
	noEcho        = []string{"return-no-content"}
)

// do sends one request and returns its response when the status is one of ok; any other
// status is an *azcore.ResponseError, as aztables returns it. span names the call for
// tracing ("Client.GetEntity", …), as aztables names it.
func (c *rowClient) do(ctx context.Context, span, method, u string, body []byte, accept []string, ifMatch string, prefer bool,
	ok ...int) (resp *http.Response, err error) {
	ctx, end := runtime.StartSpan(ctx, span, c.tracer, nil)
	defer func() { end(err) }()
	req, err := runtime.NewRequest(ctx, method, u)
	if err != nil {
		return nil, err
	}
	h := req.Raw().Header
	h["x-ms-version"] = version
	h["DataServiceVersion"] = dataService
	h["Accept"] = accept
	if ifMatch != "" {
		h["If-Match"] = []string{ifMatch}
	}
	if prefer {
		h["Prefer"] = noEcho
	}
	if body != nil {
		if err := setMemBody(req, body, "application/json"); err != nil {
			return nil, err
		}
	}
	resp, err = c.pl.Do(req)
	if err != nil {
		return nil, err
	}
	if !runtime.HasStatusCode(resp, ok...) {
		return nil, runtime.NewResponseError(resp)
	}
	return resp, nil
}

// getRow is Service.GetRow without a projection: Get Entity, the body decoded as the
// service sent it.
func (c *rowClient) getRow(ctx context.Context, table, pk, rk string) (service.Row, error) {
	resp, err := c.do(ctx, "Client.GetEntity", http.MethodGet, c.rowURL(table, pk, rk), nil, acceptMinimal, "", false, http.StatusOK)
	if err != nil {
		return service.Row{}, mapError(ctx, "get row", err)
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		return service.Row{}, mapError(ctx, "get row", err)
	}
	row, err := decodeEntityBody(body)
	if err != nil {
		return service.Row{}, fmt.Errorf("azservice: get row (%q, %q) of %s: %w", pk, rk, table, err)
	}
	if row.ETag == "" {
		row.ETag = resp.Header.Get("ETag")
	}
	return row, nil
}

// write is Service.Write once the action is known to be valid: Insert Entity (without the
// echo), Update and Merge Entity under If-Match (the action's ETag, or * when empty), the
// upserts as Update and Merge Entity without If-Match, Delete Entity under If-Match.
func (c *rowClient) write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	ifMatch := a.IfMatch
	if ifMatch == "" {
		ifMatch = service.ETagAny
	}
	pk, rk := a.Row.PartitionKey, a.Row.RowKey
	if a.Op == service.OpDelete {
		_, err := c.do(ctx, "Client.DeleteEntity", http.MethodDelete, c.rowURL(table, pk, rk), nil, acceptMinimal, ifMatch, false, http.StatusNoContent)
		return service.Written{}, mapError(ctx, "delete row", err)
	}
	// The body is not pooled: the transport may still hold it when the call returns (a
	// service that answers before reading the whole request).
	body, err := appendEntity(make([]byte, 0, 512), pk, rk, a.Row.Properties)
	if err != nil {
		return service.Written{}, err
	}
	if c.ascii {
		if i := firstNonASCII(body); i >= 0 {
			body = escapeNonASCII(body, i)
		}
	}
	var resp *http.Response
	switch a.Op {
	case service.OpInsert:
		resp, err = c.do(ctx, "Client.AddEntity", http.MethodPost, c.tableURL(table), body, acceptMinimal, "", true, http.StatusCreated, http.StatusNoContent)
	case service.OpReplace:
		resp, err = c.do(ctx, "Client.UpdateEntity", http.MethodPut, c.rowURL(table, pk, rk), body, acceptJSON, ifMatch, false, http.StatusNoContent)
	case service.OpMerge:
		resp, err = c.do(ctx, "Client.UpdateEntity", http.MethodPatch, c.rowURL(table, pk, rk), body, acceptJSON, ifMatch, false, http.StatusNoContent)
	case service.OpUpsertReplace:
		resp, err = c.do(ctx, "Client.UpsertEntity", http.MethodPut, c.rowURL(table, pk, rk), body, acceptJSON, "", false, http.StatusNoContent)
	case service.OpUpsertMerge:
		resp, err = c.do(ctx, "Client.UpsertEntity", http.MethodPatch, c.rowURL(table, pk, rk), body, acceptJSON, "", false, http.StatusNoContent)
	}
	if err != nil {
		return service.Written{}, mapError(ctx, "write row", err)
	}
	w := service.Written{ETag: resp.Header.Get("ETag")}
	w.Timestamp, _ = etagTime(w.ETag)
	return w, nil
}

// transact sends the transaction b as aztables' SubmitTransaction does (the same request
// line, headers and span name) and reads the versions or the failing action from the
// multipart response (see Service.Transact).
func (c *rowClient) transact(ctx context.Context, b *batchBody) (_ []service.Written, err error) {
	ctx, end := runtime.StartSpan(ctx, "Client.SubmitTransaction", c.tracer, nil)
	defer func() { end(err) }()
	req, err := runtime.NewRequest(ctx, http.MethodPost, c.endpoint+"/$batch"+c.query)
	if err != nil {
		return nil, err
	}
	h := req.Raw().Header
	h["x-ms-version"] = version
	h["DataServiceVersion"] = dataService
	h["Accept"] = acceptMinimal
	body, contentType := b.compose(req.Raw().URL)
	if err := setMemBody(req, body, contentType); err != nil {
		return nil, err
	}
	resp, err := c.pl.Do(req)
	if err != nil {
		return nil, mapError(ctx, "transaction", err)
	}
	if !runtime.HasStatusCode(resp, http.StatusAccepted, http.StatusNoContent) {
		return nil, azconn.StatusError(runtime.NewResponseError(resp).(*azcore.ResponseError))
	}
	payload, err := runtime.Payload(resp)
	if err != nil {
		return nil, mapError(ctx, "transaction", err)
	}
	// A failed action is reported inside the 202 (the service answers the batch, not the
	// action); Azurite's answer to a change set of over 100 actions, which the SDK cannot
	// parse, is read the same way. The versions and the failure come from one pass over
	// the body.
	ws, failed := written(b.actions, payload)
	if failed {
		if te := parseBatchFailure(payload, runtime.NewResponseError(resp)); te != nil {
			return nil, te
		}
	}
	return ws, nil
}
