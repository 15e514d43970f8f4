// Large values in a plan: which fields can be split or offloaded, and the columns their
// parts take.

package codec

import (
	"reflect"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

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
