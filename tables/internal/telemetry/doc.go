// Package telemetry owns what the library tells a program's observability: one span and one
// measurement per call of a store, a polymorphic store, a transaction or a blob document
// handle, the outcome verbs' lost attempts, and the account-wide counts (retries, busy
// answers, own echoes, cache lookups and evictions, batch parallelism, offloaded bytes).
//
// Its one entry point is [Telemetry], built once per account from the account's options:
// [Telemetry.Begin] starts a call, [Call.Finish] ends it. A Telemetry without a tracer and
// without meters (the default) builds nothing per call: no span, no attribute, no reading of
// the clock. Instrument names, attribute keys and their meanings are listed for users in
// docs/production.md; they are defined here and nowhere else.
//
// # Conventions first
//
// Calls follow OpenTelemetry's database client conventions (stable): their duration is
// db.client.operation.duration, in seconds with the conventions' bucket boundaries, and
// spans are named "{db.operation.name} {db.collection.name}", with the same attributes:
// db.system.name, db.namespace (the storage account), db.collection.name (the table, or a
// blob document's container), db.operation.name, server.address and server.port (a port
// other than the scheme's), and on failure error.type and db.response.status_code (the
// service's HTTP status). A call of the whole account (Ping) has no collection, and its
// span is named after the namespace (or the server) instead. A batch is "BATCH <op>" with
// db.operation.batch.size, as the conventions name batches; a batch of one write is that
// write. The instruments the conventions have no name for are the library's own
// (udtables.*), and so are the span attributes azure.tables.partition_key,
// azure.tables.row_key and azure.tables.error_code (the service's error code, which the
// conventions and the Azure SDK's own spans have no attribute for).
//
// The conventions register no db.system.name for Azure Table Storage. The library reports
// "azure.tables", in the form of the registered cloud values (aws.dynamodb,
// azure.cosmosdb, gcp.spanner) and after the Azure SDK's package (aztables), which the
// conventions allow for a system they do not list. An account whose endpoint is Cosmos DB
// for Table's (*.table.cosmos.azure.com) reports the registered "azure.cosmosdb", which is
// what serves its calls; blob documents report "azure.blob", with the blob endpoint. An
// in-memory account has no server: its calls carry neither address nor namespace, and their
// spans are internal, as the conventions allow for in-memory databases (a remote service's
// are client spans).
//
// There is no counter of calls: the histogram's count is the number of calls, for every
// exporter, and a counter would cost each call a second measurement to say the same.
// error.type is the name of the library's sentinel the error matches (callerr.Kind:
// "not_found", "concurrency_conflict", …), the conventions' "_OTHER" for an error that
// matches none. Row keys and error texts reach spans only with Options.RecordKeys, as the
// conventions want anything that may carry user data opt-in; filter text is never recorded.
//
// It refuses nothing and never fails a call: an instrument the meter provider refuses is
// logged once and records nothing.
package telemetry
