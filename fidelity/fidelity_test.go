package fidelity

import (
	"context"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azservice"
	"go.uber.org/goleak"
)

// transport carries the Azurite half's requests. The suite closes its idle keep-alive
// connections when it ends, so goleak sees no connection goroutine left behind.
var transport = http.DefaultTransport.(*http.Transport).Clone()

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(closingIdle{m})
}

// closingIdle runs the tests, then closes the transport's idle connections before goleak
// looks for goroutines.
type closingIdle struct{ m *testing.M }

func (c closingIdle) Run() int {
	code := c.m.Run()
	transport.CloseIdleConnections()
	return code
}

var (
	memOnce sync.Once
	mem     *memservice.Service
	azOnce  sync.Once
	az      Backend
	azErr   error
)

// azurite returns the Azurite backend, built once.
func azurite(conn string) (Backend, error) {
	azOnce.Do(func() {
		opts := azcore.ClientOptions{Transport: &http.Client{Transport: transport}}
		tables, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: opts})
		if err != nil {
			azErr = err
			return
		}
		blobs, err := azblobs.NewFromConnectionString(conn, &azblobs.Options{ClientOptions: opts})
		if err != nil {
			azErr = err
			return
		}
		az = Backend{Name: Azurite, Tables: tables, Blobs: blobs}
	})
	return az, azErr
}

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
	az, err := azurite(conn)
	if err != nil {
		t.Fatalf("azurite: %v", err)
	}
	return append([]Backend{az}, out...)
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

// diffCases is the number of random filters TestQueryDifferential checks; FuzzQueryDifferential
// checks as many as -fuzztime allows.
const diffCases = 300

// diffStores stores the differential data set on every backend; the memory service comes
// last. Without Azurite the test still checks the memory service against Go.
func diffStores(tb testing.TB) []*DiffStore {
	tb.Helper()
	var bs []Backend
	if t, ok := tb.(*testing.T); ok {
		bs = backends(t)
	} else {
		memOnce.Do(func() { mem = memservice.New() })
		bs = []Backend{{Name: Memory, Tables: mem, Blobs: mem}}
		if conn := os.Getenv("UNIFIED_TABLES_TEST_CONNECTION_STRING"); conn != "" {
			az, err := azurite(conn)
			if err != nil {
				tb.Fatalf("azurite: %v", err)
			}
			bs = append([]Backend{az}, bs...)
		}
	}
	var out []*DiffStore
	for _, b := range bs {
		ds, drop, err := NewDiffStore(context.Background(), b)
		if err != nil {
			tb.Fatalf("%s: storing the data set: %v", b.Name, err)
		}
		tb.Cleanup(drop)
		out = append(out, ds)
	}
	return out
}

// TestQueryDifferential runs random filters over a fixed random data set: Azurite and the
// memory service must select the same rows, and the rows Go selects.
func TestQueryDifferential(t *testing.T) {
	stores := diffStores(t)
	ctx := context.Background()
	refused := 0
	for seed := uint64(0); seed < diffCases; seed++ {
		problem, r := CheckRandomFilter(ctx, seed, stores)
		if problem != "" {
			t.Fatal(problem)
		}
		if r {
			refused++
		}
	}
	t.Logf("%d random filters, %d refused identically", diffCases, refused)
	if refused > diffCases/2 {
		t.Errorf("%d of %d random filters were refused; the generator should mostly build supported ones", refused, diffCases)
	}
}

func FuzzQueryDifferential(f *testing.F) {
	for seed := uint64(0); seed < 8; seed++ {
		f.Add(seed)
	}
	stores := diffStores(f)
	f.Fuzz(func(t *testing.T, seed uint64) {
		if problem, _ := CheckRandomFilter(context.Background(), seed, stores); problem != "" {
			t.Fatal(problem)
		}
	})
}
