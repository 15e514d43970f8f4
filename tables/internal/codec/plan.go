package codec

import (
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"github.com/unified-data/gotables/tables/service"
)

// Role says where a field's value lives.
type Role uint8

// The roles of a field.
const (
	// RoleColumn is an ordinary column.
	RoleColumn Role = iota
	// RoleID is abstractions.Entity's ID: stored as the column "Id" and reconciled with the
	// row's keys on a read.
	RoleID
	// RoleETag is abstractions.Entity's ETag: filled from Row.ETag on a read, never stored.
	RoleETag
	// RoleTimestamp is abstractions.Entity's Timestamp: filled from Row.Timestamp on a
	// read, never stored. Filters can still use it: it is the service's Timestamp property.
	RoleTimestamp
)

// String returns the role's name.
func (r Role) String() string {
	switch r {
	case RoleColumn:
		return "column"
	case RoleID:
		return "id"
	case RoleETag:
		return "etag"
	case RoleTimestamp:
		return "timestamp"
	}
	return "role?"
}

// Field describes one stored field of a type: a column, or one of the entity base's fields
// that come from the row itself (RoleETag, RoleTimestamp). Fields are read-only.
type Field struct {
	// Name is the column's name, such as "Address_City". For RoleETag and RoleTimestamp it
	// is the service's name of the value, "ETag" or "Timestamp". The cells the column
	// occupies are Cell, Compressed and Cells; use those rather than spelling them.
	Name string
	// Cell is the name of the cell a write stores the value in when it fits one cell: Name,
	// or Name+"__Json" for a JSON-stored field. Empty for RoleETag and RoleTimestamp.
	Cell string
	// Compressed is the name of the cell a write stores the value in, gzip-compressed, when
	// it is too large for Cell (Name+"__GZip"). Empty for a field whose values are never
	// compressed: only strings and JSON-stored values are.
	Compressed string
	// Cells lists every cell a read takes the value from, best first: Cell, Compressed, then
	// the same forms of each alias. A write stores one of Cell and Compressed, never an
	// alias. Empty for RoleETag and RoleTimestamp.
	Cells []string
	// Nested reports that the field belongs to a nested struct (held by value or by
	// pointer), whose name prefixes the column's: Address.City is stored as Address_City.
	// Fields promoted from embedded structs are not nested.
	Nested bool
	// Kind is the EDM type of the field's cell (Edm.String for a JSON-stored field).
	Kind service.Kind
	// JSON reports that the field is stored as its encoding/json text.
	JSON bool
	// Type is the field's Go type.
	Type reflect.Type
	// Path is the field's Go path from the stored type, embedded structs included, such as
	// "Entity.ID" or "Address.City".
	Path string
	// Index is the reflect index sequence of the field from the stored type (as for
	// reflect.Value.FieldByIndex; it may pass through pointers when Indirect is set).
	Index []int
	// Offset is the field's byte offset from the start of the stored struct. It is only
	// meaningful when Indirect is false.
	Offset uintptr
	// Indirect reports that a pointer lies between the stored struct and the field (a
	// nested or embedded struct held by pointer); such a field has no fixed offset.
	Indirect bool
	// Role says whether the field is a column or comes from the row.
	Role Role
	// Aliases are the old column names a read falls back to when the column is absent.
	Aliases []string
	// Split and Offload are the values of the field's own tag options of those names.
	Split, Offload string
	// Large reports a large value: a string, []byte or JSON-stored field opted in by its own
	// split= or offload= option, or covered by a type-level one. The codec leaves such a
	// value to the large-value planner (EncodeLarge) instead of fitting it in one cell.
	Large bool
	// Encoding is a large value's split encoding: the field's split=, else the type-level
	// one, else SplitText for text and SplitBinary for a []byte. Empty for other fields.
	Encoding string
	// File reports a *abstractions.File field: a large value that is always stored in a
	// blob, its reference in the cell Name+"__blob". Reads never download it.
	File bool
	// Protected lists the roles of the tag option protected=, kept for the store's
	// protected-property check.
	Protected []string
	// Indexes are the items of the tag option index=: each names an index of the field's
	// values, "name" or "name:desc" (package tables/internal/indexrow checks and builds them).
	Indexes []string
	// Uniques are the items of the tag option unique=: each names a unique index of the
	// field's values across the table.
	Uniques []string
	// Expires reports the tag option expires: the field holds the entity's expiry time;
	// ExpiresTTL is its value, a default time to live as time.ParseDuration reads it, or ""
	// (package tables/internal/engine checks both).
	Expires    bool
	ExpiresTTL string
}

// A Plan is the codec's map of one struct type: its fields and, for each column, how to
// write and read it. Plans are built once per type and cached; they are safe for concurrent
// use.
type Plan struct {
	typ     reflect.Type
	fields  []Field
	cols    []column
	sources map[string]source
	// cellNames holds each column's cellName, apart from the columns for locality.
	cellNames []string
	split     string
	offload   string
	large     bool
	// idCol is the column of the entity base's ID, -1 when the type has none; etagOff and
	// timestampOff locate its ETag and Timestamp when hasETag and hasTimestamp say so.
	idCol        int
	etagOff      uintptr
	timestampOff uintptr
	hasETag      bool
	hasTimestamp bool
}

// column is one stored column of a plan.
type column struct {
	field *Field
	name  string
	// hops are the pointers followed from the stored struct to the struct holding the field;
	// off is the field's offset in that last struct.
	hops []hop
	off  uintptr
	leaf leaf
	// cellName is the name written when the value fits a cell: the column's name, or
	// name+"__Json"; gzipName is name+"__GZip".
	cellName, gzipName string
	// large reports a large value (Field.Large), which EncodeLarge hands to the planner.
	large bool
	// sources are the names a read accepts, best first; srcGzip says which of them hold
	// the gzip form.
	sources []string
	srcGzip []bool
}

// hop is a pointer field to follow: at offset off of the current struct, pointing to elem.
type hop struct {
	off  uintptr
	elem reflect.Type
}

// source locates a read name: the column and its rank (its position in the column's
// sources, lower wins).
type source struct {
	col  int32
	rank int32
}

// The split encodings a `table:",split=..."` option names, and the offload rules of
// offload=. The large-value planner stores a large value in the smallest form that fits: one
// cell, split cells on the main row and continuation rows, or (where configured) a blob.
const (
	// SplitText stores text as UTF-8, in string chunks of at most 32,000 UTF-16 code units.
	SplitText = "text"
	// SplitGzip gzips the value first and stores binary chunks; it suits compressible text.
	SplitGzip = "gzip"
	// SplitBinary stores a []byte as binary chunks of at most 65,536 bytes.
	SplitBinary = "binary"
	// OffloadAbove lets a value above the offload threshold go to a blob (the default).
	OffloadAbove = "above"
	// OffloadNever keeps the value in the table whatever its size.
	OffloadNever = "never"
)

const (
	jsonSuffix = "__Json"
	gzipSuffix = "__GZip"
	blobSuffix = "__blob"
	// TypeNameColumn is the column of the type discriminator (Options.WriteTypeName).
	TypeNameColumn = "_TypeName"
)

// Type returns the struct type the plan maps.
func (p *Plan) Type() reflect.Type { return p.typ }

// Fields returns the type's fields in declaration order (promoted fields where their embedded
// struct is declared). The slice must not be modified.
func (p *Plan) Fields() []Field { return p.fields }

// Field returns the field stored in the named column ("Address_City", "Id"), or the
// RoleETag / RoleTimestamp field for "ETag" / "Timestamp".
func (p *Plan) Field(name string) (*Field, bool) {
	for i := range p.fields {
		if p.fields[i].Name == name {
			return &p.fields[i], true
		}
	}
	return nil, false
}

// FieldByOffset returns the field at the given byte offset from the start of the stored
// struct whose type is t. Together with a selector func(*T) *V called on a zero T, it finds
// the column a selector names: the offset is the selected pointer minus the struct's
// address. Only fields reached without a pointer resolve this way (nested and embedded
// structs held by value); a field below a pointer-held struct has no fixed offset and is
// not found. A nested struct itself (rather than one of its fields) is not a column and is
// not found either.
func (p *Plan) FieldByOffset(offset uintptr, t reflect.Type) (*Field, bool) {
	for i := range p.fields {
		f := &p.fields[i]
		if !f.Indirect && f.Offset == offset && f.Type == t {
			return f, true
		}
	}
	return nil, false
}

// Split returns the type-level split option, declared on a blank marker field
// (_ struct{} tagged `table:",split=..."`) and kept for the large-value planner.
func (p *Plan) Split() string { return p.split }

// Offload returns the type-level offload option; see Split.
func (p *Plan) Offload() string { return p.offload }

// LargeValues reports whether the type is split-aware: a field is a large value (see
// Field.Large), or the type carries a type-level split= or offload= option, even one that
// covers none of its fields. Stores plan split cells and continuation rows only for such a
// type; every other type is stored exactly as before. The answer comes from the declared
// types alone.
func (p *Plan) LargeValues() bool { return p.large }

// plans caches a *planResult per reflect.Type.
var plans sync.Map

type planResult struct {
	plan *Plan
	err  error
}

// PlanOf returns the plan of a struct type (a pointer to a struct stands for the struct),
// building and caching it on first use. It refuses other types and struct shapes the codec
// cannot store with a *PlanError.
func PlanOf(t reflect.Type) (*Plan, error) {
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return planFor(t)
}

func planFor(t reflect.Type) (*Plan, error) {
	if r, ok := plans.Load(t); ok {
		res := r.(*planResult)
		return res.plan, res.err
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, &PlanError{Type: t, Reason: "the codec stores structs (or pointers to them); wrap the value in a struct"}
	}
	p, err := buildPlan(t)
	r, _ := plans.LoadOrStore(t, &planResult{p, err})
	res := r.(*planResult)
	return res.plan, res.err
}

// locate returns the address of the column's field in the struct at base, or nil when a
// pointer on the way is nil.
func (c *column) locate(base unsafe.Pointer) unsafe.Pointer {
	for i := range c.hops {
		base = *(*unsafe.Pointer)(unsafe.Add(base, c.hops[i].off))
		if base == nil {
			return nil
		}
	}
	return unsafe.Add(base, c.off)
}

// locateAlloc is locate for a read: it allocates the structs of nil pointers on the way.
func (c *column) locateAlloc(base unsafe.Pointer) unsafe.Pointer {
	for i := range c.hops {
		pp := (*unsafe.Pointer)(unsafe.Add(base, c.hops[i].off))
		if *pp == nil {
			*pp = reflect.New(c.hops[i].elem).UnsafePointer()
		}
		base = *pp
	}
	return unsafe.Add(base, c.off)
}

// loc is where a struct or field sits relative to the stored struct.
type loc struct {
	hops  []hop
	off   uintptr // offset in the struct the last hop points to (or the stored struct)
	index []int
}

func (l loc) field(sf reflect.StructField) loc {
	return loc{hops: l.hops, off: l.off + sf.Offset, index: append(slices.Clip(l.index), sf.Index...)}
}

// deref follows the pointer at l to a struct of type elem.
func (l loc) deref(elem reflect.Type) loc {
	return loc{hops: append(slices.Clip(l.hops), hop{off: l.off, elem: elem}), off: 0, index: l.index}
}
