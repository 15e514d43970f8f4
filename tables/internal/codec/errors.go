package codec

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// PlanError reports a Go type the codec refuses to map, found when its plan is built: a
// field name holding '_', a field of a type without any cell form, a malformed `table` tag,
// or an alias collision. It matches abstractions.ErrNotSupported with errors.Is. The same
// error is returned for every later use of the type: shapes do not change at run time.
type PlanError struct {
	// Type is the stored type whose plan failed.
	Type reflect.Type
	// Field is the Go path of the offending field ("Address.City"), or empty when the
	// problem is the type itself.
	Field string
	// Reason says what is wrong and what to do.
	Reason string
}

// Error implements error.
func (e *PlanError) Error() string {
	if e.Field == "" {
		return "codec: type " + typeName(e.Type) + ": " + e.Reason
	}
	return "codec: " + typeName(e.Type) + "." + e.Field + ": " + e.Reason
}

// Is reports whether target is abstractions.ErrNotSupported.
func (e *PlanError) Is(target error) bool { return target == abstractions.ErrNotSupported }

// ValueError reports a value that could not be converted: on write, a value the service
// cannot store (a time before 1601, a value encoding/json refuses); on read, a cell whose EDM
// type or content does not fit the field (the stored kind, the field and its type are named).
type ValueError struct {
	// Column is the stored column (as written, or as read, such as "Tags__Json").
	Column string
	// Field is the Go path of the field ("Address.City").
	Field string
	// Type is the field's Go type.
	Type reflect.Type
	// Read reports a failure to read a cell; otherwise a value failed to be written.
	Read bool
	// Kind is the EDM type of the stored cell on a read.
	Kind service.Kind
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *ValueError) Error() string {
	if e.Read {
		return fmt.Sprintf("codec: column %q holds %v, which cannot be read into field %s (%v): %v",
			e.Column, e.Kind, e.Field, e.Type, e.Err)
	}
	return fmt.Sprintf("codec: field %s (%v) cannot be written to column %q: %v", e.Field, e.Type, e.Column, e.Err)
}

// Unwrap returns the cause.
func (e *ValueError) Unwrap() error { return e.Err }

// Is makes a value that cannot be written match abstractions.ErrInvalidArgument: the caller
// passed something the service cannot store, and nothing was sent. A cell that cannot be
// read matches abstractions.ErrIntegrity: the stored row does not fit the type (its
// column's type changed since the row was written, or another client wrote another type),
// and reading it again will not help.
func (e *ValueError) Is(target error) bool {
	if e.Read {
		return target == abstractions.ErrIntegrity
	}
	return target == abstractions.ErrInvalidArgument
}

var errInvalidUTF8 = errors.New("the text is not valid UTF-8; the service would store U+FFFD in place of the invalid bytes")

// errFileOutsideStore refuses a file where only a store can store it (Encode, a partial update).
var errFileOutsideStore = fmt.Errorf("%w: a file is stored in a blob by a store (For), not as a cell; write the whole entity through its store",
	abstractions.ErrNotSupported)

// OversizedCellError reports a value too large for one cell under the Options' policy. Nothing
// was trimmed and nothing is stored. It matches abstractions.ErrOversizedCell with errors.Is.
type OversizedCellError struct {
	// Column is the column the value belongs to.
	Column string
	// Size is the value's size in bytes as the service counts them (a string as UTF-16, two
	// bytes a code unit), before any compression.
	Size int
	// Compressed is the size of the gzip form when one was tried, else 0.
	Compressed int
	// Limit is the cell limit in bytes.
	Limit int
	// Binary says the value is bytes, which no Options.Oversized policy compresses or trims.
	Binary bool
}

// Error implements error.
func (e *OversizedCellError) Error() string {
	msg := "codec: column " + strconv.Quote(e.Column) + " holds " + strconv.Itoa(e.Size) + " bytes"
	if e.Compressed > 0 {
		msg += " (" + strconv.Itoa(e.Compressed) + " gzip-compressed)"
	}
	msg += ", above the " + strconv.Itoa(e.Limit) + "-byte limit of one cell; store less in it, "
	if e.Binary {
		return msg + "or store it as a large value (a split tag, such as table:\",split=binary\"), or as an *abstractions.File; nothing was sent"
	}
	msg += "or store it as a large value (a split tag, such as table:\",split=text\"), which keeps it whole"
	if e.Compressed > 0 {
		// Compression was tried (Options.Oversized compresses): only trimming is left.
		return msg + ", or choose an Options.Oversized policy that trims it (losing data)"
	}
	return msg + ", or choose an Options.Oversized policy that compresses it (or trims it, losing data)"
}

// Is reports whether target is abstractions.ErrOversizedCell.
func (e *OversizedCellError) Is(target error) bool { return target == abstractions.ErrOversizedCell }

// errMismatch is the cause of a ValueError for a cell of a kind the field cannot take.
var errMismatch = errors.New("the stored type does not match the field's type")

func typeName(t reflect.Type) string {
	if t == nil {
		return "<nil>"
	}
	return t.String()
}
