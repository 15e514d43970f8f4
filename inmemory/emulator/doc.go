// Package emulator serves the memory table service (package memservice) over the Azure Table
// service's REST protocol, so that clients in any language, and the Azure SDKs, can use it
// where they would use Azurite. It owns the wire: URLs, Shared Key authentication, the JSON
// entity format at each metadata level, continuation headers, the multipart body of an
// entity-group transaction, and the service's error bodies. Every rule about tables and rows
// (names, keys, sizes, ETags, conditions, transactions, query pages) is the memory
// service's, stated once in its documentation; this package only translates.
//
// The protocol is written with the standard library alone, over the memory service: the
// command that runs it (tools/cmd/udtables-emulator) links no package of the Azure SDK.
//
// # Accounts and URLs
//
// URLs are path-style, http://host:port/account/..., as for the storage emulator. The
// development account (DevelopmentAccount, with its well-known key DevelopmentKey) is always
// served; Options.Accounts adds others. Each account has a memory service of its own.
//
// # Authentication
//
// Every request must carry a Shared Key or Shared Key Lite signature (an Authorization
// header) made with the account's key, and an x-ms-date (or Date) within 15 minutes of the
// emulator's clock. A request without one, with a signature that does not verify, or for an
// account the emulator does not serve, fails with 403 AuthenticationFailed. Shared access
// signatures are not supported yet: a request that carries one fails with 501
// NotImplemented.
//
// # Operations
//
// Tables: Create Table, Delete Table, Query Tables ($filter on TableName, $top, the
// NextTableName continuation) and the read of one table. Entities: Insert (Prefer
// return-content, the default, or return-no-content), Update and Merge (with If-Match),
// Insert Or Replace and Insert Or Merge (PUT and MERGE, or PATCH, without If-Match),
// Delete (If-Match required), the read of one entity ($select) and Query Entities
// ($filter, $select, $top, the NextPartitionKey and NextRowKey continuation). Responses are
// JSON at the metadata level the Accept header (or $format) asks for: nometadata,
// minimalmetadata (the default) or fullmetadata, with the odata.type annotations the
// service writes at that level. Entity-group transactions ($batch) take one change set of
// writes; the response has the service's multipart shape, and a failed action is reported
// by its own status and an error message that starts with its index ("1:The specified
// entity already exists.").
//
// # What it refuses
//
// A request the emulator does not implement (service properties and statistics, table
// ACLs, CORS preflight, shared access signatures, a query option other than $filter,
// $select, $top and $format, a read inside a transaction, more than one change set) fails
// with 501 NotImplemented and changes nothing, rather than succeeding in a way the service
// would not. AtomPub, which the service no longer speaks, fails with 415
// AtomFormatNotSupported, as there. A request body larger than 4 MiB fails with 413
// RequestBodyTooLarge, one whose Content-MD5 header does not match it with 400 Md5Mismatch,
// and one that is not the JSON the service reads with 400 InvalidInput.
package emulator
