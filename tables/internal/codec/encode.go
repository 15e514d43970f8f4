package codec

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

const (
	// maxStringUnits is the most UTF-16 code units one Edm.String cell holds (64 KiB).
	maxStringUnits = service.MaxStringUnits
	// maxBinaryBytes is the most bytes one Edm.Binary cell holds.
	maxBinaryBytes = service.MaxBinaryBytes
)

// Encode returns the cells of v, a struct or a pointer to one, in the order of its plan's
// fields (a pointer avoids copying the struct). It refuses a type the codec cannot map with a
// *PlanError, a value the service cannot store with a *ValueError, and a value too large for
// a cell under opts' policy with an *OversizedCellError. A nil opts means the defaults.
func Encode(v any, opts *Options) ([]service.Property, error) {
	return encodeValue(nil, v, nil, opts)
}

// EncodeColumns is Encode limited to the named columns (Field.Name values of v's plan): the
// other fields are not looked at, so a field whose value cannot be stored (an enum's zero
// value its MarshalText refuses, say) does not stop a partial write of the others. A name
// the plan does not have is ignored.
func EncodeColumns(v any, names []string, opts *Options) ([]service.Property, error) {
	if names == nil {
		names = []string{}
	}
	return encodeValue(nil, v, names, opts)
}

// encodeValue encodes the columns named in only of v's plan, or all of them when only is nil,
// into dst's array when it has room.
func encodeValue(dst []service.Property, v any, only []string, opts *Options) ([]service.Property, error) {
	p, t, err := structPointer(v)
	if err != nil {
		return nil, err
	}
	pl, err := planFor(t)
	if err != nil {
		return nil, err
	}
	return pl.encodeOnly(dst, p, only, opts.orDefault(), nil)
}

// A LargeValue is the value of a large-value field (Field.Large) as EncodeLarge hands it to
// the large-value planner, which decides whether it stays in one cell or is stored split.
type LargeValue struct {
	// Field is the field; Field.Name is the column, Field.Encoding the split encoding.
	Field *Field
	// Cell is the name of the value's single cell: Field.Name, or Field.Name+"__Json" for
	// a JSON-stored value.
	Cell string
	// Value is the value: an Edm.String holding the text (or JSON text, valid UTF-8) or an
	// Edm.Binary holding the bytes. It is invalid for a file.
	Value service.Value
	// File is the value of a file field (Field.File); Cell is then the reference cell,
	// Field.Name+"__blob".
	File *abstractions.File
}

// SetFile stores f in the file field (Field.File) of v, a pointer to a struct of the type
// whose plan holds the field, allocating nested structs held by pointer on the way.
func SetFile(v any, field *Field, f *abstractions.File) error {
	p, t, err := structPointer(v)
	if err != nil {
		return err
	}
	pl, err := planFor(t)
	if err != nil {
		return err
	}
	for i := range pl.cols {
		c := &pl.cols[i]
		if c.field == field && c.leaf.class == classFile {
			*(**abstractions.File)(c.locateAlloc(p)) = f
			return nil
		}
	}
	return &PlanError{Type: t, Field: field.Path, Reason: "it is not a file field of the type"}
}

// EncodeLarge is Encode for a split-aware type (Plan.LargeValues): it returns the cells of
// the ordinary fields and, apart, the values of the large-value fields, whatever their size
// (no oversized policy applies to them). A large field with no value to store (a nil slice
// or pointer) is left out, as Encode leaves out its column. Text must be valid UTF-8.
func EncodeLarge(v any, opts *Options) ([]service.Property, []LargeValue, error) {
	p, t, err := structPointer(v)
	if err != nil {
		return nil, nil, err
	}
	pl, err := planFor(t)
	if err != nil {
		return nil, nil, err
	}
	var large []LargeValue
	props, err := pl.encodeOnly(nil, p, nil, opts.orDefault(), &large)
	return props, large, err
}

// EncodeRow is Encode returning a row with the given keys.
func EncodeRow(v any, partitionKey, rowKey string, opts *Options) (service.Row, error) {
	return EncodeRowInto(nil, v, partitionKey, rowKey, opts)
}

// EncodeRowInto is EncodeRow writing the cells into dst's array (from its start) when it has
// room for them, so that a caller that no longer needs a row it wrote can encode the next
// one without allocating.
func EncodeRowInto(dst []service.Property, v any, partitionKey, rowKey string, opts *Options) (service.Row, error) {
	props, err := encodeValue(dst, v, nil, opts)
	if err != nil {
		return service.Row{}, err
	}
	return service.Row{PartitionKey: partitionKey, RowKey: rowKey, Properties: props}, nil
}

// EncodeRowAt is EncodeRowInto for a *T, with T's plan pl (PlanOf): a caller that encodes
// many values looks the plan up once.
func EncodeRowAt[T any](pl *Plan, dst []service.Property, v *T, partitionKey, rowKey string, opts *Options) (service.Row, error) {
	if pl == nil || pl.typ != reflect.TypeFor[T]() {
		return service.Row{}, &PlanError{Type: reflect.TypeFor[T](), Reason: "EncodeRowAt needs the plan of the type it encodes"}
	}
	if v == nil {
		return service.Row{}, &PlanError{Type: pl.typ, Reason: "the value is a nil pointer"}
	}
	props, err := pl.encodeOnly(dst, unsafe.Pointer(v), nil, opts.orDefault(), nil)
	if err != nil {
		return service.Row{}, err
	}
	return service.Row{PartitionKey: partitionKey, RowKey: rowKey, Properties: props}, nil
}

// structPointer returns the address of the struct v holds or points to, copying a struct
// passed by value.
func structPointer(v any) (unsafe.Pointer, reflect.Type, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.Type().Elem().Kind() != reflect.Struct {
			break
		}
		if rv.IsNil() {
			return nil, nil, &PlanError{Type: rv.Type().Elem(), Reason: "the value is a nil pointer"}
		}
		return rv.UnsafePointer(), rv.Type().Elem(), nil
	case reflect.Struct:
		c := reflect.New(rv.Type())
		c.Elem().Set(rv)
		return c.UnsafePointer(), rv.Type(), nil
	}
	var t reflect.Type
	if v != nil {
		t = rv.Type()
	}
	return nil, nil, &PlanError{Type: t, Reason: "the codec stores structs (or pointers to them); wrap the value in a struct"}
}

// encodeOnly encodes the columns named in only, or every column when only is nil (then with
// the type name column when o asks for it), into dst's array when it has room. With large
// not nil, the values of large-value columns go there instead of into cells.
func (pl *Plan) encodeOnly(dst []service.Property, p unsafe.Pointer, only []string, o *Options, large *[]LargeValue) ([]service.Property, error) {
	n := len(pl.cols)
	if o.WriteTypeName {
		n++
	}
	if only != nil {
		n = len(only)
	}
	props := dst[:0]
	if cap(props) < n {
		props = make([]service.Property, 0, n)
	}
	for i := range pl.cols {
		c := &pl.cols[i]
		if only != nil && !slices.Contains(only, c.name) {
			continue
		}
		fp := c.locate(p)
		if fp == nil {
			continue
		}
		if c.leaf.class == classFile {
			f := *(**abstractions.File)(fp)
			if f == nil {
				continue
			}
			if large == nil {
				return nil, &ValueError{Column: c.cellName, Field: c.field.Path, Type: c.leaf.typ, Err: errFileOutsideStore}
			}
			*large = append(*large, LargeValue{Field: c.field, Cell: c.cellName, File: f})
			continue
		}
		v, ok, err := c.leaf.enc(fp)
		if err != nil {
			return nil, &ValueError{Column: c.cellName, Field: c.field.Path, Type: c.leaf.typ, Err: err}
		}
		if !ok {
			continue
		}
		if large != nil && c.large {
			if v.Kind() == service.KindString && !utf8.ValidString(v.Str()) {
				return nil, &ValueError{Column: c.cellName, Field: c.field.Path, Type: c.leaf.typ, Err: errInvalidUTF8}
			}
			*large = append(*large, LargeValue{Field: c.field, Cell: c.cellName, Value: v})
			continue
		}
		if c.leaf.class == classScalar {
			if size, over := service.CellTooLarge(v); over {
				// Bytes are not compressed or trimmed by any policy: they are refused here,
				// as the service would refuse them, before anything is sent.
				return nil, &OversizedCellError{Column: c.name, Size: size, Limit: maxBinaryBytes, Binary: true}
			}
			props = append(props, service.Property{Name: c.name, Value: v})
			continue
		}
		if props, err = c.appendText(props, fp, v.Str(), o); err != nil {
			return nil, err
		}
	}
	if o.WriteTypeName && only == nil {
		props = append(props, service.Property{Name: TypeNameColumn, Value: service.String(discriminator(o.Types, pl.typ))})
	}
	return props, nil
}

// appendText appends the cell of a string or JSON text s, applying the oversized policy when
// it does not fit one cell.
func (c *column) appendText(props []service.Property, fp unsafe.Pointer, s string, o *Options) ([]service.Property, error) {
	if !utf8.ValidString(s) {
		// The service stores text; invalid bytes would come back as U+FFFD, so the value
		// would not read back as written (and the in-memory service would keep them).
		return nil, &ValueError{Column: c.cellName, Field: c.field.Path, Type: c.leaf.typ, Err: errInvalidUTF8}
	}
	// A string of at most maxStringUnits bytes has at most that many UTF-16 units.
	if len(s) <= maxStringUnits || service.UTF16Len(s) <= maxStringUnits {
		return append(props, service.Property{Name: c.cellName, Value: service.String(s)}), nil
	}
	size := 2 * service.UTF16Len(s)
	isJSON := c.leaf.class == classJSON
	if !isJSON && o.Oversized == OversizedRefuse {
		return nil, &OversizedCellError{Column: c.name, Size: size, Limit: maxBinaryBytes}
	}
	gz := gzipText(s)
	if len(gz) <= maxBinaryBytes {
		return append(props, service.Property{Name: c.gzipName, Value: service.BinaryNoCopy(gz)}), nil
	}
	if o.Oversized < OversizedTrim {
		return nil, &OversizedCellError{Column: c.name, Size: size, Compressed: len(gz), Limit: maxBinaryBytes}
	}
	if !isJSON {
		return append(props, service.Property{Name: c.name, Value: service.String(trimText(s, o.trimMarker()))}), nil
	}
	return c.appendTrimmedJSON(props, fp)
}

// appendTrimmedJSON stores the longest prefix of a JSON-stored slice or array that fits one
// cell, compressed if need be; any other JSON-stored value is dropped.
func (c *column) appendTrimmedJSON(props []service.Property, fp unsafe.Pointer) ([]service.Property, error) {
	rv := reflect.NewAt(c.leaf.typ, fp).Elem()
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return props, nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Array && !rv.CanAddr() {
		a := reflect.New(rv.Type()).Elem()
		a.Set(rv)
		rv = a
	}
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return props, nil
	}
	// fit returns the cell for the first n elements, if they fit.
	fit := func(n int) (service.Property, bool) {
		b, err := json.Marshal(rv.Slice(0, n).Interface())
		if err != nil {
			return service.Property{}, false
		}
		s := string(b)
		if service.UTF16Len(s) <= maxStringUnits {
			return service.Property{Name: c.cellName, Value: service.String(s)}, true
		}
		if gz := gzipText(s); len(gz) <= maxBinaryBytes {
			return service.Property{Name: c.gzipName, Value: service.BinaryNoCopy(gz)}, true
		}
		return service.Property{}, false
	}
	best, ok := fit(0)
	if !ok {
		return props, nil
	}
	lo, hi := 0, rv.Len() // fit(lo) holds; fit(hi) does not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p, ok := fit(mid); ok {
			lo, best = mid, p
		} else {
			hi = mid
		}
	}
	return append(props, best), nil
}

// trimText returns the longest prefix of s that, followed by marker, fits one cell.
func trimText(s, marker string) string {
	room := maxStringUnits - service.UTF16Len(marker)
	if room < 0 {
		room, marker = maxStringUnits, ""
	}
	units := 0
	for i, r := range s {
		u := 1
		if r >= 0x10000 {
			u = 2
		}
		if units+u > room {
			return s[:i] + marker
		}
		units += u
	}
	return s + marker
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// gzipText returns the gzip form of s.
func gzipText(s string) []byte {
	var buf bytes.Buffer
	buf.Grow(len(s) / 4)
	w := gzipWriters.Get().(*gzip.Writer)
	w.Reset(&buf)
	// Writes to a bytes.Buffer cannot fail.
	_, _ = w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
	_ = w.Close()
	gzipWriters.Put(w)
	return buf.Bytes()
}
