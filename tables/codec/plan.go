package codec

import (
	"reflect"
	"slices"
	"strings"
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

// builder builds one plan.
type builder struct {
	plan *Plan
	// nesting holds the struct types being flattened, to catch recursive types.
	nesting []reflect.Type
	// aliases are the declared aliases, in declaration order.
	aliases []aliasDecl
	// topColumns maps the top-level column names to their column index.
	topColumns map[string]int
	// colField maps a column index to its index in plan.fields.
	colField []int
}

type aliasDecl struct {
	col     int // index into plan.cols, or -1 for a type-level alias still to resolve
	target  string
	old     string
	path    string // the declaring field, for errors
	builtin bool
}

// candidate is a field seen while walking a struct and its embedded structs.
type candidate struct {
	sf       reflect.StructField
	name     string
	path     string
	depth    int
	at       loc
	tag      tagInfo
	inEntity bool
}

// embedded is a struct whose fields are promoted into the struct being flattened.
type embedded struct {
	typ    reflect.Type
	path   string
	at     loc
	depth  int
	entity bool
}

// indirect reports whether a pointer lies on the way to the embedded struct.
func (e embedded) indirect() bool { return len(e.at.hops) > 0 }

func buildPlan(t reflect.Type) (*Plan, error) {
	b := &builder{plan: &Plan{typ: t, idCol: -1}, topColumns: map[string]int{}}
	if err := b.flatten(t, "", "", loc{}, true); err != nil {
		return nil, err
	}
	if err := b.resolveAliases(); err != nil {
		return nil, err
	}
	// Columns point into fields, which no longer grows.
	for i, fi := range b.colField {
		f, c := &b.plan.fields[fi], &b.plan.cols[i]
		f.Aliases = slices.Clip(f.Aliases)
		f.Cell, f.Cells = c.cellName, slices.Clip(c.sources)
		if c.leaf.class != classScalar {
			f.Compressed = c.gzipName
		}
		c.field = f
	}
	b.resolveLarge()
	return b.plan, nil
}

func (b *builder) errorf(path, reason string) error {
	return &PlanError{Type: b.plan.typ, Field: path, Reason: reason}
}

// flatten adds the columns of struct t, whose column names start with prefix and Go paths
// with goPrefix. top says t is the stored type itself.
func (b *builder) flatten(t reflect.Type, prefix, goPrefix string, at loc, top bool) error {
	b.nesting = append(b.nesting, t)
	defer func() { b.nesting = b.nesting[:len(b.nesting)-1] }()

	cands, err := b.visible(t, goPrefix, at, top)
	if err != nil {
		return err
	}
	for _, c := range cands {
		if c.tag.ignore {
			continue
		}
		if strings.Contains(c.name, "_") {
			return b.errorf(c.path, "a field name cannot hold '_', which separates the parts of a nested column name; "+
				"rename the field (declare its old column with `table:\",alias=Old\"`) or tag it `table:\"-\"`")
		}
		name := prefix + c.name
		role := RoleColumn
		if c.inEntity && top && len(c.at.hops) == 0 {
			switch c.sf.Name {
			case "ID":
				name, role = "Id", RoleID
			case "ETag":
				role = RoleETag
			case "Timestamp":
				role = RoleTimestamp
			}
		}
		if role == RoleETag || role == RoleTimestamp {
			kind := service.KindString
			if role == RoleTimestamp {
				kind = service.KindDateTime
				b.plan.timestampOff, b.plan.hasTimestamp = c.at.off, true
			} else {
				b.plan.etagOff, b.plan.hasETag = c.at.off, true
			}
			b.plan.fields = append(b.plan.fields, Field{Name: c.sf.Name, Kind: kind, Type: c.sf.Type,
				Path: c.path, Index: c.at.index, Offset: c.at.off, Role: role})
			continue
		}
		if top {
			switch name {
			case "PartitionKey", "RowKey", "Timestamp":
				return b.errorf(c.path, "PartitionKey, RowKey and Timestamp are the service's own properties, "+
					"not columns; rename the field (or embed abstractions.Entity for the Timestamp)")
			}
		}
		if !top && len(c.tag.aliases) > 0 {
			return b.errorf(c.path, "aliases apply to top-level columns only; a nested column cannot declare one")
		}
		n := len(b.plan.cols)
		if err := b.field(c.sf.Type, name, c.path, c.at, c.tag, role); err != nil {
			return err
		}
		if c.inEntity && top && role == RoleColumn && len(c.at.hops) == 0 {
			switch c.sf.Name {
			case "CreatedAt":
				b.aliases = append(b.aliases, aliasDecl{col: n, old: "Created", path: c.path, builtin: true})
			case "UpdatedAt":
				b.aliases = append(b.aliases, aliasDecl{col: n, old: "Modified", path: c.path, builtin: true})
			}
		}
	}
	return nil
}

// visible returns the fields of struct t as Go promotes them, in declaration order, embedded
// structs' fields where the embedded struct is declared. It also takes in the blank marker
// fields' type-level options.
func (b *builder) visible(t reflect.Type, goPrefix string, at loc, top bool) ([]candidate, error) {
	var cands []candidate
	current := []embedded{{typ: t, path: goPrefix, at: at}}
	expanded := map[reflect.Type]bool{}
	for len(current) > 0 {
		var next []embedded
		for _, e := range current {
			for i := 0; i < e.typ.NumField(); i++ {
				sf := e.typ.Field(i)
				fat := e.at.field(sf)
				path := e.path + sf.Name
				tagStr := sf.Tag.Get(tagKey)
				if sf.Name == "_" {
					if tagStr == "" {
						continue
					}
					ti, reason := parseTag(tagStr, true)
					if reason != "" {
						return nil, b.errorf(path, reason)
					}
					if err := b.marker(path, ti, top); err != nil {
						return nil, err
					}
					continue
				}
				ti, reason := parseTag(tagStr, false)
				if reason != "" && (sf.IsExported() || sf.Anonymous) {
					return nil, b.errorf(path, reason)
				}
				name := sf.Name
				if sf.Anonymous {
					ft, ptr := sf.Type, false
					if ft.Kind() == reflect.Pointer {
						ft, ptr = ft.Elem(), true
					}
					if ti.ignore {
						continue
					}
					if ft.Kind() == reflect.Struct && !isLeafStruct(ft) {
						if ti.hasOptions() {
							return nil, b.errorf(path, "options on an embedded struct do not apply to its fields; "+
								"tag its fields, or use a blank marker field (_ struct{}) for type-level options")
						}
						if ptr && !sf.IsExported() {
							// As encoding/json: an unexported embedded pointer is not followed.
							continue
						}
						if ft == entityType && (ptr || e.indirect()) {
							return nil, b.errorf(path, "embed abstractions.Entity by value, not by pointer")
						}
						nat := fat
						if ptr {
							nat = fat.deref(ft)
						}
						next = append(next, embedded{typ: ft, path: path + ".", at: nat, depth: e.depth + 1,
							entity: ft == entityType})
						continue
					}
					if !sf.IsExported() {
						continue
					}
					// An embedded type with a cell of its own is a field named after the type.
					name = ft.Name()
				} else if !sf.IsExported() {
					continue
				}
				cands = append(cands, candidate{sf: sf, name: name, path: path, depth: e.depth, at: fat, tag: ti,
					inEntity: e.entity})
			}
		}
		for _, e := range current {
			expanded[e.typ] = true
		}
		// A struct already expanded at a shallower depth adds nothing visible.
		current = slices.DeleteFunc(next, func(e embedded) bool { return expanded[e.typ] })
	}

	// Go's promotion rule: of the fields with one name, the shallowest wins; two at the
	// same depth are ambiguous (encoding/json drops both silently; the codec refuses).
	byName := map[string][]int{}
	for i, c := range cands {
		byName[c.name] = append(byName[c.name], i)
	}
	keep := make([]bool, len(cands))
	for _, idx := range byName {
		minDepth := cands[idx[0]].depth
		for _, i := range idx {
			minDepth = min(minDepth, cands[i].depth)
		}
		var winners []int
		for _, i := range idx {
			if cands[i].depth == minDepth {
				winners = append(winners, i)
			}
		}
		if len(winners) > 1 {
			a, c := cands[winners[0]], cands[winners[1]]
			return nil, b.errorf(a.path, "it and "+c.path+" are promoted to the same name "+quote(a.name)+
				" at the same depth; rename one or tag one `table:\"-\"`")
		}
		keep[winners[0]] = true
	}
	var out []candidate
	for i, c := range cands {
		if keep[i] {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, c candidate) int { return slices.Compare(a.at.index, c.at.index) })
	return out, nil
}

// isLeafStruct reports whether a struct type has a cell of its own instead of being
// flattened.
func isLeafStruct(t reflect.Type) bool {
	return t == timeType || isText(t) || isJSONStruct(t)
}

// marker takes in a blank marker field's type-level options.
func (b *builder) marker(path string, ti tagInfo, top bool) error {
	if !top {
		if ti.hasOptions() {
			return b.errorf(path, "type-level options apply to the stored type only, not to a nested struct")
		}
		return nil
	}
	for _, a := range ti.typeAliases {
		b.aliases = append(b.aliases, aliasDecl{col: -1, target: a.target, old: a.old, path: path})
	}
	if ti.split == SplitBinary {
		return b.errorf(path, "split=binary applies to a []byte field; at type level use split=text or split=gzip "+
			"([]byte fields are stored as bytes either way)")
	}
	if ti.split != "" {
		if b.plan.split != "" {
			return b.errorf(path, "split= is declared twice at type level")
		}
		b.plan.split = ti.split
	}
	if ti.offload != "" {
		if b.plan.offload != "" {
			return b.errorf(path, "offload= is declared twice at type level")
		}
		b.plan.offload = ti.offload
	}
	return nil
}

// field adds the column(s) of one field of type t.
func (b *builder) field(t reflect.Type, name, path string, at loc, ti tagInfo, role Role) error {
	l, ok, reason := leafFor(t)
	if reason != "" {
		return b.errorf(path, reason)
	}
	if !ok && t.Kind() == reflect.Pointer {
		elem := t.Elem()
		switch {
		case elem.Kind() == reflect.Pointer || slices.Contains(b.nesting, elem):
			// A pointer to a pointer, or a recursive type, has no flat form.
			l, ok = jsonLeaf(t), true
		default:
			el, eok, reason := leafFor(elem)
			if reason != "" {
				return b.errorf(path, reason)
			}
			if eok {
				l, ok = pointerLeaf(t, el), true
			} else {
				at = at.deref(elem)
				t = elem
			}
		}
	}
	if ok {
		if err := b.checkLarge(l, path, ti, role); err != nil {
			return err
		}
		b.addColumn(l, name, path, at, ti, role)
		return nil
	}
	// A struct to flatten into name_Child columns.
	if ti.hasOptions() {
		return b.errorf(path, "a nested struct is stored as one column per field; "+
			"put alias, split, offload or protected on its fields instead")
	}
	n := len(b.plan.cols)
	if err := b.flatten(t, name+"_", path+".", at, false); err != nil {
		return err
	}
	if len(b.plan.cols) == n {
		return b.errorf(path, "the struct "+t.String()+" stores no column (it has no exported fields); "+
			"give it exported fields, implement encoding.TextMarshaler for it, or tag the field `table:\"-\"`")
	}
	return nil
}

// largeKind says what kind of large value a leaf can be: "text" for a string, "binary" for a
// []byte, "json" for a JSON-stored value, or "" when it cannot be one.
func largeKind(l leaf) string {
	t := l.typ
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case l.class == classFile:
		return "file"
	case l.class == classJSON:
		return "json"
	case l.class == classString && t.Kind() == reflect.String && !isText(t):
		return "text"
	case l.kind == service.KindBinary && t.Kind() == reflect.Slice:
		return "binary"
	}
	return ""
}

// checkLarge refuses split= and offload= on a field that cannot hold a large value.
func (b *builder) checkLarge(l leaf, path string, ti tagInfo, role Role) error {
	if ti.split == "" && ti.offload == "" {
		return nil
	}
	kind := largeKind(l)
	switch {
	case kind == "file":
		return b.errorf(path, "a file is always stored in a blob; split= and offload= do not apply to it, so remove them")
	case role == RoleID:
		return b.errorf(path, "the entity's ID is a key column and cannot be a large value; remove split= and offload=")
	case kind == "":
		return b.errorf(path, "split= and offload= apply to a string, a []byte or a JSON-stored value; "+
			l.typ.String()+" is stored as one native cell that always fits, so remove the option")
	case ti.split == SplitBinary && kind != "binary":
		return b.errorf(path, "split=binary applies to a []byte; use split=text or split=gzip for "+l.typ.String())
	}
	return nil
}

// resolveLarge marks the large values once the type-level options are known.
func (b *builder) resolveLarge() {
	p := b.plan
	p.large = p.split != "" || p.offload != ""
	for i := range p.cols {
		c := &p.cols[i]
		f := c.field
		kind := largeKind(c.leaf)
		if kind == "file" {
			f.Large, f.File, f.Encoding, p.large, c.large = true, true, SplitBinary, true, true
			c.cellName = f.Name + blobSuffix
			continue
		}
		own := f.Split != "" || f.Offload != ""
		// The type-level option covers the stored type's own string, []byte and JSON-stored
		// fields (promoted ones included), not the ID and not the fields of nested structs.
		covered := (p.split != "" || p.offload != "") && f.Role == RoleColumn && kind != "" &&
			!strings.Contains(f.Name, "_")
		if !own && !covered {
			continue
		}
		f.Large, p.large = true, true
		switch {
		case f.Split != "":
			f.Encoding = f.Split
		case p.split == SplitGzip:
			f.Encoding = SplitGzip
		case kind == "binary":
			f.Encoding = SplitBinary
		default:
			f.Encoding = SplitText
		}
		if f.Encoding == SplitText && kind == "binary" {
			// Text has no meaning for bytes: they are stored as they are.
			f.Encoding = SplitBinary
		}
		c.large = true
	}
}

func (b *builder) addColumn(l leaf, name, path string, at loc, ti tagInfo, role Role) {
	f := Field{Name: name, Kind: l.kind, JSON: l.class == classJSON, Type: l.typ, Path: path,
		Index: at.index, Offset: at.off, Indirect: len(at.hops) > 0, Role: role,
		Split: ti.split, Offload: ti.offload, Protected: ti.protected, Nested: len(b.nesting) > 1}
	c := column{name: name, hops: at.hops, off: at.off, leaf: l, cellName: name, gzipName: name + gzipSuffix}
	if l.class == classJSON {
		c.cellName = name + jsonSuffix
	}
	n := len(b.plan.cols)
	if role == RoleID {
		b.plan.idCol = n
	}
	if !strings.Contains(name, "_") {
		// No Go name holds '_', so a column name without one is a top-level column.
		b.topColumns[name] = n
	}
	b.colField = append(b.colField, len(b.plan.fields))
	for _, old := range ti.aliases {
		b.aliases = append(b.aliases, aliasDecl{col: n, old: old, path: path})
	}
	b.plan.fields = append(b.plan.fields, f)
	b.plan.cols = append(b.plan.cols, c)
}

// readNames returns the names a read accepts for a column stored under base, best first.
func readNames(class leafClass, base string) []string {
	switch class {
	case classString:
		return []string{base, base + gzipSuffix}
	case classJSON:
		return []string{base + jsonSuffix, base + gzipSuffix}
	case classFile:
		return nil // the store reads files (SetFile)
	}
	return []string{base}
}

// resolveAliases checks the aliases and builds the read map.
func (b *builder) resolveAliases() error {
	p := b.plan
	p.sources = make(map[string]source, 2*len(p.cols))
	owner := map[string]string{} // read name → the path of the field that claims it
	for i := range p.cols {
		c := &p.cols[i]
		for _, n := range readNames(c.leaf.class, c.name) {
			if prev, dup := owner[n]; dup {
				return b.errorf(p.fields[b.colField[i]].Path, "its column "+quote(n)+" is also the column of "+prev+
					"; rename one of the fields")
			}
			owner[n] = p.fields[b.colField[i]].Path
			c.sources = append(c.sources, n)
		}
	}
	// Declared aliases first, so that a built-in alias yields to them.
	decls := slices.Clone(b.aliases)
	slices.SortStableFunc(decls, func(a, c aliasDecl) int {
		switch {
		case a.builtin == c.builtin:
			return 0
		case c.builtin:
			return -1
		}
		return 1
	})
	for _, a := range decls {
		col := a.col
		if col < 0 {
			ci, ok := b.topColumns[a.target]
			if !ok {
				// Accept the Go name too ("ID" for the column "Id").
				for i := range p.cols {
					f := &p.fields[b.colField[i]]
					if !strings.Contains(f.Name, "_") && f.Path[strings.LastIndexByte(f.Path, '.')+1:] == a.target {
						ci, ok = i, true
						break
					}
				}
			}
			if !ok {
				return b.errorf(a.path, "the alias "+quote(a.old)+" targets "+quote(a.target)+
					", which is not a top-level column of the type")
			}
			col = ci
		}
		c := &p.cols[col]
		f := &p.fields[b.colField[col]]
		names := readNames(c.leaf.class, a.old)
		clash := ""
		for _, n := range names {
			if prev, dup := owner[n]; dup {
				clash = prev
				break
			}
		}
		if clash != "" {
			if a.builtin {
				continue
			}
			return b.errorf(a.path, "the alias "+quote(a.old)+" of "+f.Path+" is already read by "+clash+
				"; an old column name can belong to one field only and cannot be a current column")
		}
		for _, n := range names {
			owner[n] = f.Path + " (alias)"
			c.sources = append(c.sources, n)
		}
		f.Aliases = append(f.Aliases, a.old)
	}
	for i := range p.cols {
		c := &p.cols[i]
		p.cellNames = append(p.cellNames, c.cellName)
		for r, n := range c.sources {
			gz := strings.HasSuffix(n, gzipSuffix)
			c.srcGzip = append(c.srcGzip, gz)
			p.sources[n] = source{col: int32(i), rank: int32(r)}
		}
	}
	return nil
}
