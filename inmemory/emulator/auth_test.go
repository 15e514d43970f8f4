package emulator

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestAuthentication(t *testing.T) {
	other, err := ParseAccount("acct2:" + base64.StdEncoding.EncodeToString([]byte("another key")))
	if err != nil {
		t.Fatal(err)
	}
	srv := server(t, &Options{Accounts: []Account{other}})

	dev := devClient(t, srv)
	wantStatus(t, "shared key", dev.do("GET", "Tables", ""), 200)
	dev.lite = true
	wantStatus(t, "shared key lite", dev.do("GET", "Tables", ""), 200)

	c2 := &client{t: t, srv: srv, account: "acct2", key: other.Key}
	wantStatus(t, "an extra account", c2.do("POST", "Tables", `{"TableName":"mine"}`), 201)
	// Each account has tables of its own.
	wantStatus(t, "the development account has no such table", dev.do("GET", "mine()", ""), 404)

	wrong := &client{t: t, srv: srv, account: DevelopmentAccount, key: []byte("not the key")}
	wantError(t, "a wrong key", wrong.do("GET", "Tables", ""), 403, "AuthenticationFailed")
	wrong = &client{t: t, srv: srv, account: "acct2", key: dev.key}
	wantError(t, "another account's key", wrong.do("GET", "Tables", ""), 403, "AuthenticationFailed")
	unknown := &client{t: t, srv: srv, account: "nobody", key: dev.key}
	wantError(t, "an account the emulator does not serve", unknown.do("GET", "Tables", ""), 403, "AuthenticationFailed")
	wantError(t, "a date an hour old", dev.do("GET", "Tables", "", "x-ms-date", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)), 403, "AuthenticationFailed")

	resp, err := srv.Client().Get(srv.URL + "/" + DevelopmentAccount + "/Tables")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Errorf("no Authorization header: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	resp, err = srv.Client().Get(srv.URL + "/" + DevelopmentAccount + "/Tables?sv=2019-02-02&sig=abc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Errorf("a shared access signature that is not one: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

// A request signed for the path without the account (as some clients sign path-style URLs)
// verifies too.
func TestAuthenticationPathWithoutAccount(t *testing.T) {
	srv := server(t, nil)
	dev := devClient(t, srv)
	req, _ := http.NewRequest("GET", srv.URL+"/"+DevelopmentAccount+"/Tables", nil)
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	dev.account = DevelopmentAccount
	// Sign "/devstoreaccount1/Tables" rather than "/devstoreaccount1/devstoreaccount1/Tables".
	h := newMAC(dev.key, date+"\n/"+DevelopmentAccount+"/Tables")
	req.Header.Set("Authorization", "SharedKeyLite "+DevelopmentAccount+":"+h)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// The request log never holds a shared access signature's signature.
func TestLogRedactsSignatures(t *testing.T) {
	var buf strings.Builder
	srv := server(t, &Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	resp, err := srv.Client().Get(srv.URL + "/" + DevelopmentAccount + "/Tables?sv=2019-02-02&sig=secret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close() // the log line is written before the response is complete
	if log := buf.String(); strings.Contains(log, "secret") || !strings.Contains(log, "sig=REDACTED") || !strings.Contains(log, "status=403") {
		t.Errorf("log: %s", log)
	}
}

func TestParseAccount(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"acct1:a2V5", true},
		{"acct1", false},
		{"Acct1:a2V5", false},
		{"ab:a2V5", false},
		{"acct1:not base64!", false},
		{"acct1:", false},
	} {
		a, err := ParseAccount(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseAccount(%q) = %v, %v", tc.in, a, err)
		}
	}
	if _, err := New(&Options{Accounts: []Account{{Name: DevelopmentAccount, Key: []byte("k")}}}); err == nil {
		t.Error("New accepts the development account twice")
	}
}

// The emulator, and so the command that serves it, links no Azure SDK.
func TestNoAzureSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	if !bytes.Contains(out, []byte("inmemory/emulator")) {
		t.Fatalf("go list did not list the package itself:\n%s", out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "azure-sdk-for-go") {
			t.Errorf("the emulator links %s", dep)
		}
	}
}
