package azservice

import (
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/tables/service"
)

// countTries is a per-retry policy: it records each try the SDK's retry policy sends in the
// call's service.Attempts, so the engine can tell a refusal its own earlier try may have
// caused (a lost response resent) from a genuine one.
type countTries struct{}

func (countTries) Do(req *policy.Request) (*http.Response, error) {
	service.CountAttempt(req.Raw().Context())
	return req.Next()
}
