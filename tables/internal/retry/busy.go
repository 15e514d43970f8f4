package retry

import (
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/tables/internal/telemetry"
)

// Signal is a pipeline policy, run on every try the SDK's retry policy makes, that
// tells the account about each busy answer (503, 500 OperationTimedOut, 429), so that its
// batch calls send fewer transactions at once while the SDK backs off and retries. The
// account is built over the same pressure.
//
// With metrics on it also counts the busy answers, and the tries after a request's first
// (the SDK's retries), which CountTries lets it tell apart.
type Signal struct {
	Pressure *Pressure
	Meters   *telemetry.Meters
}

// Do implements policy.Policy.
func (b *Signal) Do(req *policy.Request) (*http.Response, error) {
	if b.Meters != nil {
		var tries *tryCount
		if req.OperationValue(&tries) {
			if tries.n++; tries.n > 1 {
				b.Meters.Retried(req.Raw().Context())
			}
		}
	}
	resp, err := req.Next()
	if err == nil && busyResponse(resp) {
		b.Pressure.Busy()
		b.Meters.BusyAnswer(req.Raw().Context(), resp.StatusCode)
	}
	return resp, err
}

// tryCount is the number of tries of one request the SDK's pipeline sent so far.
type tryCount struct{ n int }

// CountTries is a per-call policy, before the SDK's retry policy, added only with metrics
// on: it gives each request the tryCount Signal increments on every try (the retry
// policy's copies of the request share it).
type CountTries struct{}

// Do implements policy.Policy.
func (CountTries) Do(req *policy.Request) (*http.Response, error) {
	req.SetOperationValue(&tryCount{})
	return req.Next()
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
