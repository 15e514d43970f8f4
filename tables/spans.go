package tables

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
)

// Tracing.
//
// Every store call is one span when the account has a Tracer: named "<op> <table>" (as
// "create Customer"), with the operation, the table and the partition as attributes, the row
// key only when Options.RecordKeys allows it, and on failure the kind of error (the sentinel
// it matches) and the service's error code. The outcome verbs of package abstractions make
// one span per verb call, with each lost attempt as an event; the store calls they make are
// its children, and the SDK's HTTP spans are children of those. Without a Tracer nothing is
// traced: a store call checks for one and builds no span or attribute (BenchmarkTracing
// measures both sides).

// attribute is one key and value of a span: the Azure SDK's own, so that spans reach its
// tracing provider without a copy.
type attribute = tracing.Attribute

// A tracer starts spans. The Azure backend adapts the Azure SDK's tracing.Provider to it, so
// an OpenTelemetry tracer provider reaches it through the SDK's adapter; a test can give its
// own. Implementations must be safe for concurrent use.
type tracer interface {
	// Start starts a span as a child of the span ctx carries, and returns a context that
	// carries the new one.
	Start(ctx context.Context, name string, attrs []attribute) (context.Context, traceSpan)
}

// traceSpan is a span a Tracer started.
type traceSpan interface {
	// SetAttributes adds attributes to the span.
	SetAttributes(attrs ...attribute)
	// AddEvent records an event with attributes.
	AddEvent(name string, attrs ...attribute)
	// SetError marks the span failed: kind is the error's class (see errorKind), and
	// description the error's text when Options.RecordKeys allows it (error texts name
	// keys), the kind otherwise.
	SetError(kind, description string)
	// End ends the span.
	End()
}

// Span attribute keys.
const (
	attrSystem     = "db.system.name"     // always "azure.tables"
	attrOperation  = "db.operation.name"  // "create", "read", "mutate", …
	attrTable      = "db.collection.name" // the table
	attrPartition  = "azure.tables.partition_key"
	attrRowKey     = "azure.tables.row_key" // only with Options.RecordKeys
	attrErrorKind  = "error.type"           // see errorKind
	attrStatusCode = "azure.tables.error_code"
)

// errorKinds are the sentinels errorKind names, in the order it tries them.
var errorKinds = []struct {
	err  error
	kind string
}{
	{abstractions.ErrNotFound, "not_found"},
	{abstractions.ErrDuplicateKey, "duplicate_key"},
	{abstractions.ErrConcurrencyConflict, "concurrency_conflict"},
	{abstractions.ErrInvalidKey, "invalid_key"},
	{abstractions.ErrInvalidArgument, "invalid_argument"},
	{abstractions.ErrNotSupported, "not_supported"},
	{abstractions.ErrProtectedProperty, "protected_property"},
	{abstractions.ErrOversizedCell, "oversized_cell"},
	{abstractions.ErrOversizedValue, "oversized_value"},
	{abstractions.ErrIntegrity, "integrity"},
	{abstractions.ErrBlobOffloadNotConfigured, "blob_offload_not_configured"},
	{abstractions.ErrUnavailable, "unavailable"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline_exceeded"},
}

// errorKind names the class of err for spans and logs: the sentinel it matches in
// snake_case ("not_found", "concurrency_conflict", "unavailable", …), "error" when it
// matches none, "" for nil.
func errorKind(err error) string {
	if err == nil {
		return ""
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return "error"
}

// call is one store call as it is traced and measured: its span when the account traces,
// its start when it has metrics. The zero call (neither) does nothing, and a store call
// without either builds nothing: no span, no attribute, no reading of the clock.
type call struct {
	span       traceSpan // nil without a tracer
	recordKeys bool
	// m, with ctx, table, op and start, measure the call (metrics.go); nil without metrics.
	m         *meters
	ctx       context.Context
	table, op string
	start     time.Time
}

// begin starts the span of a store call when the account traces, and its measurement when
// the account has metrics.
func (s *Store[T]) begin(ctx context.Context, op string) (context.Context, call) {
	t, m := s.acct.opts.Tracer, s.acct.meters
	if t == nil && !m.on() {
		return ctx, call{}
	}
	var c call
	if t != nil {
		var sp traceSpan
		ctx, sp = t.Start(ctx, op+" "+s.table, []attribute{
			{Key: attrSystem, Value: "azure.tables"}, {Key: attrOperation, Value: op}, {Key: attrTable, Value: s.table},
		})
		c.span, c.recordKeys = sp, s.acct.opts.RecordKeys
	}
	if m.on() {
		c.m, c.ctx, c.table, c.op, c.start = m, ctx, s.table, op, time.Now()
	}
	return ctx, c
}

// traced reports whether the call has a span.
func (c call) traced() bool { return c.span != nil }

// keys records the keys the call addresses: the partition always, the row key only when
// the account records keys.
func (c call) keys(a *Account, pk, rk string) {
	if c.span == nil {
		return
	}
	attrs := []attribute{{Key: attrPartition, Value: pk}}
	if rk != "" && a.opts.RecordKeys {
		attrs = append(attrs, attribute{Key: attrRowKey, Value: rk})
	}
	c.span.SetAttributes(attrs...)
}

// finish measures the call and ends its span with the error *err holds.
func (c call) finish(err *error) {
	if c.m != nil {
		c.m.called(c.ctx, c.table, c.op, c.start, *err)
	}
	if c.span == nil {
		return
	}
	if *err != nil {
		kind := errorKind(*err)
		desc := kind
		if c.recordKeys {
			desc = (*err).Error()
		}
		c.span.SetError(kind, desc)
		var se *abstractions.StatusError
		if errors.As(*err, &se) && se.ErrorCode != "" {
			c.span.SetAttributes(attribute{Key: attrStatusCode, Value: se.ErrorCode})
		}
	}
	c.span.End()
}

// StartSpan starts the span of an outcome verb ([driver.Traced]): a span when the account
// traces, and in every case a debug log line per lost attempt. It is not meant to be called
// directly.
func (s *Store[T]) StartSpan(ctx context.Context, op, id string) (context.Context, driver.Span) {
	vs := &verbSpan{acct: s.acct, op: op, table: s.table}
	if s.acct.opts.RecordKeys {
		vs.id = id
	}
	ctx, vs.call = s.begin(ctx, op)
	if vs.call.traced() {
		pk, rk := abstractions.SplitID(id)
		vs.call.keys(s.acct, pk, rk)
	}
	return ctx, vs
}

// verbSpan is the span of an outcome verb.
type verbSpan struct {
	acct      *Account
	call      call
	op, table string
	id        string // only with Options.RecordKeys
}

func (v *verbSpan) Event(name string, keyvals ...any) {
	switch name {
	case driver.EventAttemptLost, driver.EventCreateLost:
		v.call.m.lostRace(v.call.ctx, v.table, v.op, false)
	case driver.EventAttemptsExhausted:
		v.call.m.lostRace(v.call.ctx, v.table, v.op, true)
	}
	if v.call.traced() {
		attrs := make([]attribute, 0, len(keyvals)/2)
		for i := 0; i+1 < len(keyvals); i += 2 {
			k, _ := keyvals[i].(string)
			val := keyvals[i+1]
			if e, ok := val.(error); ok {
				val = errorKind(e)
			}
			attrs = append(attrs, attribute{Key: k, Value: val})
		}
		v.call.span.AddEvent(name, attrs...)
	}
	if name == driver.EventAttemptLost {
		l := v.acct.logger()
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
				val = errorKind(e)
			}
			args = append(args, keyvals[i], val)
		}
		l.Debug("unified tables: an attempt lost its race; retrying", args...)
	}
}

func (v *verbSpan) End(err error) { v.call.finish(&err) }

// beginID starts the span of a call about the row with the id, with its keys as a store
// resolves them.
func (s *Store[T]) beginID(ctx context.Context, op, id string) (context.Context, call) {
	ctx, c := s.begin(ctx, op)
	if c.traced() {
		pk, rk := abstractions.SplitID(s.normalID(id))
		c.keys(s.acct, pk, rk)
	}
	return ctx, c
}

// beginEntity is beginID for a call given an entity (which may be nil).
func (s *Store[T]) beginEntity(ctx context.Context, op string, v *T) (context.Context, call) {
	if v == nil || s.acct.opts.Tracer == nil {
		return s.begin(ctx, op)
	}
	return s.beginID(ctx, op, s.entity(v).ID)
}

// beginPartition starts the span of a call about one partition ("" for the whole table).
func (s *Store[T]) beginPartition(ctx context.Context, op, partition string) (context.Context, call) {
	ctx, c := s.begin(ctx, op)
	if c.traced() && partition != "" {
		c.keys(s.acct, s.normalPartition(partition), "")
	}
	return ctx, c
}
