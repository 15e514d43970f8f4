package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
)

// Module names this library to tracing and meter providers (the instrumentation scope).
const Module = "github.com/unified-data/gotables/tables"

// Version is the library's version as spans and metrics report it; the release script sets
// it.
const Version = "v0.1.0"

// Span attribute keys.
const (
	AttrSystem     = "db.system.name"     // always "azure.tables"
	AttrOperation  = "db.operation.name"  // "create", "read", "mutate", …
	AttrTable      = "db.collection.name" // the table (or a blob document's container)
	AttrPartition  = "azure.tables.partition_key"
	AttrRowKey     = "azure.tables.row_key" // only with RecordKeys
	AttrErrorKind  = "error.type"           // see callerr.Kind
	AttrStatusCode = "azure.tables.error_code"
)

// Attribute is one key and value of a span (the Azure SDK's tracing.Attribute, which the
// tables package's adapter converts it to).
type Attribute struct {
	Key   string
	Value any
}

// A Tracer starts spans. The Azure SDK's tracing provider is adapted to it (in package tables), so
// an OpenTelemetry tracer provider reaches it through the SDK's adapter; a test can give its
// own. Implementations must be safe for concurrent use.
type Tracer interface {
	// Start starts a span as a child of the span ctx carries, and returns a context that
	// carries the new one.
	Start(ctx context.Context, name string, attrs []Attribute) (context.Context, Span)
}

// Span is a span a Tracer started.
type Span interface {
	// SetAttributes adds attributes to the span.
	SetAttributes(attrs ...Attribute)
	// AddEvent records an event with attributes.
	AddEvent(name string, attrs ...Attribute)
	// SetError marks the span failed: kind is the error's class (callerr.Kind), and
	// description the error's text when keys may be recorded (error texts name keys), the
	// kind otherwise.
	SetError(kind, description string)
	// End ends the span.
	End()
}

// Telemetry is an account's tracer and meters. The zero Telemetry (and a nil one) records
// nothing and costs nothing per call. It is safe for concurrent use once built.
type Telemetry struct {
	// Tracer receives a span per call; nil traces nothing.
	Tracer Tracer
	// Meters record the metrics; nil records nothing.
	Meters *Meters
	// RecordKeys lets spans carry row keys and error texts (Options.RecordKeys).
	RecordKeys bool
	// Logger receives the outcome verbs' debug lines; nil means slog.Default().
	Logger *slog.Logger
}

// Call is one call as it is traced and measured: its span when the account traces, its
// start when it has metrics. The zero Call does nothing.
type Call struct {
	span       Span // nil without a tracer
	recordKeys bool
	// m, with ctx, table, op and start, measure the call; nil without metrics.
	m         *Meters
	ctx       context.Context
	table, op string
	start     time.Time
}

// Begin starts the span of a call of op on table when t traces, and its measurement when t
// has metrics. op is the operation as users read it ("create", "page", "commit", …).
func (t *Telemetry) Begin(ctx context.Context, table, op string) (context.Context, Call) {
	if t == nil || (t.Tracer == nil && !t.Meters.On()) {
		return ctx, Call{}
	}
	var c Call
	if t.Tracer != nil {
		var sp Span
		ctx, sp = t.Tracer.Start(ctx, op+" "+table, []Attribute{
			{Key: AttrSystem, Value: "azure.tables"}, {Key: AttrOperation, Value: op}, {Key: AttrTable, Value: table},
		})
		c.span, c.recordKeys = sp, t.RecordKeys
	}
	if t.Meters.On() {
		c.m, c.ctx, c.table, c.op, c.start = t.Meters, ctx, table, op, time.Now()
	}
	return ctx, c
}

// Traced reports whether the call has a span: when it does not, the caller need not
// compute what it would record.
func (c Call) Traced() bool { return c.span != nil }

// Keys records the keys the call addresses: the partition always, the row key only when
// keys may be recorded.
func (c Call) Keys(pk, rk string) {
	if c.span == nil {
		return
	}
	attrs := []Attribute{{Key: AttrPartition, Value: pk}}
	if rk != "" && c.recordKeys {
		attrs = append(attrs, Attribute{Key: AttrRowKey, Value: rk})
	}
	c.span.SetAttributes(attrs...)
}

// Finish measures the call and ends its span with the error *err holds; it is meant to be
// deferred with the address of the call's named result.
func (c Call) Finish(err *error) {
	if c.m != nil {
		c.m.called(c.ctx, c.table, c.op, c.start, *err)
	}
	if c.span == nil {
		return
	}
	if *err != nil {
		kind := callerr.KindName(*err)
		desc := kind
		if c.recordKeys {
			desc = (*err).Error()
		}
		c.span.SetError(kind, desc)
		var se *abstractions.StatusError
		if errors.As(*err, &se) && se.ErrorCode != "" {
			c.span.SetAttributes(Attribute{Key: AttrStatusCode, Value: se.ErrorCode})
		}
	}
	c.span.End()
}

// logger returns the logger of the verbs' debug lines.
func (t *Telemetry) logger() *slog.Logger {
	if t != nil && t.Logger != nil {
		return t.Logger
	}
	return slog.Default()
}

// Carrier is implemented by the blob service an account hands out, so that the packages
// built over it (blob documents) record through the account's telemetry.
type Carrier interface {
	Telemetry() *Telemetry
}

// From returns the telemetry v carries (see Carrier), nil when it carries none.
func From(v any) *Telemetry {
	if c, ok := v.(Carrier); ok {
		return c.Telemetry()
	}
	return nil
}
