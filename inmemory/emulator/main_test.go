package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// server starts an emulator with opts on a loopback port for the test.
func server(t *testing.T, opts *Options) *httptest.Server {
	t.Helper()
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// client sends requests to an emulator, signed by hand for one account.
type client struct {
	t       *testing.T
	srv     *httptest.Server
	account string
	key     []byte
	lite    bool // sign with Shared Key Lite instead of Shared Key
	accept  string
}

func devClient(t *testing.T, srv *httptest.Server) *client {
	key, _ := base64.StdEncoding.DecodeString(DevelopmentKey)
	return &client{t: t, srv: srv, account: DevelopmentAccount, key: key}
}

// A response as a test reads it.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends method to path (after the account, with its query) with body and headers given
// as name, value pairs, signed.
func (c *client) do(method, path, body string, headers ...string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.srv.URL+"/"+c.account+"/"+path, strings.NewReader(body))
	if err != nil {
		c.t.Error(err) // not Fatal: do runs on other goroutines too
		return response{}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	if c.accept != "" {
		req.Header.Set("Accept", c.accept)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c.sign(req)
	resp, err := c.srv.Client().Do(req)
	if err != nil {
		c.t.Error(err) // not Fatal: do runs on other goroutines too
		return response{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Error(err) // not Fatal: do runs on other goroutines too
		return response{}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// sign adds the Authorization header, as the Azure SDKs compute it.
func (c *client) sign(req *http.Request) {
	res := "/" + c.account + req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		res += "?comp=" + comp
	}
	date := req.Header.Get("x-ms-date")
	toSign := req.Method + "\n" + req.Header.Get("Content-MD5") + "\n" + req.Header.Get("Content-Type") + "\n" + date + "\n" + res
	scheme := "SharedKey"
	if c.lite {
		toSign, scheme = date+"\n"+res, "SharedKeyLite"
	}
	req.Header.Set("Authorization", scheme+" "+c.account+":"+newMAC(c.key, toSign))
}

// newMAC returns the base64 HMAC-SHA256 of s with key.
func newMAC(key []byte, s string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// wantError checks that r is the service's error: the status, the x-ms-error-code header
// and a JSON body {"odata.error":{"code":…,"message":{"lang":"en-US","value":…}}} with the
// same code.
func wantError(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status || r.header.Get("x-ms-error-code") != code {
		t.Errorf("%s: %d %s, want %d %s (%s)", what, r.status, r.header.Get("x-ms-error-code"), status, code, r.body)
		return
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message struct {
				Lang  string `json:"lang"`
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || body.Error.Code != code ||
		body.Error.Message.Lang != "en-US" || !strings.Contains(body.Error.Message.Value, "\nRequestId:") {
		t.Errorf("%s: error body %s (%v)", what, r.body, err)
	}
}

// wantStatus checks r's status.
func wantStatus(t *testing.T, what string, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: %d, want %d (%s)", what, r.status, status, r.body)
	}
}
