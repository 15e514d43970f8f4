package fidelity

import (
	"context"
	"testing"
)

// diffCases is the number of random filters TestQueryDifferential checks; FuzzQueryDifferential
// checks as many as -fuzztime allows.
const diffCases = 300

// diffStores stores the differential data set on every backend; the memory service comes
// last. Without Azurite the test still checks the memory service against Go.
func diffStores(tb testing.TB) []*diffStore {
	tb.Helper()
	var out []*diffStore
	for _, b := range harnesses(tb, makers) {
		ds, drop, err := newDiffStore(context.Background(), b)
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
		problem, r := checkRandomFilter(ctx, seed, stores)
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
		if problem, _ := checkRandomFilter(context.Background(), seed, stores); problem != "" {
			t.Fatal(problem)
		}
	})
}
