package service

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/unified-data/gotables/abstractions"
)

// Kind is the EDM type of a Value.
type Kind uint8

// The EDM types a table cell can hold.
const (
	KindString Kind = iota + 1
	KindBinary
	KindBool
	KindInt32
	KindInt64
	KindDouble
	KindDateTime
	KindGuid
)

var kindNames = [...]string{"", "Edm.String", "Edm.Binary", "Edm.Boolean", "Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.DateTime", "Edm.Guid"}

// String returns the EDM name of the kind, such as "Edm.Int64".
func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "Edm.Invalid(" + strconv.Itoa(int(k)) + ")"
}

// KindOf returns the kind named by an EDM type name such as "Edm.Int64", and false for a
// name that is not one of the eight table types.
func KindOf(edm string) (Kind, bool) {
	for i := 1; i < len(kindNames); i++ {
		if kindNames[i] == edm {
			return Kind(i), true
		}
	}
	return 0, false
}

// A Value is one typed cell. The zero Value is invalid (Kind 0) and is never stored.
// Values are immutable: Binary copies its input and Bytes returns the stored slice, which
// callers must not modify.
//
// A Value is 32 bytes, so that a row's property list is small to copy and to keep: binary
// content is held as an immutable string, and a date-time as its count of 100 ns ticks since
// the Unix epoch (which covers the years 1 to 9999 the service stores, and far beyond).
type Value struct {
	kind Kind
	s    string // String; Guid in canonical lower-case text form; Binary content
	n    uint64 // Bool (0/1), Int32, Int64 (two's complement), Double (IEEE bits), DateTime ticks
}

// String returns an Edm.String value.
func String(s string) Value { return Value{kind: KindString, s: s} }

// Binary returns an Edm.Binary value holding a copy of b.
func Binary(b []byte) Value {
	return Value{kind: KindBinary, s: string(b)}
}

// BinaryNoCopy returns an Edm.Binary value that keeps b itself; the caller must not modify b
// afterwards.
func BinaryNoCopy(b []byte) Value {
	if len(b) == 0 {
		return Value{kind: KindBinary}
	}
	return Value{kind: KindBinary, s: unsafe.String(&b[0], len(b))}
}

// Bool returns an Edm.Boolean value.
func Bool(v bool) Value {
	var n uint64
	if v {
		n = 1
	}
	return Value{kind: KindBool, n: n}
}

// Int32 returns an Edm.Int32 value.
func Int32(v int32) Value { return Value{kind: KindInt32, n: uint64(int64(v))} }

// Int64 returns an Edm.Int64 value.
func Int64(v int64) Value { return Value{kind: KindInt64, n: uint64(v)} }

// Double returns an Edm.Double value. NaN and ±Inf are allowed, as the service allows them.
func Double(v float64) Value { return Value{kind: KindDouble, n: math.Float64bits(v)} }

// DateTime returns an Edm.DateTime value: t in UTC, truncated to the service's 100 ns
// precision, without a monotonic clock reading.
// A time more than about 29,000 years from 1970, beyond what the ticks can count, is held
// as that limit, which is as far outside the service's years as the time itself.
func DateTime(t time.Time) Value {
	sec, tick := t.Unix(), int64(t.Nanosecond()/100)
	switch {
	case sec > maxTickSeconds:
		sec, tick = maxTickSeconds, 0
	case sec < -maxTickSeconds:
		sec, tick = -maxTickSeconds, 0
	}
	return Value{kind: KindDateTime, n: uint64(sec*ticksPerSecond + tick)}
}

const (
	// ticksPerSecond is the number of the service's 100 ns ticks in a second.
	ticksPerSecond = 10_000_000
	// maxTickSeconds is the most seconds from the Unix epoch a DateTime holds.
	maxTickSeconds = math.MaxInt64/ticksPerSecond - 1
)

// Guid returns an Edm.Guid value for the 16 bytes of g in the order its text form is written
// (RFC 4122 order, as "00112233-4455-6677-8899-aabbccddeeff"). The text is
// abstractions.GUID's, the one codec of GUID text.
func Guid(g [16]byte) Value { return Value{kind: KindGuid, s: abstractions.GUID(g).String()} }

// ParseGuid parses the 36-character text form of a GUID, in either case (see
// abstractions.ParseGUID).
func ParseGuid(s string) (Value, error) {
	g, err := abstractions.ParseGUID(s)
	if err != nil {
		return Value{}, err
	}
	return Guid(g), nil
}

// Kind returns the value's EDM type.
func (v Value) Kind() Kind { return v.kind }

// IsValid reports whether v holds a value (the zero Value does not).
func (v Value) IsValid() bool { return v.kind != 0 }

// Str returns the string of an Edm.String value, or the text form of an Edm.Guid value
// ("" for other kinds).
func (v Value) Str() string {
	if v.kind == KindBinary {
		return ""
	}
	return v.s
}

// Bytes returns the bytes of an Edm.Binary value (an empty, non-nil slice for empty
// content; nil for other kinds). The slice is the value's own storage and must not be
// modified.
func (v Value) Bytes() []byte {
	switch {
	case v.kind != KindBinary:
		return nil
	case len(v.s) == 0:
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(v.s), len(v.s))
}

// Bool returns the boolean of an Edm.Boolean value.
func (v Value) Bool() bool { return v.n != 0 }

// Int32 returns the number of an Edm.Int32 value.
func (v Value) Int32() int32 { return int32(int64(v.n)) }

// Int64 returns the number of an Edm.Int64 or Edm.Int32 value.
func (v Value) Int64() int64 { return int64(v.n) }

// Float returns the number of an Edm.Double value.
func (v Value) Float() float64 { return math.Float64frombits(v.n) }

// Time returns the UTC time of an Edm.DateTime value (the zero time for other kinds).
func (v Value) Time() time.Time {
	if v.kind != KindDateTime {
		return time.Time{}
	}
	ticks := int64(v.n)
	sec := ticks / ticksPerSecond
	rem := ticks % ticksPerSecond
	if rem < 0 {
		sec, rem = sec-1, rem+ticksPerSecond
	}
	return time.Unix(sec, rem*100).UTC()
}

// GuidBytes returns the 16 bytes of an Edm.Guid value in text order.
func (v Value) GuidBytes() [16]byte {
	g, _ := abstractions.ParseGUID(v.s)
	return g
}

// Equal reports whether two values have the same kind and the same value. Doubles compare
// by bits, so NaN equals NaN and 0 differs from -0, as a stored cell does.
func (v Value) Equal(w Value) bool {
	if v.kind != w.kind {
		return false
	}
	return v.s == w.s && v.n == w.n
}

// Size returns the bytes the service counts for the value: strings as UTF-16 (two bytes a
// code unit), binary by length, fixed sizes for the rest.
func (v Value) Size() int {
	switch v.kind {
	case KindString:
		return 2 * UTF16Len(v.s)
	case KindBinary:
		return len(v.s)
	case KindBool:
		return 1
	case KindInt32:
		return 4
	case KindGuid:
		return 16
	default:
		return 8
	}
}

// String renders the value for logs and test diffs, such as `Edm.Int64(42)`.
func (v Value) String() string {
	var s string
	switch v.kind {
	case KindString:
		s = strconv.Quote(v.s)
	case KindBinary:
		s = hex.EncodeToString(v.Bytes())
	case KindBool:
		s = strconv.FormatBool(v.Bool())
	case KindInt32, KindInt64:
		s = strconv.FormatInt(v.Int64(), 10)
	case KindDouble:
		s = strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case KindDateTime:
		s = FormatDateTime(v.Time())
	case KindGuid:
		s = v.s
	}
	return v.kind.String() + "(" + s + ")"
}

// UTF16Len returns the length of s in UTF-16 code units, the unit the service measures
// strings and keys in.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		// Eight ASCII bytes at a time: the common case, and values can be megabytes.
		if i+8 <= len(s) && asciiWord(s[i:i+8]) {
			n += 8
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// asciiWord reports whether the eight bytes of s are ASCII.
func asciiWord(s string) bool {
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	return w&0x8080808080808080 == 0
}

// CompareUTF16 compares two strings by their UTF-16 code units, the order the service sorts
// keys in (Go's byte order differs for characters above U+FFFF versus U+E000–U+FFFF).
// It returns -1, 0 or +1.
func CompareUTF16(a, b string) int {
	for i, j := 0, 0; ; {
		if i == len(a) || j == len(b) {
			switch {
			case i == len(a) && j == len(b):
				return 0
			case i == len(a):
				return -1
			default:
				return 1
			}
		}
		ca, cb := a[i], b[j]
		if ca < utf8.RuneSelf && cb < utf8.RuneSelf {
			if ca != cb {
				if ca < cb {
					return -1
				}
				return 1
			}
			i++
			j++
			continue
		}
		ra, na := utf8.DecodeRuneInString(a[i:])
		rb, nb := utf8.DecodeRuneInString(b[j:])
		ua, ub := firstUnit(ra), firstUnit(rb)
		if ua != ub {
			if ua < ub {
				return -1
			}
			return 1
		}
		if ra != rb {
			// Same leading unit: both are surrogate pairs with one high surrogate; the
			// low surrogates decide, and they order like the runes.
			if ra < rb {
				return -1
			}
			return 1
		}
		i += na
		j += nb
	}
}

func firstUnit(r rune) uint16 {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return uint16(hi)
	}
	return uint16(r)
}
