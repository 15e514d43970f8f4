//go:build !udtables_nometrics

package telemetry

// MetricsCompiled is false only when the library is built with the udtables_nometrics tag,
// which compiles the metric hooks out: a build to compare the hooks' cost against, not one
// for use.
const MetricsCompiled = true
