// Package backup backs up, restores and copies tables, entity by entity, with progress.
//
// An entity is a main row with its continuation rows ({RowKey}~0001 …) and the blobs its
// {Column}__blob cells reference in the offload container: a backup holds them together, a
// restore writes them together (the blobs first, then every row of the entity in one
// entity-group transaction), so no entity is ever restored in part. Rows without the
// library's layout (a table another program wrote, the identity tables, polymorphic rows and
// markers) are entities of one row, copied cell by cell as they are.
//
//	st, err := backup.WriteFile(ctx, acct, "Orders", "orders.udtb", nil)  // resumable
//	st, err = backup.Verify(ctx, f, nil)                                  // reads, checks, writes nothing
//	st, err = backup.Restore(ctx, other, "Orders", f, &backup.Options{Existing: backup.Skip})
//	st, err = backup.Copy(ctx, acct, "Orders", other, "Orders", nil)
//
// Two more tools read and write entities the same way: [ExportCSV] and [ImportCSV] move a
// table to and from Azure Storage Explorer's typed CSV (an import is checked whole, then
// written as Restore writes an archive), and [Delete] deletes the entities a filter
// selects, each with its continuation rows.
//
// # Format
//
// An archive (version 1) is JSON Lines, one record a line, compressed as a sequence of gzip
// members, which gzip, zcat and every gzip library read as one stream (zcat orders.udtb |
// jq). Each record has a "type":
//
//   - header, first: {"type":"header","format":"udtables-backup","version":1,"table":…,
//     "partitions":[…]}, partitions only when the backup was limited to some.
//   - blob: {"type":"blob","pk":…,"rk":…,"column":…,"sha256":…,"length":…,"contentType":…,
//     "encoding":…,"chunks":N} announces a blob of the next entity; N chunk records follow,
//     {"type":"chunk","data":"<base64>"}, each of at most 1 MiB of the blob's stored bytes.
//   - entity: {"type":"entity","pk":…,"rows":[{"rk":…,"timestamp":…,"cells":[[name, EDM type,
//     value], …]}, …],"values":[{"column":…,"form":"split"|"blob","sha256":…,"length":…}]}:
//     the main row, then its continuation rows in order, cells sorted by name. Values are
//     JSON strings (Edm.String, Edm.Binary in base64, Edm.Int64 in decimal, Edm.DateTime
//     with seven fractional digits, Edm.Guid), numbers (Edm.Int32, Edm.Double; "NaN",
//     "Infinity" and "-Infinity" as strings) and booleans. The timestamp is the source's and
//     is not restored (the service sets its own). values lists each split value and each
//     blob of the entity with the SHA-256 and length of its stored bytes.
//   - end, last: {"type":"end","entities":…,"rows":…,"blobs":…,"blobBytes":…}. An archive
//     without it is incomplete.
//
// Restore and Verify check everything they read: each gzip member's CRC-32 and length,
// the header's format and version, each blob's bytes against its hash and length, each
// split value's chunks against its manifest and the archive's record of it, each blob
// reference against the blob records before it, and the trailer's counts. An archive that
// is damaged, cut or incomplete fails with an error matching abstractions.ErrIntegrity; one
// of another format version with abstractions.ErrNotSupported. Restore also reads
// uncompressed JSON Lines, which carry no checksum: their records are checked only for
// what the format itself holds (the hashes, the counts).
//
// # Damage
//
// Restore writes nothing from bytes it has not verified. Gzip checks a member only at its
// end, so a compressed archive is read a member at a time (up to 1,000 entities or 4 MiB
// of records, more when an entity holds large blobs): each is decompressed whole and
// checked before any of its records is used. A restore that meets damage (a member that
// fails its checksum or is cut short, a record that fails its check, a missing trailer)
// first writes every entity it read whole before the damage, then fails: the destination
// holds exactly the entities that Verify counts before the damage (Stats.Entities of
// both), each as the archive holds it, and no row of a member that fails its checksum or
// is cut. Blobs uploaded for an entity that was not written are orphans the destination's
// sweep removes.
//
// # Consistency
//
// A backup reads the table in key order while it may change. Each entity in the archive is
// whole: its continuation rows and blobs are read after its main row and checked against it
// (the split values' hashes, the blobs' hashes), and an entity that changed meanwhile is
// read again. The table is not a snapshot: an entity written after the scan passed its key
// is not in the archive, one written before it is, and one deleted meanwhile is left out.
//
// # Blobs
//
// A restore or copy stores each blob under the destination table's name
// ({table}/{pk}/{rk}/{column}/{sha256} in the destination account's offload container) and
// rewrites the reference cells to name it, so the copy shares no blob with the source: the
// source's deletes, replaces and orphan sweeps never touch the copy's blobs. Blobs are
// uploaded create-only (one that exists has the same name, so the same bytes, and is
// touched). A blob uploaded for an entity that is then skipped, or whose transaction fails,
// is an orphan the destination's sweep removes.
//
// # Cosmos DB for Table
//
// Azure Cosmos DB for Table lists rows in no key order, so a backup of one of its tables
// holds the entities in the order the service lists them (partition by partition with
// Options.Partitions), reads the table in one scan whatever Options.Parallel says, and
// cannot resume: WriteFile keeps no checkpoint (an interrupted backup starts again), and
// one that finds a checkpoint fails with abstractions.ErrNotSupported before reading
// anything. Every entity is in the archive
// all the same, whole; Restore and Copy into a Cosmos DB table work as into any other.
//
// # Resuming, parallelism, throttling
//
// WriteFile keeps a checkpoint file at each gzip member boundary (the archive's offset and
// the last entity's key); a run that finds it cuts the archive there and goes on, and the
// archive it completes is byte for byte the one an uninterrupted run writes. With
// Options.Parallel above one, partitions are read concurrently and written in key order.
// A throttled or busy answer (429, 503, a timeout) or no answer at all is sent again after
// a doubling pause, logged. A restore transaction whose answer is lost (a connection reset
// while its response was on its way, a 5xx answer) is settled by reading its rows back, as
// the stores do for their writes: applied, it counts as written; not applied, it is sent
// again. Other failures end the call. A failure of a service is an
// *abstractions.StoreError matching its sentinel (ErrUnavailable for a service that cannot
// be reached or stays busy, ErrNotFound for a missing table, context.Canceled, …); only a
// transaction whose rows cannot be read back either says it may or may not have been
// applied. Copy returns the failing side's own error. Nil accounts, writers and readers
// are refused with abstractions.ErrInvalidArgument.
//
// # Memory
//
// Heap use is bounded by the entities in flight, not the table: a page of rows per
// partition being read and a record being written; on restore, one gzip member (up to
// 8 MiB of it in memory, the rest of a member holding large blobs in a temporary file).
// Blobs larger than 1 MiB pass through a temporary file, so a file of any size costs 1 MiB
// of heap.
package backup
