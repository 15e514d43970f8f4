// Building a type's plan: flattening its fields into columns, tags, aliases and markers.

package codec

import (
	"reflect"
	"slices"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

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
			"put alias, split, offload, protected, index or expires on its fields instead")
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

func (b *builder) addColumn(l leaf, name, path string, at loc, ti tagInfo, role Role) {
	f := Field{Name: name, Kind: l.kind, JSON: l.class == classJSON, Type: l.typ, Path: path,
		Index: at.index, Offset: at.off, Indirect: len(at.hops) > 0, Role: role,
		Split: ti.split, Offload: ti.offload, Protected: ti.protected, Indexes: ti.indexes, Uniques: ti.uniques, Nested: len(b.nesting) > 1,
		Expires: ti.expires, ExpiresTTL: ti.expiresTTL}
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
