package tables

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"

	"github.com/unified-data/gotables/tables/internal/telemetry"
)

// sdkTracer adapts the Azure SDK's tracing to the library's telemetry: spans of store calls
// are started by the same provider as the SDK's own, so the SDK's HTTP spans become their
// children. (The adapter lives here, not in package telemetry, so that blob documents,
// which record through telemetry, link no Azure SDK.)
type sdkTracer struct{ t tracing.Tracer }

// newTracer returns the tracer of a provider, or nil when the provider traces nothing (the
// zero Provider, the default).
func newTracer(p tracing.Provider) telemetry.Tracer {
	t := p.NewTracer(telemetry.Module, telemetry.Version)
	if !t.Enabled() {
		return nil
	}
	return sdkTracer{t}
}

// sdkAttributes copies attributes into the SDK's type.
func sdkAttributes(attrs []telemetry.Attribute) []tracing.Attribute {
	out := make([]tracing.Attribute, len(attrs))
	for i, a := range attrs {
		out[i] = tracing.Attribute(a)
	}
	return out
}

func (a sdkTracer) Start(ctx context.Context, name string, kind telemetry.SpanKind, attrs []telemetry.Attribute) (context.Context, telemetry.Span) {
	k := tracing.SpanKindInternal
	if kind == telemetry.KindClient {
		k = tracing.SpanKindClient
	}
	ctx, sp := a.t.Start(ctx, name, &tracing.SpanOptions{Kind: k, Attributes: sdkAttributes(attrs)})
	return ctx, sdkSpan{sp}
}

type sdkSpan struct{ s tracing.Span }

func (s sdkSpan) SetAttributes(attrs ...telemetry.Attribute) {
	s.s.SetAttributes(sdkAttributes(attrs)...)
}

func (s sdkSpan) AddEvent(name string, attrs ...telemetry.Attribute) {
	s.s.AddEvent(name, sdkAttributes(attrs)...)
}

func (s sdkSpan) SetError(kind, description string) {
	s.s.SetAttributes(tracing.Attribute{Key: telemetry.AttrErrorType, Value: kind})
	s.s.SetStatus(tracing.SpanStatusError, description)
}

func (s sdkSpan) End() { s.s.End() }
