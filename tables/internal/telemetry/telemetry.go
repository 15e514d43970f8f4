package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
)

// Module names this library to tracing and meter providers (the instrumentation scope).
const Module = "github.com/unified-data/gotables/tables"

// Version is the library's version as spans and metrics report it; the release script sets
// it.
const Version = "v0.1.0"

// Attribute keys. The first are OpenTelemetry's database client conventions (stable);
// the azure.tables ones are the library's own.
const (
	AttrSystem        = "db.system.name"          // SystemTables, SystemCosmos or SystemBlob
	AttrNamespace     = "db.namespace"            // the storage account's name
	AttrOperation     = "db.operation.name"       // "create", "read", "mutate", "BATCH create", …
	AttrTable         = "db.collection.name"      // the table (or a blob document's container)
	AttrBatchSize     = "db.operation.batch.size" // the writes of a batch
	AttrStatusCode    = "db.response.status_code" // the service's HTTP status of a failed call, as a string
	AttrErrorType     = "error.type"              // see ErrorType
	AttrServerAddress = "server.address"
	AttrServerPort    = "server.port"

	AttrPartition = "azure.tables.partition_key"
	AttrRowKey    = "azure.tables.row_key" // only with RecordKeys
	AttrErrorCode = "azure.tables.error_code"
	AttrQueryPlan = "azure.tables.query.plan" // a query's class: point_read, row_range, partition_scan, partitions, table_scan
)

// otherError is error.type of an error that matches none of the library's sentinels: the
// conventions' fallback.
const otherError = "_OTHER"

// ErrorType is error.type of a failed call: the name of the library's sentinel the error
// matches (callerr.Kind: "not_found", "concurrency_conflict", "unavailable", …), or the
// conventions' "_OTHER" when it matches none; "" for nil.
func ErrorType(err error) string {
	if k := callerr.KindName(err); k != "error" {
		return k
	}
	return otherError
}

// SpanKind is the kind of a span: client for a call to a service over the network, as the
// conventions ask, internal for a call in memory and for an outcome verb (whose store
// calls are its children).
type SpanKind uint8

// The kinds of spans.
const (
	KindInternal SpanKind = iota
	KindClient
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
	Start(ctx context.Context, name string, kind SpanKind, attrs []Attribute) (context.Context, Span)
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
	// Endpoint is the account's service (NewEndpoint); nil reports SystemTables alone.
	Endpoint *Endpoint
}

// Call is one call as it is traced and measured: its span when the account traces, its
// start when it has metrics. The zero Call does nothing.
type Call struct {
	span       Span // nil without a tracer
	recordKeys bool
	// m, with ctx, ep, table, op and start, measure the call; nil without metrics.
	m         *Meters
	ctx       context.Context
	ep        *Endpoint
	table, op string
	plan      string
	start     time.Time
}

// Begin starts the span of a call of op on table when t traces, and its measurement when t
// has metrics. op is the operation as users read it ("create", "page", "commit", …); table
// is "" for a call of the whole account.
func (t *Telemetry) Begin(ctx context.Context, table, op string) (context.Context, Call) {
	return t.begin(ctx, table, op, -1, false)
}

// BeginBatch is Begin for a call that sends n writes of op at once (a batch, a
// transaction), named as the conventions name batches: "BATCH <op>" ("BATCH" when op is ""
// because the writes differ) with the batch size, except that a batch of one write is
// that write's op.
func (t *Telemetry) BeginBatch(ctx context.Context, table, op string, n int) (context.Context, Call) {
	if n == 1 && op != "" {
		return t.begin(ctx, table, op, -1, false)
	}
	return t.begin(ctx, table, BatchName(op), n, false)
}

// begin starts a call; size is the batch size, -1 for a call that is not a batch, and verb
// makes the span internal.
func (t *Telemetry) begin(ctx context.Context, table, op string, size int, verb bool) (context.Context, Call) {
	if t == nil || (t.Tracer == nil && !t.Meters.On()) {
		return ctx, Call{}
	}
	ep := t.Endpoint
	if ep == nil {
		ep = defaultEndpoint
	}
	var c Call
	if t.Tracer != nil {
		attrs := make([]Attribute, 0, len(ep.span)+3)
		attrs = append(append(attrs, ep.span...), Attribute{Key: AttrOperation, Value: op})
		if table != "" {
			attrs = append(attrs, Attribute{Key: AttrTable, Value: table})
		}
		if size >= 0 {
			attrs = append(attrs, Attribute{Key: AttrBatchSize, Value: size})
		}
		kind := KindInternal
		if ep.remote() && !verb {
			kind = KindClient
		}
		var sp Span
		ctx, sp = t.Tracer.Start(ctx, spanName(op, table, ep), kind, attrs)
		c.span, c.recordKeys = sp, t.RecordKeys
	}
	if t.Meters.On() {
		c.m, c.ctx, c.ep, c.table, c.op, c.start = t.Meters, ctx, ep, table, op, time.Now()
	}
	return ctx, c
}

// spanName is the conventions' name of a call's span: "{db.operation.name} {target}", the
// target being the table, or for a call of the whole account (table "", as Ping) the
// namespace, or else the server's address and port; op alone when there is none.
func spanName(op, table string, ep *Endpoint) string {
	switch {
	case table != "":
		return op + " " + table
	case ep.Namespace != "":
		return op + " " + ep.Namespace
	case ep.Port != 0:
		return op + " " + net.JoinHostPort(ep.Address, strconv.Itoa(ep.Port))
	case ep.Address != "":
		return op + " " + ep.Address
	}
	return op
}

// batchNames are the batch names of the stores' operations, built once.
var batchNames = map[string]string{"": "BATCH", "create": "BATCH create", "insert": "BATCH insert",
	"upsert": "BATCH upsert", "update": "BATCH update", "delete": "BATCH delete"}

// BatchName is the conventions' name of a batch of op: "BATCH <op>", "BATCH" for "".
func BatchName(op string) string {
	if n, ok := batchNames[op]; ok {
		return n
	}
	return "BATCH " + op
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

// Plan records the class of the query the call sends (package plan), on its span and on
// its duration. Finish must be deferred on the same variable for the metric to see it.
func (c *Call) Plan(class string) {
	c.plan = class
	if c.span != nil {
		c.span.SetAttributes(Attribute{Key: AttrQueryPlan, Value: class})
	}
}

// Finish measures the call and ends its span with the error *err holds; it is meant to be
// deferred with the address of the call's named result. A failed call's span carries
// error.type, the service's HTTP status (db.response.status_code) and its error code
// (azure.tables.error_code) when it answered.
func (c *Call) Finish(err *error) {
	if c.m != nil {
		c.m.called(c.ctx, c.ep, c.table, c.op, c.plan, c.start, *err)
	}
	if c.span == nil {
		return
	}
	if *err != nil {
		kind := ErrorType(*err)
		desc := kind
		if c.recordKeys {
			desc = (*err).Error()
		}
		c.span.SetError(kind, desc)
		var se *abstractions.StatusError
		if errors.As(*err, &se) {
			attrs := make([]Attribute, 0, 2)
			if se.StatusCode != 0 {
				attrs = append(attrs, Attribute{Key: AttrStatusCode, Value: strconv.Itoa(se.StatusCode)})
			}
			if se.ErrorCode != "" {
				attrs = append(attrs, Attribute{Key: AttrErrorCode, Value: se.ErrorCode})
			}
			c.span.SetAttributes(attrs...)
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
