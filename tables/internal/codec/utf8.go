package codec

import (
	"bytes"
	"reflect"
	"unicode/utf8"
)

// escapedRuneError is how encoding/json writes an invalid byte of a string: it replaces it
// with U+FFFD, as this escape, while a real U+FFFD in the text is written as itself.
var escapedRuneError = []byte(`\ufffd`)

// jsonLostText reports whether encoding/json replaced invalid UTF-8 in v when it produced
// out. A string stored as a plain column with invalid bytes is refused (the service would
// store U+FFFD), so a JSON-stored value is too: out would read back as another value. The
// walk runs only when out holds the escape, which valid text never produces (a string
// holding the six characters \ufffd is written with a doubled backslash, and the walk then
// finds nothing).
func jsonLostText(v reflect.Value, out []byte) bool {
	return bytes.Contains(out, escapedRuneError) && invalidText(v, 0)
}

// invalidText reports a string with invalid UTF-8 anywhere in v: in a string, a map key or
// value, a slice or array element, an exported struct field, or behind a pointer or an
// interface. Values that marshal themselves are not looked into.
func invalidText(v reflect.Value, depth int) bool {
	if depth > 64 || !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		return !utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && invalidText(v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false // []byte is base64
		}
		fallthrough
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if invalidText(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if invalidText(it.Key(), depth+1) || invalidText(it.Value(), depth+1) {
				return true
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && invalidText(v.Field(i), depth+1) {
				return true
			}
		}
	}
	return false
}
