package readmecheck

// The guides' Go blocks name packages no code of the tools module imports; importing them
// here keeps them among the module's requirements, where the type checker finds them.
import _ "go.opentelemetry.io/otel/sdk/metric"
