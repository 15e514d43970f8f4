package codec

import "github.com/unified-data/gotables/abstractions"

// OversizedPolicy says what Encode does with a string or JSON value too large for one cell.
// The zero value, OversizedRefuse, is the default.
type OversizedPolicy uint8

// The oversized-cell policies. Each is chosen per Options value, never process-wide, so two
// accounts in one program can differ.
const (
	// OversizedRefuse refuses a string above the cell limit with an *OversizedCellError.
	// JSON-stored values are still gzip-compressed to {Prop}__GZip, which is their format;
	// one too large even compressed is refused.
	OversizedRefuse OversizedPolicy = iota
	// OversizedCompress stores a string above the cell limit gzip-compressed as Edm.Binary in
	// {Prop}__GZip, which a read inflates. One too large even compressed is refused.
	OversizedCompress
	// OversizedTrim compresses like OversizedCompress and, when that is not enough, keeps
	// the longest prefix of the string that fits one plain cell. A JSON-stored slice or array
	// keeps its longest prefix of elements that fits; any other JSON-stored value is dropped
	// (no column). Data is lost silently: use it only for values that are disposable.
	OversizedTrim
	// OversizedTrimWithMarker is OversizedTrim, except that a trimmed string ends with
	// Options.TrimMarker, so a reader can tell it was cut.
	OversizedTrimWithMarker
)

// DefaultTrimMarker ends a string trimmed under OversizedTrimWithMarker when
// Options.TrimMarker is empty.
const DefaultTrimMarker = "…[trimmed]"

// Options tune Encode and Decode. A nil *Options means the zero Options.
type Options struct {
	// Oversized is the policy for string and JSON values above the cell limit.
	Oversized OversizedPolicy
	// TrimMarker ends a string trimmed under OversizedTrimWithMarker; empty means
	// DefaultTrimMarker.
	TrimMarker string
	// WriteTypeName adds a _TypeName column holding the type's name: the name it is
	// registered under in Types, or its package path and name when Types is nil or does not
	// know it. DecodeAs reads it back through an abstractions.TypeRegistry.
	WriteTypeName bool
	// Types names the types for WriteTypeName.
	Types *abstractions.TypeRegistry
}

var defaultOptions Options

func (o *Options) orDefault() *Options {
	if o == nil {
		return &defaultOptions
	}
	return o
}

func (o *Options) trimMarker() string {
	if o.Oversized != OversizedTrimWithMarker {
		return ""
	}
	if o.TrimMarker == "" {
		return DefaultTrimMarker
	}
	return o.TrimMarker
}
