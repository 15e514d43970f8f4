package fidelity

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"go.uber.org/goleak"

	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/service"
)

// transport carries the Azurite harness's requests. The suite closes its idle keep-alive
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
	if mem != nil {
		n, err := mem.tables.(*readOnlyCheck).verify()
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
		if testing.Verbose() {
			fmt.Printf("memory service: %d rows read, none changed afterwards\n", n)
		}
	}
	return code
}

// harness is the Harness of a pair of services.
type harness struct {
	name   string
	tables service.Tables
	blobs  service.Blobs
}

func (h *harness) Name() string           { return h.name }
func (h *harness) Tables() service.Tables { return h.tables }
func (h *harness) Blobs() service.Blobs   { return h.blobs }

var (
	memOnce sync.Once
	mem     *harness
	azOnce  sync.Once
	az      *harness
	azErr   error
)

// newMemoryHarness is the memory service's maker: one service for the whole suite, as one
// emulator serves the Azurite half.
func newMemoryHarness(testing.TB) Harness {
	memOnce.Do(func() {
		// The suite's memory service shares its stored rows with readers, as
		// inmemory.NewAccount's does; the check proves that no reader changes them.
		svc := memservice.New(memservice.WithSharedReads())
		mem = &harness{name: Memory, tables: &readOnlyCheck{Tables: svc}, blobs: svc}
	})
	return mem
}

// emulatorEnv, set to 1, says that the connection string names the emulator of package
// inmemory/emulator rather than Azurite (make emulator-fidelity sets it): the backend is
// then named "emulator", so that scenarios expect the real service's answers where Azurite
// deviates; its tables and blobs are the emulator's table and blob endpoints.
const emulatorEnv = "UNIFIED_TABLES_TEST_EMULATOR"

// newAzuriteHarness is Azurite's maker: the emulator UNIFIED_TABLES_TEST_CONNECTION_STRING
// names (make test starts one). Without it the backend is skipped, unless
// UNIFIED_TABLES_REQUIRE_AZURITE=1 makes that a failure.
func newAzuriteHarness(tb testing.TB) Harness {
	tb.Helper()
	conn, ok := azuritetest.LookupConnectionString(tb)
	if !ok {
		tb.Log(azuritetest.ConnEnv + " not set: running on the memory service only")
		return nil
	}
	azOnce.Do(func() {
		// The SDK's retries as they are (the same number of tries, so the same outcomes),
		// with short waits between them: the answers Azurite fails with 500 are retried
		// three times, and the default waits (0.8 s doubling) would add seconds to each.
		opts := azcore.ClientOptions{Transport: &http.Client{Transport: transport},
			Retry: policy.RetryOptions{RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}}
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
		name := Azurite
		if os.Getenv(emulatorEnv) == "1" {
			name = "emulator"
		}
		az = &harness{name: name, tables: tables, blobs: blobs}
	})
	if azErr != nil {
		tb.Fatalf("azurite: %v", azErr)
	}
	return az
}

// makers are the suite's backends: Azurite first, so that diffs read "-azurite +memory".
var makers = []HarnessMaker{newAzuriteHarness, newMemoryHarness}

var (
	cosmosOnce sync.Once
	cosmos     *harness
)

// newCosmosHarness is the maker of the memory service's Cosmos profile (memservice.Cosmos):
// one service for the whole suite, as for the memory service.
func newCosmosHarness(testing.TB) Harness {
	cosmosOnce.Do(func() {
		svc := memservice.New(memservice.Cosmos())
		cosmos = &harness{name: Cosmos, tables: svc, blobs: svc}
	})
	return cosmos
}
