package abstractions

import (
	"encoding/hex"
	"errors"
)

// GUID is a 128-bit identifier stored as an Edm.Guid cell. Its bytes are in the order the
// text form is written ("00112233-4455-6677-8899-aabbccddeeff" is bytes 00 11 22 … ff), which
// is the RFC 4122 order; note that .NET's Guid.ToByteArray uses a different byte order for
// the first three groups, so compare GUIDs with .NET code by their text, not their bytes.
type GUID [16]byte

// String returns the lower-case 36-character text form.
func (g GUID) String() string {
	var buf [36]byte
	hex.Encode(buf[0:8], g[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], g[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], g[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], g[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], g[10:16])
	return string(buf[:])
}

// IsZero reports whether g is the all-zero GUID.
func (g GUID) IsZero() bool { return g == GUID{} }

var errGUIDSyntax = errors.New("abstractions: a GUID is 32 hex digits in groups of 8-4-4-4-12, such as 00112233-4455-6677-8899-aabbccddeeff")

// ParseGUID parses the 36-character text form of a GUID, in either case.
func ParseGUID(s string) (GUID, error) {
	var g GUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return g, errGUIDSyntax
	}
	parts := [][2]int{{0, 8}, {9, 13}, {14, 18}, {19, 23}, {24, 36}}
	j := 0
	for _, p := range parts {
		n, err := hex.Decode(g[j:], []byte(s[p[0]:p[1]]))
		if err != nil {
			return GUID{}, errGUIDSyntax
		}
		j += n
	}
	return g, nil
}

// MarshalText implements encoding.TextMarshaler (for JSON and logs).
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (g *GUID) UnmarshalText(b []byte) error {
	v, err := ParseGUID(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}
