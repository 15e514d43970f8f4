package abstractions_test

import (
	"errors"
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
	id, err := abstractions.CombineID("eu", "alice")
	fmt.Println(id, err)

	// A partition value holding "|" would address another partition: "acme|corp" + "42"
	// would be partition "acme", row "corp|42". It is refused instead.
	_, err = abstractions.CombineID("acme|corp", "42")
	fmt.Println(errors.Is(err, abstractions.ErrInvalidKey))
	// Output:
	// eu|alice <nil>
	// true
}

func ExampleNormalizeID() {
	// Stores normalise ids like this before use, unless the account says IDsAsWritten; so
	// "  EU|Alice Smith " and "eu|alice-smith" address the same row.
	fmt.Println(abstractions.NormalizeID("  EU|Alice Smith "))
	// Output: eu|alice-smith
}

func ExampleNormalizePartition() {
	// A partition given on its own (to List, Count, Query.Partition, …) is the partition of
	// the ids that start with it: "Acme |r1" is stored in partition "acme-", so "Acme "
	// reads that partition, never tenant "acme".
	id, _ := abstractions.CombineID("Acme ", "r1")
	pk, _ := abstractions.SplitID(abstractions.NormalizeID(id))
	fmt.Printf("%q %q\n", pk, abstractions.NormalizePartition("Acme "))
	// Output: "acme-" "acme-"
}
