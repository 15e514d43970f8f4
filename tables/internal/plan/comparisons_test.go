package plan

import "testing"

func TestComparisons(t *testing.T) {
	for filter, want := range map[string]int{
		"":                    0,
		"Flag":                0,
		"PartitionKey eq 'p'": 1,
		"PartitionKey eq 'a eq b' and (X lt 1 or not (Y ge datetime'2024-01-01T00:00:00Z'))":  3,
		"A ne 1 and B gt 2L and C le 3.5 and D eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'": 4,
		"A eq 'unclosed": -1,
	} {
		if got := Comparisons(filter); got != want {
			t.Errorf("Comparisons(%q) = %d, want %d", filter, got, want)
		}
	}
}
