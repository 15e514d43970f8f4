package largevalue

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
	"unsafe"

	"github.com/unified-data/gotables/tables/service"
)

// A Split is a large value in its split form: the stored bytes' description and the chunk
// cells' values.
type Split struct {
	// Column is the value's column (the field's column name, not a cell name).
	Column string
	// Encoding is the manifest's P__enc.
	Encoding string
	// Len is the length of the stored bytes.
	Len int
	// SHA256 is the lower-case hexadecimal SHA-256 of the stored bytes.
	SHA256 string
	// Chunks are the chunk values, P__c0 first: Edm.String for EncText, Edm.Binary otherwise.
	Chunks []service.Value
	// sizes are the chunk cells' sizes, measured once for the planner.
	sizes []cellSize
}

// cellSize is what one cell adds to a row: stored bytes (service.PropertySizeOn) and body
// bytes on the wire (service.PropertyBodySize).
type cellSize struct{ stored, wire int }

// chunkSizes returns the sizes of sp's chunk cells as service p counts them, measuring
// them on first use (a split is planned for one service).
func (sp *Split) chunkSizes(p service.Product) []cellSize {
	if len(sp.sizes) == len(sp.Chunks) {
		return sp.sizes
	}
	sp.sizes = make([]cellSize, len(sp.Chunks))
	for i, ch := range sp.Chunks {
		c := service.Property{Name: ChunkName(sp.Column, i), Value: ch}
		sp.sizes[i] = cellSize{service.PropertySizeOn(p, &c), service.PropertyBodySize(&c)}
	}
	return sp.sizes
}

// SplitValue returns the split form of v, an Edm.String (text or JSON text) or an Edm.Binary,
// under encoding (SplitText, SplitGzip or SplitBinary of package codec; "text", "gzip" or
// "binary"). Bytes under "text" are stored as binary: text has no meaning for them.
func SplitValue(column string, v service.Value, encoding string) *Split {
	sp := &Split{Column: column}
	var stored []byte
	switch {
	case encoding == EncGzip && v.Kind() == service.KindString:
		stored = gzipBytes([]byte(v.Str()))
	case encoding == EncGzip:
		stored = gzipBytes(v.Bytes())
	case v.Kind() == service.KindString:
		s := v.Str()
		sp.Encoding, sp.Len = EncText, len(s)
		// The hash reads the text's bytes in place: converting a value of megabytes to a
		// []byte would copy it.
		sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
		sp.SHA256 = hex.EncodeToString(sum[:])
		sp.Chunks = textChunks(s)
		return sp
	default:
		stored = v.Bytes()
		encoding = EncBinary
	}
	sum := sha256.Sum256(stored)
	sp.Encoding, sp.Len, sp.SHA256 = encoding, len(stored), hex.EncodeToString(sum[:])
	for len(stored) > 0 || len(sp.Chunks) == 0 {
		n := min(len(stored), MaxBinaryChunkBytes)
		sp.Chunks = append(sp.Chunks, service.BinaryNoCopy(stored[:n:n]))
		stored = stored[n:]
	}
	return sp
}

// textChunks cuts s into chunks of at most MaxTextChunkUnits UTF-16 code units, never
// dividing a character (a surrogate pair stays together). An empty s is one empty chunk.
func textChunks(s string) []service.Value {
	var out []service.Value
	start, units := 0, 0
	for i, r := range s {
		u := 1
		if r >= 0x10000 {
			u = 2
		}
		if units+u > MaxTextChunkUnits {
			out = append(out, service.String(s[start:i]))
			start, units = i, 0
		}
		units += u
	}
	return append(out, service.String(s[start:]))
}

// Manifest returns the four manifest cells of sp.
func (sp *Split) Manifest() []service.Property {
	return []service.Property{
		{Name: sp.Column + ChunksSuffix, Value: service.Int32(int32(len(sp.Chunks)))},
		{Name: sp.Column + SHA256Suffix, Value: service.String(sp.SHA256)},
		{Name: sp.Column + EncSuffix, Value: service.String(sp.Encoding)},
		{Name: sp.Column + LenSuffix, Value: service.Int64(int64(sp.Len))},
	}
}

// Size returns the stored size of the value's chunks, the size OversizedValueError reports.
func (sp *Split) Size() int { return sp.Len }

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b) // a bytes.Buffer does not fail
	_ = w.Close()
	return buf.Bytes()
}

// fitsCell reports whether v fits one cell.
func fitsCell(v service.Value) bool {
	if v.Kind() == service.KindString {
		// A character takes at most three UTF-8 bytes per UTF-16 code unit, so text of more
		// than three bytes a unit of the limit exceeds it without being measured.
		s := v.Str()
		return len(s) <= maxCellUnits || len(s) <= 3*maxCellUnits && service.UTF16Len(s) <= maxCellUnits
	}
	return len(v.Bytes()) <= maxCellBytes
}

// validText reports whether b is UTF-8 text.
func validText(b []byte) bool { return utf8.Valid(b) }
