package abstractions

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every error the library returns for one of these conditions matches the
// sentinel with errors.Is, whichever backend produced it.
var (
	// ErrNotFound reports that the addressed row, blob or table does not exist.
	ErrNotFound = errors.New("unified tables: not found")
	// ErrDuplicateKey reports that a create found a row with the same keys already stored.
	ErrDuplicateKey = errors.New("unified tables: duplicate key")
	// ErrConcurrencyConflict reports that a conditional write lost a race: the stored row
	// changed (or vanished) since the ETag the write carried was read.
	ErrConcurrencyConflict = errors.New("unified tables: concurrency conflict")
	// ErrNotSupported reports a request the library refuses by design, before anything is sent.
	ErrNotSupported = errors.New("unified tables: not supported")
	// ErrOversizedCell reports a value too large for one table cell under the configured policy.
	ErrOversizedCell = errors.New("unified tables: oversized cell")
	// ErrOversizedValue reports a value too large for every storage form the type allows.
	ErrOversizedValue = errors.New("unified tables: oversized value")
	// ErrIntegrity reports stored data that fails its own consistency checks (a torn split
	// value, a checksum mismatch, a discriminator naming an unregistered type).
	ErrIntegrity = errors.New("unified tables: integrity check failed")
	// ErrBlobOffloadNotConfigured reports a value that needs blob offload on an account that
	// has no blob container configured.
	ErrBlobOffloadNotConfigured = errors.New("unified tables: blob offload not configured")
	// ErrProtectedProperty reports a change to a role-gated property the caller may not make.
	ErrProtectedProperty = errors.New("unified tables: protected property")
	// ErrUnavailable reports that the service could not be reached or did not answer in
	// time: a refused connection, a failed DNS lookup, a connection reset, a timeout, the
	// call's context deadline passing while a request was out, or a 5xx answer left after
	// the Azure SDK's own retries, whether the request went to the table or the blob
	// service. A write that fails so may or may not have been applied (its message says
	// so); a read changed nothing. A server maps it to 503; a later call may succeed. The
	// chain keeps the cause (a *StatusError, context.DeadlineExceeded or the network error).
	ErrUnavailable = errors.New("unified tables: service unavailable")
)

// StatusError is a failure reported by the table or blob service, with the HTTP status and
// the service's error code. Both backends return it: the Azure backend keeps the SDK's
// *azcore.ResponseError in Err, the in-memory service leaves Err nil.
type StatusError struct {
	// StatusCode is the HTTP status the service answered with (for a failed entity-group
	// transaction, the status of the failing action, not the 202 of the batch).
	StatusCode int
	// ErrorCode is the service's error code, such as "EntityAlreadyExists". It may be empty
	// when the service sent none.
	ErrorCode string
	// Message is the service's human-readable message, without any "N:" action prefix.
	Message string
	// Err is the underlying transport error, if any.
	Err error
}

// Error implements error.
func (e *StatusError) Error() string {
	msg := "storage service answered " + strconv.Itoa(e.StatusCode)
	if e.ErrorCode != "" {
		msg += " " + e.ErrorCode
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Unwrap returns the underlying transport error.
func (e *StatusError) Unwrap() error { return e.Err }

// HasStatus reports whether err is, or wraps, a *StatusError with the given HTTP status and,
// when code is not empty, the given error code.
func HasStatus(err error, status int, code string) bool {
	if err == nil {
		return false // before errors.As, whose target escapes: a success allocates nothing
	}
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	return se.StatusCode == status && (code == "" || se.ErrorCode == code)
}

// Errors about the caller's input, returned before anything is sent.
var (
	// ErrInvalidKey reports an id or key the store cannot address: a partition containing
	// "|", a key that is not valid UTF-8 or is longer than 512 UTF-16 code units, one
	// holding a character the service forbids (/ \ # ? and control characters), an empty
	// id, an empty partition given on its own, or an empty key in an id a call would write.
	// Empty keys are the library's refusal, not the service's: a read by id takes one (see
	// the Empty keys section of SplitID, which also says how to move such a row).
	ErrInvalidKey = errors.New("unified tables: invalid key")
	// ErrInvalidArgument reports an argument the call cannot use (a nil entity, a missing
	// or malformed ETag, a negative count, …).
	ErrInvalidArgument = errors.New("unified tables: invalid argument")
)

// StoreError is an error of a store call about one row. It matches its Kind sentinel with
// errors.Is and unwraps to the service's error, if any.
type StoreError struct {
	// Kind is the sentinel the error matches (ErrNotFound, ErrDuplicateKey, …).
	Kind error
	// Op is the store operation, such as "create".
	Op string
	// Table, PartitionKey and RowKey name the row; a call about a partition (a query, a
	// count) leaves RowKey empty, one about the whole table both keys.
	Table, PartitionKey, RowKey string
	// Message says what happened and what to do.
	Message string
	// Index names the unique index (the tag option unique=) whose value another entity
	// holds, for an ErrDuplicateKey of a value rather than of the row's keys; "" otherwise.
	// The outcome verbs that retry a create which lost a race for its keys (GetOrCreate,
	// MutateOrCreate, Append) return such an error at once.
	Index string
	// Err is the underlying error, typically a *StatusError.
	Err error
}

// Error implements error: the operation, the table and the keys it addressed (whichever
// are set: an account-level call such as a ping names no table), the message, and the
// underlying error.
func (e *StoreError) Error() string {
	msg := e.Op
	add := func(part string) {
		if msg != "" {
			msg += " "
		}
		msg += part
	}
	if e.Table != "" {
		add(e.Table)
	}
	switch {
	case e.RowKey != "":
		add("(" + strconv.Quote(e.PartitionKey) + ", " + strconv.Quote(e.RowKey) + ")")
	case e.PartitionKey != "":
		add("partition " + strconv.Quote(e.PartitionKey))
	}
	if msg != "" {
		msg += ": "
	}
	msg += e.Message
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is the error's Kind.
func (e *StoreError) Is(target error) bool { return target != nil && target == e.Kind }

// Unwrap returns the underlying error.
func (e *StoreError) Unwrap() error { return e.Err }

// keyTaken reports a create that found its row's keys taken: ErrDuplicateKey, and not of a
// unique index's value (StoreError.Index), which another try of the same row cannot win.
func keyTaken(err error) bool {
	if !errors.Is(err, ErrDuplicateKey) {
		return false
	}
	var se *StoreError
	return !errors.As(err, &se) || se.Index == ""
}
