package telemetry

import (
	"context"
	"log/slog"

	"github.com/unified-data/gotables/abstractions"

	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/callerr"
)

// Verb starts the span of an outcome verb (the span of [driver.Hooks]) on the row id of
// table: a span when t traces, with the keys of id as written, and in every case a debug log
// line per lost attempt.
func (t *Telemetry) Verb(ctx context.Context, table, op, id string) (context.Context, driver.Span) {
	vs := &verbSpan{t: t, op: op, table: table}
	if t != nil && t.RecordKeys {
		vs.id = id
	}
	ctx, vs.call = t.begin(ctx, table, op, -1, true)
	if vs.call.Traced() {
		vs.call.Keys(abstractions.SplitID(id))
	}
	return ctx, vs
}

// verbSpan is the span of an outcome verb.
type verbSpan struct {
	t         *Telemetry
	call      Call
	op, table string
	id        string // only with RecordKeys
}

func (v *verbSpan) Event(name string, keyvals ...any) {
	switch name {
	case driver.EventAttemptLost, driver.EventCreateLost:
		v.call.m.LostRace(v.call.ctx, v.table, v.op, false)
	case driver.EventAttemptsExhausted:
		v.call.m.LostRace(v.call.ctx, v.table, v.op, true)
	}
	if v.call.Traced() {
		attrs := make([]Attribute, 0, len(keyvals)/2)
		for i := 0; i+1 < len(keyvals); i += 2 {
			k, _ := keyvals[i].(string)
			val := keyvals[i+1]
			if e, ok := val.(error); ok {
				val = callerr.KindName(e)
			}
			attrs = append(attrs, Attribute{Key: k, Value: val})
		}
		v.call.span.AddEvent(name, attrs...)
	}
	if name == driver.EventAttemptLost {
		l := v.t.logger()
		if !l.Enabled(context.Background(), slog.LevelDebug) {
			return
		}
		args := []any{"op", v.op, "table", v.table}
		if v.id != "" {
			args = append(args, "id", v.id)
		}
		for i := 0; i+1 < len(keyvals); i += 2 {
			val := keyvals[i+1]
			if e, ok := val.(error); ok {
				val = callerr.KindName(e)
			}
			args = append(args, keyvals[i], val)
		}
		l.Debug("unified tables: an attempt lost its race; retrying", args...)
	}
}

func (v *verbSpan) End(err error) { v.call.Finish(&err) }
