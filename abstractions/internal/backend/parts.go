package backend

import (
	"context"
	"fmt"
)

// The parts of abstractions' values that package driver reads. Each value's type embeds one
// of the types below, through an unexported alias, so that its documentation shows
// nothing; their fields and methods are unexported, so only this package reaches them, and
// only through the functions here.

// Part holds what driver reads of an abstractions value: the tree of a Filter (a *Node),
// the assignments and conditions of a Patch (a Patch).
type Part[V any] struct{ v V }

// NewPart returns the Part that holds v.
func NewPart[V any](v V) Part[V] { return Part[V]{v} }

func (p Part[V]) part() V { return p.v }

// Read returns what the Part that x's type embeds holds.
func Read[V any](x interface{ part() V }) V { return x.part() }

// FieldRef is the field a TypedField names; the zero FieldRef is the zero TypedField's,
// which names no field.
type FieldRef struct{ f Field }

// NewFieldRef returns the FieldRef of f, resolved from a selector.
func NewFieldRef(f Field) FieldRef { return FieldRef{f} }

// Selector is a value that names a field: a type that embeds a FieldRef.
type Selector interface {
	selected(invalid error) Field
}

// selected returns the field r names; the zero FieldRef's field says, with an error that
// wraps invalid, that it names none.
func (r FieldRef) selected(invalid error) Field {
	if r.f.Owner == nil {
		return Field{Err: fmt.Errorf("%w: the field is the zero TypedField, which names no field; make it with Field or NullableField", invalid)}
	}
	return r.f
}

// RefField returns the field r names (Selected for a FieldRef at hand, without an
// interface).
func RefField(r FieldRef, invalid error) Field { return r.selected(invalid) }

// Selected returns the field sel names; a nil sel's field says so. invalid is the sentinel
// the errors wrap (abstractions.ErrInvalidArgument, which this package cannot import).
func Selected(sel Selector, invalid error) Field {
	if sel == nil {
		return Field{Err: fmt.Errorf("%w: the selector is nil", invalid)}
	}
	return sel.selected(invalid)
}

// FileOps are package abstractions' operations on its File type F that driver calls: take
// a File's turn for one write (driver.TakeFile), make the File of a stored blob
// (driver.NewStoredFile). They are code, not data, and a stored File is made without a File
// at hand, so F carries them in its type: it embeds Files[F, O], where O is an unexported
// type of abstractions without state that implements FileOps[F], and FileOpsOf[F] returns
// O's zero value.
type FileOps[F any] interface {
	Take(ctx context.Context, f *F) (FileSource, error)
	Stored(blob FileBlob, sha256 string, length int64, contentType string) *F
}

// Files carries, in its type, the FileOps O of the File type F that embeds it. It is empty.
type Files[F any, O FileOps[F]] struct{}

func (Files[F, O]) fileOps() FileOps[F] {
	var o O
	return o
}

// FileOpsOf returns the operations the File type F carries.
func FileOpsOf[F interface{ fileOps() FileOps[F] }]() FileOps[F] {
	var f F
	return f.fileOps()
}
