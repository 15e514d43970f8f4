package emulator

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/service"
)

// blobServer starts the blob endpoint of an emulator with opts for the test.
func blobServer(t *testing.T, opts *Options) *httptest.Server {
	t.Helper()
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.Blobs())
	t.Cleanup(srv.Close)
	return srv
}

// blobClient sends blob requests to an emulator, signed with Shared Key (blobStringToSign,
// whose text TestBlobStringToSign pins).
type blobClient struct {
	t   *testing.T
	srv *httptest.Server
	key []byte
}

func devBlobClient(t *testing.T, srv *httptest.Server) *blobClient {
	key, _ := base64.StdEncoding.DecodeString(DevelopmentKey)
	return &blobClient{t: t, srv: srv, key: key}
}

// do sends method to path (after the account, with its query) with body and headers given
// as name, value pairs, signed unless the headers set Authorization ("-": none).
func (c *blobClient) do(method, path, body string, headers ...string) response {
	c.t.Helper()
	resp, err := c.send(method, path, body, headers...)
	if err != nil {
		c.t.Error(err) // not Fatal: do runs on other goroutines too
		return response{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Error(err)
		return response{}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// send sends a request as do does and returns the transport's answer or error, for faults
// that leave no answer.
func (c *blobClient) send(method, path, body string, headers ...string) (*http.Response, error) {
	req, err := http.NewRequest(method, c.srv.URL+"/"+DevelopmentAccount+"/"+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-ms-version", "2021-12-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	switch req.Header.Get("Authorization") {
	case "":
		req.Header.Set("Authorization", "SharedKey "+DevelopmentAccount+":"+
			newMAC(c.key, blobStringToSign(req, DevelopmentAccount, req.URL.EscapedPath())))
	case "-": // a request authorized by its query alone
		req.Header.Del("Authorization")
	}
	return c.srv.Client().Do(req)
}

// wantBlobError checks that r is the Blob service's error: the status, the x-ms-error-code
// header, and (but for HEAD and 304) an XML body <Error><Code>…</Code><Message>…</Message>
// with the same code and the request id in the message.
func wantBlobError(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status || r.header.Get("x-ms-error-code") != code {
		t.Errorf("%s: %d %s, want %d %s (%s)", what, r.status, r.header.Get("x-ms-error-code"), status, code, r.body)
		return
	}
	if r.body == "" {
		return
	}
	var body struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
		Message string   `xml:"Message"`
	}
	if err := xml.Unmarshal([]byte(r.body), &body); err != nil || body.Code != code ||
		!strings.Contains(body.Message, "\nRequestId:"+r.header.Get("x-ms-request-id")+"\nTime:") ||
		r.header.Get("Content-Type") != "application/xml" {
		t.Errorf("%s: error body %q (%v)", what, r.body, err)
	}
}

// TestBlobStringToSign pins the Shared Key and Shared Key Lite strings to sign of the Blob
// service: the standard headers, the x-ms-* headers in lower case and in order, and the
// query parameters canonicalized (names in lower case and in order, values in order).
func TestBlobStringToSign(t *testing.T) {
	req, err := http.NewRequest(http.MethodPut,
		"http://127.0.0.1:10000/devstoreaccount1/cta/dir/b%20x?comp=block&blockid=QQ%3D%3D&Timeout=30&timeout=5",
		strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Content-MD5", "kAFQmDzST7DWlj99KOF/cg==")
	req.Header.Set("If-Match", `"0x1"`)
	req.Header.Set("Range", "bytes=0-1")
	req.Header.Set("X-Ms-Version", "2021-12-02")
	req.Header.Set("x-ms-date", "Thu, 03 Dec 2026 12:00:00 GMT")
	req.Header.Set("x-ms-meta-B", " two ")
	want := "PUT\n\n\n3\nkAFQmDzST7DWlj99KOF/cg==\ntext/plain\n\n\n\"0x1\"\n\n\nbytes=0-1\n" +
		"x-ms-date:Thu, 03 Dec 2026 12:00:00 GMT\nx-ms-meta-b:two\nx-ms-version:2021-12-02\n" +
		"/devstoreaccount1/devstoreaccount1/cta/dir/b%20x\nblockid:QQ==\ncomp:block\ntimeout:30,5"
	if got := blobStringToSign(req, DevelopmentAccount, req.URL.EscapedPath()); got != want {
		t.Errorf("Shared Key string to sign:\n%q\nwant\n%q", got, want)
	}
	wantLite := "PUT\nkAFQmDzST7DWlj99KOF/cg==\ntext/plain\n\n" +
		"x-ms-date:Thu, 03 Dec 2026 12:00:00 GMT\nx-ms-meta-b:two\nx-ms-version:2021-12-02\n" +
		"/devstoreaccount1/cta/dir/b%20x?comp=block"
	if got := blobStringToSignLite(req, DevelopmentAccount, "/cta/dir/b%20x"); got != wantLite {
		t.Errorf("Shared Key Lite string to sign:\n%q\nwant\n%q", got, wantLite)
	}
	if got := blobPaths(DevelopmentAccount, req.URL); len(got) != 2 || got[0] != "/devstoreaccount1/cta/dir/b%20x" || got[1] != "/cta/dir/b%20x" {
		t.Errorf("paths %q", got)
	}
}

func TestBlobAuthentication(t *testing.T) {
	srv := blobServer(t, &Options{Accounts: []Account{{Name: "acct2", Key: []byte("other key")}}})
	c := devBlobClient(t, srv)
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)

	wantBlobError(t, "unsigned", c.do(http.MethodGet, "cta?restype=container", "", "Authorization", "none"), http.StatusForbidden, "AuthenticationFailed")
	bad := &blobClient{t: t, srv: srv, key: []byte("wrong")}
	wantBlobError(t, "wrong key", bad.do(http.MethodGet, "cta?restype=container", ""), http.StatusForbidden, "AuthenticationFailed")
	wantBlobError(t, "a HEAD with a wrong key", bad.do(http.MethodHead, "cta?restype=container", ""), http.StatusForbidden, "AuthenticationFailed")
	wantBlobError(t, "stale date", c.do(http.MethodGet, "cta?restype=container", "",
		"x-ms-date", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)), http.StatusForbidden, "AuthenticationFailed")
	wantBlobError(t, "a shared access signature that does not verify", c.do(http.MethodGet, "cta?restype=container&comp=list&sr=c&sp=l&se=2099-01-01&sv=2021-12-02&sig=AAAA", "", "Authorization", "-"),
		http.StatusForbidden, "AuthenticationFailed")
	// The devstoreaccount1 key used for another account's URL.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/acct2/cta?restype=container", nil)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Authorization", "SharedKey acct2:"+newMAC(c.key, blobStringToSign(req, "acct2", req.URL.EscapedPath())))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another account's key: %d", resp.StatusCode)
	}

	// Signed over the path without the account, and with Shared Key Lite.
	for _, lite := range []bool{false, true} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/"+DevelopmentAccount+"/cta?restype=container", nil)
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		scheme, toSign := "SharedKey", blobStringToSign(req, DevelopmentAccount, "/cta")
		if lite {
			scheme, toSign = "SharedKeyLite", blobStringToSignLite(req, DevelopmentAccount, "/cta")
		}
		req.Header.Set("Authorization", scheme+" "+DevelopmentAccount+":"+newMAC(c.key, toSign))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s over the path without the account: %d", scheme, resp.StatusCode)
		}
	}
}

func TestBlobRanges(t *testing.T) {
	c := devBlobClient(t, blobServer(t, nil))
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	wantStatus(t, "put", c.do(http.MethodPut, "cta/b", "0123456789", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	wantStatus(t, "put empty", c.do(http.MethodPut, "cta/empty", "", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	for _, tc := range []struct {
		name, blob string
		headers    []string
		status     int
		body       string
		contentRng string
	}{
		{"no range", "b", nil, http.StatusOK, "0123456789", ""},
		{"Range", "b", []string{"Range", "bytes=2-4"}, http.StatusPartialContent, "234", "bytes 2-4/10"},
		{"open range", "b", []string{"Range", "bytes=5-"}, http.StatusPartialContent, "56789", "bytes 5-9/10"},
		{"range past the end", "b", []string{"Range", "bytes=8-100"}, http.StatusPartialContent, "89", "bytes 8-9/10"},
		{"x-ms-range before Range", "b", []string{"Range", "bytes=0-0", "x-ms-range", "bytes=9-9"}, http.StatusPartialContent, "9", "bytes 9-9/10"},
		{"a Range not understood", "b", []string{"Range", "bytes=4-2"}, http.StatusOK, "0123456789", ""},
		{"a suffix Range", "b", []string{"Range", "bytes=-3"}, http.StatusOK, "0123456789", ""},
	} {
		r := c.do(http.MethodGet, "cta/"+tc.blob, "", tc.headers...)
		if r.status != tc.status || r.body != tc.body || r.header.Get("Content-Range") != tc.contentRng {
			t.Errorf("%s: %d %q %q, want %d %q %q", tc.name, r.status, r.body, r.header.Get("Content-Range"), tc.status, tc.body, tc.contentRng)
		}
	}
	r := c.do(http.MethodGet, "cta/b", "", "Range", "bytes=10-")
	wantBlobError(t, "range from the end", r, http.StatusRequestedRangeNotSatisfiable, "InvalidRange")
	if got := r.header.Get("Content-Range"); got != "bytes */10" {
		t.Errorf("416 Content-Range %q", got)
	}
	wantBlobError(t, "range of an empty blob", c.do(http.MethodGet, "cta/empty", "", "Range", "bytes=0-"), http.StatusRequestedRangeNotSatisfiable, "InvalidRange")
	wantBlobError(t, "an x-ms-range not understood", c.do(http.MethodGet, "cta/b", "", "x-ms-range", "bytes=a-b"), http.StatusBadRequest, "InvalidHeaderValue")
	r = c.do(http.MethodGet, "cta/b", "", "x-ms-range", "bytes=0-2", "x-ms-range-get-content-md5", "true")
	if r.status != http.StatusPartialContent || r.header.Get("Content-MD5") != md5Of([]byte("012")) ||
		r.header.Get("x-ms-blob-content-md5") != md5Of([]byte("0123456789")) {
		t.Errorf("range MD5: %d %q %q", r.status, r.header.Get("Content-MD5"), r.header.Get("x-ms-blob-content-md5"))
	}
	r = c.do(http.MethodHead, "cta/b", "", "Range", "bytes=2-4")
	if r.status != http.StatusOK || r.header.Get("Content-Length") != "10" || r.body != "" {
		t.Errorf("HEAD: %d length %s %q", r.status, r.header.Get("Content-Length"), r.body)
	}
}

func TestBlobConditions(t *testing.T) {
	c := devBlobClient(t, blobServer(t, nil))
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	put := c.do(http.MethodPut, "cta/b", "v1", "x-ms-blob-type", "BlockBlob")
	wantStatus(t, "put", put, http.StatusCreated)
	etag, modified := put.header.Get("ETag"), put.header.Get("Last-Modified")
	if etag == "" || modified == "" {
		t.Fatalf("put: ETag %q, Last-Modified %q", etag, modified)
	}
	const stale = `"0x8D000000000000F"`
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name         string
		method, path string
		headers      []string
		status       int
		code         string
	}{
		{"read with the ETag", http.MethodGet, "cta/b", []string{"If-Match", etag}, http.StatusOK, ""},
		{"read with *", http.MethodGet, "cta/b", []string{"If-Match", "*"}, http.StatusOK, ""},
		{"read with a stale ETag", http.MethodGet, "cta/b", []string{"If-Match", stale}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"HEAD with a stale ETag", http.MethodHead, "cta/b", []string{"If-Match", stale}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"read if none match the ETag", http.MethodGet, "cta/b", []string{"If-None-Match", etag}, http.StatusNotModified, "ConditionNotMet"},
		{"read if none match *", http.MethodGet, "cta/b", []string{"If-None-Match", "*"}, http.StatusNotModified, "ConditionNotMet"},
		{"read if none match a stale ETag", http.MethodGet, "cta/b", []string{"If-None-Match", stale}, http.StatusOK, ""},
		{"read modified since the future", http.MethodGet, "cta/b", []string{"If-Modified-Since", future}, http.StatusNotModified, "ConditionNotMet"},
		{"read modified since its write", http.MethodGet, "cta/b", []string{"If-Modified-Since", modified}, http.StatusNotModified, "ConditionNotMet"},
		{"read modified since the past", http.MethodGet, "cta/b", []string{"If-Modified-Since", past}, http.StatusOK, ""},
		{"read unmodified since the past", http.MethodGet, "cta/b", []string{"If-Unmodified-Since", past}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"read unmodified since its write", http.MethodGet, "cta/b", []string{"If-Unmodified-Since", modified}, http.StatusOK, ""},
		{"read a missing blob with If-Match", http.MethodGet, "cta/nope", []string{"If-Match", etag}, http.StatusNotFound, "BlobNotFound"},
		{"metadata with a stale ETag", http.MethodGet, "cta/b?comp=metadata", []string{"If-Match", stale}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"put if none match * over a blob", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "BlockBlob", "If-None-Match", "*"}, http.StatusConflict, "BlobAlreadyExists"},
		{"put if none match the ETag", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "BlockBlob", "If-None-Match", etag}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"put modified since the future", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "BlockBlob", "If-Modified-Since", future}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"put with a stale ETag", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "BlockBlob", "If-Match", stale}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"put a missing blob with *", http.MethodPut, "cta/new", []string{"x-ms-blob-type", "BlockBlob", "If-Match", "*"}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"put a missing blob if none match *", http.MethodPut, "cta/new", []string{"x-ms-blob-type", "BlockBlob", "If-None-Match", "*"}, http.StatusCreated, ""},
		{"set metadata with a stale ETag", http.MethodPut, "cta/b?comp=metadata", []string{"If-Match", stale, "x-ms-meta-a", "1"}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"set properties unmodified since the past", http.MethodPut, "cta/b?comp=properties", []string{"If-Unmodified-Since", past}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"commit with a stale ETag", http.MethodPut, "cta/b?comp=blocklist", []string{"If-Match", stale}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"delete with a stale ETag", http.MethodDelete, "cta/b", []string{"If-Match", stale}, http.StatusPreconditionFailed, "ConditionNotMet"},
		{"delete a missing blob with If-Match", http.MethodDelete, "cta/nope", []string{"If-Match", etag}, http.StatusNotFound, "BlobNotFound"},
	} {
		body := ""
		if strings.Contains(tc.path, "blocklist") {
			body = "<BlockList></BlockList>"
		}
		r := c.do(tc.method, tc.path, body, tc.headers...)
		if tc.code == "" {
			wantStatus(t, tc.name, r, tc.status)
			continue
		}
		wantBlobError(t, tc.name, r, tc.status, tc.code)
		if (tc.status == http.StatusNotModified || tc.method == http.MethodHead) && r.body != "" {
			t.Errorf("%s: a body %q", tc.name, r.body)
		}
		if tc.status == http.StatusNotModified && (r.header.Get("ETag") != etag || r.header.Get("Last-Modified") != modified) {
			t.Errorf("%s: 304 with ETag %q, Last-Modified %q", tc.name, r.header.Get("ETag"), r.header.Get("Last-Modified"))
		}
	}
	// Nothing that failed changed the blob.
	r := c.do(http.MethodGet, "cta/b", "")
	if r.status != http.StatusOK || r.body != "v1" || r.header.Get("ETag") != etag || r.header.Get("x-ms-meta-a") != "" {
		t.Errorf("after the refusals: %d %q %s", r.status, r.body, r.header.Get("ETag"))
	}
	wantStatus(t, "delete with the ETag", c.do(http.MethodDelete, "cta/b", "", "If-Match", etag), http.StatusAccepted)
}

func TestBlobRefusals(t *testing.T) {
	c := devBlobClient(t, blobServer(t, nil))
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	r := c.do(http.MethodGet, "cta/missing", "", "x-ms-client-request-id", "abc")
	wantBlobError(t, "missing blob", r, http.StatusNotFound, "BlobNotFound")
	if r.header.Get("x-ms-request-id") == "" || r.header.Get("x-ms-version") != "2021-12-02" || r.header.Get("x-ms-client-request-id") != "abc" {
		t.Errorf("response headers %v", r.header)
	}
	wantBlobError(t, "missing container", c.do(http.MethodPut, "ctb/b", "x", "x-ms-blob-type", "BlockBlob"), http.StatusNotFound, "ContainerNotFound")
	wantBlobError(t, "properties of a missing container", c.do(http.MethodHead, "ctb?restype=container", ""), http.StatusNotFound, "ContainerNotFound")
	wantBlobError(t, "a bad container name", c.do(http.MethodPut, "C_2?restype=container", ""), http.StatusBadRequest, "InvalidResourceName")
	wantBlobError(t, "no blob type", c.do(http.MethodPut, "cta/b", "x"), http.StatusBadRequest, "MissingRequiredHeader")
	wantBlobError(t, "a bad metadata name", c.do(http.MethodPut, "cta/b", "x", "x-ms-blob-type", "BlockBlob", "x-ms-meta-1a", "v"), http.StatusBadRequest, "InvalidMetadata")
	wantBlobError(t, "a bad Content-MD5", c.do(http.MethodPut, "cta/b", "x", "x-ms-blob-type", "BlockBlob", "Content-MD5", md5Of([]byte("y"))), http.StatusBadRequest, "Md5Mismatch")
	wantBlobError(t, "a bad maxresults", c.do(http.MethodGet, "cta?restype=container&comp=list&maxresults=0", ""), http.StatusBadRequest, "OutOfRangeInput")
	wantBlobError(t, "a bad block list", c.do(http.MethodPut, "cta/b?comp=blocklist", "<BlockList><Latest>"), http.StatusBadRequest, "InvalidXmlDocument")

	// What the emulator does not implement is refused and changes nothing.
	for _, tc := range []struct {
		name, method, path string
		headers            []string
	}{
		{"a page blob", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "PageBlob", "x-ms-blob-content-length", "512"}},
		{"an append blob", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "AppendBlob"}},
		{"a lease", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "BlockBlob", "x-ms-lease-id", "x"}},
		{"a copy", http.MethodPut, "cta/b", []string{"x-ms-copy-source", "http://x/y"}},
		{"an access tier", http.MethodPut, "cta/b", []string{"x-ms-blob-type", "BlockBlob", "x-ms-access-tier", "Cool"}},
		{"a snapshot", http.MethodGet, "cta/b?snapshot=2026-01-01T00:00:00.0000000Z", nil},
		{"a lease operation", http.MethodPut, "cta/b?comp=lease", []string{"x-ms-lease-action", "acquire"}},
		{"a container ACL", http.MethodPut, "cta?restype=container&comp=acl", nil},
		{"container metadata", http.MethodPut, "ctc?restype=container", []string{"x-ms-meta-a", "1"}},
		{"service properties", http.MethodGet, "?restype=service&comp=properties", nil},
		{"the root container", http.MethodGet, "b", nil},
		{"listing uncommitted blobs", http.MethodGet, "cta?restype=container&comp=list&include=uncommittedblobs", nil},
		{"CORS", http.MethodOptions, "cta/b", nil},
	} {
		wantBlobError(t, tc.name, c.do(tc.method, tc.path, "x", tc.headers...), http.StatusNotImplemented, "NotImplemented")
	}
	wantBlobError(t, "the refused writes stored nothing", c.do(http.MethodGet, "cta/b", ""), http.StatusNotFound, "BlobNotFound")
	wantBlobError(t, "the refused container", c.do(http.MethodGet, "ctc?restype=container", ""), http.StatusNotFound, "ContainerNotFound")
}

func TestBlobBlocks(t *testing.T) {
	c := devBlobClient(t, blobServer(t, nil))
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	id := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	wantBlobError(t, "no block id", c.do(http.MethodPut, "cta/b?comp=block", "x"), http.StatusBadRequest, "MissingRequiredQueryParameter")
	wantBlobError(t, "a block id that is not base64", c.do(http.MethodPut, "cta/b?comp=block&blockid=%21%21", "x"), http.StatusBadRequest, "InvalidQueryParameterValue")
	wantBlobError(t, "a block into a missing container", c.do(http.MethodPut, "ctb/b?comp=block&blockid="+id("aa"), "x"), http.StatusNotFound, "ContainerNotFound")
	wantStatus(t, "block aa", c.do(http.MethodPut, "cta/b?comp=block&blockid="+id("aa"), "11"), http.StatusCreated)
	wantStatus(t, "block bb", c.do(http.MethodPut, "cta/b?comp=block&blockid="+id("bb"), "22"), http.StatusCreated)
	wantBlobError(t, "a block id of another length", c.do(http.MethodPut, "cta/b?comp=block&blockid="+id("ccc"), "3"), http.StatusBadRequest, "InvalidBlobOrBlock")
	wantBlobError(t, "read before commit", c.do(http.MethodGet, "cta/b", ""), http.StatusNotFound, "BlobNotFound")
	r := c.do(http.MethodGet, "cta/b?comp=blocklist&blocklisttype=all", "")
	if r.status != http.StatusOK || !strings.Contains(r.body, "<CommittedBlocks></CommittedBlocks><UncommittedBlocks><Block><Name>"+id("aa")+"</Name><Size>2</Size></Block>") {
		t.Errorf("block list before commit: %d %s", r.status, r.body)
	}
	list := "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><Uncommitted>" + id("bb") + "</Uncommitted><Latest>" + id("aa") + "</Latest><Latest>" + id("bb") + "</Latest></BlockList>"
	wantStatus(t, "commit", c.do(http.MethodPut, "cta/b?comp=blocklist", list, "x-ms-blob-content-type", "text/plain", "x-ms-meta-k", "v"), http.StatusCreated)
	r = c.do(http.MethodGet, "cta/b", "")
	if r.body != "221122" || r.header.Get("Content-Type") != "text/plain" || r.header.Get("x-ms-meta-k") != "v" || r.header.Get("Content-MD5") != "" {
		t.Errorf("committed: %q %v", r.body, r.header)
	}
	r = c.do(http.MethodGet, "cta/b?comp=blocklist&blocklisttype=all", "")
	if !strings.Contains(r.body, "<UncommittedBlocks></UncommittedBlocks>") || strings.Count(r.body, "<Block>") != 3 || r.header.Get("x-ms-blob-content-length") != "6" {
		t.Errorf("block list after commit: %s", r.body)
	}
	wantBlobError(t, "an uncommitted reference to a committed block", c.do(http.MethodPut, "cta/b?comp=blocklist", "<BlockList><Uncommitted>"+id("aa")+"</Uncommitted></BlockList>"), http.StatusBadRequest, "InvalidBlockList")
	wantStatus(t, "commit from the committed list", c.do(http.MethodPut, "cta/b?comp=blocklist", "<BlockList><Committed>"+id("aa")+"</Committed></BlockList>"), http.StatusCreated)
	if r := c.do(http.MethodGet, "cta/b", ""); r.body != "11" {
		t.Errorf("after the second commit: %q", r.body)
	}
	wantBlobError(t, "a bad block list type", c.do(http.MethodGet, "cta/b?comp=blocklist&blocklisttype=some", ""), http.StatusBadRequest, "InvalidQueryParameterValue")
	// A staged block is gone with its blob.
	wantStatus(t, "block cc", c.do(http.MethodPut, "cta/b?comp=block&blockid="+id("cc"), "3"), http.StatusCreated)
	wantStatus(t, "delete", c.do(http.MethodDelete, "cta/b", ""), http.StatusAccepted)
	wantBlobError(t, "block list after delete", c.do(http.MethodGet, "cta/b?comp=blocklist", ""), http.StatusNotFound, "BlobNotFound")
}

// TestBlobListings checks the XML of the listings, paging with maxresults and marker, and
// the folding of names by a delimiter.
func TestBlobListings(t *testing.T) {
	c := devBlobClient(t, blobServer(t, nil))
	for _, name := range []string{"cta", "ctb", "dta"} {
		wantStatus(t, "create "+name, c.do(http.MethodPut, name+"?restype=container", ""), http.StatusCreated)
	}
	for _, name := range []string{"a/1", "a/2", "a/x/3", "b"} {
		wantStatus(t, "put "+name, c.do(http.MethodPut, "cta/"+name, name, "x-ms-blob-type", "BlockBlob", "x-ms-meta-n", "v"), http.StatusCreated)
	}
	type page struct {
		Names  []string `xml:"Blobs>Blob>Name"`
		Dirs   []string `xml:"Blobs>BlobPrefix>Name"`
		MD     []string `xml:"Blobs>Blob>Metadata>n"`
		Etags  []string `xml:"Blobs>Blob>Properties>Etag"`
		Next   string   `xml:"NextMarker"`
		Cnames []string `xml:"Containers>Container>Name"`
	}
	get := func(path string) page {
		t.Helper()
		r := c.do(http.MethodGet, path, "")
		var p page
		if r.status != http.StatusOK || xml.Unmarshal([]byte(r.body), &p) != nil {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		return p
	}
	p := get("cta?restype=container&comp=list&prefix=a/&maxresults=2")
	if strings.Join(p.Names, ",") != "a/1,a/2" || p.Next == "" || len(p.MD) != 0 || len(p.Etags) != 2 || strings.HasPrefix(p.Etags[0], `"`) {
		t.Errorf("first page %+v", p)
	}
	p = get("cta?restype=container&comp=list&prefix=a/&maxresults=2&include=metadata&marker=" + p.Next)
	if strings.Join(p.Names, ",") != "a/x/3" || p.Next != "" || strings.Join(p.MD, ",") != "v" {
		t.Errorf("second page %+v", p)
	}
	p = get("cta?restype=container&comp=list&delimiter=/")
	if strings.Join(p.Names, ",") != "b" || strings.Join(p.Dirs, ",") != "a/" {
		t.Errorf("by directory %+v", p)
	}
	p = get("?comp=list&prefix=c&maxresults=1")
	if strings.Join(p.Cnames, ",") != "cta" || p.Next != "ctb" {
		t.Errorf("containers %+v", p)
	}
	p = get("?comp=list&prefix=c&marker=ctb")
	if strings.Join(p.Cnames, ",") != "ctb" || p.Next != "" {
		t.Errorf("containers from a marker %+v", p)
	}
	wantStatus(t, "delete container", c.do(http.MethodDelete, "cta?restype=container", ""), http.StatusAccepted)
	wantBlobError(t, "list a deleted container", c.do(http.MethodGet, "cta?restype=container&comp=list", ""), http.StatusNotFound, "ContainerNotFound")
}

// TestBlobWrittenElsewhere: a blob the memory service holds that was not written through
// the emulator is served with what the service keeps; what the emulator kept beside an
// earlier version (its MD5, its block list) is not reported for it.
func TestBlobWrittenElsewhere(t *testing.T) {
	svc := memservice.New()
	c := devBlobClient(t, blobServer(t, &Options{Service: func(string) *memservice.Service { return svc }}))
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	wantStatus(t, "put", c.do(http.MethodPut, "cta/b", "one", "x-ms-blob-type", "BlockBlob", "x-ms-blob-content-language", "en"), http.StatusCreated)
	if r := c.do(http.MethodHead, "cta/b", ""); r.header.Get("Content-MD5") != md5Of([]byte("one")) || r.header.Get("Content-Language") != "en" {
		t.Errorf("put: %v", r.header)
	}
	if _, err := svc.Upload(context.Background(), "cta", "b", []byte("two"), service.UploadOptions{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	r := c.do(http.MethodGet, "cta/b", "")
	if r.body != "two" || r.header.Get("Content-Type") != "text/plain" || r.header.Get("Content-MD5") != "" || r.header.Get("Content-Language") != "" {
		t.Errorf("written elsewhere: %q %v", r.body, r.header)
	}
}

// signBlobSAS returns the query of a shared access signature with the fields given as name,
// value pairs, signed with the development key over the string the service signs for its
// kind: an account SAS when ss or srt is given, else a service SAS of resource (the
// container or blob path after the account).
func signBlobSAS(t *testing.T, resource string, fields ...string) string {
	t.Helper()
	v := url.Values{}
	for i := 0; i+1 < len(fields); i += 2 {
		v.Set(fields[i], fields[i+1])
	}
	var toSign string
	if v.Has("ss") || v.Has("srt") {
		toSign = strings.Join([]string{DevelopmentAccount, v.Get("sp"), v.Get("ss"), v.Get("srt"), v.Get("st"), v.Get("se"),
			v.Get("sip"), v.Get("spr"), v.Get("sv"), v.Get("ses"), ""}, "\n")
	} else {
		parts := []string{v.Get("sp"), v.Get("st"), v.Get("se"), "/blob/" + DevelopmentAccount + "/" + resource, v.Get("si"), v.Get("sip"), v.Get("spr"), v.Get("sv")}
		if v.Get("sv") >= "2018-11-09" {
			parts = append(parts, v.Get("sr"), "")
		}
		if v.Get("sv") >= "2020-12-06" {
			parts = append(parts, v.Get("ses"))
		}
		toSign = strings.Join(append(parts, v.Get("rscc"), v.Get("rscd"), v.Get("rsce"), v.Get("rscl"), v.Get("rsct")), "\n")
	}
	key, _ := base64.StdEncoding.DecodeString(DevelopmentKey)
	v.Set("sig", newMAC(key, toSign))
	return v.Encode()
}

func TestBlobSAS(t *testing.T) {
	c := devBlobClient(t, blobServer(t, nil))
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	wantStatus(t, "put", c.do(http.MethodPut, "cta/b", "data", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	later := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	sasOnly := []string{"Authorization", "-"}
	get := func(path, query string, headers ...string) response {
		t.Helper()
		return c.do(http.MethodGet, path+query, "", append(headers, sasOnly...)...)
	}
	for _, tc := range []struct {
		name, method, path, query string
		status                    int
		code                      string
	}{
		{"blob SAS read, version 2015-04-05", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2015-04-05", "sr", "b", "sp", "r", "se", later), http.StatusOK, ""},
		{"blob SAS read, version 2019-02-02", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2019-02-02", "sr", "b", "sp", "r", "se", later), http.StatusOK, ""},
		{"container SAS list", http.MethodGet, "cta", "?restype=container&comp=list&" + signBlobSAS(t, "cta", "sv", "2021-12-02", "sr", "c", "sp", "l", "se", later), http.StatusOK, ""},
		{"container SAS without l", http.MethodGet, "cta", "?restype=container&comp=list&" + signBlobSAS(t, "cta", "sv", "2021-12-02", "sr", "c", "sp", "r", "se", later), http.StatusForbidden, "AuthorizationPermissionMismatch"},
		{"container SAS deleting its container", http.MethodDelete, "cta", "?restype=container&" + signBlobSAS(t, "cta", "sv", "2021-12-02", "sr", "c", "sp", "rwdl", "se", later), http.StatusForbidden, "AuthorizationPermissionMismatch"},
		{"a stored access policy", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "b", "si", "policy", "sp", "r", "se", later), http.StatusForbidden, "AuthenticationFailed"},
		{"a snapshot SAS", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "bs", "sp", "r", "se", later), http.StatusForbidden, "AuthenticationFailed"},
		{"a version before 2015-04-05", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2014-02-14", "sr", "b", "sp", "r", "se", later), http.StatusForbidden, "AuthenticationFailed"},
		{"no expiry", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "b", "sp", "r"), http.StatusForbidden, "AuthenticationFailed"},
		{"not yet valid", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "b", "sp", "r", "st", later, "se", later), http.StatusForbidden, "AuthenticationFailed"},
		{"another source address", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "b", "sp", "r", "se", later, "sip", "10.0.0.1-10.0.0.9"), http.StatusForbidden, "AuthorizationSourceIPMismatch"},
		{"the loopback address", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "b", "sp", "r", "se", later, "sip", "127.0.0.1"), http.StatusOK, ""},
		{"https only", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "b", "sp", "r", "se", later, "spr", "https"), http.StatusForbidden, "AuthorizationProtocolMismatch"},
		{"account SAS of tables", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "", "sv", "2021-12-02", "ss", "t", "srt", "sco", "sp", "r", "se", later), http.StatusForbidden, "AuthorizationServiceMismatch"},
		{"account SAS without o", http.MethodGet, "cta/b", "?" + signBlobSAS(t, "", "sv", "2021-12-02", "ss", "b", "srt", "sc", "sp", "r", "se", later), http.StatusForbidden, "AuthorizationResourceTypeMismatch"},
		{"account SAS properties of a container", http.MethodGet, "cta", "?restype=container&" + signBlobSAS(t, "", "sv", "2021-12-02", "ss", "b", "srt", "c", "sp", "r", "se", later), http.StatusOK, ""},
		{"account SAS set metadata without w", http.MethodPut, "cta/b", "?comp=metadata&" + signBlobSAS(t, "", "sv", "2021-12-02", "ss", "bt", "srt", "o", "sp", "rc", "se", later), http.StatusForbidden, "AuthorizationPermissionMismatch"},
		{"account SAS set metadata", http.MethodPut, "cta/b", "?comp=metadata&" + signBlobSAS(t, "", "sv", "2021-12-02", "ss", "b", "srt", "o", "sp", "w", "se", later), http.StatusOK, ""},
	} {
		r := c.do(tc.method, tc.path+tc.query, "", sasOnly...)
		if tc.code == "" {
			wantStatus(t, tc.name, r, tc.status)
			continue
		}
		wantBlobError(t, tc.name, r, tc.status, tc.code)
	}
	// A service SAS's response headers; they are signed, so a changed one does not verify.
	q := signBlobSAS(t, "cta/b", "sv", "2021-12-02", "sr", "b", "sp", "r", "se", later, "rsct", "text/x-a", "rscd", "attachment")
	r := get("cta/b", "?"+q)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/x-a" || r.header.Get("Content-Disposition") != "attachment" {
		t.Errorf("response headers: %d %v", r.status, r.header)
	}
	wantBlobError(t, "a changed response header", get("cta/b", "?"+strings.Replace(q, "text%2Fx-a", "text%2Fx-b", 1)), http.StatusForbidden, "AuthenticationFailed")
	// Create alone writes a new blob, not over one.
	create := func(name string) string {
		return "?" + signBlobSAS(t, "cta/"+name, "sv", "2021-12-02", "sr", "b", "sp", "c", "se", later)
	}
	wantStatus(t, "create with c", c.do(http.MethodPut, "cta/new"+create("new"), "x", append([]string{"x-ms-blob-type", "BlockBlob"}, sasOnly...)...), http.StatusCreated)
	wantBlobError(t, "overwrite with c", c.do(http.MethodPut, "cta/new"+create("new"), "y", append([]string{"x-ms-blob-type", "BlockBlob"}, sasOnly...)...),
		http.StatusForbidden, "AuthorizationPermissionMismatch")
}

// Clients that increment a counter blob with a read, then a Put Blob with If-Match,
// retrying on 412, lose no increment; blocks staged at the same time by many clients are
// all committed.
func TestBlobConcurrentWrites(t *testing.T) {
	srv := blobServer(t, nil)
	c := devBlobClient(t, srv)
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	wantStatus(t, "put", c.do(http.MethodPut, "cta/n", "0", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	const workers, each = 6, 15
	var wg sync.WaitGroup
	errs := make(chan string, 2*workers)
	for w := range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				r := c.do(http.MethodGet, "cta/n", "")
				n, err := strconv.Atoi(r.body)
				if r.status != http.StatusOK || err != nil {
					errs <- fmt.Sprintf("get: %d %s", r.status, r.body)
					return
				}
				r = c.do(http.MethodPut, "cta/n", strconv.Itoa(n+1), "x-ms-blob-type", "BlockBlob", "If-Match", r.header.Get("ETag"))
				switch r.status {
				case http.StatusCreated:
					done++
				case http.StatusPreconditionFailed:
				default:
					errs <- fmt.Sprintf("put: %d %s", r.status, r.body)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range each {
				id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%02d-%02d", w, i)))
				if r := c.do(http.MethodPut, "cta/blocks?comp=block&blockid="+url.QueryEscape(id), "x"); r.status != http.StatusCreated {
					errs <- fmt.Sprintf("put block: %d %s", r.status, r.body)
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
	if r := c.do(http.MethodGet, "cta/n", ""); r.body != strconv.Itoa(workers*each) {
		t.Errorf("the counter ends as %q, want %d", r.body, workers*each)
	}
	var list strings.Builder
	list.WriteString("<BlockList>")
	for w := range workers {
		for i := range each {
			list.WriteString("<Uncommitted>" + base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%02d-%02d", w, i))) + "</Uncommitted>")
		}
	}
	list.WriteString("</BlockList>")
	wantStatus(t, "commit", c.do(http.MethodPut, "cta/blocks?comp=blocklist", list.String()), http.StatusCreated)
	if r := c.do(http.MethodGet, "cta/blocks", ""); r.body != strings.Repeat("x", workers*each) {
		t.Errorf("the blocks committed: %q", r.body)
	}
}
