package fidelity

import "testing"

// TestConformance runs the whole differential suite on Azurite and the memory service.
func TestConformance(t *testing.T) {
	RunConformanceTests(t, makers...)
}

func TestScenarioCount(t *testing.T) {
	if n := len(serviceScenarios()); n < 40 {
		t.Fatalf("%d service scenarios; the suite promises at least 40", n)
	}
}

func TestDeviationsAreUsed(t *testing.T) {
	used := map[string]bool{}
	for _, sc := range append(serviceScenarios(), storeScenarios()...) {
		used[sc.Deviation] = true
	}
	for _, d := range matrixDeviations { // the emulator's cross-client matrix
		used[d.deviation] = true
	}
	for _, d := range wireDeviations { // and its wire matrix
		used[d.deviation] = true
	}
	for _, d := range sasDeviations { // and its SAS matrix
		used[d.deviation] = true
	}
	for _, d := range aclDeviations { // and its ACL matrix
		used[d.deviation] = true
	}
	for _, m := range []map[string]struct{ deviation, azurite string }{blobMatrixDeviations, blobSASDeviations} { // and its blob matrices
		for _, d := range m {
			used[d.deviation] = true
		}
	}
	for name := range Deviations {
		if !used[name] {
			t.Errorf("deviation %q is listed but no scenario exercises it", name)
		}
	}
}
