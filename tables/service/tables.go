package service

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/unified-data/gotables/abstractions"
)

// Op is the kind of a row write.
type Op uint8

// The row writes the table service knows.
const (
	// OpInsert creates the row; an existing row fails with 409 EntityAlreadyExists.
	OpInsert Op = iota + 1
	// OpReplace replaces every property of an existing row (If-Match required).
	OpReplace
	// OpMerge writes the given properties into an existing row, keeping the others
	// (If-Match required).
	OpMerge
	// OpUpsertReplace creates the row or replaces an existing one, unconditionally.
	OpUpsertReplace
	// OpUpsertMerge creates the row or merges into an existing one, unconditionally.
	OpUpsertMerge
	// OpDelete deletes an existing row (If-Match required).
	OpDelete
)

var opNames = [...]string{"", "Insert", "Replace", "Merge", "UpsertReplace", "UpsertMerge", "Delete"}

// String returns the operation's name.
func (o Op) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", o)
}

// ETagAny is the If-Match value that matches any existing row (or blob).
const ETagAny = "*"

// An Action is one row write, alone or inside a transaction.
type Action struct {
	Op Op
	// Row carries the keys and, except for OpDelete, the properties to write.
	Row Row
	// IfMatch is the condition of OpReplace, OpMerge and OpDelete: an ETag the stored row
	// must carry, or ETagAny (also used when IfMatch is empty) for "the row must exist".
	// A stale ETag fails with 412 UpdateConditionNotSatisfied, a missing row with 404
	// ResourceNotFound. Ignored by the other operations.
	IfMatch string
}

// A Query asks for one page of a table's rows.
type Query struct {
	// Filter is an OData $filter expression; empty selects every row.
	Filter string
	// Select lists the custom properties to return; nil returns them all. Keys, ETag and
	// Timestamp are always returned. A selected property the row lacks is absent from the
	// result (the service's null is not a value).
	Select []string
	// Top is the most rows the page may hold (1..1000); 0 means the service's maximum, 1000.
	// A page may hold fewer rows than Top, or none, and still have a continuation.
	Top int
	// Continuation resumes a query where an earlier page ended; nil starts at the beginning.
	Continuation *Continuation
}

// Continuation is the service's opaque position after a page. Both fields are opaque
// tokens; only the service that issued them can interpret them.
type Continuation struct {
	NextPartitionKey string
	NextRowKey       string
}

// A Page is one answer to a Query: rows in (PartitionKey, RowKey) order and, when more rows
// may follow, the continuation to ask for them.
type Page struct {
	Rows []Row
	Next *Continuation
}

// Tables is a table service. Implementations are safe for concurrent use.
//
// The rows GetRow and Query return are read-only: an implementation may hand out property
// lists it keeps (the memory service does, see memservice.WithSharedReads), so a caller
// that wants to change a returned row's Properties in place changes a [Row.Clone] of it.
// A row passed to Write or Transact stays the caller's: implementations copy what they keep.
//
// Table names follow the service's rules (3–63 letters and digits, starting with a letter,
// compared without regard to case). Every method returns an *abstractions.StatusError for a
// failure the service reports, and the context's error when ctx ends first.
type Tables interface {
	// CreateTable creates a table; an existing one fails with 409 TableAlreadyExists.
	CreateTable(ctx context.Context, table string) error
	// DeleteTable deletes a table and its rows; a missing one fails with 404 ResourceNotFound.
	DeleteTable(ctx context.Context, table string) error
	// TableExists reports whether the table exists.
	TableExists(ctx context.Context, table string) (bool, error)
	// Ping sends one cheap authenticated request that changes nothing (a listing of at
	// most one table), to check that the service answers and accepts the credential.
	Ping(ctx context.Context) error

	// GetRow reads one row, with only the selected custom properties when sel is not nil.
	// A missing row fails with 404 ResourceNotFound, a missing table with 404 TableNotFound.
	GetRow(ctx context.Context, table, partitionKey, rowKey string, sel []string) (Row, error)
	// Write performs one row write and returns the row's new ETag and Timestamp.
	Write(ctx context.Context, table string, a Action) (Written, error)
	// Transact performs an entity-group transaction: every action or none. The service's
	// rules apply (1 to 100 actions, one PartitionKey, each row at most once, a body of at
	// most 4 MiB). A failure of one action is a *TransactionError naming it.
	//
	// On success it returns what each action wrote, in the order of actions: the row's new
	// ETag and Timestamp, as the transaction's response reports them. A delete reports the
	// zero Written, and so does an action whose version the response does not carry.
	Transact(ctx context.Context, table string, actions []Action) ([]Written, error)
	// Query returns one page of rows matching q.
	Query(ctx context.Context, table string, q Query) (Page, error)
}

// TransactionError reports which action of a failed entity-group transaction the service
// blamed. Err is the *abstractions.StatusError of that action.
type TransactionError struct {
	// Index is the 0-based index of the failing action.
	Index int
	Err   error
}

// Error implements error.
func (e *TransactionError) Error() string {
	return fmt.Sprintf("transaction action %d failed: %v", e.Index, e.Err)
}

// Unwrap returns the action's error.
func (e *TransactionError) Unwrap() error { return e.Err }

// QuoteString returns s as an OData string literal for a $filter: in single quotes, with
// each quote inside doubled.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

var tableNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

// CheckTableName returns an error matching abstractions.ErrInvalidArgument when the service
// would refuse name as a table name: 3 to 63 letters and digits, starting with a letter, and
// not "tables".
func CheckTableName(name string) error {
	if !tableNameRE.MatchString(name) || strings.EqualFold(name, "tables") {
		return fmt.Errorf("%w: %q is not a table name the service accepts: 3 to 63 letters and digits, starting with a letter, not \"tables\"",
			abstractions.ErrInvalidArgument, name)
	}
	return nil
}
