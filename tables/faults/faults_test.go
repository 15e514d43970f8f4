package faults

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server answers every request with a JSON body and counts them.
func server(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"PartitionKey":"p","RowKey":"r","Name":"a value long enough to cut"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestTransport(t *testing.T) {
	srv, reached := server(t)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	tr := NewTransport(client)
	get := func(ctx context.Context, path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		return tr.Do(req)
	}
	ctx := context.Background()

	t.Run("no fault", func(t *testing.T) {
		resp, err := get(ctx, "/acct/Items(PartitionKey='p',RowKey='r')")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	t.Run("lose the response", func(t *testing.T) {
		tr.Inject(LoseResponse, Reads, 1)
		before := reached.Load()
		_, err := get(ctx, "/acct/Items()")
		var fe *Error
		if !errors.As(err, &fe) || fe.Fault != LoseResponse || reached.Load() != before+1 {
			t.Fatalf("err %v, reached %d", err, reached.Load()-before)
		}
	})
	t.Run("reset mid-request", func(t *testing.T) {
		tr.Inject(ResetMidRequest, Reads, 1)
		before := reached.Load()
		_, err := get(ctx, "/acct/Items()")
		var fe *Error
		if !errors.As(err, &fe) || fe.Fault != ResetMidRequest || reached.Load() != before {
			t.Fatalf("err %v, reached %d", err, reached.Load()-before)
		}
	})
	t.Run("reset mid-body", func(t *testing.T) {
		tr.Inject(ResetMidBody, Reads, 1)
		resp, err := get(ctx, "/acct/Items()")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		var fe *Error
		if !errors.As(err, &fe) || fe.Fault != ResetMidBody || len(body) == 0 || strings.HasSuffix(string(body), "}") {
			t.Fatalf("read %q, %v", body, err)
		}
	})
	for _, tc := range []struct {
		f      Fault
		status int
		code   string
	}{{InternalError, 500, "InternalError"}, {ServerBusy, 503, "ServerBusy"}} {
		t.Run(tc.f.String(), func(t *testing.T) {
			tr.Inject(tc.f, Writes, 1)
			before := reached.Load()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/acct/Items(PartitionKey='p',RowKey='r')", strings.NewReader("{}"))
			resp, err := tr.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code || reached.Load() != before {
				t.Fatalf("%d %s, reached %d", resp.StatusCode, resp.Header.Get("x-ms-error-code"), reached.Load()-before)
			}
		})
	}
	t.Run("stall", func(t *testing.T) {
		tr.Inject(Stall, AllCalls, 1)
		before := reached.Load()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := get(sctx, "/acct/Items()")
		if !errors.Is(err, context.DeadlineExceeded) || reached.Load() != before {
			t.Fatalf("err %v, reached %d", err, reached.Load()-before)
		}
	})
	if tr.Pending() != 0 || tr.Injected(LoseResponse) != 1 || tr.Injected(Stall) != 1 {
		t.Errorf("pending %d, injected %d lost, %d stalls", tr.Pending(), tr.Injected(LoseResponse), tr.Injected(Stall))
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         Calls
	}{
		{"POST", "/acct/$batch", Transactions},
		{"POST", "/acct/Tables", TableCalls},
		{"DELETE", "/acct/Tables('Items')", TableCalls},
		{"GET", "/acct/Tables", TableCalls},
		{"GET", "/acct/Items(PartitionKey='p',RowKey='r')", Reads},
		{"GET", "/acct/Items()", Reads},
		{"POST", "/acct/Items", Writes},
		{"PUT", "/acct/Items(PartitionKey='p',RowKey='r')", Writes},
		{"PATCH", "/acct/Items(PartitionKey='p',RowKey='r')", Writes},
		{"DELETE", "/acct/Items(PartitionKey='p',RowKey='r')", Writes},
	} {
		req, _ := http.NewRequest(tc.method, "http://h"+tc.path, nil)
		if got := classify(req); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestPlanOrderAndKinds(t *testing.T) {
	var p Plan
	p.Inject(ServerBusy, Writes, 2)
	p.Inject(Stall, Reads|Writes, 1)
	if f := p.take(Reads); f != Stall {
		t.Fatalf("a read took %v, want the first fault that matches reads", f)
	}
	if f := p.take(Transactions); f != 0 {
		t.Fatalf("a transaction took %v", f)
	}
	if a, b, c := p.take(Writes), p.take(Writes), p.take(Writes); a != ServerBusy || b != ServerBusy || c != 0 {
		t.Fatalf("writes took %v %v %v", a, b, c)
	}
	p.Inject(LoseResponse, Writes, 0)
	p.Clear()
	if p.Pending() != 0 || p.take(Writes) != 0 {
		t.Fatal("Clear left a fault")
	}
}

// written is a service whose Write applies (counts) and answers with a 409 after the first.
type written struct {
	service.Tables
	applied atomic.Int64
}

func (w *written) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	if w.applied.Add(1) > 1 {
		return service.Written{}, &abstractions.StatusError{StatusCode: 409, ErrorCode: "EntityAlreadyExists", Message: "exists"}
	}
	return service.Written{ETag: `W/"1"`}, nil
}

func (w *written) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	w.applied.Add(1)
	return make([]service.Written, len(actions)), nil
}

// Tables retries as the SDK does, and counts every try.
func TestTablesRetriesLikeTheSDK(t *testing.T) {
	insert := service.Action{Op: service.OpInsert}
	upsert := service.Action{Op: service.OpUpsertReplace}
	for _, tc := range []struct {
		name    string
		fault   Fault
		times   int
		action  service.Action
		tries   int
		applied int64
		check   func(error) bool
	}{
		{"a lost insert is resent and meets its own row", LoseResponse, 1, insert, 2, 2, func(err error) bool { return abstractions.HasStatus(err, 409, "") }},
		{"a reset insert is not resent", ResetMidBody, 1, insert, 1, 1, func(err error) bool { var e *Error; return errors.As(err, &e) }},
		{"a reset upsert is resent", ResetMidBody, 1, upsert, 2, 2, func(err error) bool { return abstractions.HasStatus(err, 409, "") }},
		{"an insert reset mid-request is resent, and applied once", ResetMidRequest, 1, insert, 2, 1, func(err error) bool { return err == nil }},
		{"503 then the write", ServerBusy, 1, insert, 2, 1, func(err error) bool { return err == nil }},
		{"500 four times: given up", InternalError, 4, insert, 4, 0, func(err error) bool { return abstractions.HasStatus(err, 500, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &written{}
			ft := NewTables(svc)
			ft.Inject(tc.fault, Writes, tc.times)
			ctx, tries := attempt.WithAttempts(context.Background())
			_, err := ft.Write(ctx, "Items", tc.action)
			if !tc.check(err) || tries.Count() != tc.tries || svc.applied.Load() != tc.applied {
				t.Fatalf("err %v, %d tries, applied %d times", err, tries.Count(), svc.applied.Load())
			}
		})
	}
	t.Run("a stalled transaction ends with its context", func(t *testing.T) {
		svc := &written{}
		ft := NewTables(svc)
		ft.Inject(Stall, Transactions, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := ft.Transact(ctx, "Items", nil); !errors.Is(err, context.DeadlineExceeded) || svc.applied.Load() != 0 {
			t.Fatalf("err %v, applied %d", err, svc.applied.Load())
		}
	})
}

// uploads is a blob service that counts uploads.
type uploads struct {
	service.Blobs
	n atomic.Int64
}

func (u *uploads) Upload(ctx context.Context, container, name string, data []byte, opts service.UploadOptions) (service.BlobProperties, error) {
	u.n.Add(1)
	return service.BlobProperties{ETag: `"1"`}, nil
}

func TestBlobsRetryLikeTheSDK(t *testing.T) {
	svc := &uploads{}
	fb := NewBlobs(svc)
	fb.Inject(LoseResponse, Writes, 1)
	fb.Inject(ServerBusy, Writes, 1)
	ctx, tries := attempt.WithAttempts(context.Background())
	if _, err := fb.Upload(ctx, "c", "b", nil, service.UploadOptions{}); err != nil || tries.Count() != 3 || svc.n.Load() != 2 {
		t.Fatalf("err %v, %d tries, %d uploads", err, tries.Count(), svc.n.Load())
	}
}

// StallAfterSend applies the call and then fails it at the deadline.
func TestStallAfterSend(t *testing.T) {
	srv, reached := server(t)
	tr := NewTransport(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}})
	tr.Inject(StallAfterSend, Reads, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/acct/Items()", nil)
	if _, err := tr.Do(req); !errors.Is(err, context.DeadlineExceeded) || reached.Load() != 1 {
		t.Fatalf("err %v, reached %d", err, reached.Load())
	}

	svc := &written{}
	ft := NewTables(svc)
	ft.Inject(StallAfterSend, Writes, 1)
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer wcancel()
	if _, err := ft.Write(wctx, "Items", service.Action{Op: service.OpInsert}); !errors.Is(err, context.DeadlineExceeded) || svc.applied.Load() != 1 {
		t.Fatalf("err %v, applied %d", err, svc.applied.Load())
	}
}
