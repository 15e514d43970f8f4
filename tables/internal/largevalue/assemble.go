package largevalue

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/unified-data/gotables/tables/service"
)

// maxInflated caps what a gzip value may inflate to, so a damaged or hostile row cannot
// exhaust memory: no entity's value this large fits the rows it came from.
const maxInflated = 256 << 20

// A Column is a large-value column as a read needs it.
type Column struct {
	// Name is the column (the field's column name).
	Name string
	// Cell is the name of the value's single cell: Name, or Name+"__Json".
	Cell string
	// Binary reports that the field takes bytes (an Edm.Binary cell) rather than text.
	Binary bool
	// AliasOf is set when Name is a legacy name of a column (an alias, which rows written
	// before a rename hold): it is the column's own name. A read takes the value stored
	// under the alias only when the row holds none of the column's own cells: the column's
	// own value wins.
	AliasOf string
	// ReadsBlob reports a reader that reads a value held in a blob itself (its account
	// configures blob offload): Assemble leaves the column's {Name}__blob reference on the
	// row for it, rather than fail with an *OffloadedError.
	ReadsBlob bool
}

// Superseded reports whether c is an alias whose column's own value is on the row: its
// cell, its compressed cell, its manifest or its blob reference. A reader ignores such an
// alias's cells.
func (c *Column) Superseded(main *service.Row) bool {
	if c.AliasOf == "" {
		return false
	}
	own := c.AliasOf + strings.TrimPrefix(c.Cell, c.Name) // the column's own cell (…__Json for JSON)
	for _, n := range [...]string{own, c.AliasOf + gzipSuffix, c.AliasOf + ChunksSuffix, c.AliasOf + BlobSuffix} {
		if _, ok := main.Get(n); ok {
			return true
		}
	}
	return false
}

// gzipSuffix names the compressed cell of a string or JSON column (codec's Field.Compressed).
const gzipSuffix = "__GZip"

// Parts returns the number of rows the main row says its entity occupies: its _SplitParts,
// or 1 when it has none. A malformed count is an *IntegrityError.
func Parts(main *service.Row) (int, error) {
	v, ok := main.Get(PartsColumn)
	if !ok {
		return 1, nil
	}
	n, ok := Count(v)
	if !ok || n < 1 || n > MaxContinuationRows+1 {
		return 0, &IntegrityError{Reason: fmt.Sprintf("the part count %s is %v, not a number of rows from 1 to %d",
			PartsColumn, v, MaxContinuationRows+1)}
	}
	return int(n), nil
}

// IsContinuation reports whether a row is a continuation row: it carries _SplitOf.
func IsContinuation(r *service.Row) bool {
	_, ok := r.Get(OfColumn)
	return ok
}

// BelongsTo reports whether r is continuation row i of the main row rk: its key is
// ContinuationKey(rk, i) and its _SplitOf names rk.
func BelongsTo(r *service.Row, rk string) (int, bool) {
	main, i, ok := IsContinuationKey(r.RowKey)
	if !ok || main != rk || i == 0 {
		return 0, false
	}
	of, ok := r.Get(OfColumn)
	return i, ok && of.Kind() == service.KindString && of.Str() == rk
}

// Count reads an Edm.Int32 or Edm.Int64 count (a chunk count, a length): the cell's value,
// and false for a cell of another type.
func Count(v service.Value) (int64, bool) {
	switch v.Kind() {
	case service.KindInt32:
		return int64(v.Int32()), true
	case service.KindInt64:
		return v.Int64(), true
	}
	return 0, false
}

// Assemble returns main with every split value of cols reassembled into its single cell
// (Column.Cell) and the layout's own cells removed. conts are the rows read at the main
// row's continuation keys, in any order (rows that are not its continuation rows are
// ignored); every continuation row the part count declares must be among them. A value
// that does not reassemble, verify and decode is an *IntegrityError: Assemble never returns
// part of a value. A value held in a blob (a {column}__blob cell and no other form) is an
// *OffloadedError, unless the column says the reader reads blobs (Column.ReadsBlob): the
// reference is then left on the row. A row with no split value is returned as it is.
func Assemble(main service.Row, conts []service.Row, cols []Column) (service.Row, error) {
	parts, err := Parts(&main)
	if err != nil {
		return service.Row{}, err
	}
	split := false
	for i := range main.Properties {
		n := main.Properties[i].Name
		if strings.HasSuffix(n, ChunksSuffix) || n == PartsColumn {
			split = true
			break
		}
	}
	// A manifest cell without its count is a torn group; a blob reference is a value this
	// package cannot read.
	for _, c := range cols {
		if _, ok := main.Get(c.Name + ChunksSuffix); ok || c.Superseded(&main) {
			continue
		}
		if _, ok := main.Get(c.Name + BlobSuffix); ok && !c.ReadsBlob {
			if _, inline := main.Get(c.Cell); !inline {
				return service.Row{}, &OffloadedError{Column: c.Name}
			}
		}
		for _, suf := range []string{SHA256Suffix, EncSuffix, LenSuffix} {
			if _, ok := main.Get(c.Name + suf); ok {
				return service.Row{}, &IntegrityError{Column: c.Name, Reason: "the manifest has no " + c.Name + ChunksSuffix + " cell"}
			}
		}
	}
	if !split {
		return main, nil
	}
	// The rows holding chunks: the main row, then continuation rows 1..parts-1.
	rows := make([]*service.Row, parts)
	rows[0] = &main
	for i := range conts {
		if idx, ok := BelongsTo(&conts[i], main.RowKey); ok && idx < parts && rows[idx] == nil {
			rows[idx] = &conts[i]
		}
	}
	for i := 1; i < parts; i++ {
		if rows[i] == nil {
			return service.Row{}, &IntegrityError{Reason: fmt.Sprintf("continuation row %q of %d is missing",
				ContinuationKey(main.RowKey, i), parts-1)}
		}
	}
	cells := map[string]service.Value{}
	for _, r := range rows {
		for _, p := range r.Properties {
			if strings.Contains(p.Name, ChunkSuffix) {
				cells[p.Name] = p.Value
			}
		}
	}
	drop := map[string]bool{PartsColumn: true}
	var add []service.Property
	for _, c := range cols {
		v, ok := main.Get(c.Name + ChunksSuffix)
		if !ok || c.Superseded(&main) {
			continue
		}
		cell, err := assembleOne(&main, c, v, cells)
		if err != nil {
			return service.Row{}, err
		}
		dropGroup(drop, c)
		add = append(add, cell)
	}
	return replaced(main, drop, cols, add), nil
}

// AssembleMain is Assemble for a reader that does not know continuation rows: a type that
// is not split-aware reads a value another type stored split when its chunks are all on the
// main row. cols are the columns that may hold such a value (strings, bytes and JSON-stored
// values, with their aliases). A group of cells counts as a split value only when its
// manifest is complete and well formed (a positive chunk count, a known encoding, 64
// hexadecimal digits of SHA-256 and a length); other cells that merely have such names are
// left as they are. A split value whose chunks are not all on the main row (it continues on
// continuation rows) is an *IntegrityError, as is one that does not verify. A row with no
// manifest is returned as it is, at the cost of one look at each cell's name.
func AssembleMain(main service.Row, cols []Column) (service.Row, error) {
	if !HasManifest(&main) {
		return main, nil
	}
	var groups []Column
	for _, c := range cols {
		if wellFormed(&main, c.Name) && !c.Superseded(&main) {
			groups = append(groups, c)
		}
	}
	if len(groups) == 0 {
		return main, nil
	}
	cells := map[string]service.Value{}
	for _, p := range main.Properties {
		if strings.Contains(p.Name, ChunkSuffix) {
			cells[p.Name] = p.Value
		}
	}
	parts, _ := Parts(&main)
	drop := map[string]bool{}
	var add []service.Property
	for _, c := range groups {
		n, _ := main.Get(c.Name + ChunksSuffix)
		chunks, _ := Count(n)
		for i := 0; i < int(chunks); i++ {
			if _, ok := cells[ChunkName(c.Name, i)]; !ok && parts != 1 {
				return service.Row{}, &IntegrityError{Column: c.Name,
					Reason: fmt.Sprintf("the value continues on continuation rows (chunk %s is not on the main row), which only a split-aware type reads; "+
						"read the row through a type that marks the field for large values", ChunkName(c.Name, i))}
			}
		}
		cell, err := assembleOne(&main, c, n, cells)
		if err != nil {
			return service.Row{}, err
		}
		dropGroup(drop, c)
		add = append(add, cell)
	}
	return replaced(main, drop, groups, add), nil
}

// dropGroup marks, in drop, the cells that the assembled value of c replaces: its manifest
// and the cell it supersedes.
func dropGroup(drop map[string]bool, c Column) {
	for _, suf := range []string{ChunksSuffix, SHA256Suffix, EncSuffix, LenSuffix} {
		drop[c.Name+suf] = true
	}
	drop[c.Cell] = true
}

// replaced returns main without the cells drop marks and the chunk cells of cols, with the
// assembled cells add after the rest.
func replaced(main service.Row, drop map[string]bool, cols []Column, add []service.Property) service.Row {
	out := main
	out.Properties = make([]service.Property, 0, len(main.Properties)+len(add))
	for _, p := range main.Properties {
		if drop[p.Name] || isChunkOf(p.Name, cols) {
			continue
		}
		out.Properties = append(out.Properties, p)
	}
	out.Properties = append(out.Properties, add...)
	return out
}

// HasManifest reports whether r holds a chunk count cell ({column}__chunks): whether it may
// hold a split value.
func HasManifest(r *service.Row) bool {
	for i := range r.Properties {
		if strings.HasSuffix(r.Properties[i].Name, ChunksSuffix) {
			return true
		}
	}
	return false
}

// wellFormed reports whether the row holds a complete, well-formed manifest for the column
// name: the test a reader that does not know the column as a large value applies.
func wellFormed(main *service.Row, name string) bool {
	n, ok := main.Get(name + ChunksSuffix)
	if c, isCount := Count(n); !ok || !isCount || c < 1 {
		return false
	}
	sha, ok := main.Get(name + SHA256Suffix)
	if !ok || sha.Kind() != service.KindString || len(sha.Str()) != 2*sha256.Size {
		return false
	}
	if _, err := hex.DecodeString(sha.Str()); err != nil {
		return false
	}
	enc, ok := main.Get(name + EncSuffix)
	if !ok || enc.Kind() != service.KindString {
		return false
	}
	switch enc.Str() {
	case EncText, EncGzip, EncBinary, EncUTF16LE:
	default:
		return false
	}
	l, ok := main.Get(name + LenSuffix)
	length, isCount := Count(l)
	return ok && isCount && length >= 0
}

// isChunkOf reports whether name is a chunk cell of one of cols.
func isChunkOf(name string, cols []Column) bool {
	i := strings.LastIndex(name, ChunkSuffix)
	if i <= 0 {
		return false
	}
	if _, err := strconv.Atoi(name[i+len(ChunkSuffix):]); err != nil {
		return false
	}
	for _, c := range cols {
		if c.Name == name[:i] {
			return true
		}
	}
	return false
}

// assembleOne reassembles the value of c, whose chunk count is n.
func assembleOne(main *service.Row, c Column, n service.Value, cells map[string]service.Value) (service.Property, error) {
	bad := func(format string, args ...any) (service.Property, error) {
		return service.Property{}, &IntegrityError{Column: c.Name, Reason: fmt.Sprintf(format, args...)}
	}
	chunks, ok := Count(n)
	if !ok || chunks < 1 {
		return bad("%s%s is %v, not a positive count", c.Name, ChunksSuffix, n)
	}
	shaV, _ := main.Get(c.Name + SHA256Suffix)
	encV, _ := main.Get(c.Name + EncSuffix)
	lenV, _ := main.Get(c.Name + LenSuffix)
	want, err := hex.DecodeString(shaV.Str())
	if shaV.Kind() != service.KindString || err != nil || len(want) != sha256.Size {
		return bad("%s%s is %v, not 64 hexadecimal digits", c.Name, SHA256Suffix, shaV)
	}
	enc := encV.Str()
	if encV.Kind() != service.KindString || (enc != EncText && enc != EncGzip && enc != EncBinary && enc != EncUTF16LE) {
		return bad("%s%s is %v, not one of text, gzip, binary or utf16le", c.Name, EncSuffix, encV)
	}
	length, ok := Count(lenV)
	if !ok || length < 0 {
		return bad("%s%s is %v, not a length", c.Name, LenSuffix, lenV)
	}
	if chunks > int64(len(cells)) {
		return bad("the manifest declares %d chunks; the rows hold fewer", chunks)
	}
	kind := service.KindBinary
	if enc == EncText {
		kind = service.KindString
	}
	var buf bytes.Buffer
	buf.Grow(int(min(length, 64<<20)))
	for i := 0; i < int(chunks); i++ {
		name := ChunkName(c.Name, i)
		v, ok := cells[name]
		switch {
		case !ok:
			return bad("chunk %s of %d is missing", name, chunks)
		case v.Kind() != kind:
			return bad("chunk %s holds %v where the encoding %s stores %v", name, v.Kind(), enc, kind)
		}
		if kind == service.KindString {
			buf.WriteString(v.Str())
		} else {
			buf.Write(v.Bytes())
		}
	}
	if int64(buf.Len()) != length {
		return bad("the chunks hold %d bytes; the manifest says %d", buf.Len(), length)
	}
	if sum := sha256.Sum256(buf.Bytes()); !bytes.Equal(sum[:], want) {
		return bad("the SHA-256 of the chunks does not match the manifest")
	}
	return decodeStored(c, enc, buf.Bytes())
}

// decodeStored turns the stored bytes of c's value, under encoding enc, into its cell.
func decodeStored(c Column, enc string, stored []byte) (service.Property, error) {
	bad := func(format string, args ...any) (service.Property, error) {
		return service.Property{}, &IntegrityError{Column: c.Name, Reason: fmt.Sprintf(format, args...)}
	}
	var text []byte
	isText := true
	switch enc {
	case EncText:
		text = stored
	case EncGzip:
		r, err := gzip.NewReader(bytes.NewReader(stored))
		if err != nil {
			return bad("the gzip data does not open: %v", err)
		}
		var out bytes.Buffer
		m, err := io.Copy(&out, io.LimitReader(r, maxInflated+1))
		if err != nil || m > maxInflated {
			return bad("the gzip data does not inflate within %d bytes: %v", maxInflated, err)
		}
		text = out.Bytes()
	case EncUTF16LE:
		if len(stored)%2 != 0 {
			return bad("utf16le data of odd length %d", len(stored))
		}
		units := make([]uint16, len(stored)/2)
		for i := range units {
			units[i] = binary.LittleEndian.Uint16(stored[2*i:])
		}
		text = []byte(string(utf16.Decode(units)))
	case EncBinary:
		text, isText = stored, false
	}
	if c.Binary {
		return service.Property{Name: c.Cell, Value: service.BinaryNoCopy(text)}, nil
	}
	if !validText(text) {
		if isText {
			return bad("the text is not valid UTF-8")
		}
		return bad("the field takes text, and the stored bytes are not UTF-8 text")
	}
	return service.Property{Name: c.Cell, Value: service.String(string(text))}, nil
}
