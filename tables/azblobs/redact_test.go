package azblobs_test

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/service"
)

// A transport failure must not carry the request URL's query: with a shared access
// signature it holds the signature.
func TestTransportErrorsHideTheSignature(t *testing.T) {
	const sig = "c2lnbmF0dXJl+LXNlY3JldC1k/by1ub3QtbG9n="
	conn := "TableEndpoint=http://127.0.0.1:1/acct;BlobEndpoint=http://127.0.0.1:1/acct;" +
		"SharedAccessSignature=sv=2020-08-04&ss=bt&srt=sco&sp=rwdlacu&se=2099-01-01T00:00:00Z&sig=" + url.QueryEscape(sig)
	for _, retries := range []int32{-1, 1} {
		opts := azcore.ClientOptions{Retry: policy.RetryOptions{
			MaxRetries: retries, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond,
		}}
		s, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		b, err := azblobs.NewFromConnectionString(conn, &azblobs.Options{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		check := func(what string, err error) {
			t.Helper()
			if err == nil {
				t.Fatalf("%s: no error from a closed port", what)
			}
			for e := err; e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), sig) || strings.Contains(e.Error(), url.QueryEscape(sig)) {
					t.Errorf("%s (retries %d): the error chain holds the signature: %v", what, retries, e)
				}
			}
			var ue *url.Error
			if !errors.As(err, &ue) {
				t.Errorf("%s: %v no longer unwraps to a *url.Error", what, err)
			} else if !strings.Contains(ue.URL, "127.0.0.1:1") {
				t.Errorf("%s: the URL %q lost its host", what, ue.URL)
			}
		}
		_, err = s.Query(ctx, "tbl", service.Query{Filter: "PartitionKey eq 'p'"})
		check("query", err)
		_, err = s.GetRow(ctx, "tbl", "p", "r", nil)
		check("get row", err)
		blob, err := b.Download(ctx, "box", "name", service.Conditions{})
		if err == nil {
			_, err = io.ReadAll(blob.Body)
			_ = blob.Body.Close()
		}
		check("download", err)
	}
}
