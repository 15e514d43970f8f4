package largevalue

import (
	"strconv"

	"github.com/unified-data/gotables/abstractions"
)

// OversizedValueError reports an entity that fits none of the forms its type allows. Nothing
// was stored. It matches abstractions.ErrOversizedValue with errors.Is.
type OversizedValueError struct {
	// Column is the column that does not fit: the largest cell that must stay on the main
	// row, or the largest split value; "" when the entity has no split value and its rows
	// (the main row and the index rows or change records written with it) do not fit.
	Column string
	// EncodedBytes is that column's size: a cell's stored size, or a split value's stored
	// (encoded) bytes.
	EncodedBytes int
	// Reason says what does not fit.
	Reason string
	// Remedy says what to do.
	Remedy string
}

// Error implements error.
func (e *OversizedValueError) Error() string {
	if e.Column == "" {
		return "oversized entity: " + e.Reason + "; " + e.Remedy + ". Nothing was stored"
	}
	return "oversized value in column " + strconv.Quote(e.Column) + " (" + strconv.Itoa(e.EncodedBytes) +
		" encoded bytes): " + e.Reason + "; " + e.Remedy + ". Nothing was stored"
}

// Is reports whether target is abstractions.ErrOversizedValue.
func (e *OversizedValueError) Is(target error) bool { return target == abstractions.ErrOversizedValue }

// IntegrityError reports split cells that do not reassemble into the value they describe.
// It matches abstractions.ErrIntegrity with errors.Is.
type IntegrityError struct {
	// Column is the large value's column; empty when the entity's rows as a whole are wrong
	// (a continuation row is missing, the part count is malformed).
	Column string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *IntegrityError) Error() string {
	if e.Column == "" {
		return "split entity damaged: " + e.Reason
	}
	return "split value " + strconv.Quote(e.Column) + " damaged: " + e.Reason
}

// Is reports whether target is abstractions.ErrIntegrity.
func (e *IntegrityError) Is(target error) bool { return target == abstractions.ErrIntegrity }

// OffloadedError reports a value the row holds in a blob (a {column}__blob reference cell)
// to a reader whose account has no blob offload configured, so it cannot download it. A
// read never returns such a value empty. It matches abstractions.ErrBlobOffloadNotConfigured
// with errors.Is.
type OffloadedError struct {
	// Column is the large value's column (or the alias it is stored under).
	Column string
}

// Error implements error.
func (e *OffloadedError) Error() string {
	return "the value of column " + strconv.Quote(e.Column) + " is offloaded to a blob (the row holds " +
		strconv.Quote(e.Column+BlobSuffix) + ") and the account has no blob offload configured; " +
		"configure Options.BlobOffload (with the account's blob service) to read it"
}

// Is reports whether target is abstractions.ErrBlobOffloadNotConfigured.
func (e *OffloadedError) Is(target error) bool {
	return target == abstractions.ErrBlobOffloadNotConfigured
}
