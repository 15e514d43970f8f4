// Package outbox is an example application of the transactional outbox: every change of an
// order is written together with the event that records it, in one entity-group
// transaction, and a relay publishes the events afterwards, at least once each.
//
//   - Orders are typed rows (a tables.Store of Order, with its ETags and concurrency modes);
//     their events are polymorphic rows (a tables.PolyStore of Event). Both stores share one
//     table (tables.StoreOptions.SharedTable), and each reads only its own rows.
//   - The tenant is the partition: an order's id is "tenant|order", and its events' row keys
//     are the tenant's outbox sequence, zero-padded ("evt-000000000001"), so a partition
//     pages its events in the order they were written.
//   - A marker row, "outbox", holds the tenant's last sequence number (_Seq) and the first
//     one not yet published (_Pending). A change moves _Seq in the same transaction as the
//     order and the event, conditional on the marker's ETag and on the order's: a lost
//     condition writes nothing, and the caller reads again and retries.
//   - The relay pages the events from _Pending in sequence order, publishes each one, marks
//     it sent (_Sent) with a merge conditional on the event row's ETag, and then moves
//     _Pending on, conditional on the marker's ETag. A crash anywhere leaves every event
//     either unpublished (it is published on the next run) or published and perhaps not
//     marked (it is published again): each event is published at least once, and none is
//     lost. Consumers deduplicate by Message.Seq.
//   - A consumer's Inbox remembers the messages it handled, one row each, so it handles a
//     message published again once. The rows expire a week after they were written
//     (package tables/expiry), so reads no longer see them and Inbox.Sweep deletes them at
//     the cost of what expired: the inbox keeps a window, not the whole history.
//
// The domain types (Order, the events, RegisterEvents) depend on the abstractions module
// only; Open wires the stores once for any *tables.Account: the tests pass the in-memory
// backend's, and Azurite's when an emulator is available.
package outbox
