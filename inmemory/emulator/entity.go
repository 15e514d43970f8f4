package emulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

// An entity body as read: the keys (when present, and strings) and the custom properties.
type entityBody struct {
	pk, rk         string
	hasPK, hasRK   bool
	props          []service.Property
	tableName      string // the TableName of a Create Table body
	hasTableName   bool
	keysNotStrings bool
}

// field is one member of the body's object before its annotation is known.
type field struct {
	name string
	tok  json.Token // string, json.Number, bool, or nil
}

// decodeEntity reads a JSON entity body: one flat object whose members are properties,
// "name@odata.type" annotations, and odata.* members (which the service ignores, as it
// ignores Timestamp). A member given twice, a nested object or array, an annotation that is
// not one of the eight table types, or a value that is not text of its type fails with 400
// InvalidInput. A null is no value, as the service drops it. An unannotated number is
// Edm.Int32 when it is an integer literal (which must fit) and Edm.Double otherwise.
func decodeEntity(body []byte) (entityBody, error) {
	var e entityBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return e, errBadInput()
	}
	var fields []field
	annots := make(map[string]string)
	seen := make(map[string]bool)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return e, errBadInput()
		}
		name, _ := t.(string)
		if seen[name] {
			return e, errBadInput()
		}
		seen[name] = true
		v, err := dec.Token()
		if err != nil {
			return e, errBadInput()
		}
		if _, ok := v.(json.Delim); ok {
			return e, errBadInput()
		}
		switch {
		case strings.HasSuffix(name, "@odata.type"):
			s, ok := v.(string)
			if !ok {
				return e, errBadInput()
			}
			annots[strings.TrimSuffix(name, "@odata.type")] = s
		case strings.HasPrefix(name, "odata."):
		default:
			fields = append(fields, field{name, v})
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return e, errBadInput()
	}
	if _, err := dec.Token(); err != io.EOF {
		return e, errBadInput()
	}
	for _, f := range fields {
		switch f.name {
		case "PartitionKey", "RowKey":
			s, ok := f.tok.(string)
			switch {
			case !ok && f.tok != nil:
				e.keysNotStrings = true
			case f.name == "PartitionKey" && ok:
				e.pk, e.hasPK = s, true
			case ok:
				e.rk, e.hasRK = s, true
			}
			continue
		case "Timestamp":
			continue
		case "TableName":
			// The property of a Create Table body; in an entity, a custom property.
			e.tableName, e.hasTableName = f.tok.(string)
		}
		if f.tok == nil {
			continue
		}
		v, err := decodeValue(f.tok, annots[f.name])
		if err != nil {
			return e, err
		}
		e.props = append(e.props, service.Property{Name: f.name, Value: v})
	}
	return e, nil
}

// decodeValue reads one property value of the given annotation ("" for none).
func decodeValue(tok json.Token, edm string) (service.Value, error) {
	switch v := tok.(type) {
	case bool:
		if edm == "" || edm == "Edm.Boolean" {
			return service.Bool(v), nil
		}
	case json.Number:
		switch edm {
		case "":
			if !strings.ContainsAny(string(v), ".eE") {
				n, err := strconv.ParseInt(string(v), 10, 32)
				if err != nil {
					return service.Value{}, errBadInput()
				}
				return service.Int32(int32(n)), nil
			}
			return parseDouble(string(v))
		case "Edm.Double":
			return parseDouble(string(v))
		case "Edm.Int32":
			n, err := strconv.ParseInt(string(v), 10, 32)
			if err == nil {
				return service.Int32(int32(n)), nil
			}
		}
	case string:
		// The service reads a typed value from JSON text as well: a Boolean as true or
		// false in any case, an Int32 as its digits (Azure Storage Explorer writes both
		// so; Azure/Azurite#1259, #1947), and a DateTime without a zone as UTC
		// (Azure/Azurite#746).
		switch edm {
		case "", "Edm.String":
			return service.String(v), nil
		case "Edm.Boolean":
			switch {
			case strings.EqualFold(v, "true"):
				return service.Bool(true), nil
			case strings.EqualFold(v, "false"):
				return service.Bool(false), nil
			}
		case "Edm.Int32":
			n, err := strconv.ParseInt(v, 10, 32)
			if err == nil {
				return service.Int32(int32(n)), nil
			}
		case "Edm.Int64":
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				return service.Int64(n), nil
			}
		case "Edm.Binary":
			b, err := base64.StdEncoding.DecodeString(v)
			if err == nil {
				return service.BinaryNoCopy(b), nil
			}
		case "Edm.DateTime":
			t, err := service.ParseDateTime(v)
			if err != nil {
				t, err = service.ParseDateTime(v + "Z")
			}
			if err == nil {
				return service.DateTime(t), nil
			}
		case "Edm.Guid":
			g, err := service.ParseGuid(v)
			if err == nil {
				return g, nil
			}
		case "Edm.Double":
			switch v {
			case "NaN":
				return service.Double(math.NaN()), nil
			case "Infinity":
				return service.Double(math.Inf(1)), nil
			case "-Infinity":
				return service.Double(math.Inf(-1)), nil
			}
			return parseDouble(v)
		}
	}
	return service.Value{}, errBadInput()
}

func parseDouble(s string) (service.Value, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return service.Value{}, errBadInput()
	}
	return service.Double(f), nil
}

// An entityWriter writes rows as JSON at one metadata level.
type entityWriter struct {
	level metadata
	base  string // the account's URL, for full metadata's odata.id
	table string
	sel   []string // the $select list; nil for every property
}

// object writes the members of one JSON object.
type object struct {
	b     []byte
	first bool
}

// member starts a member: the comma before it, its name and the colon.
func (o *object) member(name string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = appendString(o.b, name)
	o.b = append(o.b, ':')
}

// str writes a member whose value is a string.
func (o *object) str(name, v string) {
	o.member(name)
	o.b = appendString(o.b, v)
}

// appendRow appends row as one JSON object. extra members (name, value pairs of strings,
// such as odata.metadata of a single entity) come first.
func (ew *entityWriter) appendRow(b []byte, row *service.Row, extra ...string) []byte {
	o := &object{b: append(b, '{'), first: true}
	for i := 0; i+1 < len(extra); i += 2 {
		o.str(extra[i], extra[i+1])
	}
	if ew.level != noMetadata {
		o.str("odata.etag", row.ETag)
	}
	if ew.level == fullMetadata {
		link := entityLink(ew.table, row.PartitionKey, row.RowKey)
		o.str("odata.type", ew.accountName()+"."+ew.table)
		o.str("odata.id", ew.base+"/"+link)
		o.str("odata.editLink", link)
	}
	if ew.selected("PartitionKey") {
		o.str("PartitionKey", row.PartitionKey)
	}
	if ew.selected("RowKey") {
		o.str("RowKey", row.RowKey)
	}
	if ew.selected("Timestamp") {
		if ew.level == fullMetadata {
			o.str("Timestamp@odata.type", "Edm.DateTime")
		}
		o.str("Timestamp", service.FormatDateTime(row.Timestamp))
	}
	if ew.sel == nil {
		for _, p := range row.Properties {
			ew.appendProperty(o, p.Name, p.Value)
		}
		return append(o.b, '}')
	}
	// A selected property the row lacks is null, as the service answers.
	for _, name := range ew.sel {
		if name == "PartitionKey" || name == "RowKey" || name == "Timestamp" {
			continue
		}
		v, ok := row.Get(name)
		if !ok {
			o.member(name)
			o.b = append(o.b, "null"...)
			continue
		}
		ew.appendProperty(o, name, v)
	}
	return append(o.b, '}')
}

func (ew *entityWriter) accountName() string {
	return ew.base[strings.LastIndexByte(ew.base, '/')+1:]
}

func (ew *entityWriter) selected(name string) bool {
	return ew.sel == nil || slices.Contains(ew.sel, name)
}

// appendProperty writes one property with, at minimal and full metadata, the annotation of
// a type JSON cannot tell (Int64, Binary, DateTime, Guid, and a Double written as text).
func (ew *entityWriter) appendProperty(o *object, name string, v service.Value) {
	annotated := func(edm, text string) {
		if ew.level != noMetadata {
			o.str(name+"@odata.type", edm)
		}
		o.str(name, text)
	}
	switch v.Kind() {
	case service.KindString:
		o.str(name, v.Str())
	case service.KindBool:
		o.member(name)
		o.b = strconv.AppendBool(o.b, v.Bool())
	case service.KindInt32:
		o.member(name)
		o.b = strconv.AppendInt(o.b, int64(v.Int32()), 10)
	case service.KindInt64:
		annotated("Edm.Int64", strconv.FormatInt(v.Int64(), 10))
	case service.KindDouble:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			annotated("Edm.Double", "NaN")
		case math.IsInf(f, 1):
			annotated("Edm.Double", "Infinity")
		case math.IsInf(f, -1):
			annotated("Edm.Double", "-Infinity")
		default:
			o.member(name)
			o.b = appendDouble(o.b, f)
		}
	case service.KindDateTime:
		annotated("Edm.DateTime", service.FormatDateTime(v.Time()))
	case service.KindGuid:
		annotated("Edm.Guid", v.Str())
	case service.KindBinary:
		annotated("Edm.Binary", base64.StdEncoding.EncodeToString(v.Bytes()))
	}
}

// appendDouble writes a finite double so that it reads back as a double: a whole number
// keeps a ".0", as the service writes it.
func appendDouble(b []byte, f float64) []byte {
	abs := math.Abs(f)
	start := len(b)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
	} else {
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	if !bytes.ContainsAny(b[start:], ".e") {
		b = append(b, ".0"...)
	}
	return b
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// quoteKey writes a key as an OData literal in a URL path: quoted, quotes doubled, escaped.
func quoteKey(k string) string {
	return "'" + strings.ReplaceAll(url.PathEscape(k), "'", "''") + "'"
}
