// Package emulator serves the memory table service (package memservice) over the Azure Table
// service's REST protocol, and its blobs over the Blob service's ("Blobs" below), so that
// clients in any language, and the Azure SDKs, can use it where they would use Azurite. It owns the wire: URLs, Shared Key authentication, the JSON
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
// emulator's clock, or a shared access signature in its query. A request without either,
// with a signature that does not verify, or for an account the emulator does not serve,
// fails with 403 AuthenticationFailed.
//
// A shared access signature is an account SAS (ss, srt) or a table SAS (tn, with an
// optional key range spk, srk, epk, erk), of version 2015-04-05 or later, verified with the
// service's string to sign for its version (2020-12-06 and later sign the encryption scope
// of an account SAS too). As on the service, a SAS that is malformed, does not verify, has
// expired or is not yet valid (st, se), names a stored access policy (si) its table does
// not have, or repeats a field its policy sets, fails with 403 AuthenticationFailed; a request from
// outside sip with 403 AuthorizationSourceIPMismatch, one over http when spr is https with
// 403 AuthorizationProtocolMismatch, an account SAS without the table service with 403
// AuthorizationServiceMismatch, and one without the resource type an operation needs (c for
// tables, o for entities) with 403 AuthorizationResourceTypeMismatch. An operation the
// permissions do not grant fails with 403 AuthorizationPermissionMismatch: a read or query
// needs r, an insert a, an update or merge u, an upsert a and u, a delete d, and with an
// account SAS listing tables l, creating one a, c or w, deleting one d. A table SAS
// authorizes entities of its own table only: another table, an operation on tables, or a
// row outside its key range fails with 403 AuthorizationFailure, and a query returns only
// the rows in the range. In a $batch each action is held to the SAS; one it does not
// allow fails the transaction as a failed action does (its index, 403 and the code).
//
// # Stored access policies
//
// Get Table ACL and Set Table ACL (comp=acl, Shared Key only) read and replace a table's
// stored access policies, at most five, in the service's SignedIdentifiers XML; a table SAS
// naming one (si) takes from it the start, expiry and permissions it sets, at each request,
// so changing or removing a policy changes or revokes its signatures. Deleting a table drops
// them. With a data directory, each account's policies are also in its file acl.json,
// written whole, fsynced and renamed into place before a change is answered.
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
// # Blobs
//
// Handler.Blobs serves the Blob service's protocol for the same accounts, over the blobs
// of the same memory services (a memservice.Service is a table and a blob service), on an
// address of its own. It owns that wire too: Shared Key and Shared Key Lite with the Blob
// service's strings to sign (blobauth.go), shared access signatures (an account SAS with
// the blob service, a service SAS of a container or a blob: blobsas.go), the XML bodies
// and error bodies, ranges and conditional headers. Containers: create, delete, properties,
// list. Block blobs: Put Blob, Put Block, Put Block List, Get Block List, Get Blob (ranges
// included), properties and metadata (read and set), Delete Blob, List Blobs (prefix,
// delimiter, maxresults, marker, include=metadata). Conditions are If-Match, If-None-Match,
// If-Modified-Since and If-Unmodified-Since; a read that fails If-None-Match or
// If-Modified-Since is answered 304, any other failure 412 ConditionNotMet (409
// BlobAlreadyExists for If-None-Match: * over a blob), and a missing blob 404.
//
// What the memory service does not keep about a blob (its committed block list, its
// language, disposition, cache control and MD5) and the blocks staged for it are kept
// beside it per account, tied to the ETag of the version they describe: a blob written
// to the memory service otherwise than through the emulator is served with what the
// service keeps. Blob writes of an account are serialized by one lock, and each stores
// under the ETag it read, so a writer outside the emulator is never overwritten.
//
// Page and append blobs, leases, snapshots, versions, copies, tags, tiers, encryption
// keys and scopes, container metadata and ACLs are refused with 501 NotImplemented and
// change nothing.
//
// # Fault injection
//
// Options.Faults injects faults into the requests its rules match, after authentication
// and before the request is applied: LoseResponse (applied, then the connection closed
// with no answer), ResetMidRequest (closed, not applied), InternalError (500) and
// ServerBusy (503 with Retry-After), Delay (wait, then serve), DelayAnswer (serve, then
// wait before answering) and Throttle (503 ServerBusy past a rate, a token bucket per
// rule). A wait ends when the request's context does (the client hung up); it starts no
// goroutine. ParseFaults reads rules from the command's grammar,
// fault:calls[:table][:option...]; a request with the FaultHeader header gets the fault it
// names. The rules and the header apply to both endpoints: a rule's calls say which kinds
// of requests it matches (Reads, Writes, Transactions and TableCalls of the table endpoint;
// BlobReads, BlobWrites and ContainerCalls of the blob endpoint), and its table a table or
// a container. The blob endpoint answers 500 and 503 in the Blob service's XML, with its
// own message for ServerBusy. Faulted requests are logged with the fault. The names of the first four are those
// of package tables/faults, which this package does not import (it pulls the Azure SDK in).
//
// # Persistence
//
// Without Options.DataDir an account's tables and blobs live in memory and are gone when
// the process ends. With it, each account keeps a directory of its own under DataDir (named
// after the account) holding a snapshot and a write-ahead log, and the guarantee is: every
// change the emulator answered with success (a table created or deleted, an entity written
// or deleted, a committed transaction; a container created or deleted, a blob put,
// committed from blocks, given properties or metadata, or deleted, a block staged) is in the
// log, written and fsynced before the response was sent, and is there again after the
// process is killed or the machine stops, with the same rows, ETags and Timestamps, the
// same blob content, properties, metadata, block lists, ETags and Last-Modified, so that an
// ETag a client holds stays valid. Staged blocks that were never committed are kept too, as
// the service keeps them (for a week). A transaction is one record, and so is a blob write
// (the blob's content with its properties): after a restart it is there whole or not at
// all. A change that
// was not answered (the process died first) may or may not be there; a refused one never
// is. Reads may see a change a moment before its fsync ends, so a read of a change that was
// never acknowledged can be undone by a crash.
//
// The memory service hands each change to the log while it still holds the lock that orders
// the change among those it conflicts with (a row's partition, the service's table lock,
// its blob lock; a staged block is logged under the emulator's blob lock), so the log's
// order is the order the service applied them in; the table writes of many connections
// share fsyncs (group commit). Blob writes of an account are serialized by one lock (see
// Blobs) and each waits for its fsync under it, so they are made durable one at a time.
//
// A blob write's record holds the blob's whole content: the log grows by every blob
// written, a Set Blob Properties or Metadata included (it rewrites the blob), until the
// next snapshot, and each snapshot rewrites every table and blob of the account. With a
// data directory, a blob larger than 4 GiB less 1 MiB (a record's length is 32 bits) is
// refused with 501 NotImplemented. A start reads the snapshot and the logs into memory whole. If writing the log fails, the write is answered
// with 500 InternalError, and so is every later write: restart the emulator.
//
// Every SnapshotEvery changes (100,000 by default), at a clean stop (Handler.Close) and at
// a start that replayed a log, the emulator writes a new snapshot: the log is renamed
// log.old and a new log started, the tables and blobs are written to snapshot.tmp, which is fsynced
// and renamed over snapshot, and log.old is removed. A start loads snapshot, then replays
// log.old (when a crash left one) and log; each record sets state (a row or blob with its
// ETag, a row, table, blob or container gone), so a snapshot taken while writes went on replays to the right state.
//
// Each record is framed by its length and a CRC-32C. A last record that the file ends in
// the middle of, that is followed only by zeros, or whose checksum fails where the file
// ends, is a write the process did not finish: it was never acknowledged, and is dropped
// (the log is cut before it). Any other damage (a bad checksum before the last record, a
// file that is not the emulator's, a snapshot without its end record) makes New fail with a
// *CorruptError naming the file and offset: the emulator does not start rather than start
// without acknowledged data.
//
// # What it refuses
//
// A request the emulator does not implement (service properties and statistics, table
// CORS preflight, a query option other than $filter,
// $select, $top and $format, a read inside a transaction, more than one change set) fails
// with 501 NotImplemented and changes nothing, rather than succeeding in a way the service
// would not. AtomPub, which the service no longer speaks, fails with 415
// AtomFormatNotSupported, as there. A request body larger than 4 MiB fails with 413
// RequestBodyTooLarge, one whose Content-MD5 header does not match it with 400 Md5Mismatch,
// and one that is not the JSON the service reads with 400 InvalidInput.
package emulator
