package azconn

import (
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Redacting returns co with a per-retry policy, after the ones co names, that takes the
// query off the URL of every transport failure (see WithoutQuery) on its way up the
// pipeline. The SDK's retry policy logs each failed try's error ("error %v") to the
// azcore/log listener, and a transport failure's text holds the request's URL, with a
// shared access signature in its query: above this policy, the retry policy, the caller's
// per-retry and per-call policies and the caller see the redacted error. (The SDK's own
// log and trace policies, below it, redact the URLs they print themselves.) co's slice of
// policies is not changed.
func Redacting(co azcore.ClientOptions) azcore.ClientOptions {
	co.PerRetryPolicies = append(append([]policy.Policy(nil), co.PerRetryPolicies...), redactTransportErrors{})
	return co
}

// redactTransportErrors is the policy Redacting adds.
type redactTransportErrors struct{}

func (redactTransportErrors) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil {
		err = WithoutQuery(err)
	}
	return resp, err
}
