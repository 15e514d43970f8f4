package tables

import (
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// busySignal is a pipeline policy, run on every try the SDK's retry policy makes, that
// tells the account about each busy answer (503, 500 OperationTimedOut, 429), so that its
// batch calls send fewer transactions at once while the SDK backs off and retries. The
// account is built over the same pressure.
type busySignal struct {
	pressure *pressure
}

// Do implements policy.Policy.
func (b *busySignal) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && busyResponse(resp) {
		b.pressure.busy()
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
