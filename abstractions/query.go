package abstractions

// DefaultPageSize is the page size of Storage.Page when Query.Take is 0.
const DefaultPageSize = 100

// Query describes a bounded read of the rows of T. Results come in (PartitionKey, RowKey)
// order: encode any other order into the row keys (see InvertedTicks and VersionKey). Every
// part is applied by the table service; none is a client-side scan, and queries are never
// cached.
type Query[T any] struct {
	// Partition scopes the query to one partition; "" queries the whole table. It is
	// normalised like the partition part of an id (NormalizePartition, unless the account
	// keeps ids as written), and refused with ErrInvalidKey when it holds "|", normalises
	// to "" or the service would refuse it as a key.
	Partition string
	// RowKeyPrefix keeps the rows whose row key starts with it, as the range
	// RowKey ge prefix and RowKey lt (prefix with its last character incremented). It needs
	// Partition: a prefix across partitions would scan the whole table, so it is refused
	// with ErrNotSupported. It is normalised like a row key (lower case, spaces as "-"),
	// but not trimmed.
	RowKeyPrefix string
	// Take is the most rows Query and Stream return (0: all of them). For Page it is the
	// page size: 0 means DefaultPageSize, and at most 1000, the service's page limit. A
	// negative Take is refused with ErrInvalidArgument.
	Take int
	// Select lists the fields to read; the others are left zero. nil reads every field.
	// The keys, ID, ETag and Timestamp are always read.
	Select []Selector[T]
	// Where is a filter evaluated by the service; the zero Filter selects every row.
	Where Filter[T]
	// Cursor resumes Page after the page that returned it. It is bound to the query's
	// partition, prefix, page size and filter: used with another query it is refused with
	// ErrInvalidArgument. Query, Stream and Any refuse a cursor.
	Cursor string
}

// Page is one page of a paged query.
type Page[T any] struct {
	// Items are the page's rows, in key order. A page holds at most the page size, and
	// may hold fewer while more follow: loop on HasMore, not on the number of items.
	Items []*T
	// Cursor resumes the query after this page; "" when no row follows.
	Cursor string
}

// HasMore reports whether another page may follow.
func (p Page[T]) HasMore() bool { return p.Cursor != "" }
