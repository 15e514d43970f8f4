package codec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// The codec reads and writes fields through unsafe pointers at offsets the plan computed
// from reflect.StructField.Offset. A plan belongs to one concrete type and is only ever
// applied to a pointer to a value of that type (Encode and Decode obtain it from reflect or
// from a *T), so every access stays inside the value's own memory. This is what lets the
// hot path run without reflect.Value lookups: each leaf is a pair of small functions over a
// pointer to the field.

// leafClass says how a leaf's cell is stored.
type leafClass uint8

const (
	// classScalar is one fixed-size cell under the column's name.
	classScalar leafClass = iota
	// classString is an Edm.String under the column's name, which may be too large for a
	// cell and is then compressed to {Name}__GZip or trimmed, by policy.
	classString
	// classJSON is the encoding/json text of the value in {Name}__Json, compressed to
	// {Name}__GZip when too large.
	classJSON
	// classFile is a *abstractions.File: always a blob, its reference in {Name}__blob. The
	// codec neither writes nor reads it; EncodeLarge hands it to the large-value planner and
	// the store binds what it reads (SetFile).
	classFile
)

// fastOp names a leaf whose exact-kind read the decoder performs inline, sparing a call
// for the most common columns. Any other cell still goes through dec.
type fastOp uint8

const (
	opNone fastOp = iota
	opString
	opBool
	opInt32
	opInt64
	opFloat64
)

// A leaf converts one field to and from one cell.
type leaf struct {
	class leafClass
	op    fastOp
	// kind is the EDM type of the cell enc writes (KindString for classString and classJSON).
	kind service.Kind
	// typ is the field's Go type.
	typ reflect.Type
	// enc returns the cell for the field at p, or false when the field has no value to store
	// (a nil pointer, slice or map, the zero time).
	enc func(p unsafe.Pointer) (service.Value, bool, error)
	// dec stores the cell v into the field at p. It returns errMismatch for a cell of a kind
	// the field cannot take, or a cause naming what is wrong with the content.
	dec func(p unsafe.Pointer, v *service.Value) error
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
	guidType     = reflect.TypeFor[abstractions.GUID]()
	entityType   = reflect.TypeFor[abstractions.Entity]()
	fileType     = reflect.TypeFor[abstractions.File]()
	filePtrType  = reflect.TypeFor[*abstractions.File]()

	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// isText reports whether t stores as its text: it marshals to text (by value or pointer
// receiver) and *t unmarshals from it.
func isText(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return (t.Implements(textMarshalerType) || pt.Implements(textMarshalerType)) && pt.Implements(textUnmarshalerType)
}

// isJSONStruct reports whether a struct type says how encoding/json stores it; the codec
// then stores it as JSON rather than flattening its fields.
func isJSONStruct(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return (t.Implements(jsonMarshalerType) || pt.Implements(jsonMarshalerType)) && pt.Implements(jsonUnmarshalerType)
}

// leafFor returns the leaf of a type that has a native, text or JSON cell, false for a
// struct to flatten, and a reason for a type with no cell form.
func leafFor(t reflect.Type) (leaf, bool, string) {
	switch {
	case t == filePtrType:
		return fileLeaf(), true, ""
	case t == fileType:
		return leaf{}, false, "a file is stored through a field of type *abstractions.File; declare the field as a pointer"
	case t == timeType:
		return timeLeaf(), true, ""
	case t == durationType:
		return durationLeaf(), true, ""
	case t == guidType:
		return guidLeaf(), true, ""
	case t.Kind() == reflect.Interface && t.NumMethod() > 0:
		return leaf{}, false, "an interface with methods can be written as JSON but never read back (JSON cannot say which type to create); " +
			"use a concrete type or any, or tag the field `table:\"-\"`"
	case t.Kind() == reflect.Interface:
		return jsonLeaf(t), true, ""
	case isText(t):
		return textLeaf(t), true, ""
	}
	switch t.Kind() {
	case reflect.String:
		return withOp(stringLeaf(t), opString), true, ""
	case reflect.Bool:
		return withOp(boolLeaf(t), opBool), true, ""
	case reflect.Int8:
		return intLeaf[int8](t, false), true, ""
	case reflect.Int16:
		return intLeaf[int16](t, false), true, ""
	case reflect.Int32:
		return withOp(intLeaf[int32](t, false), opInt32), true, ""
	case reflect.Int:
		return intLeaf[int](t, true), true, ""
	case reflect.Int64:
		return withOp(intLeaf[int64](t, true), opInt64), true, ""
	case reflect.Uint8:
		return intLeaf[uint8](t, false), true, ""
	case reflect.Uint16:
		return intLeaf[uint16](t, false), true, ""
	case reflect.Uint32:
		return intLeaf[uint32](t, true), true, ""
	case reflect.Uint:
		return bitsLeaf[uint](t), true, ""
	case reflect.Uint64:
		return bitsLeaf[uint64](t), true, ""
	case reflect.Float32:
		return float32Leaf(t), true, ""
	case reflect.Float64:
		return withOp(float64Leaf(t), opFloat64), true, ""
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !isText(t.Elem()) {
			return bytesLeaf(t), true, ""
		}
		return jsonLeaf(t), true, ""
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && !isText(t.Elem()) {
			return byteArrayLeaf(t), true, ""
		}
		return jsonLeaf(t), true, ""
	case reflect.Map:
		return jsonLeaf(t), true, ""
	case reflect.Struct:
		if isJSONStruct(t) {
			return jsonLeaf(t), true, ""
		}
		return leaf{}, false, ""
	case reflect.Pointer:
		return leaf{}, false, "" // the plan builder handles pointers
	}
	return leaf{}, false, "a " + t.Kind().String() + " has no cell form; tag the field `table:\"-\"` to skip it"
}

func withOp(l leaf, op fastOp) leaf {
	l.op = op
	return l
}

// pointerLeaf wraps the leaf of elem for a field of type *elem: a nil pointer stores no
// column; a read allocates the element when the field holds none.
func pointerLeaf(t reflect.Type, inner leaf) leaf {
	elem := t.Elem()
	l := inner
	l.typ = t
	l.op = opNone
	l.enc = func(p unsafe.Pointer) (service.Value, bool, error) {
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			return service.Value{}, false, nil
		}
		return inner.enc(q)
	}
	l.dec = func(p unsafe.Pointer, v *service.Value) error {
		q := (*unsafe.Pointer)(p)
		if *q == nil {
			*q = reflect.New(elem).UnsafePointer()
		}
		return inner.dec(*q, v)
	}
	return l
}

func stringLeaf(t reflect.Type) leaf {
	return leaf{class: classString, kind: service.KindString, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.String(*(*string)(p)), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			if v.Kind() != service.KindString {
				return errMismatch
			}
			*(*string)(p) = v.Str()
			return nil
		},
	}
}

func boolLeaf(t reflect.Type) leaf {
	return leaf{class: classScalar, kind: service.KindBool, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.Bool(*(*bool)(p)), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			if v.Kind() != service.KindBool {
				return errMismatch
			}
			*(*bool)(p) = v.Bool()
			return nil
		},
	}
}

// cellInt returns the number of an Int32 or Int64 cell.
func cellInt(v *service.Value) (int64, error) {
	switch v.Kind() {
	case service.KindInt32, service.KindInt64:
		return v.Int64(), nil
	}
	return 0, errMismatch
}

func rangeError(n int64, t reflect.Type) error {
	return fmt.Errorf("%d is out of the range of %v", n, t)
}

// intLeaf handles the integers whose every value fits the cell: the signed ones, and uint8,
// uint16 and uint32; wide ones are Edm.Int64, the rest Edm.Int32. A read refuses a number
// the field cannot hold (negative ones included, for the unsigned types).
func intLeaf[T int8 | int16 | int32 | int | int64 | uint8 | uint16 | uint32](t reflect.Type, wide bool) leaf {
	kind := service.KindInt32
	if wide {
		kind = service.KindInt64
	}
	return leaf{class: classScalar, kind: kind, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			if wide {
				return service.Int64(int64(*(*T)(p))), true, nil
			}
			return service.Int32(int32(*(*T)(p))), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			n, err := cellInt(v)
			if err != nil {
				return err
			}
			if int64(T(n)) != n { // a conversion that does not round-trip is out of range
				return rangeError(n, t)
			}
			*(*T)(p) = T(n)
			return nil
		},
	}
}

// bitsLeaf handles uint and uint64: Edm.Int64 holding the same 64 bits, so values above
// MaxInt64 are stored as negative numbers and read back exactly.
func bitsLeaf[T uint | uint64](t reflect.Type) leaf {
	return leaf{class: classScalar, kind: service.KindInt64, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.Int64(int64(*(*T)(p))), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			var n uint64
			switch v.Kind() {
			case service.KindInt64:
				n = uint64(v.Int64())
			case service.KindInt32:
				// An Int32 cell was not written by this codec; a negative one is a
				// negative number, not a bit pattern.
				if v.Int64() < 0 {
					return rangeError(v.Int64(), t)
				}
				n = uint64(v.Int64())
			default:
				return errMismatch
			}
			if uint64(T(n)) != n {
				return fmt.Errorf("%d is out of the range of %v", n, t)
			}
			*(*T)(p) = T(n)
			return nil
		},
	}
}

// cellFloat returns the number of a Double cell, or of an Int32 cell (the form a whole
// double takes when a writer sent it without a type annotation).
func cellFloat(v *service.Value) (float64, error) {
	switch v.Kind() {
	case service.KindDouble:
		return v.Float(), nil
	case service.KindInt32:
		return float64(v.Int32()), nil
	}
	return 0, errMismatch
}

func float64Leaf(t reflect.Type) leaf {
	return leaf{class: classScalar, kind: service.KindDouble, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.Double(*(*float64)(p)), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			f, err := cellFloat(v)
			if err != nil {
				return err
			}
			*(*float64)(p) = f
			return nil
		},
	}
}

func float32Leaf(t reflect.Type) leaf {
	return leaf{class: classScalar, kind: service.KindDouble, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.Double(float64(*(*float32)(p))), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			f, err := cellFloat(v)
			if err != nil {
				return err
			}
			if math.Abs(f) > math.MaxFloat32 && !math.IsInf(f, 0) {
				return fmt.Errorf("%g is out of the range of %v", f, t)
			}
			*(*float32)(p) = float32(f)
			return nil
		},
	}
}

var (
	// minTime is the service's earliest Edm.DateTime, 1601-01-01T00:00:00Z, which .NET
	// writers also use to mark an unset date; the codec reads it as the zero time.
	minTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	// endTime is the first instant after the service's last Edm.DateTime.
	endTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)

	errTimeRange = errors.New("the service stores times after 1601-01-01T00:00:00Z and before year 10000 " +
		"(1601-01-01T00:00:00Z itself reads back as unset); use the zero time.Time for \"no time\"")
)

func timeLeaf() leaf {
	return leaf{class: classScalar, kind: service.KindDateTime, typ: timeType,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			t := (*time.Time)(p)
			if t.IsZero() {
				return service.Value{}, false, nil
			}
			v := service.DateTime(*t)
			if st := v.Time(); !st.After(minTime) || !st.Before(endTime) {
				return service.Value{}, false, errTimeRange
			}
			return v, true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			switch v.Kind() {
			case service.KindDateTime:
				t := v.Time()
				if t.Equal(minTime) {
					t = time.Time{}
				}
				*(*time.Time)(p) = t
				return nil
			case service.KindString:
				t, err := parseLegacyTime(v.Str())
				if err != nil {
					return err
				}
				*(*time.Time)(p) = t
				return nil
			}
			return errMismatch
		},
	}
}

// legacyTimeLayouts are the text forms a date written as a string by another writer takes:
// RFC 3339 with or without fractions, ISO 8601 without a zone (taken as UTC), a date alone.
var legacyTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

func parseLegacyTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range legacyTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			if t.Equal(minTime) {
				return time.Time{}, nil
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("the string %.40q is not an RFC 3339 or ISO 8601 time", s)
}

func durationLeaf() leaf {
	return leaf{class: classScalar, kind: service.KindInt64, typ: durationType,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.Int64(int64(*(*time.Duration)(p))), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			switch v.Kind() {
			case service.KindInt64, service.KindInt32:
				*(*time.Duration)(p) = time.Duration(v.Int64())
				return nil
			case service.KindString:
				d, err := parseTimeSpan(v.Str())
				if err != nil {
					return err
				}
				*(*time.Duration)(p) = d
				return nil
			}
			return errMismatch
		},
	}
}

func guidLeaf() leaf {
	return leaf{class: classScalar, kind: service.KindGuid, typ: guidType,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.Guid(*(*[16]byte)(p)), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			if v.Kind() != service.KindGuid {
				return errMismatch
			}
			g, err := abstractions.ParseGUID(v.Str())
			if err != nil {
				return err
			}
			*(*abstractions.GUID)(p) = g
			return nil
		},
	}
}

func bytesLeaf(t reflect.Type) leaf {
	return leaf{class: classScalar, kind: service.KindBinary, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			b := *(*[]byte)(p)
			if b == nil {
				return service.Value{}, false, nil
			}
			return service.Binary(b), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			if v.Kind() != service.KindBinary {
				return errMismatch
			}
			// Values are immutable; the field gets its own copy.
			*(*[]byte)(p) = append([]byte{}, v.Bytes()...)
			return nil
		},
	}
}

func byteArrayLeaf(t reflect.Type) leaf {
	n := t.Len()
	return leaf{class: classScalar, kind: service.KindBinary, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			return service.Binary(unsafe.Slice((*byte)(p), n)), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			if v.Kind() != service.KindBinary {
				return errMismatch
			}
			if len(v.Bytes()) != n {
				return fmt.Errorf("the cell holds %d bytes, the field %d", len(v.Bytes()), n)
			}
			copy(unsafe.Slice((*byte)(p), n), v.Bytes())
			return nil
		},
	}
}

var textBuffers = sync.Pool{New: func() any { return new([]byte) }}

func textLeaf(t reflect.Type) leaf {
	return leaf{class: classString, kind: service.KindString, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			b, err := reflect.NewAt(t, p).Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return service.Value{}, false, err
			}
			return service.String(string(b)), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			if v.Kind() != service.KindString {
				return errMismatch
			}
			// UnmarshalText must copy what it keeps, so a pooled buffer can carry the text.
			buf := textBuffers.Get().(*[]byte)
			*buf = append((*buf)[:0], v.Str()...)
			err := reflect.NewAt(t, p).Interface().(encoding.TextUnmarshaler).UnmarshalText(*buf)
			if cap(*buf) <= 1<<10 {
				textBuffers.Put(buf)
			}
			return err
		},
	}
}

// jsonLeaf stores a value without a native cell as its encoding/json text. A nil pointer,
// slice, map or interface stores no column, so a read leaves the field nil.
func jsonLeaf(t reflect.Type) leaf {
	nilable := false
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		nilable = true
	}
	stringSlice := isPlainStringSlice(t)
	return leaf{class: classJSON, kind: service.KindString, typ: t,
		enc: func(p unsafe.Pointer) (service.Value, bool, error) {
			rv := reflect.NewAt(t, p)
			if nilable && rv.Elem().IsNil() {
				return service.Value{}, false, nil
			}
			if stringSlice {
				if s, ok := encodeStringSlice(p); ok {
					return service.String(s), true, nil
				}
			}
			b, err := json.Marshal(rv.Interface())
			if err != nil {
				return service.Value{}, false, err
			}
			if jsonLostText(rv.Elem(), b) {
				return service.Value{}, false, errInvalidUTF8
			}
			return service.String(string(b)), true, nil
		},
		dec: func(p unsafe.Pointer, v *service.Value) error {
			if v.Kind() != service.KindString {
				return errMismatch
			}
			if stringSlice && decodeStringSlice(v.Str(), p) {
				return nil
			}
			rv := reflect.NewAt(t, p)
			// Start from the zero value so a map is replaced, not merged into.
			rv.Elem().SetZero()
			if err := json.Unmarshal([]byte(v.Str()), rv.Interface()); err != nil {
				rv.Elem().SetZero()
				return err
			}
			return nil
		},
	}
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

func isGzip(b []byte) bool { return bytes.HasPrefix(b, gzipMagic) }

// fileLeaf is the leaf of a *abstractions.File field, which has no cell of its own: the
// large-value planner stores it (see classFile).
func fileLeaf() leaf {
	return leaf{class: classFile, kind: service.KindString, typ: filePtrType,
		enc: func(unsafe.Pointer) (service.Value, bool, error) { return service.Value{}, false, nil },
		dec: func(unsafe.Pointer, *service.Value) error { return errMismatch },
	}
}
