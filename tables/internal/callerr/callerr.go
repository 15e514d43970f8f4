// Package callerr owns how a failed call becomes the error a user matches: Table turns any
// failure of a call about rows into a *abstractions.StoreError naming the row and matching
// its sentinel (409 EntityAlreadyExists, 412, 404, a refused ETag, a table never created, a
// 5xx answer, no answer, the context ending), Kind names the sentinel an error matches (for
// spans, metrics and logs), and Answered, Ended and Unreachable word the failures every
// call can meet, so that the table stores and the blob documents (which map the answers
// about their own blobs) say the same. A write left without an answer says it "may or may
// not have been applied"; a read never does. It sends nothing and refuses nothing.
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

// Request says whether the failed call asked the service to change something. Only a
// write's failure without an answer may have been applied, so only its message says so: a
// read changes nothing, whatever became of it.
type Request bool

// The kinds of Request.
const (
	Read  Request = false
	Write Request = true
)

// unknown is what a failure without a (usable) answer leaves unknown: for a write, whether
// it was applied; for a read, nothing.
func (r Request) unknown() string {
	if r == Write {
		return "; the request may or may not have been applied"
	}
	return ""
}

// Answered returns the failure of a service answer that says nothing of the resource: a
// 5xx status left after the client's retries (abstractions.ErrUnavailable) or a refused
// credential (403, no sentinel). Any other answer has no sentinel and the message otherwise.
func Answered(se *abstractions.StatusError, r Request, otherwise string) Failure {
	switch {
	case se.StatusCode >= 500:
		return Failure{abstractions.ErrUnavailable, fmt.Sprintf("the service answered %d after the client's retries%s; try again later",
			se.StatusCode, r.unknown())}
	case se.StatusCode == http.StatusForbidden:
		return Failure{nil, "the service refused the credential or its permissions (check the account key, the SAS and its expiry)"}
	}
	return Failure{nil, otherwise}
}

// Ended returns the failure of a call whose context ended before the service answered:
// context.Canceled when it was cancelled, abstractions.ErrUnavailable when its deadline
// passed (the chain keeps context.DeadlineExceeded). ok is false when err is neither.
func Ended(err error, r Request) (f Failure, ok bool) {
	switch {
	case errors.Is(err, context.Canceled):
		return Failure{context.Canceled, "the call's context was cancelled" + r.unknown()}, true
	case errors.Is(err, context.DeadlineExceeded):
		return Failure{abstractions.ErrUnavailable, "the call's deadline passed before the service answered" + r.unknown()}, true
	}
	return Failure{}, false
}

// Unreachable returns the failure of a call that got no answer from the service: a refused
// connection, DNS, a reset, a timeout.
func Unreachable(r Request) Failure {
	return Failure{abstractions.ErrUnavailable, "the service could not be reached" + r.unknown() + "; try again later"}
}

// kinds are the sentinels Kind knows, in the order it tries them, with their names.
var kinds = []struct {
	err  error
	name string
}{
	{abstractions.ErrNotFound, "not_found"},
	{abstractions.ErrDuplicateKey, "duplicate_key"},
	{abstractions.ErrConcurrencyConflict, "concurrency_conflict"},
	{abstractions.ErrInvalidKey, "invalid_key"},
	{abstractions.ErrInvalidArgument, "invalid_argument"},
	{abstractions.ErrNotSupported, "not_supported"},
	{abstractions.ErrProtectedProperty, "protected_property"},
	{abstractions.ErrOversizedCell, "oversized_cell"},
	{abstractions.ErrOversizedValue, "oversized_value"},
	{abstractions.ErrIntegrity, "integrity"},
	{abstractions.ErrBlobOffloadNotConfigured, "blob_offload_not_configured"},
	{abstractions.ErrUnavailable, "unavailable"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline_exceeded"},
}

// Kind returns the name and the first of the library's sentinels (and the context's
// errors) that err matches: the name in snake_case as spans, metrics and logs show it ("not_found",
// "concurrency_conflict", "unavailable", …); "error" and nil when err matches none, "" and
// nil for a nil err.
func Kind(err error) (name string, sentinel error) {
	if err == nil {
		return "", nil
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.name, k.err
		}
	}
	return "error", nil
}

// KindName is the name part of Kind.
func KindName(err error) string {
	name, _ := Kind(err)
	return name
}
