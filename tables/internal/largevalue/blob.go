package largevalue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Blob offload (tier 3).
//
// A value stored in a blob leaves one cell on the main row, {Column}__blob, an Edm.String
// holding the reference as JSON:
//
//	{"path":"Docs/tenant-a/doc-1/Body/9f86d0…","sha256":"9f86d0…","length":5242880,
//	 "contentType":"text/plain; charset=utf-8","encoding":"text"}
//
// path is the blob's name in the offload container, sha256 the lower-case hexadecimal SHA-256
// of the blob's bytes, length their count, contentType the type recorded for the value (for
// a file, the File's) and encoding the stored form, as P__enc names it: the bytes of a gzip
// value are its gzip form, and the blob carries Content-Encoding: gzip. A reader matches the
// member names without regard to case, as .NET's and Go's JSON readers both can.
//
// Blob names are {table}/{partitionKey}/{rowKey}/{column}/{sha256}: rewriting identical
// content reuses the blob. Each segment but the hash is escaped (see EscapeSegment) so that
// none is "." or ".." or empty, which the blob SDKs would collapse out of the URL.

// DefaultContainer is the offload container unless the account's options name another.
const DefaultContainer = "unified-tables-values"

// DefaultThreshold is the default offload threshold: a value whose stored bytes exceed it is
// stored in a blob rather than split.
const DefaultThreshold = 3_145_728

// MaxThreshold is the largest offload threshold an account may set.
const MaxThreshold = 4_194_304

// MaxBlobNameLength is the longest blob name the blob service accepts.
const MaxBlobNameLength = 1024

// EncFile is the encoding recorded for a file's bytes: they are stored as they are.
const EncFile = EncBinary

// A BlobRef is the reference a {Column}__blob cell holds.
type BlobRef struct {
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Length      int64  `json:"length"`
	ContentType string `json:"contentType"`
	Encoding    string `json:"encoding"`
}

// Value returns the reference's cell value.
func (r BlobRef) Value() service.Value {
	b, _ := json.Marshal(r) // a struct of strings and an int does not fail
	return service.String(string(b))
}

// ParseBlobRef reads a reference cell. It reports false for a cell that is not a well-formed
// reference: not a string, not JSON, an empty path, a hash that is not 64 hexadecimal digits,
// a negative length or an unknown encoding.
func ParseBlobRef(v service.Value) (BlobRef, bool) {
	if v.Kind() != service.KindString {
		return BlobRef{}, false
	}
	var r BlobRef
	if err := json.Unmarshal([]byte(v.Str()), &r); err != nil {
		return BlobRef{}, false
	}
	r.SHA256 = strings.ToLower(r.SHA256)
	if r.Path == "" || r.Length < 0 || !isHash(r.SHA256) {
		return BlobRef{}, false
	}
	switch r.Encoding {
	case EncText, EncGzip, EncBinary, EncUTF16LE:
	default:
		return BlobRef{}, false
	}
	return r, true
}

// isHash reports 64 lower-case hexadecimal digits.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// EscapeSegment escapes one segment of a blob name as .NET's Uri.EscapeDataString does
// (every byte of the UTF-8 form but ASCII letters, digits, '-', '_' and '~' as %XX with
// upper-case hexadecimal digits), and also '.', so that no segment is "." or "..": an empty
// segment is written "%".
func EscapeSegment(s string) string {
	if s == "" {
		return "%"
	}
	var b strings.Builder
	b.Grow(len(s))
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// UnescapeSegment reverses EscapeSegment. It reports false for a segment EscapeSegment does
// not write (a raw '.', a lower-case or malformed escape, a lone '%' inside a segment).
func UnescapeSegment(seg string) (string, bool) {
	if seg == "%" {
		return "", true
	}
	if seg == "" {
		return "", false
	}
	var b []byte
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '~':
			b = append(b, c)
		case c == '%' && i+2 < len(seg) && upperHex(seg[i+1]) >= 0 && upperHex(seg[i+2]) >= 0:
			b = append(b, byte(upperHex(seg[i+1])<<4|upperHex(seg[i+2])))
			i += 2
		default:
			return "", false
		}
	}
	// An escape of a byte EscapeSegment leaves as it is is not its output.
	out := string(b)
	if EscapeSegment(out) != seg {
		return "", false
	}
	return out, true
}

func upperHex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// BlobName returns the blob name of a value: {table}/{pk}/{rk}/{column}/{sha256}, the keys
// and column escaped.
func BlobName(table, pk, rk, column, sha string) string {
	return EscapeSegment(table) + "/" + EscapeSegment(pk) + "/" + EscapeSegment(rk) + "/" + EscapeSegment(column) + "/" + sha
}

// RowBlobPrefix returns the prefix of every blob name of one row; a replace or delete
// deletes only the released blobs under it (the row's own).
func RowBlobPrefix(table, pk, rk string) string {
	return EscapeSegment(table) + "/" + EscapeSegment(pk) + "/" + EscapeSegment(rk) + "/"
}

// PartitionBlobPrefix returns the prefix of every blob name of one partition.
func PartitionBlobPrefix(table, pk string) string {
	return EscapeSegment(table) + "/" + EscapeSegment(pk) + "/"
}

// TableBlobPrefix returns the prefix of every blob name of one table.
func TableBlobPrefix(table string) string { return EscapeSegment(table) + "/" }

// ParsedBlobName is a blob name of the offload shape, its segments unescaped.
type ParsedBlobName struct {
	Table, PartitionKey, RowKey, Column, SHA256 string
}

// ParseBlobName parses a blob name of the exact offload shape: five segments, the first
// four as EscapeSegment writes them, the last 64 lower-case hexadecimal digits. Sweeps
// delete no blob whose name does not parse.
func ParseBlobName(name string) (ParsedBlobName, bool) {
	segs := strings.Split(name, "/")
	if len(segs) != 5 || !isHash(segs[4]) {
		return ParsedBlobName{}, false
	}
	var out [4]string
	for i := range 4 {
		s, ok := UnescapeSegment(segs[i])
		if !ok {
			return ParsedBlobName{}, false
		}
		out[i] = s
	}
	return ParsedBlobName{Table: out[0], PartitionKey: out[1], RowKey: out[2], Column: out[3], SHA256: segs[4]}, true
}

// Stored returns the stored form of a value, an Edm.String (text or JSON text) or an
// Edm.Binary, under encoding: the bytes a split value's chunks or an offloaded value's
// blob hold, and the encoding recorded with them.
func Stored(v service.Value, encoding string) (enc string, stored []byte) {
	switch {
	case encoding == EncGzip && v.Kind() == service.KindString:
		return EncGzip, gzipBytes([]byte(v.Str()))
	case encoding == EncGzip:
		return EncGzip, gzipBytes(v.Bytes())
	case v.Kind() == service.KindString:
		return EncText, []byte(v.Str())
	}
	return EncBinary, v.Bytes()
}

// ContentTypeOf returns the content type an offloaded value's blob carries: JSON text,
// UTF-8 text or bytes.
func ContentTypeOf(c Column) string {
	switch {
	case c.Cell != c.Name:
		return "application/json"
	case c.Binary:
		return "application/octet-stream"
	}
	return "text/plain; charset=utf-8"
}

// DecodeBlob verifies the bytes downloaded for ref (their length and SHA-256) and returns
// the cell of column c they decode to. A mismatch is an *IntegrityError.
func DecodeBlob(c Column, ref BlobRef, data []byte) (service.Property, error) {
	if int64(len(data)) != ref.Length {
		return service.Property{}, &IntegrityError{Column: c.Name,
			Reason: fmt.Sprintf("the blob %q holds %d bytes; the reference says %d", ref.Path, len(data), ref.Length)}
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != ref.SHA256 {
		return service.Property{}, &IntegrityError{Column: c.Name,
			Reason: fmt.Sprintf("the SHA-256 of the blob %q does not match its reference", ref.Path)}
	}
	return decodeStored(c, ref.Encoding, data)
}

// blobNameError reports a blob name the service would refuse.
func blobNameError(name string) error {
	return fmt.Errorf("%w: the blob name of an offloaded value would be %d characters long, more than the %d the blob service accepts; use shorter keys",
		abstractions.ErrInvalidKey, len(name), MaxBlobNameLength)
}
