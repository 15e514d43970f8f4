// Package tracing shows how a service traces its store calls with OpenTelemetry: the Azure
// SDK's adapter (azotel) turns an OpenTelemetry tracer provider into the SDK's tracing
// provider, and an account given it in its client options makes every store call and every
// outcome verb call a span, parent of the SDK's HTTP spans.
//
// Its tests run the documented spans against Azurite with an in-memory exporter, and check
// every call kind's metric and spans against OpenTelemetry's database client conventions in
// memory and on Azurite (conventions_test.go).
package tracing

import (
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/tracing/azotel"
	"go.opentelemetry.io/otel/trace"

	"github.com/unified-data/gotables/tables"
)

// NewAccount returns the account of a connection string whose calls are traced by tp (for
// example the SDK's sdktrace.NewTracerProvider with your exporter, or otel.GetTracerProvider()).
// opts may be nil; its ClientOptions.TracingProvider is replaced.
func NewAccount(conn string, tp trace.TracerProvider, opts *tables.Options) (*tables.Account, error) {
	o := tables.Options{}
	if opts != nil {
		o = *opts
	}
	o.ClientOptions.TracingProvider = azotel.NewTracingProvider(tp, nil)
	return tables.NewAccount(conn, &o)
}

// ClientOptions is the same wiring for code that builds its client options itself.
func ClientOptions(tp trace.TracerProvider) azcore.ClientOptions {
	return azcore.ClientOptions{TracingProvider: azotel.NewTracingProvider(tp, nil)}
}
