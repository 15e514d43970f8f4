package fidelity

import (
	"os"
	"sync"
	"testing"

	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/azservice"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The Azure SDK keeps idle keep-alive connections in its shared HTTP client; their
	// reader and writer goroutines outlive the tests by design.
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

var (
	memOnce sync.Once
	mem     *memservice.Service
	azOnce  sync.Once
	az      *azservice.Service
	azErr   error
)

// backends returns the memory service and, when a connection string is set, Azurite.
// Without one the Azurite half is skipped, unless UNIFIED_TABLES_REQUIRE_AZURITE=1.
func backends(t *testing.T) []Backend {
	t.Helper()
	memOnce.Do(func() { mem = memservice.New() })
	out := []Backend{{Name: Memory, Tables: mem, Blobs: mem}}
	conn := os.Getenv("UNIFIED_TABLES_TEST_CONNECTION_STRING")
	if conn == "" {
		if os.Getenv("UNIFIED_TABLES_REQUIRE_AZURITE") == "1" {
			t.Fatal("UNIFIED_TABLES_REQUIRE_AZURITE=1 but UNIFIED_TABLES_TEST_CONNECTION_STRING is not set: start Azurite with `make test`")
		}
		t.Log("UNIFIED_TABLES_TEST_CONNECTION_STRING not set: running on the memory service only")
		return out
	}
	azOnce.Do(func() { az, azErr = azservice.NewFromConnectionString(conn) })
	if azErr != nil {
		t.Fatalf("azurite: %v", azErr)
	}
	return append([]Backend{{Name: Azurite, Tables: az, Blobs: az}}, out...)
}

func TestServiceScenarios(t *testing.T) {
	Run(t, ServiceScenarios(), backends)
}

func TestStoreScenarios(t *testing.T) {
	Run(t, StoreScenarios(), backends)
}

func TestScenarioCount(t *testing.T) {
	if n := len(ServiceScenarios()); n < 40 {
		t.Fatalf("%d service scenarios; the suite promises at least 40", n)
	}
}

func TestDeviationsAreUsed(t *testing.T) {
	used := map[string]bool{}
	for _, sc := range append(ServiceScenarios(), StoreScenarios()...) {
		used[sc.Deviation] = true
	}
	for name := range Deviations {
		if !used[name] {
			t.Errorf("deviation %q is listed but no scenario exercises it", name)
		}
	}
}
