package azservice

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Responses are decoded from the bytes the service sent, not from the SDK's Value fields:
// aztables decodes every response into a map[string]any and marshals it again, which turns
// the service's 5.0 (an unannotated whole Edm.Double) into 5, indistinguishable from an
// Int32. The raw body keeps the distinction.
//
// The decoder is a small scanner specialised for the service's flat entity objects. Each
// entity's text is converted to one string, and names and unescaped string values are
// substrings of it, so a row costs a handful of allocations.

// errSyntax reports a response body that is not the JSON the service sends.
var errSyntax = errors.New("azservice: malformed JSON in the service's response")

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
		t, err := parseDateTime(f.text)
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
		t, err := parseDateTime(f.text)
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

// parseDateTime reads a date-time of a response: the service's Edm.DateTime text
// (service.ParseDateTime), or, for a value an emulator echoes as another writer spelled it
// (more than seven fractional digits, say), any RFC 3339 time.
func parseDateTime(s string) (time.Time, error) {
	if t, err := service.ParseDateTime(s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
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

// plainStringByte marks the bytes a JSON string holds without any attention: printable
// ASCII other than the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// lexer scans JSON text held in a string or a byte slice.
type lexer[T string | []byte] struct {
	s T
	i int
}

func (l *lexer[T]) ws() {
	for l.i < len(l.s) {
		switch l.s[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return
		}
	}
}

func (l *lexer[T]) peek() byte {
	if l.i < len(l.s) {
		return l.s[l.i]
	}
	return 0
}

func (l *lexer[T]) eat(c byte) bool {
	if l.i < len(l.s) && l.s[l.i] == c {
		l.i++
		return true
	}
	return false
}

// end checks that only white space follows.
func (l *lexer[T]) end() error {
	l.ws()
	if l.i != len(l.s) {
		return errSyntax
	}
	return nil
}

// rawStr scans a string and returns the text between its quotes, still escaped, and
// whether it holds any escape or non-ASCII byte (that is, whether it needs decoding).
func (l *lexer[T]) rawStr() (T, bool, error) {
	var zero T
	if !l.eat('"') {
		return zero, false, errSyntax
	}
	start, special := l.i, false
	for l.i < len(l.s) {
		// Most bytes are plain; skip them in a tight loop.
		i, s := l.i, l.s
		for i < len(s) && plainStringByte[s[i]] {
			i++
		}
		if l.i = i; i == len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '"':
			raw := l.s[start:l.i]
			l.i++
			return raw, special, nil
		case c == '\\':
			special = true
			if i+1 >= len(s) {
				return zero, false, errSyntax
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				l.i += 2
			case 'u':
				if i+6 > len(s) || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) || !isHex(s[i+5]) {
					return zero, false, errSyntax
				}
				l.i += 6
			default:
				return zero, false, errSyntax
			}
		case c < 0x20:
			return zero, false, errSyntax
		case c >= utf8.RuneSelf:
			special = true
			l.i++
		default:
			l.i++
		}
	}
	return zero, false, errSyntax
}

// str scans a string and returns its decoded value. Unless the string has escapes or
// invalid UTF-8, the value is a substring of the input.
func (l *lexer[T]) str(buf *[]byte) (string, error) {
	raw, special, err := l.rawStr()
	if err != nil {
		return "", err
	}
	s := string(raw) // no copy: lexer[string] is the only one asking for values
	if !special {
		return s, nil
	}
	if strings.IndexByte(s, '\\') < 0 && utf8.ValidString(s) {
		return s, nil
	}
	return unescape(s, buf)
}

// scalar scans a member value: a string, number, true, false or null. It returns the
// token kind and, for strings and numbers, the text. Objects and arrays are not property
// values and are refused.
func (l *lexer[T]) scalar(buf *[]byte) (byte, string, error) {
	switch c := l.peek(); {
	case c == '"':
		s, err := l.str(buf)
		return '"', s, err
	case c == '-' || c >= '0' && c <= '9':
		start := l.i
		if err := l.number(); err != nil {
			return 0, "", err
		}
		return '0', string(l.s[start:l.i]), nil
	case c == 't':
		return 't', "", l.word("true")
	case c == 'f':
		return 'f', "", l.word("false")
	case c == 'n':
		return 'n', "", l.word("null")
	}
	return 0, "", fmt.Errorf("%w: a property value is not a string, number, boolean or null", errSyntax)
}

func (l *lexer[T]) word(w string) error {
	if len(l.s)-l.i < len(w) || string(l.s[l.i:l.i+len(w)]) != w {
		return errSyntax
	}
	l.i += len(w)
	return nil
}

// number scans a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (l *lexer[T]) number() error {
	l.eat('-')
	switch c := l.peek(); {
	case c == '0':
		l.i++
	case c >= '1' && c <= '9':
		l.digits()
	default:
		return errSyntax
	}
	if l.eat('.') {
		if l.digits() == 0 {
			return errSyntax
		}
	}
	if c := l.peek(); c == 'e' || c == 'E' {
		l.i++
		if c := l.peek(); c == '+' || c == '-' {
			l.i++
		}
		if l.digits() == 0 {
			return errSyntax
		}
	}
	return nil
}

func (l *lexer[T]) digits() int {
	start := l.i
	for l.i < len(l.s) && l.s[l.i] >= '0' && l.s[l.i] <= '9' {
		l.i++
	}
	return l.i - start
}

// skip scans over any JSON value.
func (l *lexer[T]) skip(depth int) error {
	if depth > 64 {
		return errSyntax
	}
	switch c := l.peek(); {
	case c == '"':
		_, _, err := l.rawStr()
		return err
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		l.i++
		l.ws()
		if l.eat(closing) {
			return nil
		}
		for {
			l.ws()
			if c == '{' {
				if _, _, err := l.rawStr(); err != nil {
					return err
				}
				l.ws()
				if !l.eat(':') {
					return errSyntax
				}
				l.ws()
			}
			if err := l.skip(depth + 1); err != nil {
				return err
			}
			l.ws()
			if l.eat(closing) {
				return nil
			}
			if !l.eat(',') {
				return errSyntax
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return l.number()
	case c == 't':
		return l.word("true")
	case c == 'f':
		return l.word("false")
	case c == 'n':
		return l.word("null")
	}
	return errSyntax
}

// unescape decodes the text of a JSON string (without its quotes) as encoding/json does:
// invalid UTF-8 and unpaired surrogates become U+FFFD.
func unescape(s string, buf *[]byte) (string, error) {
	b := (*buf)[:0]
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			if i+1 >= len(s) {
				return "", errSyntax
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i)
				if !ok {
					return "", errSyntax
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2, ok = hex4(s, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", errSyntax
			}
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	*buf = b
	return string(b), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
