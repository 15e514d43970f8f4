// Package eventstore is an example application of a polymorphic table: an event store in
// which the events of every type of one aggregate share a partition.
//
//   - The aggregate's id is the partition key; each event's row key is its version,
//     zero-padded to nine digits ("000000001"), so a partition lists in version order.
//   - A marker row, "head", holds the aggregate's current version in the system column
//     _Version and no event.
//   - Append writes the new events and moves the head in one entity-group transaction,
//     conditional on the head's ETag: it succeeds only if the aggregate is still at the
//     version the caller read, so two writers appending at once cannot both win, and the
//     loser's events are not written.
//
// The events and Store depend on the abstractions module only: its PolyStorage contract, and
// its TypeRegistry, to register the event names where the events are defined. Rows wires that
// store once (the event names, the table) for any *tables.Account: the tests pass it the
// in-memory backend's, and Azurite's when an emulator is available.
package eventstore
