package backend

import "context"

// Hooks is what a store gives the outcome verbs (driver.Hooks documents it): a store's
// type embeds it, and the verbs find it through the unexported method, which only a type
// that embeds a Hooks has.
type Hooks struct {
	turn        func(ctx context.Context, id string) (release func(), err error)
	startSpan   func(ctx context.Context, op, id string) (context.Context, Span)
	cachesReads bool
}

// NewHooks returns the Hooks of a store (driver.NewHooks).
func NewHooks(turn func(ctx context.Context, id string) (release func(), err error),
	startSpan func(ctx context.Context, op, id string) (context.Context, Span), cachesReads bool) Hooks {
	return Hooks{turn: turn, startSpan: startSpan, cachesReads: cachesReads}
}

func (h Hooks) storeHooks() Hooks { return h }

// hooksOf returns the Hooks store embeds, the zero Hooks when it embeds none.
func hooksOf(store any) Hooks {
	if s, ok := store.(interface{ storeHooks() Hooks }); ok {
		return s.storeHooks()
	}
	return Hooks{}
}

// Turn waits for the turn of the row with the id among the calls the store queues, and
// returns the function that gives it back. A store without a queue returns at once, with
// ctx's error if it has ended.
func Turn(ctx context.Context, store any, id string) (release func(), err error) {
	if h := hooksOf(store); h.turn != nil {
		return h.turn(ctx, id)
	}
	return func() {}, ctx.Err()
}

// StartSpan starts the span of a verb's call named op on the row with the id; a store
// that does not trace returns ctx and a span that records nothing.
func StartSpan(ctx context.Context, store any, op, id string) (context.Context, Span) {
	if h := hooksOf(store); h.startSpan != nil {
		return h.startSpan(ctx, op, id)
	}
	return ctx, noSpan{}
}

// CachesReads reports whether the store keeps what it reads in a read cache.
func CachesReads(store any) bool { return hooksOf(store).cachesReads }

type noSpan struct{}

func (noSpan) Event(string, ...any) {}
func (noSpan) End(error)            {}
