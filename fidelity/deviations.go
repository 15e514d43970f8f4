package fidelity

// A Deviation is a documented case where Azurite 3.35 answers differently from the real
// Azure service. The memory service follows the real service; scenarios that touch a
// deviation assert each backend's own answer instead of comparing the two. The engine is
// built never to send these requests, so users do not meet them.
type Deviation struct {
	// Azurite says what the emulator does; Azure what the real service does.
	Azurite, Azure string
	// Issue is the Azurite issue (or "observed" when none is filed).
	Issue string
}

// Deviations is the one list of known Azurite differences the suite tolerates. Every entry
// is used by at least one scenario (TestDeviationsAreUsed checks it).
var Deviations = map[string]Deviation{
	"utf8-split-across-chunks": {
		Azurite: "decodes the body of a single-entity write chunk by chunk, so a multi-byte UTF-8 character split between two chunks is stored as U+FFFD (a value near a size limit may then be refused); transactions are read whole and are not affected. The Azure adapter sends non-ASCII text to the development account as \\u escapes, which avoids it",
		Azure:   "stores the text as sent",
		Issue:   "Azure/Azurite#2670",
	},
	"table-name-case": {
		Azurite: "finds a table created with upper-case letters only under its exact name: row reads, writes and queries under another case answer 404 TableNotFound (create and delete ignore case)",
		Azure:   "table names are case-insensitive in every call",
		Issue:   "observed",
	},
	"transaction-line-separator-keys": {
		Azurite: "answers 404 ResourceNotFound to a delete inside a transaction whose key holds U+2028 or U+2029, leaving the row stored (a delete alone works); DeletePartition deletes such rows alone",
		Azure:   "deletes the row",
		Issue:   "observed",
	},
	"negative-zero": {
		Azurite: "stores the Edm.Double -0 as 0",
		Azure:   "returns the double as written, sign included",
		Issue:   "observed",
	},
	"cross-partition-transaction": {
		Azurite: "commits an entity-group transaction whose actions span partitions",
		Azure:   "400 CommandsInBatchActOnDifferentPartitions, nothing written",
		Issue:   "Azure/Azurite#1215",
	},
	"transaction-over-100": {
		Azurite: "answers a transaction of more than 100 actions with a malformed inner response the SDK cannot parse",
		Azure:   "400 InvalidInput blaming action 0",
		Issue:   "observed",
	},
	"too-many-properties": {
		Azurite: "accepts an entity with more than 252 custom properties",
		Azure:   "400 TooManyProperties",
		Issue:   "Azure/Azurite#1446",
	},
	"property-name-rules": {
		Azurite: "accepts property names that are not identifiers or are longer than 255 characters",
		Azure:   "400 PropertyNameInvalid / PropertyNameTooLong",
		Issue:   "observed",
	},
	"insert-entity-size": {
		Azurite: "does not check the 1 MiB entity limit on insert",
		Azure:   "400 EntityTooLarge",
		Issue:   "observed",
	},
	"key-length": {
		Azurite: "rejects keys longer than 512 UTF-16 units with 400 InvalidInput",
		Azure:   "accepts keys up to 1 KiB; longer keys fail with 400 PropertyValueTooLarge",
		Issue:   "observed",
	},
	"invalid-key-code": {
		Azurite: "answers 400 InvalidInput for a forbidden key character on insert",
		Azure:   "400 OutOfRangeInput",
		Issue:   "observed",
	},
	"url-key-characters": {
		Azurite: "answers 404 or 500 when a key in the request URL holds / or \\",
		Azure:   "400 InvalidInput",
		Issue:   "observed",
	},
	"table-name-code": {
		Azurite: "answers 400 with no error code for a malformed table name",
		Azure:   "400 OutOfRangeInput (length) / InvalidResourceName (characters)",
		Issue:   "observed",
	},
	"datetime-before-1601": {
		Azurite: "stores Edm.DateTime values before 1601-01-01",
		Azure:   "400 OutOfRangeInput",
		Issue:   "observed",
	},
	"filter-case": {
		Azurite: "accepts upper-case operators and keywords in $filter",
		Azure:   "filter keywords are case-sensitive: 400 InvalidInput",
		Issue:   "observed",
	},
	"filter-null": {
		Azurite: "parses null in $filter as a property name",
		Azure:   "400 InvalidInput",
		Issue:   "observed",
	},
	"filter-comparison-limit": {
		Azurite: "accepts more than 15 comparisons in one $filter",
		Azure:   "documented limit of 15 comparisons",
		Issue:   "observed",
	},
	"datetime-filter-precision": {
		Azurite: "compares Edm.DateTime in $filter at millisecond precision",
		Azure:   "100 ns precision",
		Issue:   "Azure/Azurite#2069",
	},
	"blob-ifmatch-any-missing": {
		Azurite: "creates a missing blob on an upload with If-Match: *",
		Azure:   "412 ConditionNotMet",
		Issue:   "Azure/Azurite#2589 (fixed in 3.36)",
	},
	"blob-conditional-missing": {
		Azurite: "answers 412 ConditionNotMet for a read or delete of a missing blob with If-Match",
		Azure:   "404 BlobNotFound",
		Issue:   "Azure/Azurite#2751",
	},
}
