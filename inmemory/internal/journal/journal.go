// Package journal carries a memory service's committed changes to a write-ahead log, and
// changes read back from one into a service, without adding to package memservice's
// exported API: memservice sets Attach, Restore and Dump when it is initialised, and the
// emulator's data directory calls them (the pattern of grpc's internal package).
package journal

import (
	"context"

	"github.com/unified-data/gotables/tables/service"
)

// Kind is what a Change does.
type Kind uint8

// The kinds of change.
const (
	CreateTable Kind = iota + 1 // a new, empty table named Table (replacing one of that name)
	DeleteTable                 // the table named Table, and its rows, removed
	Rows                        // Rows written to or deleted from Table, all at once

	CreateContainer // a new, empty container named Container, with Props' ETag and LastModified (replacing one of that name)
	DeleteContainer // the container named Container, and its blobs, removed
	PutBlob         // the blob Blob of Container stored whole: Data, Props, Metadata and Annex
	DeleteBlob      // the blob Blob of Container removed
	StageBlock      // a block staged for Blob of Container by the emulator: BlockID and Data
)

// A Change is one committed change of a service: a table created or deleted, one row
// write, or every row of a transaction; a container created or deleted, a blob stored whole
// (its content with its properties and metadata) or deleted, a block staged. Replayed in the order it was logged, each change
// sets state rather than repeating a request: a put stores the row with its ETag and
// Timestamp, a blob is stored with its ETag and LastModified, a delete removes what it names
// if present. So replaying a log from any earlier point
// over a state that already holds some of its changes ends in the same state.
type Change struct {
	Kind  Kind
	Table string
	Rows  []RowChange

	Container string
	Blob      string                 // PutBlob, DeleteBlob, StageBlock
	Props     service.BlobProperties // CreateContainer: ETag and LastModified; PutBlob: all
	Metadata  map[string]string      // PutBlob
	Data      []byte                 // PutBlob: the content; StageBlock: the block
	BlockID   string                 // StageBlock
	// Annex (PutBlob, DeleteBlob) is what the emulator keeps beside the blob, in its own
	// encoding: the memory service keeps it with the blob, logs and dumps it, and reads
	// nothing in it. Nil for a change not made through the emulator.
	Annex []byte
}

type annexKey struct{}

// WithAnnex returns a context that makes the blob write or delete it is given to carry
// annex in its Change.
func WithAnnex(ctx context.Context, annex []byte) context.Context {
	return context.WithValue(ctx, annexKey{}, annex)
}

// AnnexOf returns the annex ctx carries, or nil.
func AnnexOf(ctx context.Context) []byte {
	a, _ := ctx.Value(annexKey{}).([]byte)
	return a
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
	// the service's table lock, its blob lock; the emulator's blob lock for StageBlock), after the change is made in memory and before any other
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
	// Restore applies a logged change to the service, without the checks of a request
	// (a StageBlock is the emulator's to apply: the service ignores it).
	Restore func(svc any, c *Change)
	// Dump calls emit with changes that rebuild the service's tables and rows, containers
	// and blobs: each table's CreateTable and then its rows, each container's
	// CreateContainer and then a PutBlob per blob. Each partition is read at one moment; tables and
	// partitions are not read at the same moment, so changes made during a dump may or may
	// not be in it.
	Dump func(svc any, emit func(*Change) error) error
)
