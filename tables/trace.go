package tables

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
)

// tracerModule names this library to the tracing provider (the instrumentation scope).
const tracerModule = "github.com/unified-data/gotables/tables"

// tracerVersion is the library's version as spans report it; the release script sets it.
const tracerVersion = "v0.1.0"

// sdkTracer adapts the Azure SDK's tracing to the engine's Tracer: spans of store calls are
// started by the same provider as the SDK's own, so the SDK's HTTP spans become their
// children.
type sdkTracer struct{ t tracing.Tracer }

// newTracer returns the engine tracer of a provider, or nil when the provider traces nothing
// (the zero Provider, the default).
func newTracer(p tracing.Provider) tracer {
	t := p.NewTracer(tracerModule, tracerVersion)
	if !t.Enabled() {
		return nil
	}
	return sdkTracer{t}
}

func (a sdkTracer) Start(ctx context.Context, name string, attrs []attribute) (context.Context, traceSpan) {
	ctx, sp := a.t.Start(ctx, name, &tracing.SpanOptions{Kind: tracing.SpanKindInternal, Attributes: attrs})
	return ctx, sdkSpan{sp}
}

type sdkSpan struct{ s tracing.Span }

func (s sdkSpan) SetAttributes(attrs ...attribute) { s.s.SetAttributes(attrs...) }

func (s sdkSpan) AddEvent(name string, attrs ...attribute) {
	s.s.AddEvent(name, attrs...)
}

func (s sdkSpan) SetError(kind, description string) {
	s.s.SetAttributes(tracing.Attribute{Key: attrErrorKind, Value: kind})
	s.s.SetStatus(tracing.SpanStatusError, description)
}

func (s sdkSpan) End() { s.s.End() }
