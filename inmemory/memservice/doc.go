// Package memservice is an in-memory table service and blob service: it implements
// service.Tables and service.Blobs with maps, B-trees and locks, and applies the real Azure
// service's rules so that the engine above it plans, retries and fails exactly as it does on
// Azure. Where Azurite and the real service disagree, this package follows the real service.
//
// # Tables
//
// Table names are 3–63 letters and digits starting with a letter; "tables" is reserved.
// A name of the wrong length fails with 400 OutOfRangeInput, one with other characters with
// 400 InvalidResourceName. Names keep the case they were created with and are compared
// without regard to case. A row operation or query on a missing table fails with 404
// TableNotFound; deleting a missing table with 404 ResourceNotFound.
//
// # Rows
//
// Keys may be empty, may not hold / \ # ? or the control characters U+0000–U+001F and
// U+007F–U+009F, and may be at most 1024 UTF-16 code units long. A bad key in an insert (where
// the service reads it from the body) fails with 400 OutOfRangeInput; in an operation that
// addresses the row by URL with 400 InvalidInput; a long key with 400 PropertyValueTooLarge.
//
// Custom property names follow C# identifier rules (PropertyNameInvalid), are at most 255
// characters (PropertyNameTooLong) and may not be PartitionKey, RowKey or Timestamp. A row
// holds at most 252 custom properties (TooManyProperties), strings of at most 32,768 UTF-16
// code units, binaries of at most 65,536 bytes (PropertyValueTooLarge), date-times from
// 1601-01-01 (OutOfRangeInput), and at most 1 MiB in all (EntityTooLarge), measured with the
// service's documented formula. A property holding the invalid zero Value is dropped, as the
// service drops a null. A merge is checked on the row it would produce.
//
// Every write assigns a Timestamp that is strictly later than the previous one and an ETag
// that names it, W/"datetime'2026-11-29T18%3A30%3A11.1234567Z'"; each row of a transaction
// gets its own. A conditional write with an
// ETag that is not an entity tag of the service fails with 400 InvalidInput, except a weak
// one (W/"…"), which like a stale one fails with 412 UpdateConditionNotSatisfied; on a
// missing row the write fails with 404 ResourceNotFound.
//
// # Request bodies
//
// The service refuses a request body larger than 4 MiB with 413 RequestBodyTooLarge before it
// looks at the entity. This package estimates the body the Azure adapter would send: the
// entity as compact UTF-8 JSON with its keys, strings escaped by encoding/json's rules,
// whole doubles with a ".0", binaries in base64 and an @odata.type annotation for
// Edm.Binary, Edm.Int64, Edm.Double, Edm.DateTime and Edm.Guid values (service.BodySize). A
// single-row write counts the HTML escapes of <, > and & (the SDK encodes that body again);
// a transaction's entities do not (the adapter writes that body itself), and a transaction
// adds 512 bytes per action for its multipart headers and request line, plus the keys of
// actions that address their row by URL, and 256 bytes for the batch envelope
// (service.TransactionBodySize). The estimate is exact enough near the limit for the engine's
// own checks to be tested; it is not a byte-for-byte model of the wire.
//
// # Transactions
//
// Transact checks, in this order: the body size (413, a plain error), the number of actions
// (none: 400 InvalidInput, a plain error; more than 100: a *service.TransactionError at index
// 0 with 400 InvalidInput), one PartitionKey (the first action in another partition, 400
// CommandsInBatchActOnDifferentPartitions), one action per row (the second occurrence, 400
// InvalidDuplicateRow). It then validates and runs each action in order against the stored
// rows and commits every change or none; the first failing action is reported as a
// *service.TransactionError holding that action's *abstractions.StatusError.
//
// # Queries
//
// Rows come back in (PartitionKey, RowKey) order by UTF-16 code units, at most 1000 a page.
// Filters are OData expressions (at most 15 comparisons); a filter that does not parse, a
// negative Top, or a continuation this service did not issue fails with 400 InvalidInput.
// WithEmptyPages makes the service answer some pages with no rows and a continuation, as the
// real service may. A filter that requires one PartitionKey (PartitionKey eq '…', alone or in
// a chain of and) reads that partition's rows only, which the table keeps together in key
// order: such a query costs what the partition holds, not the table.
//
// # Blobs
//
// Container names are 3–63 lower-case letters, digits and single hyphens, starting and ending
// with a letter or digit (400 InvalidResourceName). Conditions follow the real service: an
// upload with If-Match on a missing blob fails with 412 ConditionNotMet even for "*", and a
// read or delete of a missing blob fails with 404 BlobNotFound whatever its conditions.
// Last-modified times and If-Unmodified-Since compare at one-second resolution. UploadStream
// checks its condition before it reads the body and again when it stores the content (a
// body that fails stores nothing); Touch gives a blob a new ETag and the current second as its
// last-modified time and keeps its content and headers.
//
// # Throttling
//
// WithThrottling adds a throttling model: token buckets of entities per second for the
// account and for each partition (AzureTargets holds Azure's published targets, 20,000 and
// 2,000). A table request past them is refused, before it does anything, with 503
// ServerBusy, as the real service answers; Throttled counts the refusals. The in-memory
// backend retries such answers with the Azure SDK's backoff, so tests see what code does near
// the service's limits. Blob requests are not throttled.
//
// # Cosmos DB for Table
//
// With [Cosmos] the service behaves as Azure Cosmos DB for Table where that service's FAQ
// says it differs from Table Storage: shorter keys, smaller transactions, case-sensitive table
// names, reserved property names, and query pages neither cut at 1,000 rows nor in key order.
// The option's documentation lists the rules and the error codes chosen where Cosmos DB's are
// not documented.
//
// # Concurrency
//
// A Service is safe for concurrent use. Each partition of a table has a lock of its own,
// held only while a call reads or changes its rows (the checks of a request, and the copies
// of what it returns, run outside it), so calls on different partitions run side by side and
// calls on one partition appear to happen one at a time, in an order that respects real
// time: a transaction's rows change together, a query sees each partition as it was at one
// moment, and a partition's row timestamps grow in the order of its writes. As on the real
// service, a query over several partitions is not one snapshot of them all: a write to a
// partition the page has not reached yet may show in it. Each method returns the context's
// error, without doing anything, when the context has ended before the call.
package memservice
