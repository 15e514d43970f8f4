package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// formatName is the value of the "format" member of an archive's header record.
const formatName = "udtables-backup"

// Version is the version of the archive format this package writes and reads.
const Version = 1

// chunkBytes is the most blob bytes one chunk record carries.
const chunkBytes = 1 << 20

// The record types, the "type" member of every line.
const (
	recHeader = "header"
	recBlob   = "blob"
	recChunk  = "chunk"
	recEntity = "entity"
	recEnd    = "end"
)

// headerRec is the first line of an archive.
type headerRec struct {
	Type       string   `json:"type"`
	Format     string   `json:"format"`
	Version    int      `json:"version"`
	Table      string   `json:"table"`
	Partitions []string `json:"partitions,omitempty"`
}

// blobRec announces a blob of the entity that follows; its bytes follow as chunk records.
type blobRec struct {
	Type        string `json:"type"`
	PK          string `json:"pk"`
	RK          string `json:"rk"`
	Column      string `json:"column"`
	SHA256      string `json:"sha256"`
	Length      int64  `json:"length"`
	ContentType string `json:"contentType"`
	Encoding    string `json:"encoding"`
	Chunks      int    `json:"chunks"`
}

// chunkRec is a piece of a blob, at most chunkBytes.
type chunkRec struct {
	Type string `json:"type"`
	Data []byte `json:"data"`
}

// entityRec is one entity: its main row first, then its continuation rows.
type entityRec struct {
	Type   string     `json:"type"`
	PK     string     `json:"pk"`
	Rows   []rowRec   `json:"rows"`
	Values []valueRec `json:"values,omitempty"`
}

// rowRec is one stored row: its key, its Timestamp in the source (informational) and its
// cells, sorted by name.
type rowRec struct {
	RK        string `json:"rk"`
	Timestamp string `json:"timestamp,omitempty"`
	Cells     []cell `json:"cells"`
}

// valueRec is a split or offloaded value of the entity with the SHA-256 of its stored bytes.
type valueRec struct {
	Column string `json:"column"`
	Form   string `json:"form"` // "split" or "blob"
	SHA256 string `json:"sha256"`
	Length int64  `json:"length"`
}

// endRec is the last line of a complete archive.
type endRec struct {
	Type      string `json:"type"`
	Entities  int64  `json:"entities"`
	Rows      int64  `json:"rows"`
	Blobs     int64  `json:"blobs"`
	BlobBytes int64  `json:"blobBytes"`
}

// anyRec reads every record type.
type anyRec struct {
	Type string `json:"type"`
	// header
	Format     string   `json:"format"`
	Version    int      `json:"version"`
	Table      string   `json:"table"`
	Partitions []string `json:"partitions"`
	// blob
	RK          string `json:"rk"`
	Column      string `json:"column"`
	SHA256      string `json:"sha256"`
	Length      int64  `json:"length"`
	ContentType string `json:"contentType"`
	Encoding    string `json:"encoding"`
	Chunks      int    `json:"chunks"`
	// chunk
	Data []byte `json:"data"`
	// entity
	PK     string     `json:"pk"`
	Rows   []rowRec   `json:"rows"`
	Values []valueRec `json:"values"`
	// end
	Entities  int64 `json:"entities"`
	RowCount  int64 `json:"-"`
	Blobs     int64 `json:"blobs"`
	BlobBytes int64 `json:"blobBytes"`
}

// UnmarshalJSON reads a record; "rows" is an array in an entity and a count in the trailer.
func (r *anyRec) UnmarshalJSON(b []byte) error {
	type plain anyRec
	var aux struct {
		*plain
		Rows json.RawMessage `json:"rows"`
	}
	aux.plain = (*plain)(r)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if len(aux.Rows) == 0 {
		return nil
	}
	if aux.Rows[0] == '[' {
		return json.Unmarshal(aux.Rows, &r.Rows)
	}
	return json.Unmarshal(aux.Rows, &r.RowCount)
}

// A cell is one property with its EDM type, written as a three-element array:
// ["Name", "Edm.Int64", "42"].
type cell struct {
	Name  string
	Value service.Value
}

// MarshalJSON writes [name, type, value].
func (c cell) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	name, _ := json.Marshal(c.Name)
	b.WriteByte('[')
	b.Write(name)
	b.WriteString(`,"`)
	b.WriteString(c.Value.Kind().String())
	b.WriteString(`",`)
	v := c.Value
	switch v.Kind() {
	case service.KindString:
		s, _ := json.Marshal(v.Str())
		b.Write(s)
	case service.KindBinary:
		b.WriteByte('"')
		b.WriteString(base64.StdEncoding.EncodeToString(v.Bytes()))
		b.WriteByte('"')
	case service.KindBool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case service.KindInt32:
		b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
	case service.KindInt64:
		b.WriteString(`"` + strconv.FormatInt(v.Int64(), 10) + `"`)
	case service.KindDouble:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			b.WriteString(`"NaN"`)
		case math.IsInf(f, 1):
			b.WriteString(`"Infinity"`)
		case math.IsInf(f, -1):
			b.WriteString(`"-Infinity"`)
		default:
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case service.KindDateTime:
		b.WriteString(`"` + service.FormatDateTime(v.Time()) + `"`)
	case service.KindGuid:
		b.WriteString(`"` + v.Str() + `"`)
	default:
		return nil, fmt.Errorf("cell %q has no EDM type", c.Name)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// UnmarshalJSON reads [name, type, value].
func (c *cell) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) != 3 {
		return fmt.Errorf("a cell is [name, EDM type, value], not %.80s", b)
	}
	var typ string
	if err := json.Unmarshal(parts[0], &c.Name); err != nil {
		return fmt.Errorf("a cell's name is a string, not %.80s", parts[0])
	}
	if err := json.Unmarshal(parts[1], &typ); err != nil {
		return fmt.Errorf("cell %q: its type is a string, not %.80s", c.Name, parts[1])
	}
	kind, ok := service.KindOf(typ)
	if !ok {
		return fmt.Errorf("cell %q: %q is not an EDM type", c.Name, typ)
	}
	v, err := decodeValue(kind, parts[2])
	if err != nil {
		return fmt.Errorf("cell %q (%s): %w", c.Name, typ, err)
	}
	c.Value = v
	return nil
}

func decodeValue(kind service.Kind, raw json.RawMessage) (service.Value, error) {
	var s string
	str := func() error { return json.Unmarshal(raw, &s) }
	switch kind {
	case service.KindString:
		if err := str(); err != nil {
			return service.Value{}, err
		}
		return service.String(s), nil
	case service.KindBinary:
		var bs []byte
		if err := json.Unmarshal(raw, &bs); err != nil {
			return service.Value{}, err
		}
		return service.BinaryNoCopy(bs), nil
	case service.KindBool:
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return service.Value{}, err
		}
		return service.Bool(v), nil
	case service.KindInt32:
		var v int32
		if err := json.Unmarshal(raw, &v); err != nil {
			return service.Value{}, err
		}
		return service.Int32(v), nil
	case service.KindInt64:
		if err := str(); err != nil {
			return service.Value{}, err
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return service.Value{}, err
		}
		return service.Int64(v), nil
	case service.KindDouble:
		if len(raw) > 0 && raw[0] == '"' {
			if err := str(); err != nil {
				return service.Value{}, err
			}
			switch s {
			case "NaN":
				return service.Double(math.NaN()), nil
			case "Infinity":
				return service.Double(math.Inf(1)), nil
			case "-Infinity":
				return service.Double(math.Inf(-1)), nil
			}
			return service.Value{}, fmt.Errorf("%q is not a double", s)
		}
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return service.Value{}, err
		}
		return service.Double(v), nil
	case service.KindDateTime:
		if err := str(); err != nil {
			return service.Value{}, err
		}
		t, err := service.ReadDateTime(s)
		if err != nil {
			return service.Value{}, err
		}
		return service.DateTime(t), nil
	case service.KindGuid:
		if err := str(); err != nil {
			return service.Value{}, err
		}
		return service.ParseGuid(s)
	}
	return service.Value{}, fmt.Errorf("unknown kind %v", kind)
}

// rowToRec returns the record of a stored row, its cells sorted by name.
func rowToRec(r *service.Row) rowRec {
	cells := make([]cell, len(r.Properties))
	for i, p := range r.Properties {
		cells[i] = cell{Name: p.Name, Value: p.Value}
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].Name < cells[j].Name })
	rec := rowRec{RK: r.RowKey, Cells: cells}
	if !r.Timestamp.IsZero() {
		rec.Timestamp = service.FormatDateTime(r.Timestamp)
	}
	return rec
}

// recToRow returns the row a record describes, without ETag and Timestamp.
func recToRow(pk string, rec *rowRec) service.Row {
	props := make([]service.Property, len(rec.Cells))
	for i, c := range rec.Cells {
		props[i] = service.Property{Name: c.Name, Value: c.Value}
	}
	return service.Row{PartitionKey: pk, RowKey: rec.RK, Properties: props}
}

// splitValues returns the split values of an entity's rows (main row first) with the
// SHA-256 and length of their stored bytes as the chunks hold them, checked against each
// manifest. A chunk that is missing or a hash or length that does not match is an error
// matching abstractions.ErrIntegrity.
func splitValues(rows []service.Row) ([]valueRec, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	main := &rows[0]
	var out []valueRec
	for _, p := range main.Properties {
		col, ok := strings.CutSuffix(p.Name, largevalue.ChunksSuffix)
		if !ok || !largevalue.HasManifest(main) {
			continue
		}
		n, ok := largevalue.Count(p.Value)
		if !ok {
			continue // not a manifest: a plain cell that happens to have the name
		}
		shaV, ok1 := main.Get(col + largevalue.SHA256Suffix)
		lenV, ok2 := main.Get(col + largevalue.LenSuffix)
		if !ok1 || !ok2 || shaV.Kind() != service.KindString {
			continue
		}
		length, ok := largevalue.Count(lenV)
		if !ok || n < 0 || n > 10000 {
			continue
		}
		h := sha256.New()
		var total int64
		for i := range int(n) {
			name := largevalue.ChunkName(col, i)
			v, found := findCell(rows, name)
			if !found {
				return nil, fmt.Errorf("%w: split value %s of row %q: chunk %s is missing", abstractions.ErrIntegrity, col, main.RowKey, name)
			}
			switch v.Kind() {
			case service.KindString:
				h.Write([]byte(v.Str()))
				total += int64(len(v.Str()))
			case service.KindBinary:
				h.Write(v.Bytes())
				total += int64(len(v.Bytes()))
			default:
				return nil, fmt.Errorf("%w: split value %s of row %q: chunk %s is %v", abstractions.ErrIntegrity, col, main.RowKey, name, v.Kind())
			}
		}
		sum := hex.EncodeToString(h.Sum(nil))
		if !strings.EqualFold(sum, shaV.Str()) || total != length {
			return nil, fmt.Errorf("%w: split value %s of row %q: its chunks (%d bytes, SHA-256 %s) do not match its manifest (%d bytes, %s)",
				abstractions.ErrIntegrity, col, main.RowKey, total, sum, length, shaV.Str())
		}
		out = append(out, valueRec{Column: col, Form: "split", SHA256: sum, Length: total})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Column < out[j].Column })
	return out, nil
}

func findCell(rows []service.Row, name string) (service.Value, bool) {
	for i := range rows {
		if v, ok := rows[i].Get(name); ok {
			return v, true
		}
	}
	return service.Value{}, false
}

// blobRefsOf returns the blob references of a main row, by column, sorted by column.
func blobRefsOf(main *service.Row) []namedRef {
	var out []namedRef
	for _, p := range main.Properties {
		col, ok := strings.CutSuffix(p.Name, largevalue.BlobSuffix)
		if !ok {
			continue
		}
		if ref, ok := largevalue.ParseBlobRef(p.Value); ok {
			out = append(out, namedRef{Column: col, Ref: ref})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Column < out[j].Column })
	return out
}

type namedRef struct {
	Column string
	Ref    largevalue.BlobRef
}

// chunkCount is the number of chunk records of a blob of n bytes (at least one).
func chunkCount(n int64) int {
	if n <= 0 {
		return 1
	}
	return int((n + chunkBytes - 1) / chunkBytes)
}
