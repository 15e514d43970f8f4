package azservice

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/tables/service"
)

// batchRecorder is a transport that keeps the last request and answers a batch as the
// service answers a successful one: an inner 204 per action of the body it received, with
// an ETag for every action but a delete.
type batchRecorder struct {
	url         string
	contentType string
	body        []byte
}

func (r *batchRecorder) Do(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	r.url, r.contentType, r.body = req.URL.String(), req.Header.Get("Content-Type"), body
	var out strings.Builder
	out.WriteString("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n")
	for i, in := range innerRequests(nil, string(body), req.Header.Get("Content-Type")) {
		out.WriteString("--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		out.WriteString("HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nDataServiceVersion: 3.0;\r\n")
		if in.Method != http.MethodDelete {
			out.WriteString("ETag: W/\"datetime'2026-01-01T00%3A00%3A00.000000" + string(rune('0'+i)) + "Z'\"\r\n")
		}
		out.WriteString("\r\n\r\n")
	}
	out.WriteString("--changesetresponse_2--\r\n--batchresponse_1--\r\n")
	h := http.Header{"Content-Type": {"multipart/mixed; boundary=batchresponse_1"}}
	return &http.Response{StatusCode: http.StatusAccepted, Header: h, Body: io.NopCloser(strings.NewReader(out.String())), Request: req}, nil
}

// innerRequests parses a batch body into its change set's requests (t may be nil when the
// body is known to be well formed).
func innerRequests(t *testing.T, body, contentType string) []*http.Request {
	fail := func(err error) []*http.Request {
		if t != nil {
			t.Helper()
			t.Fatalf("%v\n%s", err, body)
		}
		return nil
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fail(err)
	}
	batch := multipart.NewReader(strings.NewReader(body), params["boundary"])
	part, err := batch.NextPart()
	if err != nil {
		return fail(err)
	}
	_, params, err = mime.ParseMediaType(part.Header.Get("Content-Type"))
	if err != nil {
		return fail(err)
	}
	changes := multipart.NewReader(part, params["boundary"])
	var out []*http.Request
	for {
		p, err := changes.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return fail(err)
		}
		if p.Header.Get("Content-Type") != "application/http" || p.Header.Get("Content-Transfer-Encoding") != "binary" {
			return fail(io.ErrUnexpectedEOF)
		}
		req, err := http.ReadRequest(bufio.NewReader(p))
		if err != nil {
			return fail(err)
		}
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return fail(err)
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		out = append(out, req)
	}
}

// The body Transact writes is the one the SDK writes for the same actions, request for
// request: methods, URLs (keys percent-encoded, the endpoint's query, $format), the headers
// the service reads, and the same entities (the SDK's JSON differs only in the order of its
// keys and its HTML escapes). The inner requests also carry DataServiceVersion, which the
// SDK leaves empty.
func TestBatchBodyIsTheSDKs(t *testing.T) {
	props := []service.Property{
		prop("S", service.String("a<b & \"c\" é😀")), prop("D", service.Double(2)), prop("L", service.Int64(1<<40)),
		prop("B", service.Binary([]byte{0, 1, 2})),
	}
	row := func(rk string) service.Row { return service.Row{PartitionKey: "p k/é", RowKey: rk, Properties: props} }
	etag := `W/"datetime'2026-01-01T00%3A00%3A00.0000000Z'"`
	actions := []service.Action{
		{Op: service.OpInsert, Row: row("ins'ert")},
		{Op: service.OpReplace, Row: row("replace"), IfMatch: etag},
		{Op: service.OpReplace, Row: row("replace-any")},
		{Op: service.OpMerge, Row: row("merge"), IfMatch: etag},
		{Op: service.OpUpsertReplace, Row: row("upsert replace")},
		{Op: service.OpUpsertMerge, Row: row("upsert+merge")},
		{Op: service.OpDelete, Row: service.Row{PartitionKey: "p k/é", RowKey: "del'ete#?"}, IfMatch: etag},
		{Op: service.OpDelete, Row: service.Row{PartitionKey: "p k/é", RowKey: "delete-any"}},
	}
	sdkActions := func(t *testing.T) []aztables.TransactionAction {
		var out []aztables.TransactionAction
		for _, a := range actions {
			var body []byte
			if a.Op == service.OpDelete {
				body = appendKeys(nil, doubleQuotes(a.Row.PartitionKey), doubleQuotes(a.Row.RowKey))
			} else {
				var err error
				if body, err = appendEntity(nil, a.Row.PartitionKey, a.Row.RowKey, a.Row.Properties); err != nil {
					t.Fatal(err)
				}
			}
			ta := aztables.TransactionAction{Entity: body}
			tag := azcore.ETag(a.IfMatch)
			if tag == "" {
				tag = azcore.ETagAny
			}
			switch a.Op {
			case service.OpInsert:
				ta.ActionType = aztables.TransactionTypeAdd
			case service.OpReplace:
				ta.ActionType, ta.IfMatch = aztables.TransactionTypeUpdateReplace, &tag
			case service.OpMerge:
				ta.ActionType, ta.IfMatch = aztables.TransactionTypeUpdateMerge, &tag
			case service.OpUpsertReplace:
				ta.ActionType = aztables.TransactionTypeInsertReplace
			case service.OpUpsertMerge:
				ta.ActionType = aztables.TransactionTypeInsertMerge
			case service.OpDelete:
				ta.ActionType, ta.IfMatch = aztables.TransactionTypeDelete, &tag
			}
			out = append(out, ta)
		}
		return out
	}
	for _, tc := range []struct{ name, conn string }{
		{"account key", benchAccount},
		{"shared access signature", "TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=sv=2024-01-01&sig=c2ln&se=2030-01-01"},
		{"Cosmos DB endpoint", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=YmVuY2gta2V5;TableEndpoint=https://acct.table.cosmos.azure.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ours := &batchRecorder{}
			s, err := NewFromConnectionString(tc.conn, &Options{ClientOptions: azcore.ClientOptions{Transport: ours}})
			if err != nil {
				t.Fatal(err)
			}
			// Actions with keys the SDK cannot put in a URL go alone; the rest together.
			if _, err := s.Transact(ctx, "Tab", actions[:1]); err != nil {
				t.Fatal(err)
			}
			ourFirst := innerRequests(t, string(ours.body), ours.contentType)
			written, err := s.Transact(ctx, "Tab", actions[1:6])
			if err != nil {
				t.Fatal(err)
			}
			if est := service.TransactionBodySize(actions[1:6]); len(ours.body) > est {
				t.Errorf("the body is %d bytes; TransactionBodySize estimates %d", len(ours.body), est)
			}
			ourReqs := append(ourFirst, innerRequests(t, string(ours.body), ours.contentType)...)
			if _, err := s.Transact(ctx, "Tab", actions[6:]); err != nil {
				t.Fatal(err)
			}
			ourReqs = append(ourReqs, innerRequests(t, string(ours.body), ours.contentType)...)
			if !strings.HasSuffix(strings.Split(ours.url, "?")[0], "/$batch") {
				t.Errorf("sent to %s", ours.url)
			}
			for i, w := range written {
				if w.ETag == "" || w.Timestamp.IsZero() {
					t.Errorf("action %d reported %+v", i+1, w)
				}
			}

			// The SDK's own body, through a client without this package's policies.
			sdk := &batchRecorder{}
			client := sdkClient(t, tc.conn, sdk)
			var sdkReqs []*http.Request
			for _, part := range [][]aztables.TransactionAction{sdkActions(t)[:1], sdkActions(t)[1:6], sdkActions(t)[6:]} {
				if _, err := client.SubmitTransaction(ctx, part, nil); err != nil {
					t.Fatal(err)
				}
				sdkReqs = append(sdkReqs, innerRequests(t, string(sdk.body), sdk.contentType)...)
			}
			if ours.url != sdk.url {
				t.Errorf("batch URL %s, the SDK's %s", ours.url, sdk.url)
			}
			if len(ourReqs) != len(actions) || len(sdkReqs) != len(actions) {
				t.Fatalf("%d and %d requests for %d actions", len(ourReqs), len(sdkReqs), len(actions))
			}
			for i := range actions {
				o, k := ourReqs[i], sdkReqs[i]
				if o.Method != k.Method || o.RequestURI != k.RequestURI {
					t.Errorf("action %d: %s %s, the SDK's %s %s", i, o.Method, o.RequestURI, k.Method, k.RequestURI)
				}
				for _, h := range []string{"Accept", "Content-Type", "If-Match", "Prefer", "X-Http-Method"} {
					if o.Header.Get(h) != k.Header.Get(h) {
						t.Errorf("action %d: %s: %q, the SDK's %q", i, h, o.Header.Get(h), k.Header.Get(h))
					}
				}
				if got := o.Header.Get("DataServiceVersion"); got != "3.0" {
					t.Errorf("action %d: DataServiceVersion %q", i, got)
				}
				ob, _ := io.ReadAll(o.Body)
				kb, _ := io.ReadAll(k.Body)
				if o.ContentLength != int64(len(ob)) {
					t.Errorf("action %d: Content-Length %d for %d bytes", i, o.ContentLength, len(ob))
				}
				var om, km map[string]any
				if actions[i].Op == service.OpDelete {
					if len(ob) != 0 {
						t.Errorf("action %d: a delete sent %q", i, ob)
					}
					continue
				}
				if json.Unmarshal(ob, &om) != nil || json.Unmarshal(kb, &km) != nil || !reflect.DeepEqual(om, km) {
					t.Errorf("action %d: entity %s, the SDK's %s", i, ob, kb)
				}
			}
		})
	}
}

// sdkClient is a plain aztables client of the connection string's table Tab, sending to t.
func sdkClient(t *testing.T, conn string, tr *batchRecorder) *aztables.Client {
	t.Helper()
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: tr}}
	if strings.Contains(conn, "SharedAccessSignature=") {
		sc, err := aztables.NewServiceClientWithNoCredential("https://acct.table.core.windows.net/?sv=2024-01-01&sig=c2ln&se=2030-01-01", opts)
		if err != nil {
			t.Fatal(err)
		}
		return sc.NewClient("Tab")
	}
	cred, err := aztables.NewSharedKeyCredential("acct", "YmVuY2gta2V5")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "https://acct.table.core.windows.net"
	if strings.Contains(conn, "cosmos") {
		endpoint = "https://acct.table.cosmos.azure.com"
	}
	sc, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sc.NewClient("Tab")
}

func TestParseBatchETags(t *testing.T) {
	ok := "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n" +
		"--c\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\nEtag: W/\"one\"\r\n\r\n\r\n" +
		"--c\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\nDataServiceVersion: 1.0;\r\n\r\n\r\n" +
		"--c\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 201 Created\r\nETag: W/\"three\"\r\n\r\n{\"ETag\":\"not a header\"}\r\n" +
		"--c--\r\n--b--\r\n"
	tests := []struct {
		name string
		body string
		n    int
		want []string
	}{
		{"three responses", ok, 3, []string{`W/"one"`, "", `W/"three"`}},
		{"LF line ends", strings.ReplaceAll(ok, "\r\n", "\n"), 3, []string{`W/"one"`, "", `W/"three"`}},
		{"fewer responses than actions", ok, 4, nil},
		{"no body", "", 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := parseBatchETags([]byte(tc.body), tc.n); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Without the policy that puts the body in place, nothing the SDK was given reaches the
// service as a write of a row, and Transact says what is wrong.
func TestTransactNeedsItsPolicy(t *testing.T) {
	rec := &batchRecorder{}
	cred, _ := aztables.NewSharedKeyCredential("acct", "YmVuY2gta2V5")
	sc, err := aztables.NewServiceClientWithSharedKey("https://acct.table.core.windows.net", cred,
		&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{tables: sc, endpoint: "https://acct.table.core.windows.net"}
	_, err = s.Transact(context.Background(), "Tab", []service.Action{{Op: service.OpInsert, Row: service.Row{PartitionKey: "p", RowKey: "r"}}})
	if err == nil || !strings.Contains(err.Error(), "batchBodies") {
		t.Fatalf("err = %v", err)
	}
	reqs := innerRequests(t, string(rec.body), rec.contentType)
	if len(reqs) != 1 || reqs[0].Method != http.MethodDelete || reqs[0].Header.Get("If-Match") != string(*standIn[0].IfMatch) {
		t.Fatalf("sent %s", rec.body)
	}
}
