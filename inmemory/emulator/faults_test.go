package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
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
	for _, bad := range []string{
		"lose", "drop:write", "lose:write:every=0", "lose:write:often=2", "lose:insert:every=10",
		"delay:read", "delay=0s:read", "delay=-1s:read", "delay=fast:read", "delay-answer:write",
		"throttle:write", "throttle=0/s:write", "throttle=10:write", "throttle=10/0s:write", "throttle=x/s:write",
		"throttle=10/s:write:first=2", "throttle=10/s:write:every=2", "lose=1:write",
		"500:write:retry-after=2", "503:write:retry-after=0", "delay=1s:read:retry-after=2", "503:blobs", "503:blob-list",
	} {
		if rules, err := ParseFaults(bad); err == nil {
			t.Errorf("%q was read: %+v", bad, rules[0])
		}
	}
	rules, err := ParseFaults("lose:write+batch:every=10, reset:all:T1,delay=200ms:read:first=2,delay-answer=1m:write," +
		"throttle=100/s:write:Orders,throttle=5/10s:all:retry-after=7,503:read:retry-after=3," +
		"503:blob:photos:first=1,lose:blob-read+container,reset:blob-write+write")
	if err != nil {
		t.Fatal(err)
	}
	want := []*FaultRule{
		{Fault: LoseResponse, Calls: Writes | Transactions, Every: 10},
		{Fault: ResetMidRequest, Calls: AllCalls, Table: "T1"},
		{Fault: Delay, Calls: Reads, First: 2, Delay: 200 * time.Millisecond},
		{Fault: DelayAnswer, Calls: Writes, Delay: time.Minute},
		{Fault: Throttle, Calls: Writes, Table: "Orders", Rate: 100, Per: time.Second},
		{Fault: Throttle, Calls: AllCalls, Rate: 5, Per: 10 * time.Second, RetryAfter: 7 * time.Second},
		{Fault: ServerBusy, Calls: Reads, RetryAfter: 3 * time.Second},
		{Fault: ServerBusy, Calls: BlobReads | BlobWrites | ContainerCalls, Table: "photos", First: 1},
		{Fault: LoseResponse, Calls: BlobReads | ContainerCalls},
		{Fault: ResetMidRequest, Calls: BlobWrites | Writes},
	}
	if len(rules) != len(want) {
		t.Fatalf("read %d rules, want %d", len(rules), len(want))
	}
	for i, w := range want {
		r := rules[i]
		if r.Fault != w.Fault || r.Calls != w.Calls || r.Table != w.Table || r.First != w.First || r.Every != w.Every ||
			r.Delay != w.Delay || r.Rate != w.Rate || r.Per != w.Per || r.RetryAfter != w.RetryAfter {
			t.Errorf("rule %d: read %v %+v, want %v %+v", i, r.Fault, r, w.Fault, w)
		}
	}
}

// Rules built by hand that cannot be applied are refused by New.
func TestFaultRulesChecked(t *testing.T) {
	for _, r := range []*FaultRule{
		{Fault: Delay, Calls: Reads},
		{Fault: Throttle, Calls: Writes, Rate: 10},
		{Fault: ServerBusy, Calls: Writes, RetryAfter: 1500 * time.Millisecond},
		{Fault: 0, Calls: Writes},
	} {
		if _, err := New(&Options{Faults: []*FaultRule{r}}); err == nil {
			t.Errorf("New took %v %+v", r.Fault, r)
		}
	}
}

// faultServer starts an emulator with the fault rules spec over svc, after tweak has
// changed its handler (its clock, how it waits).
func faultServer(t *testing.T, spec string, svc *memservice.Service, logs *bytes.Buffer, tweak func(*Handler)) *client {
	t.Helper()
	rules, err := ParseFaults(spec)
	if err != nil {
		t.Fatal(err)
	}
	opts := &Options{Faults: rules, Service: func(string) *memservice.Service { return svc }}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return devClient(t, srv)
}

// exists reports whether the row p|rk of table Orders is in svc. It may run on the
// server's goroutines: it reports a failure with Error.
func exists(t *testing.T, svc *memservice.Service, rk string) bool {
	t.Helper()
	_, err := svc.GetRow(context.Background(), "Orders", "p", rk, nil)
	var se *abstractions.StatusError
	if err != nil && !(errors.As(err, &se) && se.StatusCode == http.StatusNotFound) {
		t.Error(err)
	}
	return err == nil
}

// A delay waits before the request is applied; delay-answer applies it and waits before
// answering; delays add up, and a later rule's fault still applies. The waits are recorded
// by the handler's sleep, not timed.
func TestFaultDelays(t *testing.T) {
	svc := memservice.New()
	var logs bytes.Buffer
	type waited struct {
		d       time.Duration
		applied bool // whether the request's row was there during the wait
	}
	var mu sync.Mutex
	var waits []waited
	var rowKey string
	c := faultServer(t, "delay=200ms:write:first=1,delay-answer=300ms:write:first=2,delay=50ms:batch,delay-answer=70ms:batch,503:batch,delay=1ms:table:first=1", svc, &logs, func(h *Handler) {
		h.sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, waited{d, exists(t, svc, rowKey)})
			return nil
		}
	})
	check := func(what string, want ...waited) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if len(waits) != len(want) {
			t.Errorf("%s: waits %+v, want %+v", what, waits, want)
		}
		for i := range min(len(waits), len(want)) {
			if waits[i] != want[i] {
				t.Errorf("%s: waits %+v, want %+v", what, waits, want)
				break
			}
		}
		waits = nil
	}
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
	check("the first table call", waited{time.Millisecond, false})

	rowKey = "1" // delay=200ms and delay-answer=300ms both fire: one wait before, one after
	r := c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"1"}`)
	wantStatus(t, "the delayed insert", r, 201)
	if r.header.Get("ETag") == "" || !strings.Contains(r.body, `"RowKey":"1"`) {
		t.Errorf("the held answer lost its ETag or body: %v %s", r.header, r.body)
	}
	check("the first insert", waited{200 * time.Millisecond, false}, waited{300 * time.Millisecond, true})

	rowKey = "2" // delay-answer fires a second time
	wantStatus(t, "the second insert", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"2"}`), 201)
	check("the second insert", waited{300 * time.Millisecond, true})

	rowKey = "3" // no rule fires
	wantStatus(t, "the third insert", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"3"}`), 201)
	check("the third insert")

	rowKey = "4" // by header, whatever the rules say
	wantStatus(t, "an insert delayed by header", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"4"}`, FaultHeader, "delay-answer=2s"), 201)
	check("the header's delay", waited{2 * time.Second, true})
	wantError(t, "a throttle by header", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"5"}`, FaultHeader, "throttle=1/s"), 400, "InvalidInput")
	wantError(t, "a delay without a duration by header", c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"5"}`, FaultHeader, "delay"), 400, "InvalidInput")
	check("refused headers")

	rowKey = "b" // a delay, then the 503 of a later rule, held back by delay-answer
	ct, body := batchBody(c.srv.URL+"/"+c.account, "POST BASE/Orders HTTP/1.1\r\nContent-Type: application/json\r\n\r\n"+`{"PartitionKey":"p","RowKey":"b"}`)
	wantError(t, "a delayed and refused batch", c.do("POST", "$batch", body, "Content-Type", ct), 503, "ServerBusy")
	check("the batch", waited{50 * time.Millisecond, false}, waited{70 * time.Millisecond, false})
	if exists(t, svc, "b") {
		t.Error("the refused batch was applied")
	}
	// The log names a request's first delay: the table call and the first insert waited
	// before, the second insert and the header's after; the batch is logged with its 503.
	if n := strings.Count(logs.String(), "fault=Delay\n"); n != 2 {
		t.Errorf("%d requests logged with fault=Delay, want 2:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "fault=DelayAnswer\n"); n != 2 {
		t.Errorf("%d requests logged with fault=DelayAnswer, want 2:\n%s", n, logs.String())
	}
}

// A client that hangs up during a delay ends the wait: a delayed request is then not
// applied, and a delayed answer's request is. No goroutine is left (TestMain's goleak).
func TestFaultDelayClientHangsUp(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		applied bool
	}{
		{"delay=1h:write", false},
		{"delay-answer=1h:write", true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			svc := memservice.New()
			entered := make(chan struct{}, 1)
			ended := make(chan error, 1)
			c := faultServer(t, tc.spec, svc, nil, func(h *Handler) {
				h.sleep = func(ctx context.Context, d time.Duration) error {
					entered <- struct{}{}
					err := sleep(ctx, d)
					ended <- err
					return err
				}
			})
			wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, "POST", c.srv.URL+"/"+c.account+"/Orders", strings.NewReader(`{"PartitionKey":"p","RowKey":"1"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-ms-version", "2019-02-02")
			req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
			c.sign(req)
			sent := make(chan error, 1)
			go func() {
				resp, err := c.srv.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				sent <- err
			}()
			<-entered
			cancel()
			if err := <-sent; !errors.Is(err, context.Canceled) {
				t.Errorf("the client: %v, want context.Canceled", err)
			}
			if err := <-ended; !errors.Is(err, context.Canceled) {
				t.Errorf("the wait ended with %v, want context.Canceled", err)
			}
			if got := exists(t, svc, "1"); got != tc.applied {
				t.Errorf("applied: %v, want %v", got, tc.applied)
			}
		})
	}
}

// A throttle rule lets Rate requests through per Per, on the handler's clock, and answers
// the rest 503 ServerBusy with Retry-After, unapplied.
func TestFaultThrottle(t *testing.T) {
	svc := memservice.New()
	var mu sync.Mutex
	now := time.Now()
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	c := faultServer(t, "throttle=2/s:write:retry-after=3", svc, nil, func(h *Handler) {
		h.now = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}
	})
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
	insert := func(rk string) response {
		return c.do("POST", "Orders", `{"PartitionKey":"p","RowKey":"`+rk+`"}`)
	}
	throttled := func(what, rk string) {
		t.Helper()
		r := insert(rk)
		wantError(t, what, r, 503, "ServerBusy")
		if r.header.Get("Retry-After") != "3" || !strings.Contains(r.body, "Operations per second is over the account limit.") {
			t.Errorf("%s: Retry-After %q, body %s", what, r.header.Get("Retry-After"), r.body)
		}
		if exists(t, svc, rk) {
			t.Errorf("%s: the throttled insert was applied", what)
		}
	}
	wantStatus(t, "the first insert", insert("1"), 201)
	wantStatus(t, "the second insert", insert("2"), 201)
	throttled("the third insert in the same instant", "3")
	wantStatus(t, "a read (not throttled)", c.do("GET", "Orders(PartitionKey='p',RowKey='1')", ""), 200)
	advance(500 * time.Millisecond) // one token back
	wantStatus(t, "an insert half a second later", insert("4"), 201)
	throttled("the next", "5")
	advance(10 * time.Second) // the bucket holds 2 at most
	wantStatus(t, "after a pause, the first", insert("6"), 201)
	wantStatus(t, "after a pause, the second", insert("7"), 201)
	throttled("after a pause, the third", "8")
}

// TestBlobFaultHeader: the FaultHeader on blob requests. A lost upload is applied, a reset
// one is not; 500 and 503 are answered in the Blob service's XML (503 with its own message
// and Retry-After), without a body to a HEAD, and apply nothing; an unknown fault is refused.
func TestBlobFaultHeader(t *testing.T) {
	c := devBlobClient(t, blobServer(t, nil))
	wantStatus(t, "create", c.do(http.MethodPut, "cta?restype=container", ""), http.StatusCreated)
	put := func(name string, headers ...string) (*http.Response, error) {
		return c.send(http.MethodPut, "cta/"+name, "data", append([]string{"x-ms-blob-type", "BlockBlob"}, headers...)...)
	}
	if resp, err := put("lost", FaultHeader, "lose"); err == nil {
		resp.Body.Close()
		t.Fatal("a lost upload was answered")
	}
	wantStatus(t, "the lost upload is applied", c.do(http.MethodGet, "cta/lost", ""), http.StatusOK)
	if resp, err := put("reset", FaultHeader, "reset"); err == nil {
		resp.Body.Close()
		t.Fatal("a reset upload was answered")
	}
	wantBlobError(t, "the reset upload is not applied", c.do(http.MethodGet, "cta/reset", ""), http.StatusNotFound, "BlobNotFound")

	busy := c.do(http.MethodPut, "cta/busy", "data", "x-ms-blob-type", "BlockBlob", FaultHeader, "503")
	wantBlobError(t, "a 503 by header", busy, http.StatusServiceUnavailable, "ServerBusy")
	if !strings.Contains(busy.body, "<Message>"+blobServerBusy+"&#xA;RequestId:") || busy.header.Get("Retry-After") != "1" {
		t.Errorf("the blob 503: Retry-After %q, body %s", busy.header.Get("Retry-After"), busy.body)
	}
	wantBlobError(t, "a 500 by header", c.do(http.MethodPut, "cta/busy", "data", "x-ms-blob-type", "BlockBlob", FaultHeader, "500"),
		http.StatusInternalServerError, "InternalError")
	head := c.do(http.MethodHead, "cta/lost", "", FaultHeader, "503")
	wantBlobError(t, "a 503 to a HEAD", head, http.StatusServiceUnavailable, "ServerBusy")
	if head.body != "" {
		t.Errorf("a 503 to a HEAD has a body: %q", head.body)
	}
	wantBlobError(t, "an unknown fault", c.do(http.MethodGet, "cta/lost", "", FaultHeader, "drop"), http.StatusBadRequest, "InvalidInput")
	wantBlobError(t, "a throttle by header", c.do(http.MethodGet, "cta/lost", "", FaultHeader, "throttle=1/s"), http.StatusBadRequest, "InvalidInput")
	wantBlobError(t, "neither 500 nor 503 is applied", c.do(http.MethodGet, "cta/busy", ""), http.StatusNotFound, "BlobNotFound")
	wantStatus(t, "an upload with a delay", c.do(http.MethodPut, "cta/slow", "data", "x-ms-blob-type", "BlockBlob", FaultHeader, "delay=1ms"), http.StatusCreated)
	wantStatus(t, "an upload with a delayed answer", c.do(http.MethodPut, "cta/later", "data", "x-ms-blob-type", "BlockBlob", FaultHeader, "delay-answer=1ms"), http.StatusCreated)
	if r := c.do(http.MethodGet, "cta/later", ""); r.status != http.StatusOK || r.body != "data" {
		t.Errorf("the upload with a delayed answer: %d %q", r.status, r.body)
	}
	// A bad signature is refused as always: faults come after authorization.
	wantBlobError(t, "a bad signature with a fault", c.do(http.MethodGet, "cta/lost", "", FaultHeader, "503", "Authorization", "SharedKey "+DevelopmentAccount+":AAAA"),
		http.StatusForbidden, "AuthenticationFailed")
}

// TestBlobFaultRules: the calls blob-read, blob-write and container match the blob
// endpoint's requests of their kind, the table field a container, and the table endpoint's
// kinds none of them; a faulted blob request is logged with its fault.
func TestBlobFaultRules(t *testing.T) {
	var logs syncBuffer
	rules, err := ParseFaults("lose:write+read+batch+table,reset:container:first=1,503:blob-write:first=2,500:blob-read:ctb:every=2")
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(&Options{Faults: rules, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	blobs := httptest.NewServer(h.Blobs())
	t.Cleanup(blobs.Close)
	c := devBlobClient(t, blobs)
	if resp, err := c.send(http.MethodPut, "cta?restype=container", ""); err == nil {
		resp.Body.Close()
		t.Fatal("the first container call was not reset")
	}
	for _, name := range []string{"cta", "ctb"} {
		wantStatus(t, "create "+name, c.do(http.MethodPut, name+"?restype=container", ""), http.StatusCreated)
	}
	for i := range 2 {
		r := c.do(http.MethodPut, "cta/x", "data", "x-ms-blob-type", "BlockBlob")
		wantBlobError(t, fmt.Sprintf("blob write %d", i), r, http.StatusServiceUnavailable, "ServerBusy")
	}
	for _, name := range []string{"cta", "ctb"} {
		wantStatus(t, "the third upload to "+name, c.do(http.MethodPut, name+"/x", "data", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	}
	// The 500 rule counts the reads of container ctb only.
	for i := range 4 {
		wantStatus(t, fmt.Sprintf("read %d of cta", i), c.do(http.MethodGet, "cta/x", ""), http.StatusOK)
	}
	wantStatus(t, "the first read of ctb", c.do(http.MethodGet, "ctb/x", ""), http.StatusOK)
	wantBlobError(t, "the second read of ctb (a listing)", c.do(http.MethodGet, "ctb?restype=container&comp=list", ""),
		http.StatusInternalServerError, "InternalError")
	wantStatus(t, "the third read of ctb", c.do(http.MethodGet, "ctb/x?comp=blocklist", ""), http.StatusOK)
	// A request is logged after its answer: give the last log line a moment.
	for deadline := time.Now().Add(5 * time.Second); strings.Count(logs.String(), "service=blob") < 14 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, f := range []string{"fault=ResetMidRequest", "fault=ServerBusy", "fault=InternalError"} {
		if !strings.Contains(logs.String(), f) {
			t.Errorf("no blob request logged with %s:\n%s", f, logs.String())
		}
	}
	if strings.Contains(logs.String(), "LoseResponse") {
		t.Errorf("a rule of the table endpoint's calls faulted a blob request:\n%s", logs.String())
	}

	// And the other way: blob rules leave the table endpoint alone, "all" does not.
	rules, err = ParseFaults("503:blob")
	if err != nil {
		t.Fatal(err)
	}
	tc := devClient(t, server(t, &Options{Faults: rules}))
	wantStatus(t, "a table call under blob rules", tc.do("POST", "Tables", `{"TableName":"Orders"}`), 201)
	rules, err = ParseFaults("503:all")
	if err != nil {
		t.Fatal(err)
	}
	wantBlobError(t, "a blob call under all", devBlobClient(t, blobServer(t, &Options{Faults: rules})).do(http.MethodPut, "cta?restype=container", ""),
		http.StatusServiceUnavailable, "ServerBusy")
}

// syncBuffer is a bytes.Buffer a logger writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
