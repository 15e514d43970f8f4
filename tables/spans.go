package tables

import (
	"context"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/telemetry"
)

// Every store call is one span and one measurement of the account's telemetry (package
// tables/internal/telemetry owns both): begin starts it, with the keys the call addresses,
// and the call defers its Finish.

// begin starts the telemetry of a store call.
func (s *Store[T]) begin(ctx context.Context, op string) (context.Context, telemetry.Call) {
	return s.acct.tel.Begin(ctx, s.table, op)
}

// startSpan starts the span of an outcome verb (the span of the store's [driver.Hooks]): a
// span when the account traces, and in every case a debug log line per lost attempt.
func (s *Store[T]) startSpan(ctx context.Context, op, id string) (context.Context, driver.Span) {
	var pk, rk string
	if s.acct.tel.Tracer != nil {
		pk, rk = abstractions.SplitID(id)
	}
	return s.acct.tel.Verb(ctx, s.table, op, id, pk, rk)
}

// beginID starts the telemetry of a call about the row with the id, with its keys as a
// store resolves them.
func (s *Store[T]) beginID(ctx context.Context, op, id string) (context.Context, telemetry.Call) {
	ctx, c := s.begin(ctx, op)
	if c.Traced() {
		c.Keys(abstractions.SplitID(s.normalID(id)))
	}
	return ctx, c
}

// beginEntity is beginID for a call given an entity (which may be nil).
func (s *Store[T]) beginEntity(ctx context.Context, op string, v *T) (context.Context, telemetry.Call) {
	if v == nil || s.acct.tel.Tracer == nil {
		return s.begin(ctx, op)
	}
	return s.beginID(ctx, op, s.entity(v).ID)
}

// beginPartition starts the telemetry of a call about one partition ("" for the whole
// table).
func (s *Store[T]) beginPartition(ctx context.Context, op, partition string) (context.Context, telemetry.Call) {
	ctx, c := s.begin(ctx, op)
	if c.Traced() && partition != "" {
		c.Keys(s.normalPartition(partition), "")
	}
	return ctx, c
}

// countCache records a lookup of the read cache when the store caches (a store whose
// policy is Disabled does not look).
func (s *Store[T]) countCache(ctx context.Context, hit bool) {
	if s.policy.enabled() {
		s.acct.tel.Meters.CacheLookup(ctx, s.table, hit)
	}
}
