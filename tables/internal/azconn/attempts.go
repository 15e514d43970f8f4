package azconn

import (
	"net/http"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// CountTries is a per-retry policy: it records each try the SDK's retry policy sends in the
// call's attempt.Attempts, so that a caller can tell a refusal its own earlier try may have
// caused (a lost response resent) from a genuine one. The blob adapter adds it to every
// client it builds; the table adapter counts tries in a per-try policy of its own, which
// does more on each try.
type CountTries struct{}

// Do implements policy.Policy.
func (CountTries) Do(req *policy.Request) (*http.Response, error) {
	attempt.CountAttempt(req.Raw().Context())
	return req.Next()
}
