package azservice

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/tables/service"
)

// The entity body is written by hand rather than through aztables.EDMEntity or a
// map[string]any: EDMEntity drops the Edm.Double annotation (a whole-valued double would be
// stored as Int32) and does not convert times to UTC, and a map costs an allocation per
// property. Every type the service cannot infer from the JSON token is annotated; Int32,
// Boolean and String are written plain because the service infers exactly those.

const (
	keyPartitionKey = "PartitionKey"
	keyRowKey       = "RowKey"
	keyTimestamp    = "Timestamp"
	odataType       = "@odata.type"
)

// errReservedName reports a custom property that would collide with a system property.
var errReservedName = errors.New("azservice: PartitionKey, RowKey and Timestamp are system properties, not custom properties")

// appendEntity appends the JSON body of a row write: the keys, then every custom property
// with its annotation. It refuses invalid values and custom properties named like the
// system properties (the contract keeps those out of Properties).
func appendEntity(dst []byte, pk, rk string, props []service.Property) ([]byte, error) {
	dst = append(dst, `{"PartitionKey":`...)
	dst = appendString(dst, pk)
	dst = append(dst, `,"RowKey":`...)
	dst = appendString(dst, rk)
	for i := range props {
		p := &props[i]
		switch p.Name {
		case keyPartitionKey, keyRowKey, keyTimestamp:
			return dst, fmt.Errorf("%w: %q", errReservedName, p.Name)
		}
		var err error
		if dst, err = appendProperty(dst, p.Name, p.Value); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendKeys appends a body that holds only the keys, as a delete action needs.
func appendKeys(dst []byte, pk, rk string) []byte {
	dst = append(dst, `{"PartitionKey":`...)
	dst = appendString(dst, pk)
	dst = append(dst, `,"RowKey":`...)
	dst = appendString(dst, rk)
	return append(dst, '}')
}

// appendProperty appends `,"name@odata.type":"Edm.X","name":value` (the annotation only for
// the kinds that need one).
func appendProperty(dst []byte, name string, v service.Value) ([]byte, error) {
	kind := v.Kind()
	switch kind {
	case service.KindString, service.KindBool, service.KindInt32:
	case service.KindBinary, service.KindInt64, service.KindDouble, service.KindDateTime, service.KindGuid:
		dst = append(dst, ',')
		dst = appendString(dst, name+odataType)
		dst = append(dst, `:"`...)
		dst = append(dst, kind.String()...)
		dst = append(dst, '"')
	default:
		return dst, fmt.Errorf("azservice: property %q holds an invalid value (%v)", name, kind)
	}
	dst = append(dst, ',')
	dst = appendString(dst, name)
	dst = append(dst, ':')
	switch kind {
	case service.KindString:
		dst = appendString(dst, v.Str())
	case service.KindBool:
		dst = strconv.AppendBool(dst, v.Bool())
	case service.KindInt32:
		dst = strconv.AppendInt(dst, int64(v.Int32()), 10)
	case service.KindInt64:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, v.Int64(), 10)
		dst = append(dst, '"')
	case service.KindDouble:
		dst = wire.AppendJSONDouble(dst, v.Float())
	case service.KindDateTime:
		dst = append(dst, '"')
		dst = wire.AppendDateTime(dst, v.Time())
		dst = append(dst, '"')
	case service.KindGuid:
		dst = append(dst, '"')
		dst = append(dst, v.Str()...)
		dst = append(dst, '"')
	case service.KindBinary:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes())
		dst = append(dst, '"')
	}
	return dst, nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string with encoding/json's escaping rules minus the
// HTML escapes: quote, backslash and control characters are escaped, U+2028 and U+2029
// are written as \u escapes, and invalid UTF-8 becomes U+FFFD (JSON cannot carry it).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
