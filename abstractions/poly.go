package abstractions

import (
	"context"
	"time"
)

// TableKey addresses one row of a polymorphic table by its two keys, used exactly as
// written: a polymorphic store never normalises them, because its row keys are usually
// case-sensitive payloads or zero-padded counters, and lower-casing one would address
// another row.
type TableKey struct {
	PartitionKey string
	RowKey       string
}

// PolyWrite is one row a [PolyStorage] writes: an item of one of the types sharing the table,
// or, when Item is nil, a marker row that holds system columns only.
//
// Columns are system columns: every name starts with '_' (names the storage layer reserves
// for itself, such as _TypeName, are refused). A marker row holds only them; an item row
// holds them beside the item's own columns. Values are string, bool, int32, int64, int
// (stored as int64), float64, time.Time (stored in UTC), []byte and GUID.
//
// IfMatch, when set, makes the write a replace of the row as it is stored at that version
// (an ETag a read or an earlier write returned): the write fails with ErrConcurrencyConflict
// when the row has changed since, and with ErrNotFound when it is gone. That is how a marker
// guards the rows written beside it in one transaction: "append event N only if the
// aggregate is still at version N-1" is a batch of the event and the marker, conditional on
// the marker's ETag.
type PolyWrite[B any] struct {
	Key     TableKey
	Item    B
	Columns map[string]any
	IfMatch string
}

// Marker returns the write of a marker row: no item, only the given system columns.
func Marker[B any](key TableKey, columns map[string]any) PolyWrite[B] {
	return PolyWrite[B]{Key: key, Columns: columns}
}

// PolyEntry is one row a [PolyStorage] read back.
type PolyEntry[B any] struct {
	Key TableKey
	// Item is the row's item as its concrete type (a pointer to the registered struct), or
	// nil for a marker row.
	Item B
	// TypeName is the discriminator the row carries: the name its item's type is registered
	// under, or "" for a marker row.
	TypeName string
	// Columns holds the row's system columns (those whose names start with '_'), except the
	// discriminator and the cells the storage layer keeps for itself (a change feed's), with
	// the Go types PolyWrite lists (an Int64 cell is an int64, an Int32 cell an int32). It
	// is nil when the row has none.
	Columns map[string]any
	// ETag is the row's version, the condition of a later PolyWrite.IfMatch or MergeColumns.
	ETag string
	// Timestamp is the service's time of the row's last write.
	Timestamp time.Time
}

// IsMarker reports whether the entry is a marker row (no item).
func (e *PolyEntry[B]) IsMarker() bool { return e.TypeName == "" }

// PolyStorage is the storage of many types in one table, read back through a common base B:
// an interface every item type implements (directly, or through a base struct the item types
// embed, whose pointer methods they promote). Each row carries a discriminator naming its
// item's type, and a read creates only types registered for that name, checking that the
// type satisfies B; nothing can turn that check off. Rows are immutable facts plus mutable
// system columns: MergeColumns is the one partial update.
//
// Implementations refuse a key the service would refuse with ErrInvalidKey and a malformed
// write with ErrInvalidArgument, before anything is sent. A polymorphic store has no read
// cache, filters beyond bounds on the row key, projections, update builders, concurrency
// modes beyond IfMatch, or protected properties: the methods that would take them do not
// exist, and an option, a query or an item type that asks for one is refused with
// ErrNotSupported.
type PolyStorage[B any] interface {
	// Insert writes a new row (ErrDuplicateKey when one exists), or, with IfMatch, replaces
	// the row at that version. It returns the row's new ETag.
	Insert(ctx context.Context, w PolyWrite[B]) (string, error)
	// Upsert writes the row whether or not one exists, or, with IfMatch, replaces the row
	// at that version. It returns the row's new ETag.
	Upsert(ctx context.Context, w PolyWrite[B]) (string, error)
	// InsertBatch writes the rows as Insert does, in entity-group transactions: one
	// partition each, in the order partitions first appear, at most 100 rows and 4 MiB
	// each, those of different partitions possibly at once. Each transaction is atomic; a
	// failing one stops its partition and leaves earlier ones committed, and the error is a
	// *BatchError saying which rows committed, as for Storage.CreateBatch. A key
	// named twice is refused with ErrDuplicateKey, and a batch holding an IfMatch write
	// that needs more than one transaction with ErrInvalidArgument (its condition would
	// guard only part of it), both before anything is sent.
	InsertBatch(ctx context.Context, ws []PolyWrite[B]) error
	// UpsertBatch writes the rows as Upsert does, in transactions as InsertBatch does.
	UpsertBatch(ctx context.Context, ws []PolyWrite[B]) error
	// One reads one row; a missing row fails with ErrNotFound. A row whose discriminator
	// names no registered type, or a type that does not satisfy B, fails with ErrIntegrity
	// naming it.
	One(ctx context.Context, key TableKey) (*PolyEntry[B], error)
	// List reads every row of one partition (the partition key used as written, never
	// normalised), in row key order, markers included. A partition key the key rules refuse,
	// "" included, fails with ErrInvalidKey before anything is sent. A row One would refuse
	// fails the whole call.
	List(ctx context.Context, partition string) ([]*PolyEntry[B], error)
	// Page returns one page of the rows q selects, in key order, and the cursor of the
	// next, with the rules of Storage.Page for Take (the page size), Cursor (bound to its
	// query) and HasMore. Keys are used as written: Partition ("" for the whole table) and
	// RowKeyPrefix are not normalised, and Where may only bound the entry's Key.RowKey (Eq,
	// Lt, Le, Gt, Ge, combined with And), which gives a range; other filters and Select are
	// refused with ErrNotSupported. The newest N rows of a log keyed by InvertedTicks are
	// its first page of size N. A row One would refuse fails the call.
	Page(ctx context.Context, q Query[PolyEntry[B]]) (Page[PolyEntry[B]], error)
	// Delete deletes the row and reports whether this call deleted it, as Storage.Delete
	// does: with ifMatch "" whatever version is stored, otherwise only that version (a row
	// that moved on fails with ErrConcurrencyConflict and stays). A missing row is not an
	// error: deleted is false.
	Delete(ctx context.Context, key TableKey, ifMatch string) (deleted bool, err error)
	// MergeColumns writes system columns into an existing row, keeping its other columns,
	// and returns the row's new ETag. With ifMatch "" any version is merged into; otherwise
	// a row at another version fails with ErrConcurrencyConflict. A missing row fails with
	// ErrNotFound.
	MergeColumns(ctx context.Context, key TableKey, columns map[string]any, ifMatch string) (string, error)
}
