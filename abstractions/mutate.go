package abstractions

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// OutcomeStatus is how an outcome verb (TryMutate, TryTransition) ended. (It is not an HTTP
// status: those are in StatusError.)
type OutcomeStatus uint8

const (
	// OutcomeUpdated means the change was written; Outcome.Value is the entity as stored,
	// with its new ETag.
	OutcomeUpdated OutcomeStatus = iota + 1
	// OutcomeNotFound means no row has the id; Outcome.Value is nil. (The error ErrNotFound
	// is what Mutate and the store's reads return for the same condition.)
	OutcomeNotFound
	// OutcomePreconditionFailed means the row exists but the transition's condition does not
	// hold; Outcome.Value is the row as read, typically the winner's of a race for the same
	// transition.
	OutcomePreconditionFailed
	// OutcomeConflicted means every attempt lost its race to another writer while the change
	// still applied; Outcome.Value is nil. The row is hot: retry later.
	OutcomeConflicted
)

// String returns the status's name.
func (s OutcomeStatus) String() string {
	switch s {
	case OutcomeUpdated:
		return "OutcomeUpdated"
	case OutcomeNotFound:
		return "OutcomeNotFound"
	case OutcomePreconditionFailed:
		return "OutcomePreconditionFailed"
	case OutcomeConflicted:
		return "OutcomeConflicted"
	}
	return "OutcomeStatus(?)"
}

// Outcome is the result of an outcome verb: the expected branches of a concurrent program
// (gone, someone got there first, too busy) as a value rather than an error.
type Outcome[T any] struct {
	// Status is how the verb ended; see the OutcomeStatus constants.
	Status OutcomeStatus
	// Value is the entity the status describes: the stored entity for OutcomeUpdated, the
	// row as read for OutcomePreconditionFailed, nil otherwise (and whenever the verb
	// returns an error).
	Value *T
	// Attempts is how many read-and-write rounds the call made.
	Attempts int
}

// RetryOptions configure the compare-and-swap loop of Mutate, TryMutate, TryTransition and
// MutateOrCreate. The verbs take a *RetryOptions; nil, like the zero value, means the
// defaults.
//
// The budget is for writers outside the process: the calls of one process on one row take
// turns when the store queues them per row (the stores of both backends do), so they never
// make each other lose. With the defaults a call that keeps losing to another process waits a
// random 10–20 ms before its second attempt, 20–40 ms before its third and 40–80 ms before
// its fourth and last: at most 140 ms of waiting before it reports the conflict.
type RetryOptions struct {
	// Attempts is the most read-and-write rounds a call makes; 0 means 4.
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each later one (each
	// loss in a row doubles it) up to 2 s, or Backoff when it is larger; 0 means
	// 20ms, a negative value means no wait. Each wait is drawn at random between half and all of its value, so racing
	// callers spread out, and ends early when ctx ends.
	Backoff time.Duration
}

const (
	defaultAttempts = 4
	defaultBackoff  = 20 * time.Millisecond
)

// maxRetryWait bounds one wait of RetryOptions.Wait, however many attempts a caller allows.
const maxRetryWait = 2 * time.Second

// WithDefaults returns a copy of the options with every unset field at its default, as the
// verbs use them; a nil *RetryOptions gives the defaults. Packages that run a compare-and-swap
// loop of their own over the same options (blob state documents, say) call it, so every loop
// has the same defaults.
func (o *RetryOptions) WithDefaults() RetryOptions {
	r := RetryOptions{}
	if o != nil {
		r = *o
	}
	if r.Attempts <= 0 {
		r.Attempts = defaultAttempts
	}
	if r.Backoff == 0 {
		r.Backoff = defaultBackoff
	}
	return r
}

// Wait sleeps before attempt number next (2, 3, …), that is after next-1 lost attempts in a
// row: a pause drawn at random between half and all of Backoff·2^(next-2), the doubling
// stopping at 2 s (or at Backoff, when it is larger). Waits that grow with each loss let the writer that won go on undisturbed,
// and the random draw keeps writers that lost at the same moment from coming back at the
// same moment. A zero Backoff means the default (20 ms), as for the verbs, so the zero
// RetryOptions waits as they do. Wait returns ctx's error when ctx ends first, and returns
// at once for a first attempt or a negative Backoff. It uses a timer, not a goroutine.
func (o RetryOptions) Wait(ctx context.Context, next int) error {
	lo, hi := o.waitRange(next)
	if hi <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(lo + rand.N(hi-lo+1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitRange is the range Wait draws the wait before attempt next from; 0, 0 for none.
func (o RetryOptions) waitRange(next int) (lo, hi time.Duration) {
	if o.Backoff == 0 {
		o.Backoff = defaultBackoff
	}
	if o.Backoff < 0 || next < 2 {
		return 0, 0
	}
	// Doubling stops at maxRetryWait; a Backoff above it is waited as it is.
	d := max(o.Backoff, maxRetryWait)
	if shift := next - 2; shift < 31 && o.Backoff <= maxRetryWait>>shift {
		d = o.Backoff << shift
	}
	return d / 2, d
}

// Each verb call is one span when s traces its calls (its type embeds driver.Hooks with a
// span: the stores of both backends do; backend.StartSpan returns a span that records
// nothing otherwise), with each attempt as an event and a debug log line per retry; the
// store calls a verb makes are spans of their own below it.

// transition is the loop every verb but GetOrCreate shares: read the row, decide, apply and
// write it on condition of the version read, again after a lost race.
//
// when may be nil (always true). mutate runs on a fresh copy of the row each attempt; its
// error ends the call with nothing written. A change of the entity's ID or ETag inside
// mutate is undone, so the write always addresses the row and version that were read.
// create, when not nil, makes the entity to insert when the row is missing; otherwise a
// missing row is OutcomeNotFound.
func transition[T any, P EntityPtr[T]](ctx context.Context, s ReadWriter[T], id string, when func(*T) bool, mutate func(*T) error,
	create func() *T, opts *RetryOptions, span backend.Span) (Outcome[T], error) {
	if mutate == nil {
		return Outcome[T]{}, fmt.Errorf("%w: the mutate function is nil", ErrInvalidArgument)
	}
	o := opts.WithDefaults()
	// Callers of this process queue for the row here when s queues them (its type embeds
	// driver.Hooks with a turn: the stores of both backends do, with one queue per row of an
	// account), so that their attempts lose only to writers elsewhere; otherwise concurrent
	// callers race through the service. The turn is held for the whole call, the retry
	// waits included: a call that lost to another process backs off with the process's
	// other callers of the row behind it, so the process as a whole makes room for the
	// other writer.
	release, err := backend.Turn(ctx, s, id)
	if err != nil {
		return Outcome[T]{}, err
	}
	defer release()
	var lastErr error
	for attempt := 1; attempt <= o.Attempts; attempt++ {
		if attempt > 1 {
			span.Event(backend.EventAttemptLost, "attempt", attempt-1, "error", lastErr)
		}
		if err := o.Wait(ctx, attempt); err != nil {
			return Outcome[T]{Attempts: attempt - 1}, err
		}
		v, err := s.One(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			v = nil
		case errors.Is(err, ErrConcurrencyConflict):
			// A read that could not settle on one version is a lost race too.
			lastErr = err
			continue
		case err != nil:
			return Outcome[T]{Attempts: attempt}, err
		}
		if v == nil && create == nil {
			return Outcome[T]{Status: OutcomeNotFound, Attempts: attempt}, nil
		}
		if v != nil && when != nil && !when(v) {
			return Outcome[T]{Status: OutcomePreconditionFailed, Value: v, Attempts: attempt}, nil
		}
		if v == nil {
			v = create()
			if v == nil {
				return Outcome[T]{Attempts: attempt}, fmt.Errorf("%w: the create function returned nil", ErrInvalidArgument)
			}
			b := P(v).Base()
			b.ID, b.ETag = id, ""
			if err := mutate(v); err != nil {
				return Outcome[T]{Attempts: attempt}, err
			}
			b.ID, b.ETag = id, ""
			err = s.Create(ctx, v)
			if err == nil {
				return Outcome[T]{Status: OutcomeUpdated, Value: v, Attempts: attempt}, nil
			}
			if !keyTaken(err) {
				return Outcome[T]{Attempts: attempt}, err
			}
			// Another caller created the row first: apply the change to theirs.
			lastErr = err
			continue
		}
		b := P(v).Base()
		rid, retag := b.ID, b.ETag
		if err := mutate(v); err != nil {
			return Outcome[T]{Attempts: attempt}, err
		}
		b.ID, b.ETag = rid, retag
		err = s.Update(ctx, v, Strict)
		switch {
		case err == nil:
			return Outcome[T]{Status: OutcomeUpdated, Value: v, Attempts: attempt}, nil
		case errors.Is(err, ErrConcurrencyConflict), errors.Is(err, ErrNotFound):
			// Lost to another writer (or a delete): read the row again.
			lastErr = err
		default:
			return Outcome[T]{Attempts: attempt}, err
		}
	}
	span.Event(backend.EventAttemptsExhausted, "attempts", o.Attempts, "error", lastErr)
	return Outcome[T]{Status: OutcomeConflicted, Attempts: o.Attempts}, lastErr
}

// endOutcome ends a Try verb's span: the outcome is an event, the error the span's result.
func endOutcome[T any](span backend.Span, out Outcome[T], err error) error {
	if out.Status != 0 {
		span.Event(backend.EventOutcome, "status", out.Status.String(), "attempts", out.Attempts)
	}
	span.End(err)
	return err
}

// outcome keeps OutcomeConflicted's cause out of the Try verbs' error result.
func outcome[T any](out Outcome[T], err error) (Outcome[T], error) {
	if out.Status == OutcomeConflicted {
		return out, nil
	}
	return out, err
}

// TryMutate reads the row with the id, applies mutate to it and writes it back on condition
// of the version read (a Strict update), reading and applying again after a lost race. It
// reports the expected branches as the Outcome's Status rather than as errors:
// OutcomeUpdated (Value is the stored entity), OutcomeNotFound, or OutcomeConflicted when
// every attempt lost. The error is for everything else: a failure of the service, ctx
// ending, or mutate's own error, which ends the call with nothing written. A nil opts means
// the default attempts and backoff (see RetryOptions).
//
// mutate runs once per attempt, each time on a fresh read of the row, so it must compute
// its change from the entity it is given. It must not change the ID or ETag (such a change
// is undone). If a write's response is lost after the service applied it, the retry finds a
// newer version and applies mutate again: make it idempotent (record an operation id in the
// entity, say) when that matters.
//
// When s queues calls per row (the stores of both backends do), the call first waits for the
// row's turn among this process's verb calls on the same row through the same account (ctx
// ending the wait), and holds it until it returns: such calls run one after another, so an
// attempt loses only to a writer outside the process (or through another account value),
// and the attempt budget is spent on those alone. mutate must therefore not call a verb on
// the same row through the same account: that call would wait for the turn its caller holds,
// until ctx ends. Nor should it call one on another row whose holder may in turn wait for
// this one: two calls waiting for each other's rows wait until their contexts end.
func TryMutate[T any, P EntityPtr[T]](ctx context.Context, s ReadWriter[T], id string, mutate func(*T) error, opts *RetryOptions) (Outcome[T], error) {
	ctx, span := backend.StartSpan(ctx, s, "try mutate", id)
	out, err := outcome(transition[T, P](ctx, s, id, nil, mutate, nil, opts, span))
	return out, endOutcome(span, out, err)
}

// TryTransition is TryMutate for a change that must happen once: apply runs only while when
// holds. A row where when does not hold is OutcomePreconditionFailed, with the row as read
// in Value. So the callers racing for the same transition get one OutcomeUpdated, and every
// loser, whose retry reads the winner's row, OutcomePreconditionFailed with that row;
// OutcomeConflicted is left for a row so busy that the condition still held at every lost
// attempt. A nil when is refused with ErrInvalidArgument. It takes the row's turn first (see
// TryMutate).
func TryTransition[T any, P EntityPtr[T]](ctx context.Context, s ReadWriter[T], id string, when func(*T) bool, apply func(*T) error,
	opts *RetryOptions) (Outcome[T], error) {
	if when == nil {
		return Outcome[T]{}, fmt.Errorf("%w: TryTransition needs a condition", ErrInvalidArgument)
	}
	ctx, span := backend.StartSpan(ctx, s, "try transition", id)
	out, err := outcome(transition[T, P](ctx, s, id, when, apply, nil, opts, span))
	return out, endOutcome(span, out, err)
}

// Mutate is TryMutate for callers that treat the other branches as failures: it returns the
// stored entity, an error matching ErrNotFound for a missing row, and one matching
// ErrConcurrencyConflict when every attempt lost its race to writers outside the process (a
// caller may simply call again). Like every verb but GetOrCreate, it takes the row's turn
// first (see TryMutate).
func Mutate[T any, P EntityPtr[T]](ctx context.Context, s ReadWriter[T], id string, mutate func(*T) error, opts *RetryOptions) (*T, error) {
	ctx, span := backend.StartSpan(ctx, s, "mutate", id)
	out, err := transition[T, P](ctx, s, id, nil, mutate, nil, opts, span)
	v, err := result(s, "mutate", id, out, err)
	span.End(err)
	return v, err
}

// MutateOrCreate applies mutate to the row with the id, creating the row from create first
// when there is none. The change applies the same way to a new entity as to a stored one, so
// N calls on a missing id leave the effect of N changes. A create that loses to another
// caller's counts as a lost race: the next attempt applies the change to the winner's row.
// Errors are those of Mutate; create must return a new entity each time (its ID is set to
// id). A nil create is refused with ErrInvalidArgument. It takes the row's turn first (see
// TryMutate), so the calls of one process on a missing id never race each other's creates.
func MutateOrCreate[T any, P EntityPtr[T]](ctx context.Context, s ReadWriter[T], id string, create func() *T, mutate func(*T) error,
	opts *RetryOptions) (*T, error) {
	if create == nil {
		return nil, fmt.Errorf("%w: MutateOrCreate needs a create function", ErrInvalidArgument)
	}
	ctx, span := backend.StartSpan(ctx, s, "mutate or create", id)
	out, err := transition[T, P](ctx, s, id, nil, mutate, create, opts, span)
	v, err := result(s, "mutate or create", id, out, err)
	span.End(err)
	return v, err
}

// result turns an Outcome into Mutate's (value, error) form.
func result[T any](s ReadWriter[T], op, id string, out Outcome[T], err error) (*T, error) {
	pk, rk := SplitID(id)
	switch {
	case out.Status == OutcomeUpdated:
		return out.Value, nil
	case out.Status == OutcomeNotFound:
		return nil, &StoreError{Kind: ErrNotFound, Op: op, Table: s.Table(), PartitionKey: pk, RowKey: rk, Message: "no row has this id"}
	case out.Status == OutcomeConflicted:
		return nil, &StoreError{Kind: ErrConcurrencyConflict, Op: op, Table: s.Table(), PartitionKey: pk, RowKey: rk,
			Message: fmt.Sprintf("other writers changed the row during each of %d attempts; call again, or spread the writes out", out.Attempts),
			Err:     err}
	}
	return nil, err
}

// GetOrCreate returns the row with the id, creating it from create when there is none. When
// another caller creates the row first, the duplicate-key failure is not returned: the call
// reads and returns the winner's row, so every caller gets the same row. created reports
// whether this call stored it. create runs only when the row is missing; the ID of the
// entity it returns is set to id. GetOrCreate has no attempt budget: it tries again while the
// row keeps vanishing between a failed create and the read, until ctx ends. A nil create is
// refused with ErrInvalidArgument.
func GetOrCreate[T any, P EntityPtr[T]](ctx context.Context, s ReadWriter[T], id string, create func() *T) (v *T, created bool, err error) {
	if create == nil {
		return nil, false, fmt.Errorf("%w: GetOrCreate needs a create function", ErrInvalidArgument)
	}
	ctx, span := backend.StartSpan(ctx, s, "get or create", id)
	defer func() { span.End(err) }()
	for {
		v, err := s.One(ctx, id)
		if err == nil {
			return v, false, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, false, err
		}
		nv := create()
		if nv == nil {
			return nil, false, fmt.Errorf("%w: the create function returned nil", ErrInvalidArgument)
		}
		b := P(nv).Base()
		b.ID, b.ETag = id, ""
		err = s.Create(ctx, nv)
		if err == nil {
			return nv, true, nil
		}
		if !keyTaken(err) {
			return nil, false, err
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		span.Event(backend.EventCreateLost, "error", err)
	}
}
