//go:build udtables_nometrics

package telemetry

// MetricsCompiled is false: the udtables_nometrics tag compiles the metric hooks out, so
// that the metrics benchmark can compare a build with them against one without.
const MetricsCompiled = false
