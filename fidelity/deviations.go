package fidelity

// A Deviation is a documented case where Azurite 3.35 answers differently from the real
// Azure service. The memory service follows the real service; scenarios that touch a
// deviation assert each backend's own answer instead of comparing the two. The engine
// refuses or works around most of them before sending anything; Stores says, for each,
// whether a user of the stores can still meet it, and how: code tested on Azurite may then
// behave differently on Azure and in memory.
type Deviation struct {
	// Azurite says what the emulator does; Azure what the real service does.
	Azurite, Azure string
	// Issue is the Azurite issue (or "observed" when none is filed).
	Issue string
	// Stores starts with "met:" when a store call can meet the deviation (and says which
	// call, and what the user sees on each side), or with "not met:" followed by the reason.
	Stores string
}

// Deviations is the one list of known Azurite differences the suite tolerates. Every entry
// is used by at least one scenario (TestDeviationsAreUsed checks it).
var Deviations = map[string]Deviation{
	"utf8-split-across-chunks": {
		Azurite: "decodes the body of a single-entity write chunk by chunk, so a multi-byte UTF-8 character split between two chunks is stored as U+FFFD (a value near a size limit may then be refused); transactions are read whole and are not affected. The Azure adapter sends non-ASCII text to the development account as \\u escapes, which avoids it",
		Azure:   "stores the text as sent",
		Issue:   "Azure/Azurite#2670",
		Stores:  "not met: the Azure adapter sends non-ASCII text to the development account as \\u escapes",
	},
	"table-name-case": {
		Azurite: "finds a table created with upper-case letters only under its exact name: row reads, writes and queries under another case answer 404 TableNotFound (create and delete ignore case)",
		Azure:   "table names are case-insensitive in every call",
		Issue:   "observed",
		Stores:  "met: two stores (or a store and another client) naming one table in different cases use two tables on Azurite: the second one's reads find nothing and its writes fail with ErrNotFound after Create Table answers TableAlreadyExists; on Azure and in memory they share the table. Name a table one way everywhere",
	},
	"etag-shape": {
		Azurite: "answers a merge whose If-Match is a strong quoted string it never issued (\"abc\") with 400 InvalidOperation (a replace or a delete with 400 InvalidInput)",
		Azure:   "400 InvalidInput for every such write; a weak tag it never issued (W/\"abc\") is a condition no row meets, 412, as on Azurite",
		Issue:   "Azure/Azurite#2013",
		Stores:  "met: Update(Strict) and Patch with such an ETag fail with ErrInvalidArgument on every backend (only the service's code in the chain differs), and with a weak tag the service never issued with ErrConcurrencyConflict",
	},
	"transaction-line-separator-keys": {
		Azurite: "answers 404 ResourceNotFound to a delete inside a transaction whose key holds U+2028 or U+2029, leaving the row stored (a delete alone works); DeletePartition deletes such rows alone",
		Azure:   "deletes the row",
		Issue:   "observed",
		Stores:  "not met: DeletePartition deletes such a row alone when its transaction fails on it",
	},
	"negative-zero": {
		Azurite: "stores the Edm.Double -0 as 0",
		Azure:   "returns the double as written, sign included",
		Issue:   "observed",
		Stores:  "met: a float64 field holding -0 reads back as 0 on Azurite, as -0 on Azure and in memory",
	},
	"cross-partition-transaction": {
		Azurite: "commits an entity-group transaction whose actions span partitions",
		Azure:   "400 CommandsInBatchActOnDifferentPartitions, nothing written",
		Issue:   "Azure/Azurite#1215",
		Stores:  "not met: the engine groups batches by partition and never sends a transaction that spans two",
	},
	"transaction-over-100": {
		Azurite: "answers a transaction of more than 100 actions with a malformed inner response the SDK cannot parse",
		Azure:   "400 InvalidInput blaming action 0",
		Issue:   "observed",
		Stores:  "not met: the engine cuts batches into transactions of at most 100 actions",
	},
	"too-many-properties": {
		Azurite: "accepts an entity with more than 252 custom properties",
		Azure:   "400 TooManyProperties",
		Issue:   "Azure/Azurite#1446",
		Stores:  "met: Create, Upsert and Update of a type with more than 252 columns (after flattening) succeed on Azurite and fail in memory and on Azure with 400 TooManyProperties (the store/deviation-too-many-properties scenario)",
	},
	"property-name-rules": {
		Azurite: "accepts property names that are not identifiers or are longer than 255 characters",
		Azure:   "400 PropertyNameInvalid / PropertyNameTooLong",
		Issue:   "observed",
		Stores:  "not met: column names come from Go identifiers and alias tags the codec checks",
	},
	"insert-entity-size": {
		Azurite: "does not check the 1 MiB entity limit on insert",
		Azure:   "400 EntityTooLarge",
		Issue:   "observed",
		Stores:  "met: Create and CreateBatch of an entity over 1 MiB succeed on Azurite and fail in memory and on Azure with 400 EntityTooLarge (the store/deviation-entity-over-1mib scenario); use split or offloaded fields for large values",
	},
	"key-length": {
		Azurite: "rejects keys longer than 512 UTF-16 units with 400 InvalidInput",
		Azure:   "accepts keys up to 1 KiB; longer keys fail with 400 PropertyValueTooLarge",
		Issue:   "observed",
		Stores:  "not met: the engine refuses keys over 512 UTF-16 units with ErrInvalidKey before sending, on every backend",
	},
	"invalid-key-code": {
		Azurite: "answers 400 InvalidInput for a forbidden key character on insert",
		Azure:   "400 OutOfRangeInput",
		Issue:   "observed",
		Stores:  "not met: the engine refuses the forbidden key characters with ErrInvalidKey before sending",
	},
	"url-key-characters": {
		Azurite: "answers 404 or 500 when a key in the request URL holds / or \\",
		Azure:   "400 InvalidInput",
		Issue:   "observed",
		Stores:  "not met: the engine refuses / and \\ in keys with ErrInvalidKey before sending",
	},
	"table-name-code": {
		Azurite: "answers 400 with no error code for a malformed table name",
		Azure:   "400 OutOfRangeInput (length) / InvalidResourceName (characters)",
		Issue:   "observed",
		Stores:  "not met: For and PolyFor refuse a malformed table name with ErrInvalidArgument",
	},
	"datetime-before-1601": {
		Azurite: "stores Edm.DateTime values before 1601-01-01",
		Azure:   "400 OutOfRangeInput",
		Issue:   "observed",
		Stores:  "not met: the codec refuses a time before 1601 with ErrInvalidArgument before sending",
	},
	"filter-case": {
		Azurite: "accepts upper-case operators and keywords in $filter",
		Azure:   "filter keywords are case-sensitive: 400 InvalidInput",
		Issue:   "observed",
		Stores:  "not met: the engine writes filter keywords in lower case",
	},
	"filter-null": {
		Azurite: "parses null in $filter as a property name",
		Azure:   "400 InvalidInput",
		Issue:   "observed",
		Stores:  "not met: the engine never writes null in a filter (a nil comparison value is refused)",
	},
	"filter-comparison-limit": {
		Azurite: "accepts more than 15 comparisons in one $filter",
		Azure:   "documented limit of 15 comparisons",
		Issue:   "observed",
		Stores:  "not met: the engine refuses a query of more than 15 comparisons before sending",
	},
	"filter-type-mismatch": {
		Azurite: "compares a stored value with a literal of another type by JavaScript's rules: an Int64 literal is compared digit by digit with any text (\"\" eq 0L and '5' eq 5L are true) and fails with 500 against an Int32, Double or Boolean cell; an Int64 cell never equals an Int32 literal, while an Int32 cell equals 5.0; a DateTime cell matches a string literal of its stored text and a string cell holding a time or a GUID matches a datetime or guid literal; a bare property is true for any non-empty, non-zero value",
		Azure:   "compares by value only an Int64 cell with an Int32 literal and a Double cell with an integer literal; any other pairing ranks the stored value below the literal, so eq, gt and ge are false and ne, lt and le true (the production trace in the issue shows Double and DateTime cells below ''; CloudStub's live-account comparison tests give the rest; not verified here)",
		Issue:   "Azure/Azurite#2342",
		Stores:  "met: a query on a field whose column holds, in some row, a cell of another type (written by another program or by an older version of the type). Where N eq 0 on an int field over a row whose N is the string \"\" fails with ErrIntegrity on Azurite (the row comes back and does not decode) and selects only the rows holding 0 on Azure and in memory; Ne, Lt and Le select such a row on Azure and in memory, which then fails with ErrIntegrity, or is returned when the codec reads its cell (an Int32 cell read by an int field), although the comparison did not look at its value (the store/query-cell-of-another-type scenario)",
	},
	"datetime-filter-precision": {
		Azurite: "compares Edm.DateTime in $filter at millisecond precision",
		Azure:   "100 ns precision",
		Issue:   "Azure/Azurite#2069",
		Stores:  "met: a query comparing a time field matches at millisecond precision on Azurite, at 100 ns in memory and on Azure: rows whose times differ below a millisecond can be selected differently",
	},
	"blob-ifmatch-any-missing": {
		Azurite: "creates a missing blob on an upload with If-Match: *",
		Azure:   "412 ConditionNotMet",
		Issue:   "Azure/Azurite#2589 (fixed in 3.36)",
		Stores:  "not met: blob writes either create (If-None-Match: *) or name the version they replace",
	},
	"blob-conditional-missing": {
		Azurite: "answers 412 ConditionNotMet for a read or delete of a missing blob with If-Match",
		Azure:   "404 BlobNotFound",
		Issue:   "Azure/Azurite#2751",
		Stores:  "met as an error status only: a conditional blob read or delete of a blob deleted meanwhile fails on both, with 412 on Azurite and 404 in memory and on Azure",
	},
	"blob-md5-mismatch-code": {
		Azurite: "answers a blob upload whose Content-MD5 header does not match its body with 400 InvalidOperation",
		Azure:   "400 Md5Mismatch, the Blob service's error code for it; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "not met: the blob adapter sends no transactional MD5",
	},
	"bad-signature-code": {
		Azurite: "answers a request whose Shared Key signature or shared access signature does not verify, or that has no Authorization header, with 403 AuthorizationFailure (in XML for the latter)",
		Azure:   "403 AuthenticationFailed (\"Server failed to authenticate the request\"); the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "met as an error code only: a wrong account key or a SAS signed with one fails every call with status 403 on each backend; only the code differs",
	},
	"sas-token-code": {
		Azurite: "answers a shared access signature that has expired, is not yet valid, or names a stored access policy the table does not have with 403 AuthorizationFailure",
		Azure:   "403 AuthenticationFailed, as for a signature that does not verify (AuthorizationFailure is the SAS error code for the other authorization errors); the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "met as an error code only: a store on an expired SAS fails every call with status 403 on each backend; only the code differs",
	},
	"sas-key-range": {
		Azurite: "ignores the key range of a table SAS (spk, srk, epk, erk): queries return every row, and reads and writes outside the range succeed",
		Azure:   "queries return only the rows in the range; a read or write of a row outside it fails with 403 AuthorizationFailure; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "met: a store on a table SAS limited to a key range reads and writes every row on Azurite; on Azure and the emulator its queries see the range only and its writes outside it fail with status 403",
	},
	"sas-upsert-permission": {
		Azurite: "allows Insert Or Replace and Insert Or Merge with a SAS that grants update (u) without add (a)",
		Azure:   "an upsert needs both add and update; without add it fails with 403 AuthorizationPermissionMismatch; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "met: Upsert on a store whose SAS grants update but not add succeeds on Azurite and fails with status 403 on Azure",
	},
	"sas-query-resource-type": {
		Azurite: "requires the container resource type (srt=c) of an account SAS to query a table's entities, and answers srt=o alone with 403 AuthorizationResourceTypeMismatch",
		Azure:   "entities are objects: a query of entities needs srt=o (and r), as a read of one does; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "met: a store on an account SAS with srt=o and without c can query on Azure but not on Azurite; one with c and without o the reverse",
	},
	"sas-error-format": {
		Azurite: "answers a request its shared access signature does not authorize (a permission, resource type, service or protocol it lacks) in XML, whatever the Accept header asks for",
		Azure:   "answers in the JSON the Accept header asks for, as every other table error; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "met as an error body only: the status and code reach the caller on each backend (the SDK reads the XML code)",
	},
	"acl-policy-fields": {
		Azurite: "refuses a stored access policy that leaves out its start, expiry or permission (Set Table ACL answers 400 without an error code), and a table SAS naming a policy takes all three from the policy, ignoring what the SAS carries: a SAS that repeats a field its policy sets is let through",
		Azure:   "a policy may leave any of the three to the SAS that names it, which must then carry it, and a SAS may not repeat a field its policy sets (Define a stored access policy); the emulator of inmemory/emulator refuses such a SAS with 403 AuthenticationFailed, as every token it cannot authenticate",
		Issue:   "observed",
		Stores:  "not met: stores authenticate with a key or a SAS they are given; they do not set table ACLs",
	},
	"sas-acl-code": {
		Azurite: "answers Get Table ACL authorized by a table SAS with 403 AuthorizationPermissionMismatch",
		Azure:   "403 AuthorizationFailure, the code the SAS error table gives for an ACL operation, which only the account's key may call; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "not met: stores do not read table ACLs",
	},
	"sas-table-batch": {
		Azurite: "refuses every entity-group transaction authorized by a table SAS with 403 AuthorizationFailure (the $batch URL names no table, so its table SAS check does not apply and no other authenticator accepts the request)",
		Azure:   "runs the transaction, each action held to the SAS's table, permissions and key range; the emulator of inmemory/emulator answers the same, an action the SAS does not allow failing the transaction with its index and 403",
		Issue:   "observed",
		Stores:  "met: batched writes (CreateBatch, the batches of Upsert and Delete) of a store on a table SAS fail with status 403 on Azurite and succeed on Azure",
	},
	"batch-insert-content": {
		Azurite: "answers an insert inside an entity-group transaction that asks for content (no Prefer: return-no-content) with 201 Created and no entity",
		Azure:   "201 Created with the inserted entity as JSON, as a single insert answers; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "not met: the Azure adapter sends Prefer: return-no-content for every insert of a transaction",
	},
	"malformed-json-code": {
		Azurite: "answers an entity body that is not JSON with 400 and no error code or body",
		Azure:   "400 InvalidInput with the service's JSON error body; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "not met: the library writes every body itself",
	},
	"typed-value-text": {
		Azurite: "stores a property annotated Edm.Int64 whose text is not a number (\"x\") and answers 201",
		Azure:   "400 InvalidInput: a value must be text of its annotated type; the emulator of inmemory/emulator answers the same",
		Issue:   "observed",
		Stores:  "not met: the library's codec writes each typed value as text of its type",
	},
}
