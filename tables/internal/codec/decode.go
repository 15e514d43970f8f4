package codec

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/unified-data/gotables/tables/service"
)

// maxInflated caps what one __GZip cell may inflate to. A cell holds at most 64 KiB, and
// text that compresses more than a few hundred times is not data this codec wrote.
const maxInflated = 32 << 20

// Decode returns a new T holding the row's cells. T must be a struct type. Columns the row
// lacks leave their fields at the zero value; cells the type does not map (columns of other
// types, the storage layer's own columns starting with '_') are ignored. For a type that
// embeds abstractions.Entity, ID comes from the stored Id column when it names the row's
// keys and is "PartitionKey|RowKey" otherwise, and ETag and Timestamp come from the row.
//
// Decode refuses a type the codec cannot map with a *PlanError and a cell that does not fit
// its field with a *ValueError naming the column, the stored kind and the field. It never
// panics, whatever the row holds. opts is reserved for read options; nil means the defaults.
func Decode[T any](row *service.Row, opts *Options) (*T, error) {
	pl, err := planFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := DecodeAt(pl, row, v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeAt stores the row's cells into *v, which holds T's zero value, as Decode does into
// the T it returns; pl is T's plan (PlanOf). A caller that decodes many rows looks the plan
// up once, and can keep their values in one array.
func DecodeAt[T any](pl *Plan, row *service.Row, v *T) error {
	if pl == nil || pl.typ != reflect.TypeFor[T]() {
		return &PlanError{Type: reflect.TypeFor[T](), Reason: "DecodeAt needs the plan of the type it decodes into"}
	}
	if row == nil {
		return errNilRow
	}
	return pl.decode(row, unsafe.Pointer(v), true)
}

// DecodeInto stores the row's cells into dst, a non-nil pointer to a struct, as Decode does.
// Like encoding/json, it sets only the fields the row has columns for and leaves the others
// as they are (a JSON-stored field is replaced, not merged into).
func DecodeInto(row *service.Row, dst any, opts *Options) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Type().Elem().Kind() != reflect.Struct {
		var t reflect.Type
		if dst != nil {
			t = rv.Type()
		}
		return &PlanError{Type: t, Reason: "DecodeInto needs a non-nil pointer to a struct"}
	}
	pl, err := planFor(rv.Type().Elem())
	if err != nil {
		return err
	}
	if row == nil {
		return errNilRow
	}
	return pl.decode(row, rv.UnsafePointer(), true)
}

var errNilRow = errors.New("codec: the row is nil")

// decode reads row into the struct at p. recomputeID reconciles the entity ID with the keys.
func (pl *Plan) decode(row *service.Row, p unsafe.Pointer, recomputeID bool) error {
	// A cell under a column's own name (rank 0) is read as soon as it is met; an alias or a
	// gzip form waits until every cell has been seen, since a better one may follow. best
	// holds, per column, done or the best waiting cell: rank<<32 | (property index + 1).
	const done = ^uint64(0)
	var buf [64]uint64
	var best []uint64
	if n := len(pl.cols); n <= len(buf) {
		best = buf[:n]
	} else {
		best = make([]uint64, n)
	}
	props := row.Properties
	waiting := false
	next := 0
	for i := range props {
		var s source
		// Rows this codec wrote hold the columns in plan order: guess the next one before
		// looking the name up.
		if name := props[i].Name; next < len(pl.cellNames) && name == pl.cellNames[next] {
			s = source{col: int32(next)}
		} else if found, ok := pl.sources[name]; ok {
			s = found
		} else {
			continue
		}
		next = int(s.col) + 1
		b := best[s.col]
		if b == done {
			continue
		}
		if s.rank == 0 {
			best[s.col] = done
			if err := pl.cols[s.col].read(p, &props[i], false); err != nil {
				return err
			}
			continue
		}
		if uint64(i) >= 1<<32-1 {
			continue
		}
		if key := uint64(s.rank)<<32 | uint64(i+1); b == 0 || key < b {
			best[s.col] = key
			waiting = true
		}
	}
	if waiting {
		for ci, key := range best {
			if key == 0 || key == done {
				continue
			}
			c := &pl.cols[ci]
			if err := c.read(p, &props[int(key&(1<<32-1))-1], c.srcGzip[key>>32]); err != nil {
				return err
			}
		}
	}
	if pl.idCol >= 0 && recomputeID {
		id := (*string)(unsafe.Add(p, pl.cols[pl.idCol].off))
		if best[pl.idCol] == 0 || !idNamesKeys(*id, row.PartitionKey, row.RowKey) {
			*id = row.PartitionKey + "|" + row.RowKey
		}
	}
	if pl.hasETag {
		*(*string)(unsafe.Add(p, pl.etagOff)) = row.ETag
	}
	if pl.hasTimestamp {
		*(*time.Time)(unsafe.Add(p, pl.timestampOff)) = row.Timestamp
	}
	return nil
}

// read stores one cell into the column's field in the struct at p; gzip says the cell holds
// the gzip form of the column's text.
func (c *column) read(p unsafe.Pointer, prop *service.Property, gzip bool) error {
	v := &prop.Value
	if gzip {
		if v.Kind() != service.KindBinary {
			return c.readError(prop, errMismatch)
		}
		text, err := inflate(v.Bytes())
		if err != nil {
			return c.readError(prop, err)
		}
		if !utf8.ValidString(text) {
			// Another client compressed bytes that are not UTF-8: read them as .NET's
			// Encoding.UTF8 does, with U+FFFD for what is not text, so that the field holds
			// text this library can write back.
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		inflated := service.String(text)
		v = &inflated
	}
	fp := unsafe.Add(p, c.off)
	if len(c.hops) > 0 {
		fp = c.locateAlloc(p)
	}
	switch k := v.Kind(); {
	case c.leaf.op == opString && k == service.KindString:
		*(*string)(fp) = v.Str()
		return nil
	case c.leaf.op == opInt64 && k == service.KindInt64:
		*(*int64)(fp) = v.Int64()
		return nil
	case c.leaf.op == opFloat64 && k == service.KindDouble:
		*(*float64)(fp) = v.Float()
		return nil
	case c.leaf.op == opInt32 && k == service.KindInt32:
		*(*int32)(fp) = v.Int32()
		return nil
	case c.leaf.op == opBool && k == service.KindBool:
		*(*bool)(fp) = v.Bool()
		return nil
	}
	if err := c.leaf.dec(fp, v); err != nil {
		return c.readError(prop, err)
	}
	return nil
}

func (c *column) readError(prop *service.Property, err error) error {
	if err == errMismatch {
		err = fmt.Errorf("the field takes %s", c.accepts())
	}
	return &ValueError{Column: prop.Name, Field: c.field.Path, Type: c.leaf.typ, Read: true, Kind: prop.Value.Kind(),
		Err: err}
}

// accepts describes the cells a column reads, for a mismatch error.
func (c *column) accepts() string {
	switch c.leaf.class {
	case classString:
		return "Edm.String (or its gzip form in Edm.Binary)"
	case classJSON:
		return "JSON text in Edm.String (or its gzip form in Edm.Binary)"
	}
	switch c.leaf.kind {
	case service.KindInt32, service.KindInt64:
		return "Edm.Int32 or Edm.Int64 within its range"
	case service.KindDouble:
		return "Edm.Double or Edm.Int32"
	case service.KindDateTime:
		return "Edm.DateTime or an RFC 3339 Edm.String"
	}
	return c.leaf.kind.String()
}

// idNamesKeys reports whether a stored id addresses the row's keys: "pk|rk" split on its
// first '|', or a lone id that addresses (id, id).
func idNamesKeys(id, pk, rk string) bool {
	before, after, found := strings.Cut(id, "|")
	if !found {
		return id == pk && id == rk
	}
	return before == pk && after == rk
}

// inflate returns the text of a gzip cell.
func inflate(b []byte) (string, error) {
	if !isGzip(b) {
		return "", errors.New("the cell does not hold gzip data")
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("the gzip data is damaged: %w", err)
	}
	var out strings.Builder
	n, err := io.Copy(&out, io.LimitReader(r, maxInflated+1))
	if err != nil {
		return "", fmt.Errorf("the gzip data is damaged: %w", err)
	}
	if n > maxInflated {
		return "", fmt.Errorf("the gzip data inflates beyond %d bytes", maxInflated)
	}
	return out.String(), nil
}
