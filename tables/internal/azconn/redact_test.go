package azconn

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// refusing fails every request as net/http fails a refused connection: a *url.Error naming
// the request's URL, query and all.
type refusing struct{}

func (refusing) Do(req *http.Request) (*http.Response, error) {
	return nil, &url.Error{Op: "Get", URL: req.URL.String(), Err: syscall.ECONNREFUSED}
}

// seen records the error the policies above Redacting's see.
type seen struct{ err *error }

func (s seen) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	*s.err = err
	return resp, err
}

// Redacting's policy comes after the caller's per-retry policies, which, like the caller,
// see the transport's error without the URL's query and still reach its cause; the
// caller's slice of policies is left as it was.
func TestRedactingTakesTheQueryOffTransportErrors(t *testing.T) {
	var inPolicy error
	mine := make([]policy.Policy, 1, 2)
	mine[0] = seen{&inPolicy}
	co := Redacting(azcore.ClientOptions{PerRetryPolicies: mine, Transport: refusing{}, Retry: policy.RetryOptions{MaxRetries: -1}})
	if len(co.PerRetryPolicies) != 2 || mine[:2][1] != nil {
		t.Fatalf("Redacting gave %d per-retry policies, and changed the caller's slice: %v", len(co.PerRetryPolicies), mine[:2])
	}
	pl := runtime.NewPipeline("m", "v1.0.0", runtime.PipelineOptions{}, &co)
	req, err := runtime.NewRequest(context.Background(), http.MethodGet, "http://127.0.0.1:1/acct/tbl?sv=1&sig=SECRET")
	if err != nil {
		t.Fatal(err)
	}
	_, err = pl.Do(req)
	for what, err := range map[string]error{"the caller": err, "a per-retry policy": inPolicy} {
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "127.0.0.1:1/acct/tbl") {
			t.Errorf("%s sees %v, want the transport's error without the query", what, err)
		}
		var ue *url.Error
		if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &ue) {
			t.Errorf("%s sees %v, which lost its cause", what, err)
		}
	}
}
