package callerr

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
)

// Table turns a failure of a call about one row of table (or, with rk "", one partition, or
// with both keys "", the table; table is "" for a call about no table) into a
// *abstractions.StoreError that names it and matches the sentinel of the condition:
//
//   - 409 EntityAlreadyExists: ErrDuplicateKey; 412: ErrConcurrencyConflict; 404
//     ResourceNotFound or TableNotFound: ErrNotFound;
//   - a 400 answer to a single-row write conditioned on an ETag that the service did not
//     recognise (RefusedETag): ErrInvalidArgument;
//   - a 5xx answer (left after the SDK's retries), a transport failure (refused connection,
//     DNS, reset, timeout) or the call's deadline passing: ErrUnavailable;
//   - the call's context cancelled: context.Canceled;
//   - any other answer of the service: no sentinel, the *StatusError in the chain says what.
//
// The rules are the same for the table and the blob service (blob offload and files go
// through it too). Only the message of a write without an answer says that it may or may not
// have been applied (see RequestOf). An error that already is a StoreError, or that is the
// library's own (Own), keeps its kind.
func Table(op, table, pk, rk string, err error) error {
	if err == nil {
		return nil
	}
	var already *abstractions.StoreError
	if errors.As(err, &already) {
		return err
	}
	e := &abstractions.StoreError{Op: op, Table: table, PartitionKey: pk, RowKey: rk, Err: err}
	var se *abstractions.StatusError
	req := RequestOf(op)
	ended, isEnded := Ended(err, req)
	var tag *RefusedETag
	switch {
	case errors.As(err, &tag):
		e.Kind = abstractions.ErrInvalidArgument
		e.Message = fmt.Sprintf("the service refused the ETag %q: it is not one the service issued; "+
			"use the ETag a read or write of the row returned", tag.ETag)
	case errors.As(err, &se):
		switch {
		case se.StatusCode == http.StatusConflict && se.ErrorCode == "EntityAlreadyExists":
			e.Kind = abstractions.ErrDuplicateKey
			e.Message = "a row with this key already exists; use Upsert or Update to change it"
		case se.StatusCode == http.StatusPreconditionFailed:
			e.Kind = abstractions.ErrConcurrencyConflict
			e.Message = "the row changed since the version this write was based on; read it again and retry (Mutate does that for you)"
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "ResourceNotFound":
			e.Kind = abstractions.ErrNotFound
			e.Message = "no row has this key"
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "TableNotFound":
			e.Kind = abstractions.ErrNotFound
			e.Message = "the table does not exist under this name; name a table in one case everywhere " +
				"(the Azurite emulator finds a table only under the case it was created with)"
			if errors.As(err, new(*NotCreated)) {
				e.Message = "the table does not exist, and an account with Options.NeverCreateTables does not create it: " +
					"create it with an administrative credential"
			}
		default:
			f := Answered(se, req, "the table service refused the request")
			e.Kind, e.Message = f.Kind, f.Message
		}
	case isEnded:
		e.Kind, e.Message = ended.Kind, ended.Message
	case Own(err):
		return err
	default:
		f := Unreachable(req)
		e.Kind, e.Message = f.Kind, f.Message
	}
	return e
}

// RequestOf tells the store operations that only read (the verbs' own ops) from the ones
// that may write. Any op not named here counts as a write, whose failure without an answer
// may have been applied; that includes a read a write makes first, since the write as a
// whole is what the caller asked for.
func RequestOf(op string) Request {
	switch op {
	case "read", "exists", "list", "count", "query", "stream", "any", "page", "ping", "open file", "read file":
		return Read
	}
	return Write
}

// librarySentinels are the errors the service layer may wrap itself (a stored value that
// fails to decode, a blob service that is not configured, a request the SDK cannot send).
// The codec's errors keep their own types too (Own).
var librarySentinels = []error{
	abstractions.ErrIntegrity, abstractions.ErrBlobOffloadNotConfigured, abstractions.ErrNotSupported,
	abstractions.ErrInvalidArgument, abstractions.ErrInvalidKey, abstractions.ErrOversizedCell,
	abstractions.ErrOversizedValue,
}

// Own reports an error of the library's own rather than a failure to reach the service: one
// matching a sentinel the service layer may wrap, or a stored value that does not fit its
// field, met while a scan decodes what it reads. Nothing was sent for it, or nothing more
// will tell.
func Own(err error) bool {
	for _, s := range librarySentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	var ve *codec.ValueError
	var pe *codec.PlanError
	return errors.As(err, &ve) || errors.As(err, &pe)
}

// A RefusedETag is a 400 answer to a single-row write conditioned on an ETag: the service
// did not take the If-Match value for one of its entity tags (it passed the library's shape
// check, but the service never issued it). Table matches it to
// abstractions.ErrInvalidArgument; the service's *abstractions.StatusError stays in the
// chain.
type RefusedETag struct {
	ETag string
	Err  error
}

func (e *RefusedETag) Error() string { return e.Err.Error() }
func (e *RefusedETag) Unwrap() error { return e.Err }

// A NotCreated is the TableNotFound answer to a write of an account with
// Options.NeverCreateTables, so that the error can say why the table was not created.
type NotCreated struct{ Err error }

func (e *NotCreated) Error() string { return e.Err.Error() }
func (e *NotCreated) Unwrap() error { return e.Err }
