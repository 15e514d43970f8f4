// Package journal carries a memory service's committed changes to a write-ahead log, and
// changes read back from one into a service, without adding to package memservice's
// exported API: memservice sets Attach, Restore and Dump when it is initialised, and the
// emulator's data directory calls them (the pattern of grpc's internal package).
package journal

import "github.com/unified-data/gotables/tables/service"

// Kind is what a Change does.
type Kind uint8

// The kinds of change.
const (
	CreateTable Kind = iota + 1 // a new, empty table named Table (replacing one of that name)
	DeleteTable                 // the table named Table, and its rows, removed
	Rows                        // Rows written to or deleted from Table, all at once
)

// A Change is one committed change of a service: a table created or deleted, one row
// write, or every row of a transaction. Replayed in the order it was logged, each change
// sets state rather than repeating a request: a put stores the row with its ETag and
// Timestamp, a delete removes it if present. So replaying a log from any earlier point
// over a state that already holds some of its changes ends in the same state.
type Change struct {
	Kind  Kind
	Table string
	Rows  []RowChange
}

// A RowChange is one row of a Rows change: Row stored as it is (with its ETag and
// Timestamp), or, with Delete, the row with Row's keys removed.
type RowChange struct {
	Delete bool
	Row    service.Row
}

// A Log receives a service's changes.
type Log interface {
	// Append records c and returns its sequence number. The service calls it while it
	// holds the locks that order c among the changes c conflicts with (the row's partition,
	// the service's table lock), after the change is made in memory and before any other
	// call can see it, so the log's order is an order the service applied them in. It must
	// not wait for I/O.
	Append(c *Change) uint64
	// Sync returns once every change up to seq is durable, or with the error that keeps it
	// from being so. The service calls it after releasing its locks and reports a failure
	// to the caller instead of success.
	Sync(seq uint64) error
}

// Set by package memservice; svc is a *memservice.Service.
var (
	// Attach makes the service send its changes to l from now on.
	Attach func(svc any, l Log)
	// Restore applies a logged change to the service, without the checks of a request.
	Restore func(svc any, c *Change)
	// Dump calls emit with changes that rebuild the service's tables and rows: each table's
	// CreateTable and then its rows. Each partition is read at one moment; tables and
	// partitions are not read at the same moment, so changes made during a dump may or may
	// not be in it.
	Dump func(svc any, emit func(*Change) error) error
)
