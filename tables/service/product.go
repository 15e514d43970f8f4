package service

// Product is the table service an account talks to: Azure Table Storage or Azure Cosmos DB
// for Table. Both speak one protocol, but Cosmos DB differs where its FAQ says (docs/cosmos.md):
// unsorted query results, shorter keys, smaller transactions, case-sensitive table names and
// reserved property names. The zero Product means "tell from the endpoint".
type Product uint8

// The table services.
const (
	// Storage is Azure Table Storage (and its emulator, Azurite).
	Storage Product = iota + 1
	// Cosmos is Azure Cosmos DB for Table.
	Cosmos
)

// String returns the service's name: "Azure Table Storage", "Azure Cosmos DB for Table", or
// "" for the zero Product.
func (p Product) String() string {
	switch p {
	case Storage:
		return "Azure Table Storage"
	case Cosmos:
		return "Azure Cosmos DB for Table"
	}
	return ""
}

// Limits of Azure Cosmos DB for Table where they are stricter than Table Storage's, from the
// Azure Cosmos DB for Table FAQ ("Row keys can only be up to 255 bytes", "Batches can only
// have up to 2 MBs").
const (
	// CosmosMaxKeyBytes is the longest PartitionKey or RowKey, in UTF-8 bytes. The FAQ
	// names the row key; the partition key is held to the same bound, since Cosmos DB
	// builds its own document keys from both.
	CosmosMaxKeyBytes = 255
	// CosmosMaxBodySize is the largest transaction request body. The FAQ says "2 MB"
	// without saying decimal or binary; this is the smaller reading.
	CosmosMaxBodySize = 2_000_000
)

// MaxBodySize is the largest transaction request body the service p takes:
// CosmosMaxBodySize on Cosmos DB for Table, otherwise Table Storage's MaxBodySize.
func (p Product) MaxBodySize() int {
	if p == Cosmos {
		return CosmosMaxBodySize
	}
	return MaxBodySize
}

// CosmosReserved reports whether Cosmos DB for Table reserves name as a property name: its
// FAQ lists id, rid, etag and ResourceId, which it uses in its own documents. Names compare
// with case, as JSON names do; the library's own Id column is not among them.
func CosmosReserved(name string) bool {
	switch name {
	case "id", "rid", "etag", "ResourceId":
		return true
	}
	return false
}
