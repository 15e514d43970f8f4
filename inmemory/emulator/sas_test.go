package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// sasTime formats t as the SDKs write a signed start or expiry time.
func sasTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// accountSAS signs v (sv, ss, srt, sp, se and the optional fields) as an account SAS of
// account with key, by the service's string to sign, and returns the query.
func accountSAS(key []byte, account string, v url.Values) string {
	fields := []string{account, v.Get("sp"), v.Get("ss"), v.Get("srt"), v.Get("st"), v.Get("se"), v.Get("sip"), v.Get("spr"), v.Get("sv")}
	if v.Get("sv") >= "2020-12-06" {
		fields = append(fields, v.Get("ses"))
	}
	v.Set("sig", newMAC(key, strings.Join(fields, "\n")+"\n"))
	return v.Encode()
}

// tableSAS signs v (sv, tn, sp, se and the optional fields) as a table SAS.
func tableSAS(key []byte, account string, v url.Values) string {
	toSign := strings.Join([]string{v.Get("sp"), v.Get("st"), v.Get("se"), "/table/" + account + "/" + strings.ToLower(v.Get("tn")),
		v.Get("si"), v.Get("sip"), v.Get("spr"), v.Get("sv"), v.Get("spk"), v.Get("srk"), v.Get("epk"), v.Get("erk")}, "\n")
	v.Set("sig", newMAC(key, toSign))
	return v.Encode()
}

// sasDo sends method to path (after the account) with the SAS query token and no
// Authorization header.
func sasDo(t *testing.T, base, method, path, token, body string, headers ...string) response {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequest(method, base+"/"+path+sep+token, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// sasSetup starts an emulator with table tab1 holding rows p/a, p/b, q/a and an empty tab2.
func sasSetup(t *testing.T) (base string, key []byte) {
	t.Helper()
	srv := server(t, nil)
	c := devClient(t, srv)
	for _, tn := range []string{"tab1", "tab2"} {
		wantStatus(t, "create "+tn, c.do("POST", "Tables", `{"TableName":"`+tn+`"}`), 201)
	}
	for _, k := range [][2]string{{"p", "a"}, {"p", "b"}, {"q", "a"}} {
		wantStatus(t, "insert", c.do("POST", "tab1", `{"PartitionKey":"`+k[0]+`","RowKey":"`+k[1]+`"}`), 201)
	}
	return srv.URL + "/" + DevelopmentAccount, c.key
}

func values(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func TestAccountSAS(t *testing.T) {
	base, key := sasSetup(t)
	now := time.Now()
	hour := sasTime(now.Add(time.Hour))
	acct := func(kv ...string) string {
		return accountSAS(key, DevelopmentAccount, values(append([]string{"sv", "2019-02-02", "ss", "t", "srt", "sco", "sp", "rwdlacu", "se", hour}, kv...)...))
	}
	all := acct()
	wantStatus(t, "query tables", sasDo(t, base, "GET", "Tables", all, ""), 200)
	wantStatus(t, "create a table", sasDo(t, base, "POST", "Tables", all, `{"TableName":"tab3"}`), 201)
	wantStatus(t, "insert", sasDo(t, base, "POST", "tab3", all, `{"PartitionKey":"p","RowKey":"r"}`), 201)
	wantStatus(t, "read", sasDo(t, base, "GET", "tab3(PartitionKey='p',RowKey='r')", all, ""), 200)
	wantStatus(t, "upsert", sasDo(t, base, "PUT", "tab3(PartitionKey='p',RowKey='s')", all, `{"A":1}`), 204)
	wantStatus(t, "delete", sasDo(t, base, "DELETE", "tab3(PartitionKey='p',RowKey='r')", all, "", "If-Match", "*"), 204)
	wantStatus(t, "delete the table", sasDo(t, base, "DELETE", "Tables('tab3')", all, ""), 204)

	// The 2020-12-06 string to sign has the encryption scope.
	wantStatus(t, "version 2020-12-06", sasDo(t, base, "GET", "tab1()", acct("sv", "2020-12-06"), ""), 200)
	// Start and expiry in the other ISO 8601 forms.
	wantStatus(t, "a start to the minute", sasDo(t, base, "GET", "tab1()", acct("st", now.Add(-time.Hour).UTC().Format("2006-01-02T15:04Z")), ""), 200)

	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"expired", "GET", "tab1()", acct("se", sasTime(now.Add(-time.Minute))), "", 403, "AuthenticationFailed"},
		{"not yet valid", "GET", "tab1()", acct("st", sasTime(now.Add(time.Hour)), "se", sasTime(now.Add(2*time.Hour))), "", 403, "AuthenticationFailed"},
		{"bad signature", "GET", "tab1()", strings.Replace(all, "sp=rwdlacu", "sp=rwdlacup", 1), "", 403, "AuthenticationFailed"},
		{"another key", "GET", "tab1()", accountSAS([]byte("not the key"), DevelopmentAccount, values("sv", "2019-02-02", "ss", "t", "srt", "sco", "sp", "r", "se", hour)), "", 403, "AuthenticationFailed"},
		{"no expiry", "GET", "tab1()", acct("se", ""), "", 403, "AuthenticationFailed"},
		{"an old version", "GET", "tab1()", acct("sv", "2013-08-15"), "", 403, "AuthenticationFailed"},
		{"blob only", "GET", "tab1()", acct("ss", "b"), "", 403, "AuthorizationServiceMismatch"},
		{"https only over http", "GET", "tab1()", acct("spr", "https"), "", 403, "AuthorizationProtocolMismatch"},
		{"another IP", "GET", "tab1()", acct("sip", "10.1.2.3"), "", 403, "AuthorizationSourceIPMismatch"},
		{"read without r", "GET", "tab1()", acct("sp", "wdlacu"), "", 403, "AuthorizationPermissionMismatch"},
		{"list without l", "GET", "Tables", acct("sp", "r"), "", 403, "AuthorizationPermissionMismatch"},
		{"insert without a", "POST", "tab1", acct("sp", "rwdlcu"), `{"PartitionKey":"x","RowKey":"x"}`, 403, "AuthorizationPermissionMismatch"},
		{"upsert without a", "PUT", "tab1(PartitionKey='x',RowKey='x')", acct("sp", "u"), `{}`, 403, "AuthorizationPermissionMismatch"},
		{"update without u", "MERGE", "tab1(PartitionKey='p',RowKey='a')", acct("sp", "rwa"), `{}`, 403, "AuthorizationPermissionMismatch"},
		{"delete without d", "DELETE", "tab1(PartitionKey='p',RowKey='a')", acct("sp", "rwlacu"), "", 403, "AuthorizationPermissionMismatch"},
		{"entities without o", "GET", "tab1()", acct("srt", "sc"), "", 403, "AuthorizationResourceTypeMismatch"},
		{"tables without c", "GET", "Tables", acct("srt", "so"), "", 403, "AuthorizationResourceTypeMismatch"},
	} {
		var hdr []string
		if tc.method == "DELETE" || tc.method == "MERGE" {
			hdr = []string{"If-Match", "*"}
		}
		wantError(t, tc.name, sasDo(t, base, tc.method, tc.path, tc.token, tc.body, hdr...), tc.status, tc.code)
	}
	wantStatus(t, "an IP range holding loopback", sasDo(t, base, "GET", "tab1()", acct("sip", "127.0.0.0-127.255.255.255"), ""), 200)
	wantStatus(t, "https or http", sasDo(t, base, "GET", "tab1()", acct("spr", "https,http"), ""), 200)
	// A Shared Key request with a sig parameter is a Shared Key request.
	r := sasDo(t, base, "GET", "tab1()", "sig=x", "", "Authorization", "SharedKey devstoreaccount1:AAAA", "x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	wantError(t, "Authorization header and sig", r, 403, "AuthenticationFailed")
	if !strings.Contains(r.body, "Server failed to authenticate the request.") {
		t.Errorf("message: %s", r.body)
	}
}

func TestTableSAS(t *testing.T) {
	base, key := sasSetup(t)
	now := time.Now()
	hour := sasTime(now.Add(time.Hour))
	tab := func(kv ...string) string {
		return tableSAS(key, DevelopmentAccount, values(append([]string{"sv", "2019-02-02", "tn", "tab1", "sp", "raud", "se", hour}, kv...)...))
	}
	all := tab()
	wantStatus(t, "query", sasDo(t, base, "GET", "tab1()", all, ""), 200)
	wantStatus(t, "read", sasDo(t, base, "GET", "tab1(PartitionKey='p',RowKey='a')", all, ""), 200)
	wantStatus(t, "insert", sasDo(t, base, "POST", "tab1", all, `{"PartitionKey":"p","RowKey":"c"}`), 201)
	wantStatus(t, "merge", sasDo(t, base, "MERGE", "tab1(PartitionKey='p',RowKey='c')", all, `{"A":1}`, "If-Match", "*"), 204)
	wantStatus(t, "upsert", sasDo(t, base, "PUT", "tab1(PartitionKey='p',RowKey='d')", all, `{"A":1}`), 204)
	wantStatus(t, "delete", sasDo(t, base, "DELETE", "tab1(PartitionKey='p',RowKey='d')", all, "", "If-Match", "*"), 204)
	wantStatus(t, "the table's name in another case", sasDo(t, base, "GET", "TAB1()", all, ""), 200)

	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"expired", "GET", "tab1()", tab("se", sasTime(now.Add(-time.Second))), "", 403, "AuthenticationFailed"},
		{"not yet valid", "GET", "tab1()", tab("st", sasTime(now.Add(time.Hour)), "se", sasTime(now.Add(2*time.Hour))), "", 403, "AuthenticationFailed"},
		{"bad signature", "GET", "tab1()", strings.Replace(all, "sp=raud", "sp=raudx", 1), "", 403, "AuthenticationFailed"},
		{"a stored access policy", "GET", "tab1()", tab("si", "policy1"), "", 403, "AuthenticationFailed"},
		{"wrong table", "GET", "tab2()", all, "", 403, "AuthorizationFailure"},
		{"wrong table, one entity", "GET", "tab2(PartitionKey='p',RowKey='a')", all, "", 403, "AuthorizationFailure"},
		{"query tables", "GET", "Tables", all, "", 403, "AuthorizationFailure"},
		{"create a table", "POST", "Tables", all, `{"TableName":"tab9"}`, 403, "AuthorizationFailure"},
		{"delete the table", "DELETE", "Tables('tab1')", all, "", 403, "AuthorizationFailure"},
		{"read without r", "GET", "tab1()", tab("sp", "aud"), "", 403, "AuthorizationPermissionMismatch"},
		{"insert without a", "POST", "tab1", tab("sp", "rud"), `{"PartitionKey":"x","RowKey":"x"}`, 403, "AuthorizationPermissionMismatch"},
		{"upsert without u", "PUT", "tab1(PartitionKey='x',RowKey='x')", tab("sp", "ra"), `{}`, 403, "AuthorizationPermissionMismatch"},
		{"merge without u", "MERGE", "tab1(PartitionKey='p',RowKey='a')", tab("sp", "rad"), `{}`, 403, "AuthorizationPermissionMismatch"},
		{"delete without d", "DELETE", "tab1(PartitionKey='p',RowKey='a')", tab("sp", "rau"), "", 403, "AuthorizationPermissionMismatch"},
		{"insert outside the range", "POST", "tab1", tab("spk", "p", "epk", "p"), `{"PartitionKey":"q","RowKey":"z"}`, 403, "AuthorizationFailure"},
		{"read outside the range", "GET", "tab1(PartitionKey='q',RowKey='a')", tab("spk", "p", "epk", "p"), "", 403, "AuthorizationFailure"},
		{"delete outside the rows", "DELETE", "tab1(PartitionKey='p',RowKey='b')", tab("spk", "p", "srk", "a", "epk", "p", "erk", "a"), "", 403, "AuthorizationFailure"},
		{"https only over http", "GET", "tab1()", tab("spr", "https"), "", 403, "AuthorizationProtocolMismatch"},
	} {
		var hdr []string
		if tc.method == "DELETE" || tc.method == "MERGE" {
			hdr = []string{"If-Match", "*"}
		}
		wantError(t, tc.name, sasDo(t, base, tc.method, tc.path, tc.token, tc.body, hdr...), tc.status, tc.code)
	}

	// A query returns only the entities in the range.
	keys := func(r response) string {
		t.Helper()
		var page struct {
			Value []struct{ PartitionKey, RowKey string }
		}
		if err := json.Unmarshal([]byte(r.body), &page); err != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var ks []string
		for _, e := range page.Value {
			ks = append(ks, e.PartitionKey+"/"+e.RowKey)
		}
		return strings.Join(ks, " ")
	}
	for _, tc := range []struct {
		name, token, filter, want string
	}{
		{"one partition", tab("spk", "p", "epk", "p"), "", "p/a p/b p/c"},
		{"from a row on", tab("spk", "p", "srk", "b"), "", "p/b p/c q/a"},
		{"up to a row", tab("epk", "p", "erk", "a"), "", "p/a"},
		{"with a filter", tab("spk", "p", "epk", "p"), "RowKey ne 'b'", "p/a p/c"},
		{"a quote in a key", tab("spk", "p'", "epk", "q"), "", "q/a"},
	} {
		path := "tab1()"
		if tc.filter != "" {
			path += "?$filter=" + url.QueryEscape(tc.filter)
		}
		if got := keys(sasDo(t, base, "GET", path, tc.token, "")); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	wantStatus(t, "read inside the range", sasDo(t, base, "GET", "tab1(PartitionKey='p',RowKey='b')", tab("spk", "p", "epk", "p"), ""), 200)
}

func TestSASBatch(t *testing.T) {
	base, key := sasSetup(t)
	hour := sasTime(time.Now().Add(time.Hour))
	tab := func(kv ...string) string {
		return tableSAS(key, DevelopmentAccount, values(append([]string{"sv", "2019-02-02", "tn", "tab1", "sp", "raud", "se", hour}, kv...)...))
	}
	insert := func(table, pk, rk string) string {
		return "POST BASE/" + table + " HTTP/1.1\r\nContent-Type: application/json\r\n\r\n" + `{"PartitionKey":"` + pk + `","RowKey":"` + rk + `"}`
	}
	batch := func(token string, requests ...string) response {
		ct, body := batchBody(base, requests...)
		return sasDo(t, base, "POST", "$batch", token, body, "Content-Type", ct)
	}
	failed := func(what string, r response, index, status int, code string) {
		t.Helper()
		resps := batchResponses(t, r)
		if len(resps) != 1 || resps[0].StatusCode != status {
			t.Fatalf("%s: %d responses: %s", what, len(resps), r.body)
		}
		b, _ := io.ReadAll(resps[0].Body)
		if !strings.Contains(string(b), `"code":"`+code+`"`) || !strings.Contains(string(b), `"value":"`+string(rune('0'+index))+":") {
			t.Errorf("%s: %s", what, b)
		}
	}

	if resps := batchResponses(t, batch(tab(), insert("tab1", "p", "x"), insert("tab1", "p", "y"))); len(resps) != 2 || resps[0].StatusCode != 201 {
		t.Errorf("a batch with a table SAS: %d responses", len(resps))
	}
	failed("an action the permissions do not allow", batch(tab("sp", "r"), insert("tab1", "p", "z")), 0, 403, "AuthorizationPermissionMismatch")
	failed("an action outside the range", batch(tab("spk", "p", "epk", "p", "srk", "a", "erk", "y"), insert("tab1", "p", "w"), insert("tab1", "p", "z")), 1, 403, "AuthorizationFailure")
	failed("another table", batch(tab("tn", "tab2"), insert("tab1", "p", "z")), 0, 403, "AuthorizationFailure")
	wantError(t, "an expired SAS", batch(tab("se", sasTime(time.Now().Add(-time.Minute))), insert("tab1", "p", "z")), 403, "AuthenticationFailed")
	r := sasDo(t, base, "GET", "tab1(PartitionKey='p',RowKey='w')", tab(), "")
	wantStatus(t, "the refused batch wrote nothing", r, 404)

	acct := func(kv ...string) string {
		return accountSAS(key, DevelopmentAccount, values(append([]string{"sv", "2019-02-02", "ss", "t", "srt", "o", "sp", "rwdlacu", "se", hour}, kv...)...))
	}
	if resps := batchResponses(t, batch(acct(), insert("tab2", "p", "x"))); len(resps) != 1 || resps[0].StatusCode != 201 {
		t.Errorf("a batch with an account SAS: %d responses", len(resps))
	}
	failed("an account SAS without a", batch(acct("sp", "r"), insert("tab2", "p", "y")), 0, 403, "AuthorizationPermissionMismatch")
	wantError(t, "an account SAS without o", batch(acct("srt", "sc"), insert("tab2", "p", "y")), 403, "AuthorizationResourceTypeMismatch")
}

// An account given with its key takes SAS signed with that key, and only those.
func TestSASOtherAccount(t *testing.T) {
	other := Account{Name: "acct2", Key: []byte("another key")}
	srv := server(t, &Options{Accounts: []Account{other}})
	c2 := &client{t: t, srv: srv, account: "acct2", key: other.Key}
	wantStatus(t, "create", c2.do("POST", "Tables", `{"TableName":"mine"}`), 201)
	base := srv.URL + "/acct2"
	v := func() url.Values {
		return values("sv", "2019-02-02", "tn", "mine", "sp", "r", "se", sasTime(time.Now().Add(time.Hour)))
	}
	wantStatus(t, "its own key", sasDo(t, base, "GET", "mine()", tableSAS(other.Key, "acct2", v()), ""), 200)
	dev := devClient(t, srv)
	wantError(t, "the development key", sasDo(t, base, "GET", "mine()", tableSAS(dev.key, "acct2", v()), ""), 403, "AuthenticationFailed")
	wantError(t, "signed for another account", sasDo(t, base, "GET", "mine()", tableSAS(other.Key, DevelopmentAccount, v()), ""), 403, "AuthenticationFailed")
}
