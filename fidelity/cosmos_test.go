package fidelity

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cosmosFull makes TestCosmosProfile run every scenario (make cosmos). Without it, as in
// make test, the scenarios about blobs (blobScenario) are left out: they spend most of the
// run's time in the blob service and its waits, and the blob service is the same on both.
var cosmosFull = os.Getenv("UNIFIED_TABLES_COSMOS_FULL") == "1"

// blobScenario reports a scenario about blobs: offload, blob documents, the blob service.
func blobScenario(sc Scenario) bool {
	return sc.Container || strings.HasPrefix(sc.Name, "offload/") || strings.HasPrefix(sc.Name, "blob")
}

// TestCosmosProfile runs every scenario on the memory service and on its Cosmos DB for
// Table profile and compares the two logs: they must be equal, or the scenario must be
// listed in CosmosDeviations and differ as the entry says.
func TestCosmosProfile(t *testing.T) {
	names := map[string]bool{}
	for _, layer := range []struct {
		name      string
		scenarios []Scenario
	}{{"service", serviceScenarios()}, {"store", storeScenarios()}} {
		for _, sc := range layer.scenarios {
			names[sc.Name] = true
		}
		t.Run(layer.name, func(t *testing.T) {
			for _, sc := range layer.scenarios {
				t.Run(sc.Name, func(t *testing.T) {
					if !cosmosFull && blobScenario(sc) {
						t.Skip("a scenario of blobs, which the Cosmos profile does not change: make cosmos runs it")
					}
					t.Parallel()
					checkCosmos(t, sc)
				})
			}
		})
	}
	for name := range CosmosDeviations {
		if !names[name] {
			t.Errorf("CosmosDeviations lists %q, which is no scenario", name)
		}
	}
}

// checkCosmos runs sc on the memory service and on its Cosmos profile and checks the Cosmos
// run against the Table Storage one.
func checkCosmos(t *testing.T, sc Scenario) {
	bs := harnesses(t, []HarnessMaker{newMemoryHarness, newCosmosHarness})
	want := runOne(t, sc, bs[0])
	soft := &softTB{TB: t}
	got := runOne(soft, sc, bs[1])
	dev, listed := CosmosDeviations[sc.Name]
	if !listed || dev.Reordered {
		for _, e := range soft.errs {
			t.Errorf("on the Cosmos profile: %s", e)
		}
	}
	switch {
	case !listed:
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Table Storage and the Cosmos profile observed different things (-memory +cosmos), and CosmosDeviations does not list the scenario:\n%s", d)
		}
		return
	case dev.Reordered:
		if d := cmp.Diff(sortedLog(want), sortedLog(got)); d != "" {
			t.Errorf("listed as reordered, but Table Storage and the Cosmos profile observed different things (-memory +cosmos, each sorted):\n%s", d)
		} else if cmp.Equal(want, got) {
			t.Errorf("listed as reordered, but the two runs observed the same things in the same order: take it out of CosmosDeviations")
		}
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	switch {
	case i == len(want) && i == len(got):
		t.Errorf("listed in CosmosDeviations, but the two runs observed the same things: take it out")
	case i == len(got) || i == len(want):
		t.Errorf("one run ended at step %d without a difference before (memory %d steps, cosmos %d); want a first difference at %q", i, len(want), len(got), dev.Step)
	case want[i].Step != dev.Step || got[i].Step != dev.Step || got[i].What != dev.Cosmos:
		t.Errorf("the first difference is at %q (memory %q) and %q (cosmos %q); CosmosDeviations says %q observing %q",
			want[i].Step, want[i].What, got[i].Step, got[i].What, dev.Step, dev.Cosmos)
	}
}

// sortedLog returns the observations of a log sorted by step, then by what was seen.
func sortedLog(log []Observation) []Observation {
	out := slices.Clone(log)
	slices.SortFunc(out, func(a, b Observation) int {
		if c := strings.Compare(a.Step, b.Step); c != 0 {
			return c
		}
		return strings.Compare(a.What, b.What)
	})
	return out
}

// softTB records the failures of a scenario's run instead of failing the test, so that the
// run of a scenario that deviates on Cosmos DB is checked against its deviation.
type softTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (s *softTB) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

func (s *softTB) Error(args ...any) { s.Errorf("%s", strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }

func (s *softTB) Fatalf(format string, args ...any) {
	s.Errorf(format, args...)
	runtime.Goexit()
}

func (s *softTB) Fatal(args ...any) {
	s.Error(args...)
	runtime.Goexit()
}

func (s *softTB) Failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.errs) > 0
}
