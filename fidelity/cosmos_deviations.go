package fidelity

// A CosmosDeviation is a scenario whose run on the memory service's Cosmos DB for Table
// profile (memservice.Cosmos) differs from its run on Table Storage, because Cosmos DB
// differs where its FAQ says so (docs/cosmos.md). TestCosmosProfile runs every scenario on
// both and compares the logs: a scenario not listed here must observe exactly what it
// observes on Table Storage; a listed one must first differ at Step, where the Cosmos run
// observes Cosmos (the error the library or the service gives, as the log renders it), or,
// with Reordered, observe the same things in another order. Whatever the run observes after
// that first difference follows from it (the scenario's own expectations, which are Table
// Storage's, are not asserted on a listed scenario).
type CosmosDeviation struct {
	// Step is the scenario's step whose observation differs first; Cosmos is what the
	// Cosmos run observes there.
	Step, Cosmos string
	// Reordered says the two runs observe the same things, in another order (Step and
	// Cosmos are then empty).
	Reordered bool
	// Why says which difference of Cosmos DB this is and what the library does about it.
	Why string
}

// CosmosDeviations is the one list of scenarios that differ on the Cosmos profile. Every
// entry names a scenario of the suite (TestCosmosProfile checks it).
var CosmosDeviations = map[string]CosmosDeviation{
	"limit/key-length": {
		Step: "512-unit keys", Cosmos: "status=400 code=PropertyValueTooLarge",
		Why: "a service-layer scenario: Cosmos DB takes keys of at most 255 bytes (Table Storage 1 KiB), and the profile refuses a longer one with the code Table Storage gives " +
			"for a key over its limit. The stores refuse such a key before sending with ErrInvalidArgument (inmemory TestCosmosKeyOver255BytesRefusedBeforeSending)",
	},
	"table/names-ignore-case": {
		Step: "create in upper case", Cosmos: "ok",
		Why: "a service-layer scenario: Cosmos DB's table names compare with case, so the upper-case name is another table and creating it succeeds. " +
			"An account on Cosmos DB keeps the two names apart too (inmemory TestCosmosTableNamesDifferingInCaseAreTwoTables)",
	},
	"safety/table-name-case": {
		Step: "read through the lower-case name", Cosmos: "status=404 code=ResourceNotFound is=unified tables: not found",
		Why: "Cosmos DB's table names compare with case: a store of the lower-case name reads another table, which does not exist, so the read fails with ErrNotFound. " +
			"Name a table one way everywhere",
	},
	"query/utf16-order": {
		Step: "order", Cosmos: "[|r p| p|😀 B|r p|é a0|r p|a0 p|a  p|B p|e p|a p|b a |r e|r p|｡ 😀|r a|r ｡|r é|r b|r]",
		Why: "a service-layer scenario about the order itself: Cosmos DB lists query results in no key order (the profile in a fixed hashed order), while a key range " +
			"(RowKey gt) selects the same rows. The stores keep key order where they promise it (docs/cosmos.md, inmemory TestCosmosOrderedReadsKeepKeyOrder)",
	},
	"query/thousand-rows-a-page": {
		Step: "first page size", Cosmos: "1050",
		Why: "a service-layer scenario: a Cosmos DB query page is not cut at 1,000 rows. The stores follow continuations either way and ask for at most 1,000 rows where they page",
	},
	"large/binary-2mb": {
		Step: "2 MiB of binary: create", Cosmos: "is=unified tables: oversized value",
		Why: "2 MiB of binary split over continuation rows is a transaction body of about 2.8 MB, which Table Storage takes (4 MiB) and Cosmos DB does not (2 MB): " +
			"the layout is planned within 2 MB, and without blob offload the store refuses the value before sending with ErrOversizedValue naming offload (Options.BlobOffload)",
	},
	"large/tier-boundaries": {
		Step: "binary 2,900,000 bytes (one transaction): create", Cosmos: "is=unified tables: oversized value",
		Why: "as large/binary-2mb: a value that fits one Table Storage transaction (4 MiB) is over Cosmos DB's 2 MB, and is refused before sending",
	},
	"expiry/writes-during-a-sweep": {
		Reordered: true,
		Why: "the sweep meets a partition's expired rows in the order the service lists them, and the scenario's writes fire when it reaches a given row: " +
			"they are logged in another order, with the same results and the same report",
	},
}
