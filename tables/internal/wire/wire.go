// Package wire holds the small encodings the table service's adapters and the engine share:
// the Edm.DateTime and Edm.Double spellings and the entity-tag syntax.
package wire

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
)

// dateTimeLayout is the service's own spelling: UTC, seven fractional digits (its 100 ns
// ticks), a trailing Z.
const dateTimeLayout = "2006-01-02T15:04:05.0000000Z"

// AppendDateTime appends t as the service writes an Edm.DateTime, such as
// "2026-11-29T18:30:11.1234567Z", to dst (service.FormatDateTime returns the same text).
func AppendDateTime(dst []byte, t time.Time) []byte { return t.UTC().AppendFormat(dst, dateTimeLayout) }

// AppendJSONDouble appends the JSON of an Edm.Double as the Azure adapter sends it: the
// number as encoding/json writes it (plain digits for ordinary magnitudes, an exponent
// without a leading zero, such as 1e-7, for very small or large ones) with ".0" after a
// whole number, so that the token itself says "double"; and the strings "NaN", "Infinity"
// and "-Infinity", which the service accepts for the values JSON has no number for.
func AppendJSONDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Shorten e-09 to e-9, as encoding/json does.
		if n := len(dst); n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
		return dst
	}
	if !bytes.ContainsRune(dst[start:], '.') {
		dst = append(dst, ".0"...)
	}
	return dst
}

// IsEntityTag reports whether s is an HTTP entity tag (RFC 9110, section 8.8.3): a quoted
// string, optionally prefixed by W/ for a weak tag, whose characters are visible ASCII other
// than the quote, or bytes of 0x80 and above. "*" (service.ETagAny) is not an entity tag. The engine
// refuses a condition that is not one before sending it: the service would answer 400.
func IsEntityTag(s string) bool {
	s, _ = strings.CutPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; c < 0x21 || c == '"' || c == 0x7f {
			return false
		}
	}
	return true
}
