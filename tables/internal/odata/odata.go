// Package odata owns what a query sends: the translation of a typed filter's tree into the
// service's OData $filter text, in the stored form of each value (Filter), the filter of a
// partition (Partition) and of a row-key prefix (PrefixEnd), and the cells a projection
// reads (Projection). It refuses, with an *Error before anything is sent, every shape whose
// answer on the service could differ from what the Go expression means, and filters the
// service would refuse (more than MaxComparisons comparisons, a URL too long), so that the
// memory service, which evaluates the same text, and Azure agree.
package odata

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// MaxComparisons is the most comparisons the service allows in one filter, counting
// those the engine adds for the partition and the row-key prefix. A bare Boolean property
// is not a comparison.
const MaxComparisons = 15

var (
	timeType          = reflect.TypeFor[time.Time]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// Error is the refusal of a filter or a projection, before anything is sent.
type Error struct {
	Field  string // the field's Go path, "" when the refusal is about the shape
	Reason string
	Kind   error // the sentinel it matches
}

func refuse(kind error, field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...), Kind: kind}
}

// translator turns a filter tree into the service's OData $filter text, in the stored form of
// each value. It refuses every shape whose answer on the service could differ from what the
// Go expression means, so that the in-memory backend (which evaluates the same text) and
// Azure agree.
type translator struct {
	plan        *codec.Plan
	comparisons int
}

// column resolves a field reference to the plan's field.
func (tr *translator) column(ref driver.Field) (*codec.Field, *Error) {
	if ref.Err != nil {
		return nil, refError(ref.Err)
	}
	if ref.Owner != tr.plan.Type() {
		return nil, refuse(abstractions.ErrInvalidArgument, "", "a field of %v used in a query of %v", ref.Owner, tr.plan.Type())
	}
	f, ok := tr.plan.FieldByOffset(ref.Offset, ref.Type)
	if !ok {
		if ref.Type.Kind() == reflect.Struct {
			return nil, refuse(abstractions.ErrNotSupported, "", "a %v is a nested struct stored as several columns, not one: compare one of its fields", ref.Type)
		}
		return nil, refuse(abstractions.ErrNotSupported, "", "the selected %v field has no stored column (skipped with `table:\"-\"`, unexported, "+
			"or below a struct held by pointer): filter on a stored field", ref.Type)
	}
	switch {
	case f.Role == codec.RoleETag:
		return nil, refuse(abstractions.ErrNotSupported, f.Path, "the ETag is not a stored column; read the row and compare its ETag in Go")
	case f.File:
		return nil, refuse(abstractions.ErrNotSupported, f.Path, "a file is stored in a blob, not in a column; store what you filter on in a field of its own")
	case f.Large:
		return nil, refuse(abstractions.ErrNotSupported, f.Path, "it may hold a large value, stored split or in a blob rather than in its column, "+
			"which the service would then not match; store what you filter on in a field of its own")
	case f.JSON:
		return nil, refuse(abstractions.ErrNotSupported, f.Path, "it is stored as JSON text, which the service cannot look into; "+
			"store the value you filter on in a field of its own")
	case f.Kind == service.KindBinary:
		return nil, refuse(abstractions.ErrNotSupported, f.Path, "binary columns cannot be filtered on; store a hash or a text form in a field of its own")
	}
	return f, nil
}

// refError is the refusal of a selector that could not be resolved.
func refError(err error) *Error {
	kind := abstractions.ErrNotSupported
	if errors.Is(err, abstractions.ErrInvalidArgument) {
		kind = abstractions.ErrInvalidArgument
	}
	return &Error{Reason: strings.TrimPrefix(err.Error(), kind.Error()+": "), Kind: kind}
}

// isText reports whether the codec stores t as its text, the way enums are stored: it
// marshals to text and *t unmarshals from it (the codec's own rule; a type with only
// MarshalText is stored by its kind).
func isText(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return (t.Implements(textMarshalerType) || pt.Implements(textMarshalerType)) && pt.Implements(textUnmarshalerType)
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// nullable reports whether a row may lack the field's column although the Go value is not
// special: a pointer (nil stores no column), a plain string (rows written by others, or
// before the field existed) and a time (the zero time stores no column).
func nullable(f *codec.Field) bool {
	if f.Role == codec.RoleTimestamp {
		return false
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		return true
	}
	return t == timeType || (f.Kind == service.KindString && !isText(t))
}

// node translates one node; neg says whether it sits below an odd number of Nots.
func (tr *translator) node(b *strings.Builder, n *driver.Node, neg bool) *Error {
	if n == nil {
		return refuse(abstractions.ErrInvalidArgument, "", "a zero Filter cannot be an operand of And, Or or Not; leave it out")
	}
	switch n.Op {
	case driver.OpAnd, driver.OpOr:
		if len(n.Operands) == 0 {
			return refuse(abstractions.ErrInvalidArgument, "", "%s needs at least one operand", n.Op)
		}
		if len(n.Operands) == 1 {
			return tr.node(b, n.Operands[0], neg)
		}
		for i, o := range n.Operands {
			if i > 0 {
				b.WriteString(" " + n.Op.String() + " ")
			}
			b.WriteByte('(')
			if err := tr.node(b, o, neg); err != nil {
				return err
			}
			b.WriteByte(')')
		}
		return nil
	case driver.OpNot:
		if len(n.Operands) != 1 {
			return refuse(abstractions.ErrInvalidArgument, "", "not needs exactly one operand")
		}
		b.WriteString("not (")
		if err := tr.node(b, n.Operands[0], !neg); err != nil {
			return err
		}
		b.WriteByte(')')
		return nil
	case driver.OpTrue:
		f, err := tr.column(n.Field)
		if err != nil {
			return err
		}
		if f.Kind != service.KindBool {
			return refuse(abstractions.ErrNotSupported, f.Path, "IsTrue needs a bool field")
		}
		if neg && nullable(f) {
			return refuse(abstractions.ErrNotSupported, f.Path, "a negated condition on a pointer field also matches rows without the column; "+
				"compare with Eq(false) instead")
		}
		b.WriteString(f.Name)
		return nil
	case driver.OpEq, driver.OpNe, driver.OpLt, driver.OpLe, driver.OpGt, driver.OpGe:
		return tr.comparison(b, n, neg)
	}
	return refuse(abstractions.ErrInvalidArgument, "", "unknown filter operation %v", n.Op)
}

func (tr *translator) comparison(b *strings.Builder, n *driver.Node, neg bool) *Error {
	f, err := tr.column(n.Field)
	if err != nil {
		return err
	}
	ordering := n.Op != driver.OpEq && n.Op != driver.OpNe
	if nullable(f) && (n.Op == driver.OpNe || neg) {
		return refuse(abstractions.ErrNotSupported, f.Path, "%s on a %v field: a row without the column (a nil pointer, the zero time, or a row "+
			"written before the field existed) matches no comparison on the service, so ne and not would answer otherwise than in Go; "+
			"write the condition without Ne or Not "+
			"(x != v as Or(x.Lt(v), x.Gt(v)), not x < v as x.Ge(v))",
			describeOp(n.Op, neg), f.Type)
	}
	lit, ferr := tr.literal(f, n.Value, ordering)
	if ferr != nil {
		return ferr
	}
	tr.comparisons++
	b.WriteString(f.Name + " " + n.Op.String() + " " + lit)
	return nil
}

func describeOp(op driver.Op, neg bool) string {
	if neg {
		return "a negated comparison (" + op.String() + " under not)"
	}
	return "inequality (ne)"
}

// literal returns the OData literal of v in the stored form of the field's column.
func (tr *translator) literal(f *codec.Field, v any, ordering bool) (string, *Error) {
	t := f.Type
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return "", refuse(abstractions.ErrNotSupported, f.Path, "a nil value: the service has no null comparison; an absent column matches no comparison")
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
		if rv.Type() == f.Type {
			if rv.IsNil() {
				return "", refuse(abstractions.ErrNotSupported, f.Path, "a nil value: the service has no null comparison; an absent column matches no comparison")
			}
			rv = rv.Elem()
		}
	}
	if rv.Type() != t {
		return "", refuse(abstractions.ErrInvalidArgument, f.Path, "a %v value compared with a %v field", rv.Type(), f.Type)
	}
	switch f.Kind {
	case service.KindString:
		if !isText(t) {
			if !utf8.ValidString(rv.String()) {
				return "", refuse(abstractions.ErrInvalidArgument, f.Path, "the value is not valid UTF-8, which no stored text is (the service holds text)")
			}
			return service.QuoteString(rv.String()), nil
		}
		if ordering {
			return "", refuse(abstractions.ErrNotSupported, f.Path, "%v is stored as its text, which does not sort like its values; "+
				"compare with eq or ne, or store a number", t)
		}
		p := reflect.New(t)
		p.Elem().Set(rv)
		text, err := p.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return "", refuse(abstractions.ErrInvalidArgument, f.Path, "the value's MarshalText failed: %v", err)
		}
		if !utf8.ValidString(string(text)) {
			return "", refuse(abstractions.ErrInvalidArgument, f.Path, "the value's text is not valid UTF-8, which no stored text is")
		}
		return service.QuoteString(string(text)), nil
	case service.KindBool:
		return strconv.FormatBool(rv.Bool()), nil
	case service.KindInt32:
		return strconv.FormatInt(intOf(rv), 10), nil
	case service.KindInt64:
		switch t.Kind() {
		case reflect.Uint, reflect.Uint64:
			if ordering {
				return "", refuse(abstractions.ErrNotSupported, f.Path, "%v is stored as a signed 64-bit number holding the same bits, so values above "+
					"MaxInt64 sort as negative numbers; compare with eq or ne, or use int64", t)
			}
		}
		return strconv.FormatInt(intOf(rv), 10) + "L", nil
	case service.KindDouble:
		x := rv.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", refuse(abstractions.ErrNotSupported, f.Path, "%v has no literal in the service's filter language", x)
		}
		return formatDouble(x), nil
	case service.KindDateTime:
		tm := rv.Interface().(time.Time)
		if tm.IsZero() {
			return "", refuse(abstractions.ErrNotSupported, f.Path, "the zero time stores no column, so no row holds it; "+
				"compare with a real time")
		}
		sv := service.DateTime(tm)
		if st := sv.Time(); !st.After(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)) || st.Year() > 9999 {
			return "", refuse(abstractions.ErrNotSupported, f.Path, "%v is outside the service's times (after 1601-01-01, before year 10000)", tm)
		}
		return "datetime'" + service.FormatDateTime(sv.Time()) + "'", nil
	case service.KindGuid:
		if ordering {
			return "", refuse(abstractions.ErrNotSupported, f.Path, "the service's order of GUIDs is not their text order; compare with eq or ne")
		}
		return "guid'" + rv.Interface().(abstractions.GUID).String() + "'", nil
	}
	return "", refuse(abstractions.ErrNotSupported, f.Path, "a %v column cannot be filtered on", f.Kind)
}

func intOf(rv reflect.Value) int64 {
	switch rv.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int64(rv.Uint()) // uint and uint64 keep their bits, as the codec stores them
	}
	return rv.Int()
}

// formatDouble writes a double so that the service reads a double: always with a decimal
// point, never with an exponent (forms every OData parser takes).
func formatDouble(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Filter is the service filter of a query: the partition, the row-key range of the
// prefix and the caller's filter, and the number of comparisons it holds.
func Filter(plan *codec.Plan, pk, prefix string, where *driver.Node) (string, *Error) {
	var parts []string
	if pk != "" {
		parts = append(parts, Partition(pk))
	}
	if prefix != "" {
		parts = append(parts, "RowKey ge "+service.QuoteString(prefix))
		if upper, ok := PrefixEnd(prefix); ok {
			parts = append(parts, "RowKey lt "+service.QuoteString(upper))
		}
	}
	return join(plan, parts, where)
}

// Point is the service filter of the one row pk, rk when where holds for it: a point
// query, which the service answers from the keys, as a point read.
func Point(plan *codec.Plan, pk, rk string, where *driver.Node) (string, *Error) {
	return join(plan, []string{Partition(pk), "RowKey eq " + service.QuoteString(rk)}, where)
}

// join joins parts, one comparison each, and the translation of where with "and", and
// refuses a filter the service would refuse.
func join(plan *codec.Plan, parts []string, where *driver.Node) (string, *Error) {
	n := len(parts)
	if where != nil {
		tr := translator{plan: plan}
		var b strings.Builder
		if err := tr.node(&b, where, false); err != nil {
			return "", err
		}
		n += tr.comparisons
		if len(parts) > 0 {
			parts = append(parts, "("+b.String()+")")
		} else {
			parts = append(parts, b.String())
		}
	}
	if n > MaxComparisons {
		return "", refuse(abstractions.ErrNotSupported, "", "the filter holds %d comparisons (with those of the partition and the row-key prefix); "+
			"the service allows %d: split the query, or narrow it with the partition and a row-key prefix", n, MaxComparisons)
	}
	f := strings.Join(parts, " and ")
	if enc := len(url.QueryEscape(f)); enc > maxFilterLength {
		return "", refuse(abstractions.ErrNotSupported, "", "the filter is %d bytes long in the request URL; the engine sends at most %d "+
			"(the service's URL limit, and the emulator's, are not much larger): compare shorter values, or split the query", enc, maxFilterLength)
	}
	return f, nil
}

// maxFilterLength is the longest $filter, URL-encoded, the engine sends. The service limits
// the request URL (Azurite answers 431 at about 21 KB of filter); 8 KiB leaves room for the
// rest of the URL.
const maxFilterLength = 8 << 10

// PrefixEnd returns the smallest string above every string that starts with prefix, in the
// service's order of UTF-16 code units: the prefix with its last code unit incremented. A
// last character at the top of its range is dropped and the one before it incremented
// instead; ok is false when every character is at the top (no upper bound is needed).
// Increments that would land on a lone surrogate move to the next valid character, which
// bounds the same strings.
func PrefixEnd(prefix string) (string, bool) {
	rs := []rune(prefix)
	for len(rs) > 0 {
		last := rs[len(rs)-1]
		switch {
		case last == 0xFFFF:
			// U+FFFF is the highest code unit: no character follows it in its position.
			rs = rs[:len(rs)-1]
			continue
		case last == 0xD7FF:
			// The next code unit, 0xD800, starts a surrogate pair: the smallest string
			// starting with it is U+10000.
			rs[len(rs)-1] = 0x10000
		case last == 0x10FFFF:
			// Above the high surrogate 0xDBFF come the low surrogates, which start no valid
			// character; the next one that does is U+E000.
			rs[len(rs)-1] = 0xE000
		default:
			rs[len(rs)-1] = last + 1
		}
		return string(rs), true
	}
	return "", false
}

// Projection returns the cells a read of the selected fields of plan's type takes their
// values from (the codec's Field.Cells: JSON and compressed forms, aliases), with the Id
// column's, so that the entity's ID reads as it does without a projection. ETag and
// Timestamp are always returned. A nil selector is given as nil.
func Projection(plan *codec.Plan, sels []*driver.Field) ([]string, *Error) {
	var cols []string
	seen := map[string]bool{}
	add := func(f *codec.Field) {
		for _, c := range f.Cells {
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
	}
	fields := plan.Fields()
	for i := range fields {
		if fields[i].Role == codec.RoleID {
			add(&fields[i])
		}
	}
	for _, sel := range sels {
		if sel == nil {
			return nil, refuse(abstractions.ErrInvalidArgument, "", "a nil selector in Select")
		}
		ref := *sel
		if ref.Err == nil && ref.Owner == plan.Type() && ref.Type.Kind() == reflect.Struct {
			if _, ok := plan.FieldByOffset(ref.Offset, ref.Type); !ok {
				// A nested struct held by value: select every column inside it.
				n := 0
				for i := range fields {
					f := &fields[i]
					if !f.Indirect && f.Offset >= ref.Offset && f.Offset+f.Type.Size() <= ref.Offset+ref.Type.Size() && f.Type.Size() > 0 {
						add(f)
						n++
					}
				}
				if n > 0 {
					continue
				}
			}
		}
		if ref.Err != nil {
			return nil, refError(ref.Err)
		}
		if ref.Owner != plan.Type() {
			return nil, refuse(abstractions.ErrInvalidArgument, "", "a field of %v selected in a query of %v", ref.Owner, plan.Type())
		}
		f, ok := plan.FieldByOffset(ref.Offset, ref.Type)
		if !ok {
			return nil, refuse(abstractions.ErrNotSupported, "", "the selected %v field has no stored column", ref.Type)
		}
		add(f)
	}
	return cols, nil
}

// Partition is the filter of one partition.
func Partition(pk string) string { return "PartitionKey eq " + service.QuoteString(pk) }
