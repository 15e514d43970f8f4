package azservice

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Responses are decoded from the bytes the service sent, not from the SDK's Value fields:
// aztables decodes every response into a map[string]any and marshals it again, which turns
// the service's 5.0 (an unannotated whole Edm.Double) into 5, indistinguishable from an
// Int32. The raw body keeps the distinction.
//
// The decoder reads the service's flat entity objects with the scanner of lexer.go. Each
// entity's text is converted to one string, and names and unescaped string values are
// substrings of it, so a row costs a handful of allocations.

// rawField is a custom property as read, before its annotation is known.
type rawField struct {
	name string
	tok  byte   // '"' string, '0' number, 't' true, 'f' false
	text string // the decoded string, or the number literal
}

// annotation is a `name@odata.type` member.
type annotation struct{ name, edm string }

// entityDecoder decodes entity objects. Its scratch space is reused across the entities of
// one response; it is not safe for concurrent use.
type entityDecoder struct {
	fields []rawField
	annots []annotation
	buf    []byte
}

// decoders recycles decoders, and with them their scratch space.
var decoders = sync.Pool{New: func() any {
	return &entityDecoder{fields: make([]rawField, 0, 32), annots: make([]annotation, 0, 32)}
}}

func getDecoder() *entityDecoder { return decoders.Get().(*entityDecoder) }

// release returns d to the pool unless a huge entity made its scratch space huge, and
// drops the references to the last entity's text.
func (d *entityDecoder) release() {
	if cap(d.fields) > 1024 || cap(d.buf) > 64<<10 {
		return
	}
	clear(d.fields[:cap(d.fields)])
	clear(d.annots[:cap(d.annots)])
	decoders.Put(d)
}

// decodeEntity decodes one entity object into row.
func (d *entityDecoder) decodeEntity(src string, row *service.Row) error {
	l := lexer[string]{s: src}
	d.fields, d.annots = d.fields[:0], d.annots[:0]
	l.ws()
	if !l.eat('{') {
		return errSyntax
	}
	l.ws()
	if l.eat('}') {
		return l.end()
	}
	for {
		l.ws()
		key, err := l.str(&d.buf)
		if err != nil {
			return err
		}
		l.ws()
		if !l.eat(':') {
			return errSyntax
		}
		l.ws()
		f := rawField{name: key}
		if f.tok, f.text, err = l.scalar(&d.buf); err != nil {
			return err
		}
		if err := d.member(f, row); err != nil {
			return err
		}
		l.ws()
		if l.eat('}') {
			break
		}
		if !l.eat(',') {
			return errSyntax
		}
	}
	if err := l.end(); err != nil {
		return err
	}
	return d.resolve(row)
}

// member files one object member: a system property into the row, an annotation or a
// custom property into the scratch lists; everything else is metadata and is skipped.
func (d *entityDecoder) member(f rawField, row *service.Row) error {
	if f.tok == 'n' {
		// The service sends null for a selected property the row lacks: it has no value.
		return nil
	}
	key := f.name
	switch key {
	case keyPartitionKey, keyRowKey:
		if f.tok != '"' {
			return fmt.Errorf("%w: %s is not a string", errSyntax, key)
		}
		if key == keyPartitionKey {
			row.PartitionKey = f.text
		} else {
			row.RowKey = f.text
		}
		return nil
	case keyTimestamp:
		t, err := service.ReadDateTime(f.text)
		if f.tok != '"' || err != nil {
			return fmt.Errorf("%w: Timestamp %q is not a date-time", errSyntax, f.text)
		}
		row.Timestamp = t
		return nil
	case "odata.etag":
		row.ETag = f.text
		return nil
	}
	if strings.HasPrefix(key, "odata.") {
		return nil
	}
	if at := strings.Index(key, "@odata."); at >= 0 {
		if key[at:] == odataType && f.tok == '"' {
			d.annots = append(d.annots, annotation{name: key[:at], edm: f.text})
		}
		return nil
	}
	d.fields = append(d.fields, f)
	return nil
}

// resolve turns the scratch fields into the row's properties, typed by their annotations.
func (d *entityDecoder) resolve(row *service.Row) error {
	if len(d.fields) == 0 {
		row.Properties = nil
		return nil
	}
	props := make([]service.Property, len(d.fields))
	hint := 0 // annotations usually come in property order
	for i := range d.fields {
		f := &d.fields[i]
		edm := ""
		for j := 0; j < len(d.annots); j++ {
			k := (hint + j) % len(d.annots)
			if d.annots[k].name == f.name {
				edm = d.annots[k].edm
				hint = k + 1
				break
			}
		}
		v, err := fieldValue(f, edm)
		if err != nil {
			return err
		}
		props[i] = service.Property{Name: f.name, Value: v}
	}
	row.Properties = props
	return nil
}

// fieldValue types one property: by its annotation, or, without one, by its JSON token (a
// number is Int32 when it is an integer literal in range, Double otherwise).
func fieldValue(f *rawField, edm string) (service.Value, error) {
	bad := func() (service.Value, error) {
		t := edm
		if t == "" {
			t = "untyped"
		}
		return service.Value{}, fmt.Errorf("%w: property %q holds %q, which is not a valid %s value",
			abstractions.ErrIntegrity, f.name, f.text, t)
	}
	switch edm {
	case "":
		switch f.tok {
		case '"':
			return service.String(f.text), nil
		case 't', 'f':
			return service.Bool(f.tok == 't'), nil
		}
		if n, ok := parseInt32(f.text); ok {
			return service.Int32(n), nil
		}
		x, err := strconv.ParseFloat(f.text, 64)
		if err != nil {
			return bad()
		}
		return service.Double(x), nil
	case "Edm.String":
		if f.tok != '"' {
			return bad()
		}
		return service.String(f.text), nil
	case "Edm.Boolean":
		switch {
		case f.tok == 't' || f.tok == '"' && f.text == "true":
			return service.Bool(true), nil
		case f.tok == 'f' || f.tok == '"' && f.text == "false":
			return service.Bool(false), nil
		}
		return bad()
	case "Edm.Int32":
		if n, ok := parseInt32(f.text); ok && f.tok != 't' && f.tok != 'f' {
			return service.Int32(n), nil
		}
		return bad()
	case "Edm.Int64":
		if f.tok != '"' && f.tok != '0' {
			return bad()
		}
		n, err := strconv.ParseInt(f.text, 10, 64)
		if err != nil {
			return bad()
		}
		return service.Int64(n), nil
	case "Edm.Double":
		if f.tok == '"' {
			switch f.text {
			case "NaN":
				return service.Double(math.NaN()), nil
			case "Infinity", "INF":
				return service.Double(math.Inf(1)), nil
			case "-Infinity", "-INF":
				return service.Double(math.Inf(-1)), nil
			}
		} else if f.tok != '0' {
			return bad()
		}
		x, err := strconv.ParseFloat(f.text, 64)
		if err != nil {
			return bad()
		}
		return service.Double(x), nil
	case "Edm.DateTime":
		t, err := service.ReadDateTime(f.text)
		if f.tok != '"' || err != nil {
			return bad()
		}
		return service.DateTime(t), nil
	case "Edm.Guid":
		if f.tok != '"' {
			return bad()
		}
		v, err := service.ParseGuid(f.text)
		if err != nil {
			return bad()
		}
		return v, nil
	case "Edm.Binary":
		if f.tok != '"' {
			return bad()
		}
		b, err := base64.StdEncoding.DecodeString(f.text)
		if err != nil {
			return bad()
		}
		return service.BinaryNoCopy(b), nil
	}
	return service.Value{}, fmt.Errorf("%w: property %q has the unknown type %q", abstractions.ErrIntegrity, f.name, edm)
}

// parseInt32 parses a JSON integer literal (no fraction or exponent) that fits in 32 bits.
func parseInt32(s string) (int32, bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		neg, i = true, 1
	}
	if i == len(s) || len(s)-i > 10 {
		return 0, false
	}
	var n int64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

// decodeEntityBody decodes a single-entity response body (GetEntity).
func decodeEntityBody(body []byte) (service.Row, error) {
	d := getDecoder()
	defer d.release()
	var row service.Row
	err := d.decodeEntity(string(body), &row)
	return row, err
}

// decodeEntityList decodes a query response body: an object whose "value" member is the
// array of entities. Other members are metadata.
func decodeEntityList(body []byte, sizeHint int) ([]service.Row, error) {
	l := lexer[[]byte]{s: body}
	d := getDecoder()
	defer d.release()
	var rows []service.Row
	l.ws()
	if !l.eat('{') {
		return nil, errSyntax
	}
	l.ws()
	if l.eat('}') {
		return nil, l.end()
	}
	for {
		l.ws()
		key, escaped, err := l.rawStr()
		if err != nil {
			return nil, err
		}
		l.ws()
		if !l.eat(':') {
			return nil, errSyntax
		}
		l.ws()
		if !escaped && string(key) == "value" && l.peek() == '[' {
			l.i++
			l.ws()
			if !l.eat(']') {
				rows = make([]service.Row, 0, max(sizeHint, 0))
				for {
					l.ws()
					start := l.i
					if err := l.skip(0); err != nil {
						return nil, err
					}
					rows = append(rows, service.Row{})
					if err := d.decodeEntity(string(body[start:l.i]), &rows[len(rows)-1]); err != nil {
						return nil, err
					}
					l.ws()
					if l.eat(']') {
						break
					}
					if !l.eat(',') {
						return nil, errSyntax
					}
				}
			}
		} else if err := l.skip(0); err != nil {
			return nil, err
		}
		l.ws()
		if l.eat('}') {
			break
		}
		if !l.eat(',') {
			return nil, errSyntax
		}
	}
	return rows, l.end()
}
