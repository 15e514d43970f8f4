package fidelity

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/unified-data/gotables/inmemory/emulator"
)

// The wire matrix: requests written and signed by hand (as a client in another language
// sends them), sent to the emulator and to Azurite; the status, the headers a client reads
// and the shape of each JSON body must be equal.

// wireResult is what the wire matrix keeps of a response.
type wireResult struct {
	Step    string
	Status  int
	Headers []string // name=value, or name present, for the headers a client reads
	Body    any
}

func TestEmulatorWire(t *testing.T) {
	table := "wire" + randomSuffix()
	emu := runWire(t, emulatorEndpoint(t), table)
	az := azuriteEndpoint(t)
	if az == "" || os.Getenv(emulatorEnv) == "1" {
		t.Log("no Azurite: the wire matrix ran on the emulator only")
		return
	}
	azr := runWire(t, az, table)
	// The steps where Azurite is known to answer otherwise than the service: Azurite's
	// status is checked, and the rest is left out of the comparison (the emulator's answers
	// are checked by its own tests).
	for i := range azr {
		if d, ok := wireDeviations[azr[i].Step]; ok {
			if _, listed := Deviations[d.deviation]; !listed {
				t.Errorf("step %s names deviation %q, which Deviations does not list", azr[i].Step, d.deviation)
			}
			if azr[i].Status != d.azuriteStatus {
				t.Errorf("azurite: %s: status %d, want %d (deviation %s)", azr[i].Step, azr[i].Status, d.azuriteStatus, d.deviation)
			}
			azr[i] = wireResult{Step: azr[i].Step}
			if i < len(emu) {
				emu[i] = wireResult{Step: emu[i].Step}
			}
		}
	}
	if diff := cmp.Diff(azr, emu); diff != "" {
		t.Errorf("the emulator answers otherwise than Azurite on the wire (-azurite +emulator):\n%s", diff)
	}
}

// wireDeviations are the wire matrix's steps where Azurite differs from the service: the
// name of the deviation, and the status Azurite answers.
var wireDeviations = map[string]struct {
	deviation     string
	azuriteStatus int
}{
	"no Authorization header":       {"bad-signature-code", 403},
	"batch":                         {"batch-insert-content", 202},
	"malformed JSON":                {"malformed-json-code", 400},
	"an Int64 that is not a number": {"typed-value-text", 201},
	"table SAS without permission":  {"sas-error-format", 403},
}

func runWire(t *testing.T, endpoint, table string) []wireResult {
	t.Helper()
	key, _ := base64.StdEncoding.DecodeString(emulator.DevelopmentKey)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	var out []wireResult
	do := func(step, method, path, body string, headers ...string) {
		t.Helper()
		req, err := http.NewRequest(method, endpoint+"/"+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("DataServiceVersion", "3.0")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		// As the SDKs do, every request names the format it reads (Azurite answers the
		// errors of a request without Accept in XML).
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		u, _ := url.Parse(endpoint)
		account := strings.Trim(u.Path, "/")
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(req.Header.Get("x-ms-date") + "\n/" + account + req.URL.EscapedPath()))
		req.Header.Set("Authorization", "SharedKeyLite "+account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		for i := 0; i+1 < len(headers); i += 2 {
			if headers[i+1] == "" {
				req.Header.Del(headers[i])
				continue
			}
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		r := wireResult{Step: step, Status: resp.StatusCode}
		if v := resp.Header.Get("x-ms-error-code"); v != "" {
			r.Headers = append(r.Headers, "x-ms-error-code="+v)
		}
		// Preference-Applied where the request stated a preference (Azurite also sends it
		// for the default), and the media type and metadata level of the Content-Type
		// (Azurite leaves out streaming=true;charset=utf-8, which the service sends).
		if v := resp.Header.Get("Preference-Applied"); v != "" && req.Header.Get("Prefer") != "" {
			r.Headers = append(r.Headers, "Preference-Applied="+v)
		}
		mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if err == nil && len(raw) > 0 && mt != "multipart/mixed" {
			r.Headers = append(r.Headers, "Content-Type="+mt+";odata="+params["odata"])
		}
		for _, h := range []string{"ETag", "x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextTableName"} {
			if resp.Header.Get(h) != "" {
				r.Headers = append(r.Headers, h)
			}
		}
		switch {
		case mt == "multipart/mixed":
			r.Body = wireBatch(t, raw, params["boundary"])
		case len(raw) > 0:
			r.Body = wireBody(raw)
		}
		out = append(out, r)
	}
	t.Cleanup(func() { do("clean-up", "DELETE", "Tables('"+table+"')", "") })

	do("no Authorization header", "GET", "Tables", "", "Authorization", "")
	do("create table", "POST", "Tables", `{"TableName":"`+table+`"}`)
	do("create table again", "POST", "Tables", `{"TableName":"`+table+`"}`)
	do("insert, full metadata", "POST", table, `{"PartitionKey":"p","RowKey":"a","N":1,"L@odata.type":"Edm.Int64","L":"5","D":1.5}`, "Accept", "application/json;odata=fullmetadata")
	do("insert, no content", "POST", table, `{"PartitionKey":"p","RowKey":"b","N":2}`, "Prefer", "return-no-content")
	do("insert, no metadata", "POST", table, `{"PartitionKey":"p","RowKey":"c","N":3,"W@odata.type":"Edm.DateTime","W":"2026-01-01T00:00:00Z"}`, "Accept", "application/json;odata=nometadata")
	// Typed values written as JSON text, as Azure Storage Explorer and the JS SDK's typed
	// values send them, and a date-time without a zone (read as UTC).
	do("typed values as text", "POST", table, `{"PartitionKey":"p","RowKey":"t","B@odata.type":"Edm.Boolean","B":"false",`+
		`"I@odata.type":"Edm.Int32","I":"32","T@odata.type":"Edm.DateTime","T":"2023-01-01T23:00:00"}`, "Prefer", "return-no-content")
	do("get typed values", "GET", table+"(PartitionKey='p',RowKey='t')", "", "Accept", "application/json;odata=nometadata")
	do("insert again", "POST", table, `{"PartitionKey":"p","RowKey":"a"}`)
	do("replace", "PUT", table+"(PartitionKey='p',RowKey='a')", `{"N":10}`, "If-Match", "*")
	do("merge", "MERGE", table+"(PartitionKey='p',RowKey='b')", `{"M":1}`, "If-Match", "*")
	do("upsert", "PUT", table+"(PartitionKey='p',RowKey='d')", `{"N":4}`)
	do("get, minimal metadata", "GET", table+"(PartitionKey='p',RowKey='a')", "")
	do("get, no metadata", "GET", table+"(PartitionKey='p',RowKey='c')", "", "Accept", "application/json;odata=nometadata")
	do("get missing", "GET", table+"(PartitionKey='p',RowKey='zz')", "")
	do("query page", "GET", table+"()?$top=2&$filter="+url.QueryEscape("N ge 2"), "")
	do("query with select", "GET", table+"()?$select=RowKey,N&$filter="+url.QueryEscape("RowKey eq 'b'"), "", "Accept", "application/json;odata=nometadata")
	do("query tables", "GET", "Tables?$filter="+url.QueryEscape("TableName eq '"+table+"'"), "", "Accept", "application/json;odata=fullmetadata")
	do("delete", "DELETE", table+"(PartitionKey='p',RowKey='d')", "", "If-Match", "*")
	do("delete missing", "DELETE", table+"(PartitionKey='p',RowKey='d')", "", "If-Match", "*")
	batch := func(requests ...string) string {
		var b strings.Builder
		b.WriteString("--batch_w\r\nContent-Type: multipart/mixed; boundary=changeset_w\r\n\r\n")
		for _, r := range requests {
			b.WriteString("--changeset_w\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
			b.WriteString(strings.ReplaceAll(r, "URL", endpoint+"/"+table))
			b.WriteString("\r\n")
		}
		b.WriteString("--changeset_w--\r\n\r\n--batch_w--\r\n")
		return b.String()
	}
	const jsonHeaders = "Accept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nDataServiceVersion: 3.0\r\n"
	do("batch", "POST", "$batch", batch(
		"POST URL HTTP/1.1\r\n"+jsonHeaders+"Prefer: return-no-content\r\n\r\n"+`{"PartitionKey":"p","RowKey":"e","N":1}`,
		"POST URL HTTP/1.1\r\n"+jsonHeaders+"\r\n"+`{"PartitionKey":"p","RowKey":"f","N":2}`,
		"PUT URL(PartitionKey='p',RowKey='g') HTTP/1.1\r\n"+jsonHeaders+"\r\n"+`{"N":3}`,
		"MERGE URL(PartitionKey='p',RowKey='a') HTTP/1.1\r\n"+jsonHeaders+"If-Match: *\r\n\r\n"+`{"M":3}`,
	), "Content-Type", "multipart/mixed; boundary=batch_w")
	do("batch that fails", "POST", "$batch", batch(
		"POST URL HTTP/1.1\r\n"+jsonHeaders+"Prefer: return-no-content\r\n\r\n"+`{"PartitionKey":"q","RowKey":"d","N":1}`,
		"DELETE URL(PartitionKey='q',RowKey='nope') HTTP/1.1\r\n"+jsonHeaders+"If-Match: *\r\n\r\n",
	), "Content-Type", "multipart/mixed; boundary=batch_w")
	do("malformed JSON", "POST", table, `{"PartitionKey":"p",`)
	do("a nested object", "POST", table, `{"PartitionKey":"p","RowKey":"n","A":{"x":1}}`)
	do("an Int64 that is not a number", "POST", table, `{"PartitionKey":"p","RowKey":"n","A@odata.type":"Edm.Int64","A":"x"}`)
	do("a body over 4 MiB", "POST", table, `{"PartitionKey":"p","RowKey":"n","A":"`+strings.Repeat("x", 4<<20)+`"}`)
	do("no PartitionKey", "POST", table, `{"RowKey":"n"}`)
	do("query a missing table", "GET", table+"x()", "")

	// Shared access signatures signed by hand, as a client in another language signs them:
	// the request carries the SAS and no Authorization header.
	u, _ := url.Parse(endpoint)
	account := strings.Trim(u.Path, "/")
	sign := func(toSign string) string {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(toSign))
		return base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	se := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	tableSAS := func(sp string) string {
		v := url.Values{"sv": {"2019-02-02"}, "tn": {table}, "sp": {sp}, "se": {se}, "spr": {"https,http"}}
		v.Set("sig", sign(strings.Join([]string{sp, "", se, "/table/" + account + "/" + strings.ToLower(table), "", "", "https,http", "2019-02-02", "", "", "", ""}, "\n")))
		return v.Encode()
	}
	// Version 2020-12-06 and later sign the encryption scope (empty here) too, as the JS
	// SDK's newer versions do.
	v := url.Values{"sv": {"2020-12-06"}, "ss": {"t"}, "srt": {"sco"}, "sp": {"rl"}, "se": {se}, "spr": {"https,http"}}
	v.Set("sig", sign(strings.Join([]string{account, "rl", "t", "sco", "", se, "", "https,http", "2020-12-06", "", ""}, "\n")))
	do("account SAS, version 2020-12-06", "GET", table+"(PartitionKey='p',RowKey='a')?"+v.Encode(), "", "Authorization", "")
	do("table SAS read", "GET", table+"()?$filter="+url.QueryEscape("RowKey eq 'a'")+"&"+tableSAS("r"), "", "Authorization", "")
	do("table SAS without permission", "POST", table+"?"+tableSAS("r"), `{"PartitionKey":"p","RowKey":"s"}`, "Authorization", "")
	return out
}

// wireBody is a JSON body's shape: each member's name and, for values that do not differ by
// nature between two services (ETags, times, hosts), its value.
func wireBody(raw []byte) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "not JSON: " + string(raw)
	}
	return wireShape(v)
}

func wireShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		var members []string
		for k, val := range x {
			switch {
			case k == "odata.etag" || k == "odata.metadata" || k == "odata.id" || k == "Timestamp":
				members = append(members, k)
			case k == "message":
				members = append(members, k)
			case isDateTime(val):
				// Azurite echoes a date-time as it was written; the service (and the
				// emulator) writes seven fractional digits. The instant is compared.
				t, _ := time.Parse(time.RFC3339Nano, val.(string))
				members = append(members, k+"="+t.UTC().Format(time.RFC3339Nano))
			default:
				b, _ := json.Marshal(wireShape(val))
				members = append(members, k+"="+string(b))
			}
		}
		sort.Strings(members)
		return members
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = wireShape(x[i])
		}
		return out
	}
	return v
}

// isDateTime reports whether v is the text of a date-time.
func isDateTime(v any) bool {
	s, ok := v.(string)
	if !ok || len(s) < 20 || s[4] != '-' || s[10] != 'T' {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// wireBatch reads a batch response: each inner response's status, and its body's shape with
// the failing action's index kept from the message.
func wireBatch(t *testing.T, raw []byte, boundary string) any {
	t.Helper()
	outer := multipart.NewReader(bytes.NewReader(raw), boundary)
	cs, err := outer.NextPart()
	if err != nil {
		return "unreadable batch: " + err.Error()
	}
	_, params, err := mime.ParseMediaType(cs.Header.Get("Content-Type"))
	if err != nil {
		return "unreadable change set: " + err.Error()
	}
	inner := multipart.NewReader(cs, params["boundary"])
	var out []any
	for {
		p, err := inner.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "unreadable part: " + err.Error()
		}
		resp, err := http.ReadResponse(bufio.NewReader(p), nil)
		if err != nil {
			return "unreadable response: " + err.Error()
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		part := []any{resp.StatusCode, resp.Header.Get("ETag") != ""}
		if len(body) > 0 {
			part = append(part, wireBody(body))
			if m := batchIndex.FindSubmatch(body); m != nil {
				part = append(part, "index "+string(m[1]))
			}
		}
		out = append(out, part)
	}
	return out
}
