package abstractions

import "context"

// Turnstile is implemented by stores that queue the outcome verbs of one process on one row;
// the stores of both backends do, with one queue per row of an account, shared by every
// store of the account's table. Mutate, TryMutate, TryTransition and MutateOrCreate take the
// row's turn before their first read and give it back when they return, so concurrent calls
// on one row in one process run one after another instead of racing each other through the
// service: only a writer outside the process (another process, another account value, a
// direct write through the service) can make an attempt lose. A Storage that does not
// implement Turnstile is not queued, and its callers race as before.
//
// The turn is held for the whole call, the retry waits included: a call that lost to
// another process backs off with the process's other callers of the row behind it, so the
// process as a whole makes room for the other writer.
type Turnstile interface {
	// Turn waits until the caller holds the turn of the row with the id and returns the
	// function that gives it back, which the caller must call exactly once. Callers get
	// the turn in the order they asked for it. When ctx ends first, Turn returns ctx's
	// error and no turn. An implementation may bound how many callers queue for one row
	// and let a caller beyond the bound through without a turn (release is then a no-op),
	// and does the same for an id it cannot resolve, which the verb's read then refuses.
	Turn(ctx context.Context, id string) (release func(), err error)
}

// takeTurn takes the row's turn when s is a Turnstile; otherwise it returns at once.
func takeTurn[T any](ctx context.Context, s Storage[T], id string) (func(), error) {
	if t, ok := s.(Turnstile); ok {
		return t.Turn(ctx, id)
	}
	return func() {}, ctx.Err()
}
