//go:build udtables_nometrics

package tables

// metricsCompiled is false: the udtables_nometrics tag compiles the metric hooks out, so
// that BenchmarkMetrics can compare a build with them against one without.
const metricsCompiled = false
