package azblobs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
)

// busyBlobs is a blob service under load: it creates containers, and answers every other
// request with 503 ServerBusy after reading it. (A transport rather than a server, so that
// the SDK's rewinding of a retried body cannot race with net/http still writing it.)
type busyBlobs struct{ refused atomic.Int64 }

func (b *busyBlobs) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return nil, err
		}
	}
	if req.Method == http.MethodPut && req.URL.Query().Get("restype") == "container" {
		return &http.Response{StatusCode: http.StatusCreated, Request: req, Header: http.Header{}, Body: http.NoBody}, nil
	}
	b.refused.Add(1)
	body := `<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>The server is busy.</Message></Error>`
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Request: req,
		Header: http.Header{"Content-Type": {"application/xml"}, "X-Ms-Error-Code": {"ServerBusy"}},
		Body:   io.NopCloser(strings.NewReader(body))}, nil
}

// A blob upload that the service keeps refusing until the call's deadline, while the SDK
// retries it, ends the write as a table request would end: an error matching
// abstractions.ErrUnavailable, with context.DeadlineExceeded in its chain, naming the row.
func TestBlobUploadFailingUntilTheDeadlineIsUnavailable(t *testing.T) {
	busy := &busyBlobs{}
	conn := "DefaultEndpointsProtocol=http;AccountName=fake;AccountKey=ZmFrZS1rZXk=;" +
		"TableEndpoint=http://127.0.0.1:1/fake;BlobEndpoint=http://127.0.0.1:1/fake"
	acct, err := tables.NewAccount(conn, &tables.Options{
		Blobs:       azblobs.Connect,
		BlobOffload: &tables.BlobOffloadOptions{ThresholdBytes: 1000},
		ClientOptions: azcore.ClientOptions{Transport: busy,
			// Retries that outlast the deadline: the deadline ends the call, not the retries.
			Retry: policy.RetryOptions{MaxRetries: 1000, RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 10 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		abstractions.Entity
		Body string `table:",split=text"`
		File *abstractions.File
	}
	s, err := tables.For[doc](acct, &tables.StoreOptions{Table: "Docs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		v    *doc
	}{
		{"an offloaded value", &doc{Entity: abstractions.Entity{ID: "p|value"}, Body: strings.Repeat("v", 150_000)}},
		{"a file of bytes", &doc{Entity: abstractions.Entity{ID: "p|bytes"}, File: abstractions.FileFromBytes([]byte("bytes"), "")}},
		{"a file from a reader", &doc{Entity: abstractions.Entity{ID: "p|reader"}, File: abstractions.FileFromReader(bytes.NewReader([]byte("stream")), "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := busy.refused.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			err := s.Create(ctx, tc.v)
			if !errors.Is(err, abstractions.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want an error matching ErrUnavailable and context.DeadlineExceeded", err)
			}
			var se *abstractions.StoreError
			if !errors.As(err, &se) || se.Op != "create" || se.Table != "Docs" || se.PartitionKey != "p" || se.RowKey != tc.v.ID[2:] {
				t.Errorf("the error names %+v, want the create of the row", se)
			}
			if n := busy.refused.Load() - before; n < 2 {
				t.Errorf("the service refused %d requests; the deadline must pass while the SDK retries", n)
			}
		})
	}
}
