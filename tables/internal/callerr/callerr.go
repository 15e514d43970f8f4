// Package callerr holds what every store of the library says about the failures that any
// call to a storage service can meet, whatever it was about: the service's trouble (a 5xx
// answer), a refused credential, the call's context ending, no answer at all. The table
// store (engine) and the blob documents (blobdocs) map the answers about their own rows and
// blobs themselves, and these through this package, so that both say the same.
package callerr

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
)

// A Failure is the sentinel a failure matches (nil for none) and the message that says
// what to do about it.
type Failure struct {
	Kind    error
	Message string
}

// Answered returns the failure of a service answer that says nothing of the resource: a
// 5xx status left after the client's retries (abstractions.ErrUnavailable) or a refused
// credential (403, no sentinel). Any other answer has no sentinel and the message otherwise.
func Answered(se *abstractions.StatusError, otherwise string) Failure {
	switch {
	case se.StatusCode >= 500:
		return Failure{abstractions.ErrUnavailable, fmt.Sprintf("the service answered %d after the client's retries; "+
			"the request may or may not have been applied, try again later", se.StatusCode)}
	case se.StatusCode == http.StatusForbidden:
		return Failure{nil, "the service refused the credential or its permissions (check the account key, the SAS and its expiry)"}
	}
	return Failure{nil, otherwise}
}

// Ended returns the failure of a call whose context ended before the service answered:
// context.Canceled when it was cancelled, abstractions.ErrUnavailable when its deadline
// passed. ok is false when err is neither.
func Ended(err error) (f Failure, ok bool) {
	switch {
	case errors.Is(err, context.Canceled):
		return Failure{context.Canceled, "the call's context was cancelled; the request may or may not have been applied"}, true
	case errors.Is(err, context.DeadlineExceeded):
		return Failure{abstractions.ErrUnavailable, "the call's deadline passed before the service answered; " +
			"the request may or may not have been applied"}, true
	}
	return Failure{}, false
}

// Unreachable is the failure of a call that got no answer from the service: a refused
// connection, DNS, a reset, a timeout.
var Unreachable = Failure{abstractions.ErrUnavailable, "the service could not be reached; the request may or may not have been applied, try again later"}
