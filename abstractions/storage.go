package abstractions

import (
	"context"
	"iter"
)

// ConcurrencyMode says how a whole-entity update treats the version the caller holds.
type ConcurrencyMode uint8

const (
	// Auto is Strict when the entity carries an ETag. Without one the update is refused,
	// unless the account opts into implicit last-writer-wins (then it is LastWriterWins and
	// a warning is logged).
	Auto ConcurrencyMode = iota
	// Strict writes only over the version the entity's ETag names; a lost race fails with
	// an error matching ErrConcurrencyConflict.
	Strict
	// LastWriterWins overwrites whatever version is stored (the row must exist).
	LastWriterWins
)

// String returns the mode's name.
func (m ConcurrencyMode) String() string {
	switch m {
	case Auto:
		return "Auto"
	case Strict:
		return "Strict"
	case LastWriterWins:
		return "LastWriterWins"
	}
	return "ConcurrencyMode(?)"
}

// Storage is the repository of one entity type T, stored in one table. T is a struct that
// embeds Entity. Both backends implement it with the same engine, so they succeed and fail
// alike.
//
// Ids are composite "PartitionKey|RowKey" strings (see SplitID, and its isolation rule: a
// partition never contains "|"); by default they are normalised before use (see
// NormalizeID). Keys are checked before anything is sent: an id the store cannot address
// fails with an error matching ErrInvalidKey and sends nothing.
//
// Writes update the entity passed in only when they succeed: its ID (normalised), CreatedAt,
// UpdatedAt, ETag and Timestamp. Every method honours ctx.
//
// Storage embeds the parts of it that this package's helpers call, and documents those
// methods there: [ReadWriter] (with [Creator]: Table, Create, One, Update) and [Log]
// (Query, Stream). A helper takes only its part, so an interface of your own that has
// those methods, or a short fake, can be passed to it.
type Storage[T any] interface {
	ReadWriter[T]
	Log[T]

	// EnsureCreated creates the table if it does not exist yet. Stores create their table
	// anyway on the first write that can create a row and finds the table missing: Create,
	// Upsert, CreateBatch, UpsertBatch. Reads never create it, nor do Delete (a missing
	// table has no row to delete), Update and Patch (a missing table fails
	// them with ErrNotFound, as a missing row does) or DeletePartition. Call it at start-up
	// to fail fast. A store whose account never creates tables (both backends'
	// Options.NeverCreateTables) only checks that the table exists, reading at most one
	// row (which a table SAS allows), and fails with an error matching ErrNotFound when it
	// is missing.
	EnsureCreated(ctx context.Context) error

	// Upsert inserts the row or replaces a stored one, unconditionally, in one round trip.
	// A CreatedAt the caller set is kept; a zero one is set to now.
	Upsert(ctx context.Context, v *T) error
	// Delete deletes the row with the id and reports whether this call deleted it. With
	// ifMatch "" it deletes whatever version is stored; otherwise only the version that
	// ETag names (the ETag of the entity you read), atomically, so a handler of an HTTP
	// DELETE with If-Match need not read first: a row that moved on fails with an error
	// matching ErrConcurrencyConflict and stays. A missing row is not an error, with or
	// without ifMatch: deleted is false; nor is a row of a missing table (which is not
	// created). An ifMatch that is not an entity tag ("*" too: "" is the unconditional form)
	// is refused with ErrInvalidArgument before anything is sent, and one the service
	// refuses as not its own (400) after. A split entity's continuation rows go in the same
	// transaction, its offloaded blobs after it commits.
	Delete(ctx context.Context, id, ifMatch string) (deleted bool, err error)

	// Exists reports whether a row with the id exists.
	Exists(ctx context.Context, id string) (bool, error)
	// List returns every row of one partition, in row-key order. The partition is
	// normalised as the partition part of an id (NormalizePartition, unless the account
	// keeps ids as written), so it reads the rows of exactly the ids that start with it; one
	// that is empty, empty once normalised, or contains "|" is refused with ErrInvalidKey
	// before anything is sent (so are those of Count and DeletePartition).
	List(ctx context.Context, partition string) ([]*T, error)
	// ListAll returns every row of the table, in key order.
	ListAll(ctx context.Context) ([]*T, error)
	// Count counts the rows of one partition, reading keys only.
	Count(ctx context.Context, partition string) (int, error)
	// CountAll counts the rows of the table, reading keys only.
	CountAll(ctx context.Context) (int, error)

	// CreateBatch inserts the entities in transactions grouped by partition, up to 100 rows
	// each. Each transaction is atomic, and a partition's transactions are sent in order;
	// transactions of different partitions may be sent concurrently (the account's
	// BatchParallelism). When one fails, that partition's transactions before it stay
	// committed and none after it is sent, while the other partitions go on; the error is a
	// *BatchError listing, per partition, the rows committed and those not (BatchError.Retry
	// gives their positions in vs). A key named twice fails with ErrDuplicateKey before
	// anything is sent. Batch writes do not report ETags: the entities' ETag fields are
	// cleared, on the committed entities only.
	CreateBatch(ctx context.Context, vs []*T) error
	// UpsertBatch inserts or replaces the entities in transactions grouped by partition, up
	// to 100 rows each, and returns how many it wrote. The transaction rules of CreateBatch
	// apply; a key named twice in one transaction fails it with the service's 400
	// InvalidDuplicateRow.
	UpsertBatch(ctx context.Context, vs []*T) (int, error)
	// DeletePartition deletes every row of a partition in transactions of up to 100 rows
	// and returns how many it deleted. A row another writer deletes meanwhile is skipped,
	// not an error, and not counted. A row the service will not delete (it answers 404
	// while a read still finds the row) never counts as deleted: the others are, and the
	// call fails naming that row. It is atomic per transaction only: after a failure, call
	// it again to finish.
	DeletePartition(ctx context.Context, partition string) (int, error)

	// Patch merges the fields p sets into the stored row with the id, leaving every other
	// column as it is, in one request and without reading the row first. The store also
	// stamps UpdatedAt. It returns the row's new ETag. A patched value is stored exactly as
	// a whole-entity write stores it: the same column, type, JSON text and oversized policy.
	//
	// Without WithETag the merge applies to whatever version is stored; with it, only to that
	// version, and a row that moved on fails with an error matching ErrConcurrencyConflict.
	// A missing row fails with ErrNotFound (a patch never creates a row, nor a missing
	// table: that too is ErrNotFound). A WithETag value the service refuses as not one it
	// issued fails with ErrInvalidArgument.
	//
	// Refused before anything is sent: a nil patch, one that sets nothing, a field whose
	// selector is nil or returns nil, the zero TypedField, and a WithETag value that is not
	// an entity tag (ErrInvalidArgument); a selector that panics on a zero T or returns an
	// address outside it (see Field), a field with no column of its own, the id, ETag or
	// Timestamp, a value that stores no cell (a nil pointer, slice or map, the zero time) or
	// that needs compression to fit, and a field tagged for large values (ErrNotSupported);
	// a protected field without AllowProtected (ErrProtectedProperty).
	Patch(ctx context.Context, id string, p *Patch[T]) (etag string, err error)

	// The rest of the query side (see Log): paged reads and a test for any row.

	// Page returns one page of the rows q selects, starting after q.Cursor, and the cursor
	// of the next page. Server pages that come back empty but promise more are read past,
	// so a page is empty only at the end.
	Page(ctx context.Context, q Query[T]) (Page[T], error)
	// Any reports whether q selects at least one row, reading at most one.
	Any(ctx context.Context, q Query[T]) (bool, error)
}

// Creator is the part of [Storage] that [Append], [AppendAt] and [AppendVersion] call: the
// table's name, for their errors, and Create.
type Creator[T any] interface {
	// Table returns the name of the table the store uses.
	Table() string
	// Create inserts a new row. A row with the same keys fails with an error matching
	// ErrDuplicateKey that names the table and the key.
	Create(ctx context.Context, v *T) error
}

// ReadWriter is the part of [Storage] that the outcome verbs call ([Mutate],
// [MutateOrCreate], [TryMutate], [TryTransition], [GetOrCreate]): a read by id and the two
// writes a compare-and-swap needs (the Try verbs and GetOrCreate call fewer of them). Any
// value with these four methods can be passed to them: a Storage, an interface of your own
// that declares or embeds them, a fake.
type ReadWriter[T any] interface {
	Creator[T]
	// One returns the row with the id. A missing row fails with an error matching
	// ErrNotFound (a *StoreError naming the table and the keys), as sql.ErrNoRows does:
	// check it with errors.Is. The value returned is never nil when err is nil.
	One(ctx context.Context, id string) (*T, error)
	// Update replaces a stored row under the given concurrency mode. A missing row fails
	// with an error matching ErrNotFound, a lost race with ErrConcurrencyConflict. An entity
	// without an ETag is refused with ErrInvalidArgument in Strict mode, and in Auto mode
	// unless the account enables implicit last-writer-wins; so is an ETag that is not an
	// entity tag (a quoted string, optionally W/-prefixed, without control characters),
	// before anything is sent, and one the service refuses as not its own (400) after.
	// A missing table is a missing row: ErrNotFound, and the table is not created.
	Update(ctx context.Context, v *T, mode ConcurrencyMode) error
}

// Log is the part of [Storage] that reads append logs and versioned streams ([Recent],
// [Latest], [AtVersion], [AtOrBefore], [History]), with Create to append to them.
//
// The query side of a Storage (Query and Stream here, Page and Any there) makes bounded,
// streamed, paged and filtered reads, run by the table service and never cached. A query
// the service could not answer exactly as described (an unsupported filter, a prefix
// without a partition) is refused with an error matching ErrNotSupported before anything is
// sent.
type Log[T any] interface {
	Creator[T]
	// Query returns the rows q selects, following the service's pages until q.Take rows
	// or the end.
	Query(ctx context.Context, q Query[T]) ([]*T, error)
	// Stream yields the rows q selects one at a time, reading one service page at a time:
	// it never holds more than a page, and stops reading when the loop stops. An error
	// ends the sequence, yielded with a nil row.
	Stream(ctx context.Context, q Query[T]) iter.Seq2[*T, error]
}
