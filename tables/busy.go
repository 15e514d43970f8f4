package tables

import (
	"net/http"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/tables/engine"
)

// busySignal is a pipeline policy, run on every try the SDK's retry policy makes, that
// tells the account about each busy answer (503, 500 OperationTimedOut, 429), so that its
// batch calls send fewer transactions at once while the SDK backs off and retries. It is
// built before the account, which it learns once made.
type busySignal struct {
	acct atomic.Pointer[engine.Account]
}

// Do implements policy.Policy.
func (b *busySignal) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && busyResponse(resp) {
		if a := b.acct.Load(); a != nil {
			a.NoteBusy()
		}
	}
	return resp, err
}

// busyResponse reports the answers of a service past its scale targets.
func busyResponse(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return true
	case http.StatusInternalServerError:
		return resp.Header.Get("x-ms-error-code") == "OperationTimedOut"
	}
	return false
}
