package blobdocs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
)

// ErrContainerNotFound reports that a registration's container does not exist. It is
// deliberately not abstractions.ErrNotFound: a mistyped or never-created container is a
// configuration problem, and must not read as "this document has not been written yet".
// Blob documents never create containers; create it when the application is deployed (or
// with service.Blobs.CreateContainer), or correct Registration.Container.
var ErrContainerNotFound = errors.New("blob documents: container not found")

// Error is the error of a blob-document call about one blob. It matches its Kind sentinel
// with errors.Is (abstractions.ErrNotFound, abstractions.ErrConcurrencyConflict,
// ErrContainerNotFound, abstractions.ErrUnavailable, …) and unwraps to the cause, typically
// the service's *abstractions.StatusError.
type Error struct {
	// Kind is the sentinel the error matches; nil for a refusal of the service that has
	// none (the *abstractions.StatusError in Err then says what).
	Kind error
	// Op is the call, such as "get" or "update".
	Op string
	// Container and Blob name the blob; Blob is empty when the name could not be built.
	Container, Blob string
	// Message says what happened and what to do.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	msg := "blobdocs: " + e.Op + " " + strconv.Quote(e.Container)
	if e.Blob != "" {
		msg += " blob " + strconv.Quote(e.Blob)
	}
	msg += ": " + e.Message
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is the error's Kind.
func (e *Error) Is(target error) bool { return target != nil && target == e.Kind }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// librarySentinels are the errors a serializer or this package may return itself; they
// keep their kind when wrapped.
var librarySentinels = []error{
	abstractions.ErrNotFound, abstractions.ErrIntegrity, abstractions.ErrNotSupported,
	abstractions.ErrInvalidArgument, abstractions.ErrInvalidKey, abstractions.ErrOversizedValue,
	abstractions.ErrConcurrencyConflict, ErrContainerNotFound,
}

// translate turns a failure of the blob service into an *Error naming the container and
// blob and matching the sentinel of the condition:
//
//   - 404 ContainerNotFound: ErrContainerNotFound, whatever the call;
//   - 404 BlobNotFound: abstractions.ErrNotFound (callers that mean something else by it,
//     such as a conditional delete, decide before calling translate);
//   - 409 BlobAlreadyExists and any 412: abstractions.ErrConcurrencyConflict;
//   - a 5xx answer left after the client's retries, a transport failure or the call's
//     deadline: abstractions.ErrUnavailable; a cancelled context: context.Canceled;
//   - any other answer: no sentinel, the *abstractions.StatusError in the chain says what.
//
// r says whether the failed request was a download or an upload or delete: only the
// message of the latter says that it may or may not have been applied.
func translate(r callerr.Request, op, container, blob string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	e := &Error{Op: op, Container: container, Blob: blob, Err: err}
	var se *abstractions.StatusError
	ended, isEnded := callerr.Ended(err, r)
	switch {
	case errors.As(err, &se):
		switch {
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "ContainerNotFound":
			e.Kind = ErrContainerNotFound
			e.Message = fmt.Sprintf("the container %q does not exist; blob documents never create containers: "+
				"create it, or correct the registration's Container", container)
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "BlobNotFound":
			e.Kind = abstractions.ErrNotFound
			e.Message = "no document is stored under this name"
		case se.StatusCode == http.StatusConflict && se.ErrorCode == "BlobAlreadyExists":
			e.Kind = abstractions.ErrConcurrencyConflict
			e.Message = "another writer created this document first; read it and update it instead"
		case se.StatusCode == http.StatusPreconditionFailed:
			e.Kind = abstractions.ErrConcurrencyConflict
			e.Message = "the document changed or was deleted since the version this write was based on; " +
				"read it again and retry (Mutate does that for you)"
		default:
			f := callerr.Answered(se, r, "the blob service refused the request")
			e.Kind, e.Message = f.Kind, f.Message
		}
	case isEnded:
		e.Kind, e.Message = ended.Kind, ended.Message
	default:
		for _, s := range librarySentinels {
			if errors.Is(err, s) {
				e.Kind = s
				e.Message = "the document could not be read or written"
				return e
			}
		}
		f := callerr.Unreachable(r)
		e.Kind, e.Message = f.Kind, f.Message
	}
	return e
}

// unknownOutcome returns the error of a write that may or may not have been applied, why
// saying what was seen. It matches abstractions.ErrUnavailable (context.Canceled when ctx was
// cancelled), the sentinel whose meaning that is, and keeps the service's answer, err, in
// the chain.
func unknownOutcome(ctx context.Context, op, container, blob, why string, err error) error {
	kind := abstractions.ErrUnavailable
	if errors.Is(ctx.Err(), context.Canceled) {
		kind = context.Canceled
	}
	return &Error{Kind: kind, Op: op, Container: container, Blob: blob, Err: err,
		Message: why + "; whether this call's write is stored cannot be known: read the document to see what is"}
}

// refuse returns the error of a call refused by this package's own checks, before anything
// is sent.
func refuse(kind error, op, container, blob, format string, args ...any) error {
	return &Error{Kind: kind, Op: op, Container: container, Blob: blob, Message: fmt.Sprintf(format, args...)}
}
