// Package driver is for backends: the code that implements the contracts of package
// abstractions (the engine in tables/internal/engine, the fault-injection wrappers, the fidelity
// suite). Applications do not import it; nothing here is needed to store, query or patch
// entities. It reads what abstractions' values hold and applications never look at: the
// tree of an [abstractions.Filter], the field an [abstractions.Selector] names, the
// assignments of an [abstractions.Patch], the content of an [abstractions.File]; and it
// holds what a store gives the outcome verbs ([abstractions.Mutate] and the others) so that
// they queue on its rows and trace their calls ([Hooks]).
//
// # Design
//
// Both use one Go technique, so that neither abstractions' values nor a store
// show anything for it in their documentation, and no variable is set at run time. A type
// declared in an internal package of the abstractions module (which abstractions and this
// package both import) has only unexported fields and methods, and is embedded, through an
// unexported alias, in the type that must carry it:
//
//	type hooks = driver.Hooks
//	type Store[T any] struct {
//		hooks // the field's name is unexported, and Hooks exports nothing to promote
//		…
//	}
//
// The embedding type then has the embedded type's unexported methods, so it satisfies
// interfaces of the internal package that name them, and the internal package, and
// through it this package, reaches them; nothing else can. The functions that read a value
// take the abstractions type itself, so the compiler checks every call.
//
//   - A store embeds [Hooks], made with [NewHooks]: the verbs find its row queue and
//     tracing through it, and [CachesReads] its cache policy. A value that does not embed
//     Hooks (a fake, a wrapper of your own) works with every verb, unqueued and untraced;
//     a type that embeds a store embeds its Hooks too. The stores of both backends embed
//     it, and a new backend does the same to get the same behaviour.
//   - Each of [abstractions.Filter], [abstractions.TypedField] and [abstractions.Patch]
//     embeds what this package reads of it ([Root], [FieldOf], [PatchOf]).
//   - A File's operations are code, and [NewStoredFile] has no File at hand, so
//     [abstractions.File] embeds an empty type whose type argument, an unexported type of
//     abstractions without state, has them ([TakeFile], [NewStoredFile]).
//
// The types this package names are defined in that internal package and are aliases here;
// their fields and methods are documented there and summarised below.
//
// Like abstractions, this package imports only the standard library (and abstractions).
package driver

import (
	"context"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// Field identifies one field of a stored type by where it sits in the struct, which is how
// a store finds the field's column without expression trees: the selector given to
// [abstractions.Field] or [abstractions.NullableField], such as
// func(c *Customer) *string { return &c.Name }, is called once on a zero value, and the
// address it returns, minus the struct's own address, is the field's offset.
//
// Its fields: Owner (the stored type), Type (the field's Go type; for a NullableField the
// pointer type), Offset (from the start of Owner), and Err, which says why the field cannot
// be used (a nil selector, one that panicked on a zero value or returned an address outside
// it, the zero TypedField); a store refuses any query or patch that uses such a field,
// before sending it, with an error matching the sentinel Err wraps.
type Field = backend.Field

// Op is the operation of a [Node]; its String method returns the OData name.
type Op = backend.Op

// The filter operations.
const (
	OpEq   = backend.OpEq   // the field equals the value
	OpNe   = backend.OpNe   // the field differs from the value
	OpLt   = backend.OpLt   // the field is less than the value
	OpLe   = backend.OpLe   // the field is at most the value
	OpGt   = backend.OpGt   // the field is greater than the value
	OpGe   = backend.OpGe   // the field is at least the value
	OpAnd  = backend.OpAnd  // every operand holds
	OpOr   = backend.OpOr   // an operand holds
	OpNot  = backend.OpNot  // the one operand does not hold
	OpTrue = backend.OpTrue // the Boolean field is true (a bare condition)
)

// Node is one node of a filter's tree, as [Root] returns it: Op, the compared Field
// (comparisons and OpTrue), the Value compared with (of the field's type; for a
// NullableField, of the type it points to), and the Operands of OpAnd, OpOr (any number,
// possibly none) and OpNot (one). An operand is nil where the caller passed the zero
// Filter. A store translates the tree to its service's filter language and refuses every
// shape it cannot answer exactly; nodes are immutable, so it must not change them.
type Node = backend.Node

// PatchField is one assignment of a patch: the selected field's Offset and Type (for a
// NullableField, the pointer type), its Go Path from the stored type ("Address.City", for
// messages) and the Value to write, a reflect.Value of that type.
type PatchField = backend.PatchField

// Patch is what a store reads of an [abstractions.Patch], as [PatchOf] returns it: its
// Fields in the order they were first set, the ETag it is conditional on ("" for none, as
// the caller gave it: the store checks its form), whether the caller allowed protected
// fields (AllowProtected), and Err, the first error a Set call met, with which the store
// refuses the patch before sending anything.
type Patch = backend.Patch

// FileBlob is the blob a stored [abstractions.File] streams. A store provides it, binding
// every File it reads ([NewStoredFile]) or uploads ([FileSource].Uploaded) to one. Its one
// method, OpenBlob(ctx), returns the blob's content from its first byte, unverified (the
// File verifies it); a blob that is gone fails with an error matching
// [abstractions.ErrIntegrity].
type FileBlob = backend.FileBlob

// FileSource is a File's content as one write sees it, as [TakeFile] returns it: the
// content's SHA256 and Length, the Blob the File streamed when it was taken (nil for bytes
// and readers), Open (the bytes to upload, verified as they are read unless they are the
// File's own bytes; close it before Release), Uploaded (the write stored the content in a
// blob: a File made from a reader streams that blob from then on) and Release (gives the
// File's turn back; a seekable reader then stands at the start of its content).
type FileSource = backend.FileSource

// Hooks is what a store gives the outcome verbs ([abstractions.Mutate] and the others): a
// backend's store embeds it through an unexported alias (the package documentation's
// "Design" says why) and fills it in with [NewHooks]; the verbs then queue on its rows and
// trace their calls, and [CachesReads] reports what it said. A value whose type does not embed Hooks (a fake, a
// wrapper of your own) works with every verb, unqueued and untraced. Hooks has no exported
// field or method, so it adds nothing to the store's API.
type Hooks = backend.Hooks

// NewHooks returns the Hooks of a store.
//
// turn queues the outcome verbs of one process on one row: Mutate, TryMutate, TryTransition
// and MutateOrCreate call it before their first read and call the release it returns
// exactly once, when they return (the retry waits included), so concurrent calls on one row
// run one after another instead of racing each other through the service. It waits for the
// turn of the row with the id (callers are served in the order they asked; when ctx ends
// first it returns ctx's error and no turn). It may let a caller through without a turn (a
// release that does nothing) beyond a bound of waiters, or for an id it cannot resolve,
// which the verb's read then refuses. nil: the verbs do not queue.
//
// startSpan makes each verb call one [Span] named op (such as "mutate") about the row with
// the id, with each attempt as an event; the store calls a verb makes are spans of their
// own below it. It never fails: with tracing off it returns ctx and a span that only logs
// (a debug line per lost attempt). nil: the verbs do not trace.
//
// cachesReads says whether the store keeps what it reads in a read cache, which code that
// must see every other process's writes at once asks with [CachesReads].
func NewHooks(turn func(ctx context.Context, id string) (release func(), err error),
	startSpan func(ctx context.Context, op, id string) (context.Context, Span), cachesReads bool) Hooks {
	return backend.NewHooks(turn, startSpan, cachesReads)
}

// CachesReads reports whether store keeps what it reads in a read cache: whether its type
// embeds [Hooks] made with cachesReads true. The stores of both backends do when their
// cache policy is on. The identity stores refuse a user store that caches.
func CachesReads(store any) bool { return backend.CachesReads(store) }

// Span is one traced call of a store (see [NewHooks]): Event(name, keyvals...) records something
// that happened during the call, with slog-style key/value pairs, and End(err) ends it
// with the call's result (nil for success).
type Span = backend.Span

// The names of the events the outcome verbs record on their [Span], so that a store can
// count them: every attempt that lost its race is exactly one EventAttemptLost (the verb
// tries again), EventAttemptsExhausted (it was the last attempt: the call ends
// conflicted) or EventCreateLost (GetOrCreate's create lost to another caller's).
// EventOutcome is how a Try verb ended.
const (
	EventAttemptLost       = backend.EventAttemptLost
	EventAttemptsExhausted = backend.EventAttemptsExhausted
	EventCreateLost        = backend.EventCreateLost
	EventOutcome           = backend.EventOutcome
)

// Root returns the tree of f, nil for the zero Filter (which selects every row).
func Root[T any](f abstractions.Filter[T]) *Node { return backend.Read(f) }

// FieldOf returns the field sel names. Every [abstractions.TypedField] of T is a Selector
// of T.
func FieldOf[T any](sel abstractions.Selector[T]) Field {
	return backend.Selected(sel, abstractions.ErrInvalidArgument)
}

// PatchOf returns what a store reads of p; a nil p reads as a patch that sets nothing.
func PatchOf[T any](p *abstractions.Patch[T]) Patch {
	if p == nil {
		return Patch{}
	}
	return backend.Read(p)
}

// TakeFile takes f's turn for one write and returns its content's description, hashing the
// content first when no write has (a reader is read to its end, a non-seekable one copied
// to a temporary file). It applies the reader rules of [abstractions.File]: a nil, refused
// or broken File fails with an error matching [abstractions.ErrInvalidArgument], before
// anything is uploaded; waiting for the turn ends with ctx. The caller must call Release.
func TakeFile(ctx context.Context, f *abstractions.File) (FileSource, error) {
	return backend.FileOpsOf[abstractions.File]().Take(ctx, f)
}

// NewStoredFile returns the File of a stored blob, which reads bind to every file field
// they return. sha256 is the lower-case hexadecimal SHA-256 of the blob's content and
// length its length in bytes, as the row records them; contentType "" records
// application/octet-stream. Nothing is read until the File is opened.
func NewStoredFile(blob FileBlob, sha256 string, length int64, contentType string) *abstractions.File {
	return backend.FileOpsOf[abstractions.File]().Stored(blob, sha256, length, contentType)
}
