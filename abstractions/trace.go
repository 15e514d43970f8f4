package abstractions

import "context"

// Traced is implemented by stores that trace and log their calls; the stores of both
// backends do. The outcome verbs (Mutate, TryMutate, TryTransition, MutateOrCreate,
// GetOrCreate) use it to make each verb call one span, with each attempt as an event and a
// debug log line per retry; the store calls a verb makes are spans of their own below it.
// A Storage that does not implement Traced is simply not traced.
type Traced interface {
	// StartSpan starts the span of a call named op (such as "mutate") about the row with
	// the id, and returns a context that carries it. It never fails; with tracing off it
	// returns ctx and a span that only logs (a debug line per lost attempt). The outcome
	// verbs call it; a program need not.
	StartSpan(ctx context.Context, op, id string) (context.Context, Span)
}

// Span is one traced call of a Traced store.
type Span interface {
	// Event records something that happened during the call, with slog-style key/value
	// pairs ("attempt", 2, "error", err).
	Event(name string, keyvals ...any)
	// End ends the span with the call's result: nil for success.
	End(err error)
}

// startSpan starts a verb's span when s is Traced, and a span that records nothing
// otherwise.
func startSpan[T any](ctx context.Context, s Storage[T], op, id string) (context.Context, Span) {
	if t, ok := s.(Traced); ok {
		return t.StartSpan(ctx, op, id)
	}
	return ctx, noSpan{}
}

type noSpan struct{}

func (noSpan) Event(string, ...any) {}
func (noSpan) End(error)            {}
