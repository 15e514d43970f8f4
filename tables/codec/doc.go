// Package codec converts Go structs to table cells and back: the serializer every store,
// both backends, the cache and the large-value planner share.
//
//	row, err := codec.EncodeRow(&customer, "eu", "alice", nil)
//	back, err := codec.Decode[Customer](&row, nil)
//
// The codec produces typed cells (service.Value); it writes no JSON of its own for the wire.
// The Azure adapter writes the request body from the cells with explicit EDM annotations, and
// a read converts each cell by the type of the field it lands in.
//
// # Plans
//
// The first use of a type builds its Plan by reflection (which fields, which columns, which
// converter for each) and caches it, as encoding/json does. Encode and Decode then run from the
// plan: each column is reached through precomputed byte offsets (and the pointers to follow
// for a struct held by pointer) and converted by a function chosen when the plan was built, so
// the hot path performs no reflection lookups by name. A type the codec cannot map is refused
// when its plan is built, with a *PlanError naming the field and the remedy, and stays refused.
// PlanOf exposes a plan's fields, with their columns, EDM types and byte offsets: a selector
// func(*T) *V called on a zero T yields the offset that Plan.FieldByOffset turns into a column.
//
// # Mapping
//
//	Go type                                   cell
//	string                                    Edm.String
//	bool                                      Edm.Boolean
//	int8, int16, int32, uint8, uint16         Edm.Int32
//	int, int64, uint32                        Edm.Int64
//	uint, uint64                              Edm.Int64 holding the same 64 bits
//	float32, float64                          Edm.Double
//	time.Time                                 Edm.DateTime in UTC (the zero time: no column)
//	time.Duration                             Edm.Int64 nanoseconds
//	abstractions.GUID                         Edm.Guid
//	[]byte, [N]byte                           Edm.Binary (a nil slice: no column)
//	encoding.TextMarshaler + TextUnmarshaler  Edm.String holding the text
//	*T of any of these                        as T (nil: no column)
//	struct, *struct                           one column per field, named Parent_Child
//	slice, array, map, interface, other       JSON text in {Prop}__Json
//
// Types without a cell and without a JSON form (channels, functions, complex numbers, uintptr,
// unsafe pointers) are refused; tag such a field `table:"-"`. Unexported fields are skipped.
//
// # Integers
//
// The table service has two integer types. Widths that fit 32 bits with their sign are
// Edm.Int32; int, int64 and uint32 (which does not fit Int32) are Edm.Int64. A Go int is always
// Int64, so a type stores the same way on 32- and 64-bit platforms. uint and uint64 have no EDM
// type: they are stored as the Int64 with the same bits, so a value above MaxInt64 is stored as
// a negative number. It reads back exactly, but a filter compares the stored signed number, so
// ordering comparisons on such a field are wrong above MaxInt64 and the filter builder refuses
// them. On a read an Int32 cell fits an int64 field and an Int64 cell a narrower one when the
// value is in range; an out-of-range value is an error, never a silent truncation.
//
// # Floating point and decimals
//
// float32 and float64 are Edm.Double, whole values included (a 5.0 stays a Double; the
// adapter annotates it). NaN and the infinities are stored. A float32 widens exactly and
// reads back exactly. The .NET library stores decimal as a double; Go has no decimal type in
// the standard library, so money-style values are float64 here too, with a double's precision.
// An Int32 cell (the form a whole double takes when another writer omitted the annotation)
// reads into a float field.
//
// # Times
//
// A time.Time is stored in UTC with the service's precision of 100 ns (finer digits are
// dropped) and read back in UTC: the location is not kept. The zero time means "no time" and
// is stored as no column; an absent column reads as the zero time. The service stores times
// from 1601-01-01 to the end of year 9999 and .NET writers use 1601-01-01T00:00:00Z itself for
// an unset date, so a read returns that instant as the zero time and a write refuses it and
// anything outside the range with a *ValueError. A *time.Time holding the zero time stores
// no column and reads back nil. For rows written by other tools, a time field also reads an
// Edm.String holding RFC 3339 or ISO 8601 text (a text without a zone is taken as UTC).
//
// # Durations
//
// A time.Duration is an Edm.Int64 count of nanoseconds. The alternatives were .NET's ticks of
// 100 ns, which would drop the last two digits of a Go duration, and TimeSpan text
// ("1.02:03:04.5000000"), which sorts wrongly in filters and costs a parse on every read. A
// count of nanoseconds is lossless and compares correctly; a .NET reader divides by 100 to get
// ticks. A duration field also reads TimeSpan text and Go's duration text ("1h30m") from an
// Edm.String, for rows another writer stored that way.
//
// # GUIDs
//
// abstractions.GUID is stored as Edm.Guid. Its bytes are in the order the text is written
// (RFC 4122 order), which differs from .NET's Guid.ToByteArray for the first three groups; the
// cell holds the text form, so .NET and Go agree on the value. The zero GUID is a value and is
// stored.
//
// # Enums and text
//
// Go's enums are named types; the .NET library stores enums as their names. A type that
// implements both encoding.TextMarshaler and encoding.TextUnmarshaler (by value or pointer
// receiver) is stored as its text in an Edm.String, which keeps rows readable and stable when
// constants are renumbered. Checked before anything else, so a struct with text methods (a
// big.Int, a netip.Addr) is one cell, not flattened.
//
// # Bytes
//
// A []byte is one Edm.Binary cell, copied in both directions so that neither the caller nor a
// cached row shares the other's memory. A nil slice stores no column and an empty slice an
// empty cell, so the two read back as they were. A plain []byte is never compressed: one above
// 64 KiB is left for the service to refuse. A [N]byte array other than a GUID is an Edm.Binary
// of exactly N bytes.
//
// # Nested and embedded structs
//
// A struct field is flattened into one column per field, named with '_' between the parts
// (Home_Geo_Lat); '_' is therefore refused in field names. A nested struct held by pointer
// stores no columns when nil, and a read allocates it only when one of its columns is present,
// so a pointer to a struct none of whose fields store a column reads back nil. An embedded
// struct's fields are promoted to the parent's level, as Go promotes them (Customer embedding
// abstractions.Entity has a top-level Id column): the shallowest field of a name wins and hides
// deeper ones; two fields of one name at the same depth, which encoding/json drops silently,
// are refused. A struct type that implements json.Marshaler and json.Unmarshaler says how it
// wants to be stored and is stored as JSON. A recursive type's self-reference (a *Node inside
// Node) is stored as JSON.
//
// # JSON fallback
//
// A value with no native cell is stored as its encoding/json text in an Edm.String column
// named {Prop}__Json. A nil slice, map, pointer or interface stores no column and reads back
// nil; an empty one stores "[]" or "{}" and reads back empty. Strings inside must be valid
// UTF-8, as JSON requires (encoding/json replaces invalid bytes). When the text exceeds one
// cell it is gzip-compressed into an Edm.Binary column named {Prop}__GZip; a read accepts
// either. A value too large even compressed is refused with an *OversizedCellError. A JSON
// column's content is opaque to filters.
//
// # Oversized cells
//
// A cell holds 64 KiB: a string 32,768 UTF-16 code units, the unit the service counts in.
// By default a longer string is refused with an *OversizedCellError (matching
// abstractions.ErrOversizedCell) that names the column and its size; nothing is trimmed and
// nothing is stored. Options.Oversized chooses another policy per call, never process-wide, so
// two accounts in one program may differ: OversizedCompress stores the string gzip-compressed
// in {Prop}__GZip; OversizedTrim and OversizedTrimWithMarker compress too and, when that is not
// enough, keep the longest prefix that fits (at a character boundary, the latter ending with
// a marker), trim a JSON-stored slice to the elements that fit and drop any other JSON-stored
// value. The trimming policies lose data silently; they exist for values that are disposable.
//
// # The entity base
//
// A type that embeds abstractions.Entity (by value) gets its fields' special treatment. ID is
// stored as the column Id. On a read, ID is the stored Id when, split on its first '|' (a lone
// id addresses (id, id)), it names the row's keys; otherwise, and when the column is absent, it
// is "PartitionKey|RowKey". CreatedAt and UpdatedAt are ordinary time columns that also read
// the legacy columns Created and Modified (unless the type has columns of those names). ETag
// and Timestamp are never stored: a read fills them from the row.
//
// # Struct tags
//
// The tag key is table. A column is always named after its field; the tag has no name part.
//
//	Field T `table:"-"`                            not stored
//	Name string `table:",alias=FullName|Nom"`      reads FullName, then Nom, when Name is absent
//	_ struct{} `table:",alias=CreatedAt:Stamp"`    an alias for a promoted field, on a blank field
//	Notes string `table:",split=text,offload=never"`  a large value (see Large values)
//	Salary float64 `table:",protected=admin|accountant"` kept for the protected-property check
//
// Aliases name columns that rows written before a rename hold. Writes use the canonical name
// only, so rows converge as they are rewritten; the canonical column wins when both are
// present; an alias covers its __Json and __GZip forms too. Aliases apply to top-level columns.
// The type-level form, on a blank marker field, lists Target:Old items separated by '|' (an
// item without a target continues the previous target). A malformed tag, an unknown option, a
// name part, and an alias that collides with a column or another alias or names no top-level
// column are refused when the plan is built. The protected option is kept for the store's
// check (Field.Protected).
//
// # Large values
//
// split=text, split=gzip or split=binary (and offload=above or offload=never, for blob
// offload) on a string, a []byte or a JSON-stored field makes it a large value (Field.Large,
// Field.Encoding); on a blank marker field they cover every string, []byte and JSON-stored
// field of the type itself (not the Id, not the fields of nested structs). The options on any
// other field (a native scalar, a text-marshalled type, a flattened struct) are refused when
// the plan is built, naming the field: the .NET library reports that misuse on first use of
// the type, and a Go plan is built on first use. A type with a large value, or a type-level
// option, is split-aware (Plan.LargeValues); EncodeLarge hands its large values to the
// planner of package largevalue whole, without the oversized policy.
//
// A field of type *abstractions.File is a file (Field.File): a large value that is always
// stored in a blob, its row holding the reference cell {Name}__blob. The codec neither writes
// nor reads it (Encode refuses a file with ErrNotSupported, Decode leaves the field nil):
// EncodeLarge hands the *File to the store, and the store sets what it reads with SetFile.
// split= and offload= on a file are refused, and so is a field of type abstractions.File
// (not a pointer).
//
// # Reserved names
//
// Columns starting with '_' belong to the storage layer (the type discriminator, split
// markers) and are never read into a field; no field can produce one, because '_' is refused
// in field names and in aliases. PartitionKey, RowKey and Timestamp are the service's own
// properties and are refused as top-level field names.
//
// # Type discriminator
//
// With Options.WriteTypeName, Encode adds a _TypeName column holding the type's registered
// name (or its package path and name). DecodeAs reads such a row as the type its name
// resolves to in an abstractions.TypeRegistry, checks that the type is assignable to the
// requested base (an interface, or the type itself), and refuses everything else with an
// error matching abstractions.ErrIntegrity. Names are resolved only through the registry and its explicit
// fallback: a name stored in a row is data, never a way to reach an arbitrary type.
//
// # Errors
//
// *PlanError (matching abstractions.ErrNotSupported) reports a type the codec refuses;
// *ValueError a value that cannot be written or a cell that does not fit its field (naming the
// column, the stored EDM type and the field); *OversizedCellError a value too large for one
// cell. Decode never panics, whatever a row holds.
package codec
