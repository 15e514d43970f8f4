package tables_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// closedPort returns the address of a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// busyTransport answers every request with 503 ServerBusy, as a service under load does,
// after reading the request. (It is a transport rather than a server because the SDK's
// retry rewinds the request body while net/http may still be writing it to a server that
// answered early, a data race -race reports.)
type busyTransport struct{ requests atomic.Int64 }

func (b *busyTransport) Do(req *http.Request) (*http.Response, error) {
	b.requests.Add(1)
	if req.Body != nil {
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return nil, err
		}
	}
	body := `{"odata.error":{"code":"ServerBusy","message":{"value":"The server is busy."}}}`
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Request: req,
		Header: http.Header{"Content-Type": {"application/json"}, "X-Ms-Error-Code": {"ServerBusy"}},
		Body:   io.NopCloser(strings.NewReader(body))}, nil
}

// A service that cannot be reached or does not answer fails every store call with an error
// matching ErrUnavailable: a *StoreError naming the call, its table and its keys, with the
// cause in its chain.
func TestUnreachableServiceIsUnavailable(t *testing.T) {
	busy := &busyTransport{}
	stop := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hanging.Close()
	defer close(stop) // before Close, which waits for the handlers

	for _, tc := range []struct {
		name      string
		endpoint  string
		transport policy.Transporter // nil: HTTP without keep-alive
		timeout   time.Duration      // 0: none
		cause     func(error) bool
	}{
		{"refused connection", "http://" + closedPort(t), nil, 0, func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{"DNS failure", "http://nohost.invalid", nil, 0, func(err error) bool {
			var de *net.DNSError
			return errors.As(err, &de)
		}},
		{"5xx after the retries", "http://127.0.0.1:1", busy, 0, func(err error) bool {
			return abstractions.HasStatus(err, http.StatusServiceUnavailable, "ServerBusy")
		}},
		{"deadline", hanging.URL, nil, 20 * time.Millisecond, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := "DefaultEndpointsProtocol=http;AccountName=fake;AccountKey=ZmFrZS1rZXk=;TableEndpoint=" + tc.endpoint + "/fake"
			transport := tc.transport
			if transport == nil {
				// No keep-alive: no connection (and no goroutine) outlives the test.
				transport = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			}
			acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{
				Transport: transport,
				Retry:     policy.RetryOptions{MaxRetries: 1, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond},
			}})
			if err != nil {
				t.Fatal(err)
			}
			s, err := tables.For[Customer](acct, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []struct {
				op, pk, rk string
				write      bool // only a write's error says it may have been applied
				run        func(context.Context) error
			}{
				{"read", "eu", "alice", false, func(ctx context.Context) error { _, err := s.One(ctx, "EU|Alice"); return err }},
				{"create", "eu", "bob", true, func(ctx context.Context) error {
					return s.Create(ctx, &Customer{Entity: abstractions.Entity{ID: "eu|bob"}})
				}},
				{"count", "eu", "", false, func(ctx context.Context) error { _, err := s.Count(ctx, "eu"); return err }},
				{"query", "eu", "", false, func(ctx context.Context) error {
					_, err := s.Query(ctx, abstractions.Query[Customer]{Partition: "eu"})
					return err
				}},
				{"create table", "", "", true, s.EnsureCreated},
			} {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if tc.timeout > 0 {
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				}
				err := call.run(ctx)
				cancel()
				var se *abstractions.StoreError
				if !errors.Is(err, abstractions.ErrUnavailable) || !errors.As(err, &se) {
					t.Fatalf("%s: got %v, want a *StoreError matching ErrUnavailable", call.op, err)
				}
				if se.Op != call.op || se.Table != "Customer" || se.PartitionKey != call.pk || se.RowKey != call.rk {
					t.Errorf("%s: the error names op %q, table %q, keys (%q, %q)", call.op, se.Op, se.Table, se.PartitionKey, se.RowKey)
				}
				if !tc.cause(err) {
					t.Errorf("%s: the cause is not in the chain: %v", call.op, err)
				}
				if says := strings.Contains(se.Message, "may or may not have been applied"); says != call.write {
					t.Errorf("%s: the message %q says the request may have been applied: %v, want %v", call.op, se.Message, says, call.write)
				}
			}
		})
	}
	// Each of the five calls to the busy service was tried twice (one retry) and then given
	// up; the create, left without an answer, also read its row to learn whether it was
	// applied (two tries more).
	if n := busy.requests.Load(); n != 12 {
		t.Errorf("the busy service was asked %d times, want 12", n)
	}
}
