package emulator

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// A record of the data directory's files is a frame: the payload's length (4 bytes, little
// endian), its CRC-32C (4 bytes), and the payload, one journal.Change:
//
//	kind byte, table string, count uvarint, count × row
//	row:   delete byte, PartitionKey string, RowKey string, and unless deleted:
//	       ETag string, Timestamp (seconds varint, nanoseconds uvarint), count uvarint, count × property
//	property: name string, kind byte, then a string (String, Binary, Guid) or a uvarint (the others)
//
// where a string is its length (uvarint) and bytes. A property's uvarint is the Value's
// bits (two's complement, IEEE 754, 100 ns ticks), so every value reads back exactly.
// The changes of containers and blobs follow their kind byte with the container's name and
// then:
//
//	CreateContainer: ETag string, LastModified time
//	DeleteContainer: nothing
//	PutBlob:         blob string, ETag string, LastModified time, ContentType string,
//	                 ContentEncoding string, count uvarint, count × (name string, value string),
//	                 annex, content string
//	DeleteBlob:      blob string, annex
//	StageBlock:      blob string, block id string, content string
//
// where a time is seconds (varint) and nanoseconds (uvarint), and an annex is a byte (0:
// none, 1: present) followed, when present, by a string. Metadata is written in name order.
const frameHeader = 8

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends c as a frame to buf.
func appendFrame(buf []byte, c *journal.Change) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, frameHeader)...)
	buf = append(buf, byte(c.Kind))
	if c.Kind >= journal.CreateContainer {
		buf = appendBlobChange(buf, c)
		return sealFrame(buf, start)
	}
	buf = appendStr(buf, c.Table)
	buf = binary.AppendUvarint(buf, uint64(len(c.Rows)))
	for i := range c.Rows {
		rc := &c.Rows[i]
		r := &rc.Row
		del := byte(0)
		if rc.Delete {
			del = 1
		}
		buf = append(buf, del)
		buf = appendStr(buf, r.PartitionKey)
		buf = appendStr(buf, r.RowKey)
		if rc.Delete {
			continue
		}
		buf = appendStr(buf, r.ETag)
		buf = binary.AppendVarint(buf, r.Timestamp.Unix())
		buf = binary.AppendUvarint(buf, uint64(r.Timestamp.Nanosecond()))
		buf = binary.AppendUvarint(buf, uint64(len(r.Properties)))
		for _, p := range r.Properties {
			buf = appendStr(buf, p.Name)
			v := p.Value
			buf = append(buf, byte(v.Kind()))
			switch v.Kind() {
			case service.KindString, service.KindGuid:
				buf = appendStr(buf, v.Str())
			case service.KindBinary:
				buf = appendStr(buf, string(v.Bytes()))
			case service.KindBool:
				n := uint64(0)
				if v.Bool() {
					n = 1
				}
				buf = binary.AppendUvarint(buf, n)
			case service.KindInt32, service.KindInt64:
				buf = binary.AppendUvarint(buf, uint64(v.Int64()))
			case service.KindDouble:
				buf = binary.AppendUvarint(buf, math.Float64bits(v.Float()))
			case service.KindDateTime:
				buf = binary.AppendUvarint(buf, uint64(ticks(v.Time())))
			}
		}
	}
	return sealFrame(buf, start)
}

// sealFrame fills in the header of the frame that starts at buf[start].
func sealFrame(buf []byte, start int) []byte {
	payload := buf[start+frameHeader:]
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(payload, crcTable))
	return buf
}

// appendBlobChange appends what follows the kind byte of a change of containers and blobs.
func appendBlobChange(buf []byte, c *journal.Change) []byte {
	buf = appendStr(buf, c.Container)
	switch c.Kind {
	case journal.CreateContainer:
		buf = appendStr(buf, c.Props.ETag)
		buf = appendTime(buf, c.Props.LastModified)
	case journal.PutBlob:
		buf = appendStr(buf, c.Blob)
		buf = appendStr(buf, c.Props.ETag)
		buf = appendTime(buf, c.Props.LastModified)
		buf = appendStr(buf, c.Props.ContentType)
		buf = appendStr(buf, c.Props.ContentEncoding)
		buf = binary.AppendUvarint(buf, uint64(len(c.Metadata)))
		for _, name := range slices.Sorted(maps.Keys(c.Metadata)) {
			buf = appendStr(buf, name)
			buf = appendStr(buf, c.Metadata[name])
		}
		buf = appendAnnex(buf, c.Annex)
		buf = appendStr(buf, string(c.Data))
	case journal.DeleteBlob:
		buf = appendStr(buf, c.Blob)
		buf = appendAnnex(buf, c.Annex)
	case journal.StageBlock:
		buf = appendStr(buf, c.Blob)
		buf = appendStr(buf, c.BlockID)
		buf = appendStr(buf, string(c.Data))
	}
	return buf
}

func appendTime(buf []byte, t time.Time) []byte {
	buf = binary.AppendVarint(buf, t.Unix())
	return binary.AppendUvarint(buf, uint64(t.Nanosecond()))
}

func appendAnnex(buf, annex []byte) []byte {
	if annex == nil {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	return appendStr(buf, string(annex))
}

// appendRaw appends payload as a frame to buf.
func appendRaw(buf, payload []byte) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(payload)))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(payload, crcTable))
	return append(buf, payload...)
}

func appendStr(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// ticks is t in 100 ns ticks since the Unix epoch, as a DateTime value holds it.
func ticks(t time.Time) int64 {
	return t.Unix()*10_000_000 + int64(t.Nanosecond()/100)
}

// fromTicks is the inverse of ticks.
func fromTicks(n int64) time.Time {
	sec, rem := n/10_000_000, n%10_000_000
	if rem < 0 {
		sec, rem = sec-1, rem+10_000_000
	}
	return time.Unix(sec, rem*100).UTC()
}

var errBadPayload = errors.New("the record's content does not decode")

// decoder reads a payload.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *decoder) varint() int64 {
	n, k := binary.Varint(d.b)
	if k <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	return time.Unix(sec, int64(d.uvarint())).UTC()
}

// bytes reads a string as bytes, never nil.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad = true
		return []byte{}
	}
	b := slices.Clone(d.b[:n:n])
	if b == nil {
		b = []byte{}
	}
	d.b = d.b[n:]
	return b
}

func (d *decoder) annex() []byte {
	switch d.byte() {
	case 0:
		return nil
	case 1:
		return d.bytes()
	}
	d.bad = true
	return nil
}

// decodeBlobChange reads what follows the kind byte of a change of containers and blobs.
func decodeBlobChange(d *decoder, c *journal.Change) (*journal.Change, error) {
	c.Container = d.string()
	switch c.Kind {
	case journal.CreateContainer:
		c.Props.ETag = d.string()
		c.Props.LastModified = d.time()
	case journal.PutBlob:
		c.Blob = d.string()
		c.Props.ETag = d.string()
		c.Props.LastModified = d.time()
		c.Props.ContentType = d.string()
		c.Props.ContentEncoding = d.string()
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			return nil, errBadPayload
		}
		if n > 0 {
			c.Metadata = make(map[string]string, n)
			for range n {
				name := d.string()
				c.Metadata[name] = d.string()
			}
		}
		c.Annex = d.annex()
		c.Data = d.bytes()
		c.Props.ContentLength = int64(len(c.Data))
	case journal.DeleteBlob:
		c.Blob = d.string()
		c.Annex = d.annex()
	case journal.StageBlock:
		c.Blob = d.string()
		c.BlockID = d.string()
		c.Data = d.bytes()
	}
	if d.bad || len(d.b) != 0 {
		return nil, errBadPayload
	}
	return c, nil
}

// decodeChange reads one payload.
func decodeChange(payload []byte) (*journal.Change, error) {
	d := &decoder{b: payload}
	kind := journal.Kind(d.byte())
	if kind >= journal.CreateContainer && kind <= journal.StageBlock {
		return decodeBlobChange(d, &journal.Change{Kind: kind})
	}
	c := &journal.Change{Kind: kind, Table: d.string()}
	if c.Kind < journal.CreateTable || c.Kind > journal.Rows {
		return nil, errBadPayload
	}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return nil, errBadPayload
	}
	c.Rows = make([]journal.RowChange, n)
	for i := range c.Rows {
		rc := &c.Rows[i]
		rc.Delete = d.byte() == 1
		rc.Row.PartitionKey, rc.Row.RowKey = d.string(), d.string()
		if rc.Delete {
			continue
		}
		rc.Row.ETag = d.string()
		sec := d.varint()
		rc.Row.Timestamp = time.Unix(sec, int64(d.uvarint())).UTC()
		np := d.uvarint()
		if np > uint64(len(d.b)) {
			return nil, errBadPayload
		}
		props := make([]service.Property, np)
		for j := range props {
			props[j].Name = d.string()
			switch k := service.Kind(d.byte()); k {
			case service.KindString:
				props[j].Value = service.String(d.string())
			case service.KindGuid:
				v, err := service.ParseGuid(d.string())
				if err != nil {
					return nil, errBadPayload
				}
				props[j].Value = v
			case service.KindBinary:
				props[j].Value = service.Binary([]byte(d.string()))
			case service.KindBool:
				props[j].Value = service.Bool(d.uvarint() != 0)
			case service.KindInt32:
				props[j].Value = service.Int32(int32(int64(d.uvarint())))
			case service.KindInt64:
				props[j].Value = service.Int64(int64(d.uvarint()))
			case service.KindDouble:
				props[j].Value = service.Double(math.Float64frombits(d.uvarint()))
			case service.KindDateTime:
				props[j].Value = service.DateTime(fromTicks(int64(d.uvarint())))
			default:
				return nil, errBadPayload
			}
		}
		rc.Row.Properties = props
	}
	if d.bad || len(d.b) != 0 {
		return nil, errBadPayload
	}
	return c, nil
}
