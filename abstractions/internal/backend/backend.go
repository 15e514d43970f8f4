// Package backend defines what package abstractions shares with package
// abstractions/driver: the types of what driver reads (this file), which driver re-exports
// under the same names (aliases; read the documentation there); the parts abstractions'
// values embed so that driver reads them (parts.go); and the Hooks a store embeds so that
// the outcome verbs reach its row queue and tracing (hooks.go). Driver's package
// documentation describes the technique ("Design").
//
// They live here, not in driver, because driver imports abstractions (its functions take
// abstractions' types) and abstractions needs them in its own types: an internal package
// both can import breaks the cycle.
package backend

import (
	"context"
	"io"
	"reflect"
)

// Field identifies one field of a stored type by where it sits in the struct.
type Field struct {
	// Owner is the stored type the selector takes.
	Owner reflect.Type
	// Type is the selected field's Go type: for a field made by NullableField, the pointer
	// type of the field.
	Type reflect.Type
	// Offset is the field's byte offset from the start of Owner.
	Offset uintptr
	// Err says why the selector could not be resolved (it was nil, it panicked on a zero
	// value, which is what a field below a pointer-held struct does, or it returned nil or an
	// address outside its argument), or that the field is the zero TypedField. A store
	// refuses a query or a patch that uses such a field, before sending it, with an error
	// matching the sentinel Err wraps (ErrInvalidArgument or ErrNotSupported).
	Err error
}

// Op is the operation of a Node.
type Op uint8

// The filter operations.
const (
	// OpEq holds when the field equals the value.
	OpEq Op = iota + 1
	// OpNe holds when the field differs from the value.
	OpNe
	// OpLt holds when the field is less than the value.
	OpLt
	// OpLe holds when the field is at most the value.
	OpLe
	// OpGt holds when the field is greater than the value.
	OpGt
	// OpGe holds when the field is at least the value.
	OpGe
	// OpAnd holds when every operand holds.
	OpAnd
	// OpOr holds when an operand holds.
	OpOr
	// OpNot holds when its one operand does not.
	OpNot
	// OpTrue holds when the Boolean field is true.
	OpTrue
)

// String returns the operation's OData name.
func (o Op) String() string {
	switch o {
	case OpEq:
		return "eq"
	case OpNe:
		return "ne"
	case OpLt:
		return "lt"
	case OpLe:
		return "le"
	case OpGt:
		return "gt"
	case OpGe:
		return "ge"
	case OpAnd:
		return "and"
	case OpOr:
		return "or"
	case OpNot:
		return "not"
	case OpTrue:
		return "true"
	}
	return "Op(?)"
}

// Node is one node of a filter's tree. Nodes are immutable once built: a store reads them
// and never changes them.
type Node struct {
	// Op is the node's operation.
	Op Op
	// Field is the compared field (comparisons and OpTrue).
	Field Field
	// Value is the value a comparison compares with, of the field's type (or, for a field
	// made by NullableField, of the type it points to).
	Value any
	// Operands are the operands of OpAnd, OpOr (any number, possibly none, which a store
	// refuses) and OpNot (one). An operand is nil where the caller passed the zero Filter.
	Operands []*Node
}

// PatchField is one assignment of a patch.
type PatchField struct {
	// Offset is the byte offset of the selected field from the start of the stored type.
	Offset uintptr
	// Type is the selected field's type (for a field made by NullableField, the pointer
	// type).
	Type reflect.Type
	// Path is the Go path of the field from the stored type, such as "Address.City", for
	// messages.
	Path string
	// Value holds the value to write, of type Type.
	Value reflect.Value
}

// Patch is what a store reads of a patch.
type Patch struct {
	// Fields are the patch's assignments in the order they were first set; setting a field
	// again replaced its value in place. The slice must not be modified.
	Fields []PatchField
	// ETag is the version the patch is conditional on, "" for an unconditional patch. It is
	// as the caller gave it: the store checks its form.
	ETag string
	// AllowProtected reports whether the caller allowed the patch to write protected fields.
	AllowProtected bool
	// Err is the first error a Set call met (a field that could not be resolved); a store
	// refuses the patch with it, before sending anything.
	Err error
}

// FileBlob is the blob a stored File streams. A store provides it, binding every File it
// reads or uploads to one.
type FileBlob interface {
	// OpenBlob returns the blob's content from its first byte, unverified (the File
	// verifies it). A blob that is gone fails with an error matching ErrIntegrity.
	OpenBlob(ctx context.Context) (io.ReadCloser, error)
}

// FileSource is a File's content as one write sees it. The write takes it once per File
// (driver.TakeFile, which holds the File's turn), uploads Open's bytes when the blob is
// missing, calls Uploaded when the upload succeeded, and calls Release in every case.
type FileSource interface {
	// SHA256 returns the lower-case hexadecimal SHA-256 of the content.
	SHA256() string
	// Length returns the content's length in bytes.
	Length() int64
	// Blob returns the blob the File streamed when the source was taken (a File a read
	// returned, or one an earlier write uploaded); nil for bytes and readers.
	Blob() FileBlob
	// Open returns the content's bytes from the first one, for an upload: the File's bytes,
	// its temporary copy, its seekable reader (put back at the start when the returned
	// reader is closed), or its blob. Every form but bytes is verified as it is read, so an
	// upload of changed content fails with ErrIntegrity before it completes. The caller
	// must close it before Release.
	Open(ctx context.Context) (io.ReadCloser, error)
	// Uploaded records that the write stored the content in blob: a File made from a
	// reader streams that blob from then on (its temporary copy is removed); a File of
	// bytes, or one that streams a blob already, keeps what it has.
	Uploaded(blob FileBlob)
	// Release gives the File's turn back; a seekable reader then stands at the start of
	// its content. Calling it again does nothing.
	Release()
}

// Span is one traced call of a store (see Hooks).
type Span interface {
	// Event records something that happened during the call, with slog-style key/value
	// pairs ("attempt", 2, "error", err). The verbs name their events with the Event
	// constants, which a store may count.
	Event(name string, keyvals ...any)
	// End ends the span with the call's result: nil for success.
	End(err error)
}

// The names of the events the outcome verbs record on their Span. Every attempt that lost
// its race is exactly one EventAttemptLost, EventAttemptsExhausted or EventCreateLost.
const (
	// EventAttemptLost: an attempt lost its race to another writer and the verb tries
	// again ("attempt", the attempt's number, "error", why it lost).
	EventAttemptLost = "attempt lost"
	// EventAttemptsExhausted: the last attempt lost too, so the call ends conflicted
	// ("attempts", how many it made, "error", why the last one lost).
	EventAttemptsExhausted = "attempts exhausted"
	// EventCreateLost: GetOrCreate's create lost to another caller's, whose row it reads
	// next ("error", the duplicate-key failure).
	EventCreateLost = "create lost to another caller's"
	// EventOutcome: how a Try verb ended ("status", the OutcomeStatus's name, "attempts").
	EventOutcome = "outcome"
)
