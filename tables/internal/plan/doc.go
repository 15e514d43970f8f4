// Package plan owns what a query costs on the table service before it is sent: it reads the
// $filter text a store is about to send (the text package odata writes, or a filter an
// operator typed) and classifies the query by the keys it bounds, as the service runs it:
//
//   - PointRead: one partition and one row key, one row read at most;
//   - RowRange: one partition and a range of row keys;
//   - PartitionScan: one partition, every row of it read (and filtered, when the filter has
//     conditions beyond the partition);
//   - Partitions: several partitions, named or as a range of partition keys, each scanned;
//   - TableScan: no bound on the partition key, so the service reads the whole table.
//
// The class is what a span and the call duration metric carry, what a store's table-scan
// policy (log, allow, refuse) is applied to, and what Explain returns. Shape masks a filter's
// literals, so that queries that differ only by their values share one shape: what the
// once-per-shape log line and a refusal name, without the values (which may be user data).
//
// The package refuses nothing: a filter it cannot read is classified as TableScan, the
// class that promises least. It never sees a query's rows or sends anything.
package plan
