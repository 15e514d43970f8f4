package emulator

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// send sends a signed request and returns the transport's error, for faults that leave no
// answer.
func (c *client) send(method, path, body string, headers ...string) (*http.Response, error) {
	req, err := http.NewRequest(method, c.srv.URL+"/"+c.account+"/"+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c.sign(req)
	resp, err := c.srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

func TestFaultLoseResponseApplies(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
	if _, err := c.send("POST", "Orders", `{"PartitionKey":"p","RowKey":"1"}`, FaultHeader, "lose"); err == nil {
		t.Fatal("a lost response was answered")
	}
	wantStatus(t, "the lost insert is applied", c.do("GET", "Orders(PartitionKey='p',RowKey='1')", ""), 200)
}

func TestFaultResetDoesNotApply(t *testing.T) {
	c := devClient(t, server(t, nil))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
	if _, err := c.send("POST", "Orders", `{"PartitionKey":"p","RowKey":"1"}`, FaultHeader, "reset"); err == nil {
		t.Fatal("a reset request was answered")
	}
	wantError(t, "the reset insert is not applied", c.do("GET", "Orders(PartitionKey='p',RowKey='1')", ""), 404, "ResourceNotFound")
	wantError(t, "an unknown fault", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"1"}`, FaultHeader, "drop"), 400, "InvalidInput")
	wantError(t, "a 503 by header", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"1"}`, FaultHeader, "503"), 503, "ServerBusy")
	wantError(t, "neither is applied", c.do("GET", "Orders(PartitionKey='p',RowKey='1')", ""), 404, "ResourceNotFound")
}

func TestFaultStatusAnswers(t *testing.T) {
	var logs bytes.Buffer
	rules, err := ParseFaults("503:write:Orders:first=2,500:read:every=2")
	if err != nil {
		t.Fatal(err)
	}
	c := devClient(t, server(t, &Options{Faults: rules, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
	for i := range 2 {
		r := c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"1"}`)
		wantError(t, "a throttled insert", r, 503, "ServerBusy")
		if r.header.Get("Retry-After") == "" {
			t.Errorf("insert %d: 503 without Retry-After", i)
		}
	}
	wantStatus(t, "the third insert", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"1"}`), 201)
	wantStatus(t, "the first read", c.do("GET", "Orders(PartitionKey='p',RowKey='1')", ""), 200)
	wantError(t, "the second read", c.do("GET", "Orders(PartitionKey='p',RowKey='1')", ""), 500, "InternalError")
	wantStatus(t, "the third read", c.do("GET", "Orders(PartitionKey='p',RowKey='1')", ""), 200)
	if n := strings.Count(logs.String(), "fault=ServerBusy"); n != 2 {
		t.Errorf("%d requests logged with ServerBusy, want 2:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "fault=InternalError") {
		t.Errorf("the InternalError is not logged:\n%s", logs.String())
	}
}

func TestParseFaults(t *testing.T) {
	rules, err := ParseFaults("lose:insert:every=10")
	if err == nil {
		t.Errorf("an unknown kind of call was read: %+v", rules)
	}
	for _, bad := range []string{"lose", "drop:write", "lose:write:every=0", "lose:write:often=2"} {
		if _, err := ParseFaults(bad); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
	rules, err = ParseFaults("lose:write+batch:every=10, reset:all:T1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Fault != LoseResponse || rules[0].Calls != Writes|Transactions || rules[0].Every != 10 ||
		rules[1].Fault != ResetMidRequest || rules[1].Calls != AllCalls || rules[1].Table != "T1" {
		t.Errorf("read %+v %+v", rules[0], rules[1])
	}
}
