package abstractions

import (
	"context"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// startSpan starts a verb's span when s traces its calls (driver.Traced; the stores of both
// backends do), and a span that records nothing otherwise. Each verb call is one span, with
// each attempt as an event and a debug log line per retry; the store calls a verb makes are
// spans of their own below it.
func startSpan[T any](ctx context.Context, s Storage[T], op, id string) (context.Context, backend.Span) {
	if t, ok := s.(backend.Traced); ok {
		return t.StartSpan(ctx, op, id)
	}
	return ctx, noSpan{}
}

type noSpan struct{}

func (noSpan) Event(string, ...any) {}
func (noSpan) End(error)            {}
