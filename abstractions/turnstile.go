package abstractions

import (
	"context"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// takeTurn takes the row's turn when s queues the verbs' calls per row (driver.Turnstile;
// the stores of both backends do, with one queue per row of an account); otherwise it
// returns at once, and concurrent callers race through the service. The turn is held for
// the whole call, the retry waits included: a call that lost to another process backs off
// with the process's other callers of the row behind it, so the process as a whole makes
// room for the other writer.
func takeTurn[T any](ctx context.Context, s Storage[T], id string) (func(), error) {
	if t, ok := s.(backend.Turnstile); ok {
		return t.Turn(ctx, id)
	}
	return func() {}, ctx.Err()
}
