package codec

import (
	"reflect"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// A slice of strings is the most common JSON-stored field (tags, labels, ids). Its text, as
// encoding/json writes it, is read here without encoding/json: the elements share the cell's
// memory (strings are immutable) and the slice is allocated once. Anything this reader does
// not handle, such as an escape, goes through encoding/json, so the result is the same.

// isPlainStringSlice reports whether t is a slice of a string kind whose elements
// encoding/json decodes as plain strings (no UnmarshalJSON or UnmarshalText of their own).
func isPlainStringSlice(t reflect.Type) bool {
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.String {
		return false
	}
	pe := reflect.PointerTo(t.Elem())
	return !pe.Implements(jsonUnmarshalerType) && !pe.Implements(textUnmarshalerType) &&
		!reflect.PointerTo(t).Implements(jsonUnmarshalerType) && !reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// decodeStringSlice reads a JSON array of strings into the []string-shaped field at p, and
// reports false, leaving the field alone, for text it does not handle.
func decodeStringSlice(s string, p unsafe.Pointer) bool {
	i := skipSpace(s, 0)
	if i == len(s) || s[i] != '[' {
		return false
	}
	i = skipSpace(s, i+1)
	out := make([]string, 0, strings.Count(s, ",")+1)
	if i < len(s) && s[i] == ']' {
		if skipSpace(s, i+1) != len(s) {
			return false
		}
		*(*[]string)(p) = out
		return true
	}
	for i < len(s) && s[i] == '"' {
		j, ascii := i+1, true
		for ; j < len(s); j++ {
			c := s[j]
			if c == '"' {
				break
			}
			if c == '\\' || c < 0x20 {
				return false
			}
			if c >= utf8.RuneSelf {
				ascii = false
			}
		}
		if j == len(s) {
			return false
		}
		elem := s[i+1 : j]
		if !ascii && !utf8.ValidString(elem) {
			return false // encoding/json would replace the invalid bytes
		}
		out = append(out, elem)
		i = skipSpace(s, j+1)
		if i == len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case ']':
			if skipSpace(s, i+1) != len(s) {
				return false
			}
			*(*[]string)(p) = out
			return true
		default:
			return false
		}
	}
	return false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// encodeStringSlice writes the JSON text of the []string-shaped field at p as encoding/json
// writes it, and reports false for a slice holding a string that needs an escape (encoding/json
// then writes it).
func encodeStringSlice(p unsafe.Pointer) (string, bool) {
	elems := *(*[]string)(p)
	n := 2 + len(elems)
	for _, e := range elems {
		if !plainJSONString(e) {
			return "", false
		}
		n += len(e) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, e...)
		b = append(b, '"')
	}
	b = append(b, ']')
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// plainJSONString reports whether encoding/json writes s between quotes unchanged: valid
// UTF-8 without control characters, quotes, backslashes, the HTML characters it escapes, or
// U+2028 and U+2029.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}
