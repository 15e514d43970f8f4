// Package azuritetest gives a test the storage account its environment names, normally the
// Azurite emulator that `make test` starts, the way this repository's own tests use it. A
// program's own tests can use it too.
//
// The account is the connection string in UNIFIED_TABLES_TEST_CONNECTION_STRING. Without
// one, a test that needs it is skipped, unless UNIFIED_TABLES_REQUIRE_AZURITE=1 (as CI sets
// it), which makes the missing emulator a failure rather than a silent skip.
package azuritetest

import (
	"net/http"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// The environment variables the package reads.
const (
	// ConnEnv holds the test account's connection string.
	ConnEnv = "UNIFIED_TABLES_TEST_CONNECTION_STRING"
	// RequireEnv, set to 1, turns a missing connection string into a failure.
	RequireEnv = "UNIFIED_TABLES_REQUIRE_AZURITE"
)

// ConnectionString returns the test account's connection string. Without one it skips tb,
// or fails it when the environment requires the emulator.
func ConnectionString(tb testing.TB) string {
	tb.Helper()
	conn, ok := LookupConnectionString(tb)
	if !ok {
		tb.Skipf("%s is not set", ConnEnv)
	}
	return conn
}

// LookupConnectionString returns the test account's connection string and true, or "" and
// false when none is set, for a test that has something to run without the emulator (the
// in-memory half of a differential test). It fails tb when the environment requires the
// emulator and none is set.
func LookupConnectionString(tb testing.TB) (string, bool) {
	tb.Helper()
	conn := os.Getenv(ConnEnv)
	if conn == "" && os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("%s=1 but %s is not set: start Azurite (make test does)", RequireEnv, ConnEnv)
	}
	return conn, conn != ""
}

// ClientOptions returns Azure SDK client options for a test: an HTTP transport of the test's
// own, whose idle keep-alive connections are closed when the test ends (so a goroutine-leak
// check after the test sees none), and no SDK retries (so a failure shows at once).
func ClientOptions(tb testing.TB) azcore.ClientOptions {
	tb.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tb.Cleanup(tr.CloseIdleConnections)
	return azcore.ClientOptions{Transport: &http.Client{Transport: tr}, Retry: policy.RetryOptions{MaxRetries: -1}}
}
