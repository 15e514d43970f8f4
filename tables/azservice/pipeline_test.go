package azservice

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/go-cmp/cmp"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// The entity requests leave aztables for a pipeline of the package's own (pipeline.go).
// These tests send each entity request both ways to a recording server and check that the
// server sees the same request, that the signature is valid, and that the answers, failures
// included, come back the same; and that the account's client options (retries, per-call
// and per-retry policies, telemetry, tracing) and its credential kinds (key, SAS, token)
// reach the new pipeline.

const (
	testAccount = "devstoreaccount1"
	testKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	testETag    = `W/"datetime'2026-03-04T05%3A06%3A07.1234567Z'"`
)

// seen is one request as the recording server saw it.
type seen struct {
	Method, Path, Query string
	Header              map[string]string // the headers that matter to the service
	Body                map[string]any    // the JSON body, decoded with numbers as text
	SignatureOK         bool
}

// recorder is a table service stand-in: it records each request and answers as the
// service does, or with the status and body of fail when set.
type recorder struct {
	mu       sync.Mutex
	reqs     []seen
	fail     int // a status to answer with, 0 for success
	failures atomic.Int32
	failN    int32 // how many requests fail before success returns (0: all of them)
}

var recordedHeaders = []string{"x-ms-version", "DataServiceVersion", "Accept", "If-Match", "Prefer", "Content-Type", "User-Agent", "X-Test-Per-Call", "X-Test-Per-Retry"}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := seen{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: map[string]string{}}
	for _, h := range recordedHeaders {
		if v := r.Header.Get(h); v != "" {
			s.Header[h] = v
		}
	}
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "SharedKeyLite ") {
		s.Header["Authorization"] = "SharedKeyLite"
		key, _ := base64.StdEncoding.DecodeString(testKey)
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(r.Header.Get("x-ms-date") + "\n/" + testAccount + r.URL.EscapedPath()))
		s.SignatureOK = auth == "SharedKeyLite "+testAccount+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil))
	} else if auth != "" {
		s.Header["Authorization"] = auth
	}
	if body, _ := io.ReadAll(r.Body); len(body) > 0 {
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		if err := d.Decode(&s.Body); err != nil {
			s.Body = map[string]any{"undecodable": string(body)}
		}
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, s)
	rc.mu.Unlock()
	if rc.fail != 0 && (rc.failN == 0 || rc.failures.Add(1) <= rc.failN) {
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		w.Header().Set("x-ms-error-code", "UpdateConditionNotSatisfied")
		w.WriteHeader(rc.fail)
		fmt.Fprint(w, `{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"The update condition specified in the request was not satisfied.\nRequestId:x\nTime:y"}}}`)
		return
	}
	w.Header().Set("ETag", testETag)
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		fmt.Fprint(w, `{"odata.etag":"`+strings.ReplaceAll(testETag, `"`, `\"`)+`","PartitionKey":"p","RowKey":"r","Timestamp":"2026-03-04T05:06:07.1234567Z","N":5,"D@odata.type":"Edm.Double","D":5.0}`)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *recorder) take() []seen {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.reqs
	rc.reqs = nil
	return out
}

// recordingService returns a Service over a recording server, built from a connection
// string with the account key, and the same Service with entity requests sent through
// aztables as before.
func recordingService(t *testing.T, co azcore.ClientOptions) (direct, viaSDK *Service, rc *recorder) {
	t.Helper()
	rc = &recorder{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	co.Transport = &http.Client{Transport: tr}
	conn := "DefaultEndpointsProtocol=http;AccountName=" + testAccount + ";AccountKey=" + testKey + ";TableEndpoint=" + srv.URL + "/" + testAccount + ";"
	direct, err := NewFromConnectionString(conn, &Options{ClientOptions: co})
	if err != nil {
		t.Fatal(err)
	}
	if direct.rows == nil {
		t.Fatal("no entity pipeline for a shared-key account")
	}
	copied := *direct
	copied.rows = nil
	return direct, &copied, rc
}

// entityCalls are one call of each entity request, with keys that need escaping.
var entityCalls = []struct {
	name string
	call func(ctx context.Context, s *Service) (any, error)
}{
	{"get", func(ctx context.Context, s *Service) (any, error) { return s.GetRow(ctx, "Tbl", "p q", "r'1", nil) }},
	{"insert", writeCall(service.Action{Op: service.OpInsert})},
	{"replace", writeCall(service.Action{Op: service.OpReplace, IfMatch: testETag})},
	{"replace any", writeCall(service.Action{Op: service.OpReplace})},
	{"merge", writeCall(service.Action{Op: service.OpMerge, IfMatch: testETag})},
	{"upsert replace", writeCall(service.Action{Op: service.OpUpsertReplace})},
	{"upsert merge", writeCall(service.Action{Op: service.OpUpsertMerge})},
	{"delete", writeCall(service.Action{Op: service.OpDelete, IfMatch: "*"})},
}

func writeCall(a service.Action) func(ctx context.Context, s *Service) (any, error) {
	return func(ctx context.Context, s *Service) (any, error) {
		a.Row = service.Row{PartitionKey: "p q", RowKey: "r'1", Properties: []service.Property{
			prop("S", service.String("x")), prop("N", service.Int32(5)), prop("D", service.Double(5)),
			prop("L", service.Int64(1<<60)), prop("T", service.DateTime(time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC))),
		}}
		return s.Write(ctx, "Tbl", a)
	}
}

func TestEntityRequestsMatchTheSDKs(t *testing.T) {
	ctx := context.Background()
	direct, viaSDK, rc := recordingService(t, azcore.ClientOptions{})
	for _, fail := range []int{0, http.StatusPreconditionFailed} {
		for _, c := range entityCalls {
			t.Run(fmt.Sprintf("%s/status-%d", c.name, fail), func(t *testing.T) {
				rc.fail = fail
				gotSDK, errSDK := c.call(ctx, viaSDK)
				sdkReq := rc.take()
				got, err := c.call(ctx, direct)
				req := rc.take()
				if len(req) != 1 || len(sdkReq) != 1 {
					t.Fatalf("requests: %d direct, %d through the SDK; want 1 each", len(req), len(sdkReq))
				}
				if !req[0].SignatureOK || !sdkReq[0].SignatureOK {
					t.Errorf("signature valid: direct %v, SDK %v", req[0].SignatureOK, sdkReq[0].SignatureOK)
				}
				// aztables re-encodes the body through a map, which writes 5.0 as 5: the same
				// number for the service, which takes the type from the annotation.
				if d := cmp.Diff(sdkReq[0], req[0], sameNumber); d != "" {
					t.Errorf("the request differs from aztables' (-aztables +direct):\n%s", d)
				}
				if d := cmp.Diff(gotSDK, got); d != "" {
					t.Errorf("the result differs (-aztables +direct):\n%s", d)
				}
				var se, seSDK *abstractions.StatusError
				if fail != 0 {
					if !errors.As(err, &se) || !errors.As(errSDK, &seSDK) {
						t.Fatalf("errors: direct %v, SDK %v; want *StatusError both", err, errSDK)
					}
					var re *azcore.ResponseError
					if !errors.As(err, &re) {
						t.Errorf("the direct error keeps no *azcore.ResponseError: %v", err)
					}
					if se.StatusCode != seSDK.StatusCode || se.ErrorCode != seSDK.ErrorCode || se.Message != seSDK.Message {
						t.Errorf("errors differ: direct %d %s %q, SDK %d %s %q", se.StatusCode, se.ErrorCode, se.Message,
							seSDK.StatusCode, seSDK.ErrorCode, seSDK.Message)
					}
				} else if err != nil || errSDK != nil {
					t.Fatalf("errors: direct %v, SDK %v", err, errSDK)
				}
			})
		}
	}
}

var sameNumber = cmp.Comparer(func(a, b json.Number) bool {
	fa, errA := a.Float64()
	fb, errB := b.Float64()
	return errA == nil && errB == nil && fa == fb
})

// countingPolicy counts the requests it sees and marks them with a header.
type countingPolicy struct {
	header string
	n      atomic.Int32
}

func (p *countingPolicy) Do(req *policy.Request) (*http.Response, error) {
	p.n.Add(1)
	req.Raw().Header.Set(p.header, "1")
	return req.Next()
}

// spanRecorder is a tracing provider that records the names of the spans started.
type spanRecorder struct {
	mu    sync.Mutex
	names []string
}

func (s *spanRecorder) provider() tracing.Provider {
	return tracing.NewProvider(func(name, version string) tracing.Tracer {
		return tracing.NewTracer(func(ctx context.Context, span string, _ *tracing.SpanOptions) (context.Context, tracing.Span) {
			s.mu.Lock()
			s.names = append(s.names, span)
			s.mu.Unlock()
			return ctx, tracing.Span{}
		}, nil)
	}, nil)
}

func TestEntityRequestsHonourClientOptions(t *testing.T) {
	ctx := context.Background()
	perCall, perRetry := &countingPolicy{header: "X-Test-Per-Call"}, &countingPolicy{header: "X-Test-Per-Retry"}
	spans := &spanRecorder{}
	direct, _, rc := recordingService(t, azcore.ClientOptions{
		PerCallPolicies:  []policy.Policy{perCall},
		PerRetryPolicies: []policy.Policy{perRetry},
		Retry:            policy.RetryOptions{MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond},
		Telemetry:        policy.TelemetryOptions{ApplicationID: "shop"},
		TracingProvider:  spans.provider(),
	})
	rc.fail, rc.failN = http.StatusServiceUnavailable, 2
	row, err := direct.GetRow(ctx, "Tbl", "p", "r", nil)
	if err != nil {
		t.Fatalf("GetRow after two 503s: %v", err)
	}
	if row.PartitionKey != "p" || row.ETag != testETag {
		t.Fatalf("row = %+v", row)
	}
	reqs := rc.take()
	if len(reqs) != 3 || perCall.n.Load() != 1 || perRetry.n.Load() != 3 {
		t.Fatalf("requests %d, per-call policy ran %d times, per-retry %d; want 3 tries of one call", len(reqs), perCall.n.Load(), perRetry.n.Load())
	}
	for _, r := range reqs {
		if !r.SignatureOK || r.Header["X-Test-Per-Call"] != "1" || !strings.HasPrefix(r.Header["User-Agent"], "shop azsdk-go-aztables/") {
			t.Errorf("a try lacks the signature, the per-call header or the telemetry: %+v", r)
		}
	}
	spans.mu.Lock()
	defer spans.mu.Unlock()
	if len(spans.names) == 0 || spans.names[0] != "Client.GetEntity" {
		t.Errorf("spans %q, want Client.GetEntity first (then the HTTP spans)", spans.names)
	}
}

func TestEntityRequestsWithSASAndToken(t *testing.T) {
	ctx := context.Background()
	t.Run("SAS", func(t *testing.T) {
		rc := &recorder{}
		srv := httptest.NewServer(rc)
		defer srv.Close()
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		conn := "TableEndpoint=" + srv.URL + "/acct;SharedAccessSignature=sv=2019-02-02&sig=c2lnbmF0dXJl"
		s, err := NewFromConnectionString(conn, &Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
		if err != nil {
			t.Fatal(err)
		}
		if s.rows == nil {
			t.Fatal("no entity pipeline for a SAS account")
		}
		if _, err := s.Write(ctx, "Tbl", service.Action{Op: service.OpUpsertReplace, Row: service.Row{PartitionKey: "p", RowKey: "r"}}); err != nil {
			t.Fatal(err)
		}
		reqs := rc.take()
		if len(reqs) != 1 || reqs[0].Query != "sv=2019-02-02&sig=c2lnbmF0dXJl" || reqs[0].Header["Authorization"] != "" ||
			reqs[0].Path != "/acct/Tbl(PartitionKey='p',RowKey='r')" {
			t.Fatalf("requests %+v; want the SAS as the query and no Authorization", reqs)
		}
	})
	t.Run("token", func(t *testing.T) {
		rc := &recorder{}
		srv := httptest.NewTLSServer(rc) // the bearer policy refuses plain HTTP
		defer srv.Close()
		client := srv.Client()
		defer client.CloseIdleConnections()
		s, err := NewWithCredential(srv.URL+"/acct", fakeToken{}, &Options{ClientOptions: azcore.ClientOptions{Transport: client}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetRow(ctx, "Tbl", "p", "r", nil); err != nil {
			t.Fatal(err)
		}
		reqs := rc.take()
		if len(reqs) != 1 || reqs[0].Header["Authorization"] != "Bearer t0k3n" {
			t.Fatalf("requests %+v; want one with the bearer token", reqs)
		}
	})
	t.Run("Cosmos DB keeps aztables", func(t *testing.T) {
		s, err := NewFromConnectionString("DefaultEndpointsProtocol=https;AccountName=a;AccountKey="+testKey+
			";TableEndpoint=https://a.table.cosmos.azure.com:443/;", nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.rows != nil {
			t.Fatal("a Cosmos DB endpoint got the package's own pipeline; aztables rewrites its requests")
		}
	})
}

type fakeToken struct{}

func (fakeToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "t0k3n", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestEntityRequestsLiveWithSAS runs the entity requests on the test account with an account
// SAS instead of the key: the signature travels in the URL of the package's own pipeline.
func TestEntityRequestsLiveWithSAS(t *testing.T) {
	keyed := liveService(t)
	table := newTable(t, keyed)
	cs, err := azconn.Parse(azuritetest.ConnectionString(t))
	if err != nil || cs.AccountKey == "" {
		t.Skipf("the test account has no key to sign a SAS with (%v)", err)
	}
	cred, err := aztables.NewSharedKeyCredential(cs.AccountName, cs.AccountKey)
	if err != nil {
		t.Fatal(err)
	}
	// Both protocols: the emulator speaks plain HTTP.
	qp, err := aztables.AccountSASSignatureValues{
		Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: time.Now().Add(-time.Minute), ExpiryTime: time.Now().Add(time.Hour),
		Permissions:   aztables.AccountSASPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true}.String(),
		Services:      "t",
		ResourceTypes: aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true}.String(),
	}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	sas := qp.Encode()
	s, err := NewFromConnectionString("TableEndpoint="+keyed.Endpoint()+";SharedAccessSignature="+sas,
		&Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	row := service.Row{PartitionKey: "p", RowKey: "r'1", Properties: []service.Property{prop("N", service.Int32(1))}}
	w, err := s.Write(ctx, table, service.Action{Op: service.OpInsert, Row: row})
	if err != nil {
		t.Fatalf("insert with a SAS: %v", err)
	}
	row.Properties[0].Value = service.Int32(2)
	w2, err := s.Write(ctx, table, service.Action{Op: service.OpReplace, Row: row, IfMatch: w.ETag})
	if err != nil {
		t.Fatalf("conditional replace with a SAS: %v", err)
	}
	if _, err := s.Write(ctx, table, service.Action{Op: service.OpReplace, Row: row, IfMatch: w.ETag}); !abstractions.HasStatus(err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied") {
		t.Fatalf("stale replace: %v, want 412 UpdateConditionNotSatisfied", err)
	}
	got, err := s.GetRow(ctx, table, "p", "r'1", nil)
	if err != nil || got.ETag != w2.ETag || len(got.Properties) != 1 || got.Properties[0].Value.String() != service.Int32(2).String() {
		t.Fatalf("read with a SAS: %+v, %v", got, err)
	}
	if _, err := s.Write(ctx, table, service.Action{Op: service.OpDelete, Row: row}); err != nil {
		t.Fatalf("delete with a SAS: %v", err)
	}
	if _, err := s.GetRow(ctx, table, "p", "r'1", nil); !abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		t.Fatalf("read after delete: %v, want 404 ResourceNotFound", err)
	}
}

// batchServer answers each $batch with a multipart response of one inner response per
// change-set part: 204 with an ETag, or, with failAt ≥ 0, a 412 for that action. It records
// each request's line, headers and body, the random boundaries replaced by fixed names.
type batchServer struct {
	mu     sync.Mutex
	reqs   []seen
	failAt int
}

var boundaryName = regexp.MustCompile(`(batch|changeset)_[0-9a-f-]{36}`)

func (bs *batchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := seen{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: map[string]string{}}
	for _, h := range recordedHeaders {
		if v := r.Header.Get(h); v != "" {
			s.Header[h] = boundaryName.ReplaceAllString(v, "${1}_B")
		}
	}
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "SharedKey") {
		s.Header["Authorization"] = strings.Fields(auth)[0]
	}
	s.Body = map[string]any{"multipart": boundaryName.ReplaceAllString(string(body), "${1}_B")}
	bs.mu.Lock()
	bs.reqs = append(bs.reqs, s)
	bs.mu.Unlock()
	n := strings.Count(string(body), "Content-Type: application/http")
	var out strings.Builder
	out.WriteString("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n")
	for i := range n {
		out.WriteString("--changesetresponse_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		if i == bs.failAt {
			out.WriteString("HTTP/1.1 412 Precondition Failed\r\nContent-Type: application/json;odata=minimalmetadata;charset=utf-8\r\n\r\n")
			fmt.Fprintf(&out, `{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"%d:The update condition specified in the request was not satisfied.\nRequestId:x\nTime:y"}}}`+"\r\n", i)
			break
		}
		fmt.Fprintf(&out, "HTTP/1.1 204 No Content\r\nETag: W/\"datetime'2026-03-04T05%%3A06%%3A07.000000%dZ'\"\r\n\r\n\r\n", i)
	}
	out.WriteString("--changesetresponse_1--\r\n\r\n--batchresponse_1--\r\n")
	w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_1")
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, out.String())
}

func (bs *batchServer) take() []seen {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	out := bs.reqs
	bs.reqs = nil
	return out
}

// A transaction leaves aztables' SubmitTransaction for the row client: the service sees the
// same request, and the versions and the failing action come back the same.
func TestTransactionRequestsMatchTheSDKs(t *testing.T) {
	ctx := context.Background()
	bs := &batchServer{}
	srv := httptest.NewServer(bs)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	conn := "DefaultEndpointsProtocol=http;AccountName=" + testAccount + ";AccountKey=" + testKey + ";TableEndpoint=" + srv.URL + "/" + testAccount + ";"
	direct, err := NewFromConnectionString(conn, &Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	viaSDK := *direct
	viaSDK.rows = nil
	row := func(rk string) service.Row {
		return service.Row{PartitionKey: "p q", RowKey: rk, Properties: []service.Property{prop("S", service.String("x")), prop("D", service.Double(5))}}
	}
	acts := []service.Action{
		{Op: service.OpInsert, Row: row("a")},
		{Op: service.OpReplace, Row: row("b"), IfMatch: testETag},
		{Op: service.OpUpsertMerge, Row: row("c")},
		{Op: service.OpDelete, Row: service.Row{PartitionKey: "p q", RowKey: "d"}, IfMatch: "*"},
	}
	for _, failAt := range []int{-1, 1} {
		bs.failAt = failAt
		gotSDK, errSDK := viaSDK.Transact(ctx, "Tbl", acts)
		sdkReq := bs.take()
		got, err := direct.Transact(ctx, "Tbl", acts)
		req := bs.take()
		if len(req) != 1 || len(sdkReq) != 1 {
			t.Fatalf("requests: %d direct, %d through the SDK; want 1 each", len(req), len(sdkReq))
		}
		if d := cmp.Diff(sdkReq[0], req[0]); d != "" {
			t.Errorf("failAt %d: the request differs from aztables' (-aztables +direct):\n%s", failAt, d)
		}
		if d := cmp.Diff(gotSDK, got); d != "" {
			t.Errorf("failAt %d: the result differs (-aztables +direct):\n%s", failAt, d)
		}
		if failAt < 0 {
			if err != nil || errSDK != nil || len(got) != len(acts) || got[0].ETag == "" || got[3].ETag != "" {
				t.Fatalf("errors: direct %v, SDK %v; versions %v", err, errSDK, got)
			}
			continue
		}
		var te, teSDK *service.TransactionError
		var se, seSDK *abstractions.StatusError
		if !errors.As(err, &te) || !errors.As(errSDK, &teSDK) || !errors.As(err, &se) || !errors.As(errSDK, &seSDK) {
			t.Fatalf("errors: direct %v, SDK %v; want *service.TransactionError of a *StatusError both", err, errSDK)
		}
		if te.Index != failAt || te.Index != teSDK.Index || se.StatusCode != seSDK.StatusCode || se.ErrorCode != seSDK.ErrorCode || se.Message != seSDK.Message {
			t.Errorf("errors differ: direct %d %d %s %q, SDK %d %d %s %q", te.Index, se.StatusCode, se.ErrorCode, se.Message,
				teSDK.Index, seSDK.StatusCode, seSDK.ErrorCode, seSDK.Message)
		}
	}
}

func TestBatchBodyReportsFailedAction(t *testing.T) {
	for body, want := range map[string]bool{
		"HTTP/1.1 204 No Content\r\n":                 false,
		"--x\r\nHTTP/1.1 412 Precondition Failed\r\n": true,
		"HTTP/1.1 500 Internal\r\n":                   true,
		`{"v":"HTTP/1.1 400"}`:                        false,
		"":                                            false,
	} {
		if _, got := parseBatchETags([]byte(body), 1); got != want {
			t.Errorf("parseBatchETags(%q) reports a failed action: %v, want %v", body, got, want)
		}
	}
}

// bodyKinds is a transport that answers the first try of every request 503 and the second
// 204, recording for each try whether net/http would take its body for bytes in memory (the
// test net/http applies before writing a request, for a body that must also be a Closer:
// io.NopCloser of a *bytes.Reader) and the bytes it read.
type bodyKinds struct {
	mu    sync.Mutex
	tries []bodyTry
}

type bodyTry struct {
	inMemory bool
	body     string
}

var nopCloserOfReader = reflect.TypeOf(io.NopCloser(bytes.NewReader(nil)))

func (bk *bodyKinds) Do(req *http.Request) (*http.Response, error) {
	var try bodyTry
	if b := req.Body; b != nil && reflect.TypeOf(b) == nopCloserOfReader {
		_, try.inMemory = reflect.ValueOf(b).Field(0).Interface().(*bytes.Reader)
	}
	if req.Body != nil {
		data, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		try.body = string(data)
	}
	bk.mu.Lock()
	bk.tries = append(bk.tries, try)
	first := len(bk.tries)%2 == 1
	bk.mu.Unlock()
	status := http.StatusNoContent
	if first {
		status = http.StatusServiceUnavailable
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Etag": {testETag}}, Body: http.NoBody, Request: req}, nil
}

// TestRowBodiesReachTheTransportInMemory checks that every try of a single-row write hands
// net/http a body it knows to be in memory, so that the request's headers and body leave
// in one write rather than two, and that the retry after a 503 sends the whole body again.
func TestRowBodiesReachTheTransportInMemory(t *testing.T) {
	bk := &bodyKinds{}
	svc, err := NewFromConnectionString(benchAccount, &Options{ClientOptions: azcore.ClientOptions{
		Transport: bk, Retry: policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	row := service.Row{PartitionKey: "p", RowKey: "r", Properties: []service.Property{{Name: "S", Value: service.String("hello")}}}
	for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpUpsertReplace, service.OpUpsertMerge} {
		bk.tries = nil
		if _, err := svc.Write(context.Background(), "Customers", service.Action{Op: op, Row: row}); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		if len(bk.tries) != 2 {
			t.Fatalf("%v: %d tries, want 2 (a 503, then a 204)", op, len(bk.tries))
		}
		for i, try := range bk.tries {
			if !try.inMemory {
				t.Errorf("%v: try %d: the transport was given a body net/http does not know to be in memory", op, i+1)
			}
			if !strings.Contains(try.body, `"S":"hello"`) {
				t.Errorf("%v: try %d sent %q, not the whole entity", op, i+1, try.body)
			}
		}
	}
}
