package tables

import (
	"context"

	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/telemetry"
)

// Every store call is one span and one measurement of the account's telemetry (package
// tables/internal/telemetry owns both): begin starts it, with the keys the call addresses,
// and the call defers its Finish.

// startSpan starts the span of an outcome verb (the span of the store's [driver.Hooks]): a
// span when the account traces, and in every case a debug log line per lost attempt.
func (s *Store[T]) startSpan(ctx context.Context, op, id string) (context.Context, driver.Span) {
	return s.core.Acct.Tel.Verb(ctx, s.core.Name, op, id)
}

// beginEntity is BeginID for a call given an entity (which may be nil).
func (s *Store[T]) beginEntity(ctx context.Context, op string, v *T) (context.Context, telemetry.Call) {
	if v == nil || s.core.Acct.Tel.Tracer == nil {
		return s.core.Begin(ctx, op)
	}
	return s.core.BeginID(ctx, op, s.entity(v).ID)
}
