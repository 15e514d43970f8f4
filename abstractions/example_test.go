package abstractions_test

import (
	"fmt"

	"github.com/unified-data/gotables/abstractions"
)

func ExampleSplitID() {
	for _, id := range []string{"eu|alice", "vision|exec|agent", "single"} {
		pk, rk := abstractions.SplitID(id)
		fmt.Printf("%-18s partition %q, row %q\n", id, pk, rk)
	}
	// Output:
	// eu|alice           partition "eu", row "alice"
	// vision|exec|agent  partition "vision", row "exec|agent"
	// single             partition "single", row "single"
}

func ExampleCombineID() {
	fmt.Println(abstractions.CombineID("eu", "alice"))
	// Output: eu|alice
}

func ExampleNormalizeID() {
	// Stores normalise ids like this before use, unless the account says IDsAsWritten; so
	// "  EU|Alice Smith " and "eu|alice-smith" address the same row.
	fmt.Println(abstractions.NormalizeID("  EU|Alice Smith "))
	// Output: eu|alice-smith
}
