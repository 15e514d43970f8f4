// Package azservice implements the table and blob service interfaces of package service
// over the Azure SDK for Go (aztables and azblob), for Azure Storage and for Azurite.
//
// A Service is built from SDK clients the caller configured (New) or from a connection
// string (NewFromConnectionString), which also understands "UseDevelopmentStorage=true".
//
// # Entities on the wire
//
// Rows are written as JSON the package builds itself, never through aztables.EDMEntity:
// Edm.Double, Edm.Int64, Edm.DateTime (UTC, seven fractional digits), Edm.Guid and
// Edm.Binary carry an "@odata.type" annotation, so a whole-valued double stays a double and
// a 64-bit integer keeps every digit; Edm.Int32, Edm.Boolean and Edm.String are written
// plain. NaN and the infinities are the strings "NaN", "Infinity" and "-Infinity".
//
// aztables' entity methods decode the body of a single-entity write into a map and encode it
// again before sending it; the package's own entity requests (see Requests) send it as
// written. A transaction's multipart body is the adapter's own too (see Service.Transact):
// its entities go out as written here, and the versions its response reports are returned.
//
// Responses are decoded from the bytes the service sent (the SDK's own decoded values turn
// 5.0 into 5). An annotated value takes its annotation's type; an unannotated number is
// Edm.Int32 when it is an integer literal that fits, Edm.Double otherwise; a null is no
// value, which is how the service answers a $select of a property the row lacks. A value
// that does not parse as its type fails with an error matching abstractions.ErrIntegrity.
//
// # Requests
//
// Tables and queries go through aztables. Point reads, single-row writes and transactions
// go through an azcore pipeline of the package's own, built from the same client options and
// credential: they send the JSON and the multipart bodies the package wrote, where aztables
// would decode each entity into a map and encode it again (and parse a transaction's
// response a second time), and otherwise the same requests, with the same spans, telemetry
// and errors. An Azure Cosmos DB table endpoint keeps aztables for every request (a
// transaction with the body written here, which a per-call policy puts in place of the
// SDK's).
//
// # Errors
//
// Every failure the service reports becomes an *abstractions.StatusError with the HTTP
// status, the service's error code and message (without the RequestId and Time lines), and
// the SDK's *azcore.ResponseError in Err. A failed transaction is a
// *service.TransactionError naming the failing action, read from the multipart response.
// When ctx ends first, the error matches ctx's error.
//
// # The emulator
//
// With the emulator's development account (devstoreaccount1, which
// "UseDevelopmentStorage=true" stands for), single-entity writes send every non-ASCII
// character as a \u escape: Azurite 3.35 may store a multi-byte character that straddles
// two chunks of a request body as U+FFFD (Azure/Azurite#2670). The service reads the same
// text either way; on Azure the bodies are sent as the SDK encodes them.
//
// # What the SDK cannot do
//
// The generated request builders refuse an empty PartitionKey in a URL, so Replace, Merge,
// the upserts and Delete of such a row fail with an error matching
// abstractions.ErrNotSupported (Insert, GetRow and queries work). Keys containing a single
// quote are written everywhere, in transactions too: Transact writes its actions' URLs
// itself, with the quotes doubled (the SDK's transaction builder does not double them).
package azservice
