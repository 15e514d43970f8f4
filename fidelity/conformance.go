package fidelity

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/unified-data/gotables/tables/service"
)

// The backend names of the suite's two harnesses.
const (
	Azurite = "azurite"
	Memory  = "memory"
	Cosmos  = "cosmos" // the memory service's Cosmos DB for Table profile (see CosmosDeviations)
)

// A Harness is one backend the suite runs on: a table service and a blob service. The
// suite creates and deletes the tables and containers it uses, with names of its own, so one
// harness can serve every scenario, in parallel.
type Harness interface {
	// Name names the backend in failures and observation diffs (Azurite, Memory).
	Name() string
	// Tables returns the backend's table service.
	Tables() service.Tables
	// Blobs returns the backend's blob service.
	Blobs() service.Blobs
}

// A HarnessMaker returns the harness of one backend for a test. It returns nil when the
// backend is not available (no emulator configured), which skips that backend; it fails tb
// when the backend must be available and is not.
type HarnessMaker func(tb testing.TB) Harness

// RunConformanceTests runs every scenario of the suite, the service layer's and the store
// layer's, on each backend the makers build: each scenario checks its own expectations on
// every backend, and the observation logs of all backends must be equal (cmp.Diff), except
// for a scenario that names a known deviation (see Deviations), which asserts each backend's
// own answer instead. The memory service's harness must be among them.
//
// It is the suite's one entry point, shaped like gocloud.dev's drivertest: a backend joins
// the suite by passing its maker.
func RunConformanceTests(t *testing.T, makers ...HarnessMaker) {
	t.Helper()
	t.Run("service", func(t *testing.T) { runScenarios(t, serviceScenarios(), makers) })
	t.Run("store", func(t *testing.T) { runScenarios(t, storeScenarios(), makers) })
}

// harnesses builds the available harnesses of makers.
func harnesses(tb testing.TB, makers []HarnessMaker) []backend {
	tb.Helper()
	var out []backend
	for _, mk := range makers {
		if h := mk(tb); h != nil {
			b := backend{Name: h.Name(), Tables: h.Tables(), Blobs: h.Blobs(), Product: service.Storage}
			if p, ok := h.Tables().(interface{ Product() service.Product }); ok {
				b.Product = p.Product()
			}
			out = append(out, b)
		}
	}
	return out
}

// backend is a harness as the scenarios use it.
type backend struct {
	Name    string
	Tables  service.Tables
	Blobs   service.Blobs
	Product service.Product // what the table service behaves as (its Product method, or Table Storage)
}

// runScenarios runs scenarios on each available backend and compares the observation logs.
func runScenarios(t *testing.T, scenarios []Scenario, makers []HarnessMaker) {
	t.Helper()
	seen := map[string]bool{}
	for _, sc := range scenarios {
		if seen[sc.Name] {
			t.Fatalf("two scenarios are named %q", sc.Name)
		}
		seen[sc.Name] = true
		if sc.Deviation != "" {
			if _, ok := Deviations[sc.Deviation]; !ok {
				t.Fatalf("scenario %q names unknown deviation %q", sc.Name, sc.Deviation)
			}
		}
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			bs := harnesses(t, makers)
			logs := make([][]Observation, len(bs))
			for i, b := range bs {
				logs[i] = runOne(t, sc, b)
			}
			if sc.Deviation != "" {
				return
			}
			for i := 1; i < len(bs); i++ {
				if d := cmp.Diff(logs[0], logs[i]); d != "" {
					t.Errorf("%s and %s observed different things (-%s +%s):\n%s", bs[0].Name, bs[i].Name, bs[0].Name, bs[i].Name, d)
				}
			}
		})
	}
}

func runOne(t testing.TB, sc Scenario, b backend) []Observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := &Env{t: t, Backend: b.Name, Product: b.Product, Tables: b.Tables, Blobs: b.Blobs, Suffix: randomSuffix()}
	e.Table = "fid" + e.Suffix
	e.Container = "fid-" + e.Suffix
	if !sc.NoTable {
		if err := b.Tables.CreateTable(ctx, e.Table); err != nil {
			t.Fatalf("[%s] create table %s: %v", b.Name, e.Table, err)
		}
	}
	if sc.Container {
		if err := b.Blobs.CreateContainer(ctx, e.Container); err != nil {
			t.Fatalf("[%s] create container: %v", b.Name, err)
		}
	}
	defer func() {
		// Clean-up runs on a fresh context: the scenario's may have ended.
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		if !sc.NoTable {
			_ = b.Tables.DeleteTable(cctx, e.Table)
		}
		for _, n := range e.extra {
			_ = b.Tables.DeleteTable(cctx, n)
			_ = b.Blobs.DeleteContainer(cctx, n)
		}
		if sc.Container {
			_ = b.Blobs.DeleteContainer(cctx, e.Container)
		}
	}()
	done := make(chan struct{})
	go func() {
		// Run on a goroutine so Env.Fatalf (runtime.Goexit) ends only the scenario body.
		defer close(done)
		sc.Run(ctx, e)
	}()
	<-done
	if t.Failed() {
		return e.log
	}
	// What the scenario left behind is part of what it did.
	if !sc.NoTable {
		e.dumpTable(ctx, e.Table)
	}
	if sc.Container {
		e.dumpContainer(ctx, e.Container)
	}
	return e.log
}
