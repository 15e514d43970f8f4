package emulator

import (
	"bufio"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestTables(t *testing.T) {
	c := devClient(t, server(t, nil))
	r := c.do("POST", "Tables", `{"TableName":"Orders"}`)
	wantStatus(t, "create", r, 201)
	if !strings.Contains(r.body, `"TableName":"Orders"`) || !strings.Contains(r.body, `$metadata#Tables/@Element`) {
		t.Errorf("create answered %s", r.body)
	}
	wantError(t, "create again, in another case", c.do("POST", "Tables", `{"TableName":"orders"}`), 409, "TableAlreadyExists")
	wantStatus(t, "create without content", c.do("POST", "Tables", `{"TableName":"Lines"}`, "Prefer", "return-no-content"), 204)
	wantStatus(t, "create a third", c.do("POST", "Tables", `{"TableName":"Customers"}`), 201)
	wantError(t, "a short name", c.do("POST", "Tables", `{"TableName":"ab"}`), 400, "OutOfRangeInput")
	wantError(t, "no name", c.do("POST", "Tables", `{}`), 400, "PropertiesNeedValue")

	// Pages of one table, in name order, joined by NextTableName.
	var names []string
	next := ""
	for range 5 {
		path := "Tables?$top=1"
		if next != "" {
			path += "&NextTableName=" + url.QueryEscape(next)
		}
		r := c.do("GET", path, "")
		wantStatus(t, "list", r, 200)
		var page struct{ Value []struct{ TableName string } }
		if err := json.Unmarshal([]byte(r.body), &page); err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Value {
			names = append(names, v.TableName)
		}
		if next = r.header.Get("x-ms-continuation-NextTableName"); next == "" {
			break
		}
	}
	if got := strings.Join(names, ","); got != "Customers,Lines,Orders" {
		t.Errorf("tables listed: %s", got)
	}
	r = c.do("GET", "Tables?$filter="+url.QueryEscape("TableName ge 'L' and TableName lt 'M'"), "")
	if !strings.Contains(r.body, `"value":[{"TableName":"Lines"}]`) {
		t.Errorf("filtered listing: %s", r.body)
	}
	wantStatus(t, "get a table", c.do("GET", "Tables('orders')", ""), 200)
	wantStatus(t, "delete", c.do("DELETE", "Tables('Orders')", ""), 204)
	wantError(t, "delete again", c.do("DELETE", "Tables('Orders')", ""), 404, "ResourceNotFound")
	wantError(t, "get a deleted table", c.do("GET", "Tables('Orders')", ""), 404, "ResourceNotFound")
	wantError(t, "insert into a missing table", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"r"}`), 404, "TableNotFound")
}

func TestEntityWrites(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"tab1"}`), 201)
	r := c.do("POST", "tab1", `{"PartitionKey":"p","RowKey":"r","A":1}`)
	wantStatus(t, "insert", r, 201)
	etag := r.header.Get("ETag")
	if !strings.HasPrefix(etag, `W/"datetime'`) || !strings.Contains(r.header.Get("Location"), "tab1(PartitionKey='p',RowKey='r')") {
		t.Errorf("insert headers: %v", r.header)
	}
	wantError(t, "insert again", c.do("POST", "tab1", `{"PartitionKey":"p","RowKey":"r"}`), 409, "EntityAlreadyExists")
	r = c.do("POST", "tab1", `{"PartitionKey":"p","RowKey":"s"}`, "Prefer", "return-no-content")
	wantStatus(t, "insert without content", r, 204)
	if r.header.Get("Preference-Applied") != "return-no-content" || r.header.Get("ETag") == "" {
		t.Errorf("insert without content: headers %v", r.header)
	}

	key := "tab1(PartitionKey='p',RowKey='r')"
	r = c.do("PUT", key, `{"B":2}`, "If-Match", etag)
	wantStatus(t, "replace with the etag", r, 204)
	wantError(t, "replace with a stale etag", c.do("PUT", key, `{"B":3}`, "If-Match", etag), 412, "UpdateConditionNotSatisfied")
	wantError(t, "merge with a stale etag", c.do("MERGE", key, `{"B":3}`, "If-Match", etag), 412, "UpdateConditionNotSatisfied")
	wantStatus(t, "merge with *", c.do("MERGE", key, `{"C":"c"}`, "If-Match", "*"), 204)
	wantStatus(t, "merge by PATCH", c.do("PATCH", key, `{"D":true}`, "If-Match", "*"), 204)
	wantStatus(t, "merge by POST with X-HTTP-Method", c.do("POST", key, `{"E":5}`, "X-HTTP-Method", "MERGE", "If-Match", "*"), 204)
	r = c.do("GET", key, "")
	wantStatus(t, "get", r, 200)
	for _, want := range []string{`"B":2`, `"C":"c"`, `"D":true`, `"E":5`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("get: %s lacks %s", r.body, want)
		}
	}
	if strings.Contains(r.body, `"A"`) {
		t.Errorf("replace kept A: %s", r.body)
	}
	wantError(t, "replace a missing row", c.do("PUT", "tab1(PartitionKey='p',RowKey='x')", `{}`, "If-Match", "*"), 404, "ResourceNotFound")
	wantStatus(t, "insert-or-replace", c.do("PUT", "tab1(PartitionKey='p',RowKey='x')", `{"A":1}`), 204)
	wantStatus(t, "insert-or-merge", c.do("MERGE", "tab1(PartitionKey='p',RowKey='x')", `{"B":1}`), 204)
	wantError(t, "keys in the body that are not the URL's", c.do("PUT", "tab1(PartitionKey='p',RowKey='x')", `{"PartitionKey":"q"}`), 400, "InvalidInput")
	wantError(t, "delete without If-Match", c.do("DELETE", key, ""), 400, "MissingRequiredHeader")
	wantStatus(t, "delete", c.do("DELETE", key, "", "If-Match", "*"), 204)
	wantError(t, "get deleted", c.do("GET", key, ""), 404, "ResourceNotFound")
	wantError(t, "a bad etag", c.do("DELETE", "tab1(PartitionKey='p',RowKey='x')", "", "If-Match", `"abc"`), 400, "InvalidInput")

	// Keys with quotes and characters a URL escapes.
	wantStatus(t, "odd keys", c.do("POST", "tab1", `{"PartitionKey":"a'b c","RowKey":"(1,2)"}`), 201)
	wantStatus(t, "get odd keys", c.do("GET", "tab1(PartitionKey='a''b%20c',RowKey='(1,2)')", ""), 200)
}

func TestMetadataLevels(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"tab1"}`), 201)
	body := `{"PartitionKey":"p","RowKey":"r","S":"s","I":7,"B":true,` +
		`"L@odata.type":"Edm.Int64","L":"9007199254740993",` +
		`"D@odata.type":"Edm.Double","D":2,"F":0.5,"N@odata.type":"Edm.Double","N":"NaN",` +
		`"T@odata.type":"Edm.DateTime","T":"2026-01-02T03:04:05Z",` +
		`"G@odata.type":"Edm.Guid","G":"00112233-4455-6677-8899-AABBCCDDEEFF",` +
		`"X@odata.type":"Edm.Binary","X":"AQI="}`
	wantStatus(t, "insert", c.do("POST", "tab1", body, "Prefer", "return-no-content"), 204)
	for _, tc := range []struct {
		accept       string
		want, absent []string
	}{
		{"application/json;odata=nometadata",
			[]string{`"S":"s","I":7,"B":true,"L":"9007199254740993","D":2.0,"F":0.5,"N":"NaN","T":"2026-01-02T03:04:05.0000000Z","G":"00112233-4455-6677-8899-aabbccddeeff","X":"AQI="}`},
			[]string{"odata."}},
		{"application/json;odata=minimalmetadata",
			[]string{`"odata.metadata":`, `"odata.etag":"W/\"datetime'`, `"L@odata.type":"Edm.Int64","L":"9007199254740993"`, `"D":2.0`, `"N@odata.type":"Edm.Double","N":"NaN"`, `"T@odata.type":"Edm.DateTime"`, `"G@odata.type":"Edm.Guid"`, `"X@odata.type":"Edm.Binary"`},
			[]string{`"odata.type":`, `"Timestamp@odata.type"`, `"I@odata.type"`, `"D@odata.type"`}},
		{"application/json;odata=fullmetadata",
			[]string{`"odata.type":"devstoreaccount1.tab1"`, `"odata.id":"http://`, `"odata.editLink":"tab1(PartitionKey='p',RowKey='r')"`, `"Timestamp@odata.type":"Edm.DateTime"`, `"L@odata.type":"Edm.Int64"`},
			nil},
	} {
		c.accept = tc.accept
		r := c.do("GET", "tab1(PartitionKey='p',RowKey='r')", "")
		wantStatus(t, tc.accept, r, 200)
		if !strings.Contains(r.header.Get("Content-Type"), tc.accept[len("application/json;"):]) {
			t.Errorf("%s: Content-Type %s", tc.accept, r.header.Get("Content-Type"))
		}
		for _, w := range tc.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s: %s lacks %s", tc.accept, r.body, w)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(r.body, a) {
				t.Errorf("%s: %s has %s", tc.accept, r.body, a)
			}
		}
	}
	c.accept = ""
	r := c.do("GET", "tab1()?$format="+url.QueryEscape("application/json;odata=nometadata"), "")
	if strings.Contains(r.body, "odata.") {
		t.Errorf("$format nometadata: %s", r.body)
	}
}

func TestQueryEntities(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"tab1"}`), 201)
	for i := range 7 {
		wantStatus(t, "insert", c.do("POST", "tab1", fmt.Sprintf(`{"PartitionKey":"p","RowKey":"r%d","N":%d}`, i, i), "Prefer", "return-no-content"), 204)
	}
	c.accept = "application/json;odata=nometadata"
	var got []string
	query := "tab1()?$filter=" + url.QueryEscape("N ge 2") + "&$select=RowKey,N,Missing&$top=2"
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("no end of pages")
		}
		r := c.do("GET", query, "")
		wantStatus(t, "query", r, 200)
		var page struct{ Value []map[string]any }
		if err := json.Unmarshal([]byte(r.body), &page); err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Value {
			if _, ok := v["PartitionKey"]; ok {
				t.Errorf("PartitionKey was not selected: %v", v)
			}
			if m, ok := v["Missing"]; !ok || m != nil {
				t.Errorf("a selected property the row lacks is not null: %v", v)
			}
			got = append(got, fmt.Sprint(v["RowKey"], "=", v["N"]))
		}
		npk, nrk := r.header.Get("x-ms-continuation-NextPartitionKey"), r.header.Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			break
		}
		query = "tab1()?$filter=" + url.QueryEscape("N ge 2") + "&$select=RowKey,N,Missing&$top=2&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(nrk)
	}
	if s := strings.Join(got, " "); s != "r2=2 r3=3 r4=4 r5=5 r6=6" {
		t.Errorf("pages: %s", s)
	}
	wantError(t, "a filter that does not parse", c.do("GET", "tab1()?$filter="+url.QueryEscape("N gt"), ""), 400, "InvalidInput")
	wantError(t, "$top=0", c.do("GET", "tab1()?$top=0", ""), 400, "InvalidQueryParameterValue")
	wantError(t, "a continuation the emulator did not issue", c.do("GET", "tab1()?NextPartitionKey=x&NextRowKey=y", ""), 400, "InvalidInput")
	wantError(t, "a missing table", c.do("GET", "nope()", ""), 404, "TableNotFound")
}

func TestRefusals(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"tab1"}`), 201)
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
	}{
		{"$orderby", "GET", "tab1()?$orderby=RowKey", "", nil},
		{"$skip", "GET", "tab1()?$skip=1", "", nil},
		{"$filter on a point read", "GET", "tab1(PartitionKey='p',RowKey='r')?$filter=x", "", nil},
		{"a table ACL by POST", "POST", "tab1?comp=acl", "", nil},
		{"service properties", "GET", "?restype=service&comp=properties", "", nil},
		{"service statistics", "GET", "?restype=service&comp=stats", "", nil},
		{"a preflight", "OPTIONS", "tab1()", "", nil},
		{"PUT on a table", "PUT", "tab1()", "{}", nil},
	} {
		wantError(t, tc.name, c.do(tc.method, tc.path, tc.body, tc.headers...), 501, "NotImplemented")
	}
	wantError(t, "an AtomPub response", c.do("GET", "tab1()", "", "Accept", "application/atom+xml"), 415, "AtomFormatNotSupported")
	wantError(t, "an AtomPub entry", c.do("POST", "tab1", "<entry/>", "Content-Type", "application/atom+xml"), 415, "AtomFormatNotSupported")
	for _, tc := range []struct{ name, body string }{
		{"malformed JSON", `{"PartitionKey":"p",`},
		{"a nested object", `{"PartitionKey":"p","RowKey":"r","A":{"x":1}}`},
		{"an array", `{"PartitionKey":"p","RowKey":"r","A":[1]}`},
		{"a property twice", `{"PartitionKey":"p","RowKey":"r","A":1,"A":2}`},
		{"an Int64 as a number", `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":5}`},
		{"an integer beyond Int32", `{"PartitionKey":"p","RowKey":"r","A":3000000000}`},
		{"an unknown type", `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Decimal","A":"1"}`},
		{"a bad date-time", `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.DateTime","A":"yesterday"}`},
		{"a numeric key", `{"PartitionKey":1,"RowKey":"r"}`},
		{"two values", `{"PartitionKey":"p","RowKey":"r"} {}`},
	} {
		wantError(t, tc.name, c.do("POST", "tab1", tc.body), 400, "InvalidInput")
	}
	wantError(t, "a Content-MD5 of another body", c.do("POST", "tab1", `{"PartitionKey":"p","RowKey":"m"}`, "Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA=="), 400, "Md5Mismatch")
	sum := md5.Sum([]byte(`{"PartitionKey":"p","RowKey":"m"}`))
	wantStatus(t, "the body's Content-MD5", c.do("POST", "tab1", `{"PartitionKey":"p","RowKey":"m"}`, "Content-MD5", base64.StdEncoding.EncodeToString(sum[:])), 201)
	wantStatus(t, "delete it", c.do("DELETE", "tab1(PartitionKey='p',RowKey='m')", "", "If-Match", "*"), 204)
	wantError(t, "no RowKey", c.do("POST", "tab1", `{"PartitionKey":"p"}`), 400, "PropertiesNeedValue")
	big := `{"PartitionKey":"p","RowKey":"r","A":"` + strings.Repeat("x", maxBody) + `"}`
	wantError(t, "a body over 4 MiB", c.do("POST", "tab1", big), 413, "RequestBodyTooLarge")
	wantError(t, "a path that names no resource", c.do("GET", "tab1(PartitionKey='p')", ""), 400, "InvalidUri")
	r := c.do("GET", "tab1()", "")
	wantStatus(t, "nothing was written", r, 200)
	if r.body != `{"odata.metadata":"`+c.srv.URL+`/devstoreaccount1/$metadata#tab1","value":[]}` {
		t.Errorf("the refused writes left %s", r.body)
	}
}

// batchBody builds a $batch body of one change set holding requests.
func batchBody(base string, requests ...string) (contentType, body string) {
	var b strings.Builder
	b.WriteString("--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n")
	for _, r := range requests {
		b.WriteString("--changeset_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(strings.ReplaceAll(r, "BASE", base))
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_1--\r\n\r\n--batch_1--\r\n")
	return "multipart/mixed; boundary=batch_1", b.String()
}

// batchResponses reads a batch response into its inner responses.
func batchResponses(t *testing.T, r response) []*http.Response {
	t.Helper()
	if r.status != 202 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	_, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	outer := multipart.NewReader(strings.NewReader(r.body), params["boundary"])
	cs, err := outer.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	_, params, err = mime.ParseMediaType(cs.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	inner := multipart.NewReader(cs, params["boundary"])
	var out []*http.Response
	for {
		p, err := inner.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(p), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(strings.NewReader(string(b)))
		out = append(out, resp)
	}
	return out
}

func TestBatch(t *testing.T) {
	srv := server(t, nil)
	c := devClient(t, srv)
	base := srv.URL + "/" + DevelopmentAccount
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"tab1"}`), 201)
	wantStatus(t, "insert", c.do("POST", "tab1", `{"PartitionKey":"p","RowKey":"old","A":1}`), 201)

	ct, body := batchBody(base,
		"POST BASE/tab1 HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n"+`{"PartitionKey":"p","RowKey":"a","N":1}`,
		"POST BASE/tab1 HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\nContent-Type: application/json\r\n\r\n"+`{"PartitionKey":"p","RowKey":"b","N":2}`,
		"MERGE BASE/tab1(PartitionKey='p',RowKey='old') HTTP/1.1\r\nIf-Match: *\r\nContent-Type: application/json\r\n\r\n"+`{"B":2}`,
		"DELETE BASE/tab1(PartitionKey='p',RowKey='gone') HTTP/1.1\r\nIf-Match: *\r\n\r\n",
	)
	r := c.do("POST", "$batch", body, "Content-Type", ct)
	wantStatus(t, "a batch with a missing row", r, 202)
	resps := batchResponses(t, r)
	if len(resps) != 1 || resps[0].StatusCode != 404 {
		t.Fatalf("a failed batch answers %d responses: %s", len(resps), r.body)
	}
	b, _ := io.ReadAll(resps[0].Body)
	if !strings.Contains(string(b), `"code":"ResourceNotFound"`) || !strings.Contains(string(b), `"value":"3:The specified resource does not exist.`) {
		t.Errorf("the failed action's error: %s", b)
	}
	if r := c.do("GET", "tab1(PartitionKey='p',RowKey='a')", ""); r.status != 404 {
		t.Errorf("the failed batch wrote its first action: %d", r.status)
	}

	ct, body = batchBody(base,
		"POST BASE/tab1 HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n"+`{"PartitionKey":"p","RowKey":"a","N":1}`,
		"POST BASE/tab1 HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\nContent-Type: application/json\r\n\r\n"+`{"PartitionKey":"p","RowKey":"b","N":2}`,
		"MERGE BASE/tab1(PartitionKey='p',RowKey='old') HTTP/1.1\r\nContent-ID: 7\r\nIf-Match: *\r\nContent-Type: application/json\r\n\r\n"+`{"B":2}`,
		"PUT BASE/tab1(PartitionKey='p',RowKey='c') HTTP/1.1\r\nContent-Type: application/json\r\n\r\n"+`{"C":3}`,
	)
	r = c.do("POST", "$batch", body, "Content-Type", ct)
	resps = batchResponses(t, r)
	want := []int{204, 201, 204, 204}
	if len(resps) != len(want) {
		t.Fatalf("%d responses, want %d: %s", len(resps), len(want), r.body)
	}
	for i, resp := range resps {
		if resp.StatusCode != want[i] || resp.Header.Get("ETag") == "" {
			t.Errorf("action %d: %d, ETag %q; want %d", i, resp.StatusCode, resp.Header.Get("ETag"), want[i])
		}
	}
	if id := resps[2].Header.Get("Content-ID"); id != "7" {
		t.Errorf("the merge's Content-ID came back as %q", id)
	}
	if b, _ := io.ReadAll(resps[1].Body); !strings.HasPrefix(string(b), `{"PartitionKey":"p","RowKey":"b","Timestamp":"`) || !strings.HasSuffix(string(b), `"N":2}`) {
		t.Errorf("the insert's content, without metadata: %s", b)
	}

	// What the emulator does not do in a batch.
	ct, body = batchBody(base, "GET BASE/tab1(PartitionKey='p',RowKey='a') HTTP/1.1\r\n\r\n")
	resps = batchResponses(t, c.do("POST", "$batch", body, "Content-Type", ct))
	if len(resps) != 1 || resps[0].StatusCode != 501 {
		t.Errorf("a read in a change set: %v", resps)
	}
	two := "--batch_1\r\nContent-Type: multipart/mixed; boundary=cs1\r\n\r\n--cs1--\r\n--batch_1\r\nContent-Type: multipart/mixed; boundary=cs2\r\n\r\n--cs2--\r\n--batch_1--\r\n"
	wantError(t, "two change sets", c.do("POST", "$batch", two, "Content-Type", "multipart/mixed; boundary=batch_1"), 501, "NotImplemented")
	wantError(t, "not multipart", c.do("POST", "$batch", "{}", "Content-Type", "application/json"), 400, "InvalidInput")
}
