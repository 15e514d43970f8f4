package odata

import (
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/service"
)

// tokenKind is the class of a lexical token.
type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokLParen
	tokRParen
	tokName    // a property name
	tokLiteral // a constant; token.lit holds it
	tokAnd
	tokOr
	tokNot
	tokEq
	tokNe
	tokGt
	tokGe
	tokLt
	tokLe
)

// keywords are the reserved words. They are matched case-sensitively, as the service
// documents ("all parts of the filter string are case-sensitive"), so "EQ" or "And" are
// property names, which then fail to parse where an operator is needed.
var keywords = map[string]tokenKind{
	"and": tokAnd,
	"or":  tokOr,
	"not": tokNot,
	"eq":  tokEq,
	"ne":  tokNe,
	"gt":  tokGt,
	"ge":  tokGe,
	"lt":  tokLt,
	"le":  tokLe,
}

// A token is one lexical element of a filter. pos and end are byte offsets into the filter.
type token struct {
	kind tokenKind
	pos  int
	end  int
	name string  // tokName
	lit  literal // tokLiteral
}

// lexer splits a filter into tokens on demand.
type lexer struct {
	src string
	pos int
}

func (l *lexer) errorf(pos int, msg string) error {
	return &SyntaxError{Offset: pos, Msg: msg}
}

// next returns the token that starts at or after l.pos.
func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && (l.src[l.pos] == ' ' || l.src[l.pos] == '\t') {
		l.pos++
	}
	start := l.pos
	if start == len(l.src) {
		return token{kind: tokEOF, pos: start, end: start}, nil
	}
	c := l.src[start]
	switch {
	case c == '(':
		l.pos++
		return token{kind: tokLParen, pos: start, end: l.pos}, nil
	case c == ')':
		l.pos++
		return token{kind: tokRParen, pos: start, end: l.pos}, nil
	case c == '\'':
		s, err := l.quoted(start)
		if err != nil {
			return token{}, err
		}
		return token{kind: tokLiteral, pos: start, end: l.pos, lit: literal{kind: service.KindString, s: s}}, nil
	case c == '-' || isDigit(c):
		return l.number(start)
	}
	r, size := utf8.DecodeRuneInString(l.src[start:])
	if isNameStart(r) {
		return l.word(start, size)
	}
	return token{}, l.errorf(start, "unexpected character "+strconv.QuoteRune(r))
}

// word lexes a name, a keyword, true/false, or a typed literal such as guid'…'; the name's
// first character, of size bytes, has been checked.
func (l *lexer) word(start, size int) (token, error) {
	l.pos += size
	for l.pos < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[l.pos:])
		if !isNameChar(r) {
			break
		}
		l.pos += size
	}
	w := l.src[start:l.pos]
	if l.pos < len(l.src) && l.src[l.pos] == '\'' {
		return l.typed(start, w)
	}
	if k, ok := keywords[w]; ok {
		return token{kind: k, pos: start, end: l.pos}, nil
	}
	switch w {
	case "true", "false":
		return token{kind: tokLiteral, pos: start, end: l.pos, lit: literal{kind: service.KindBool, b: w == "true"}}, nil
	case "null":
		// The service answers 400 for a null literal; Azurite reads it as a property name.
		return token{}, l.errorf(start, "the null literal is not supported")
	}
	return token{kind: tokName, pos: start, end: l.pos, name: w}, nil
}

// typed lexes a literal written as prefix'text': datetime, guid, X or binary.
func (l *lexer) typed(start int, prefix string) (token, error) {
	quote := l.pos
	end := strings.IndexByte(l.src[quote+1:], '\'')
	if end < 0 {
		return token{}, l.errorf(start, prefix+" literal has no closing quote")
	}
	text := l.src[quote+1 : quote+1+end]
	l.pos = quote + end + 2
	tok := token{kind: tokLiteral, pos: start, end: l.pos}
	switch prefix {
	case "datetime":
		t, err := service.ParseDateTime(text)
		if err != nil {
			return token{}, l.errorf(start, "malformed datetime literal: want yyyy-mm-ddThh:mm:ss with at most 7 fractional digits and Z or an offset")
		}
		tok.lit = literal{kind: service.KindDateTime, t: t}
	case "guid":
		g, err := service.ParseGuid(text)
		if err != nil {
			return token{}, l.errorf(start, "malformed guid literal: want 32 hex digits in groups 8-4-4-4-12")
		}
		tok.lit = literal{kind: service.KindGuid, s: g.Str()}
	case "X", "binary":
		if len(text)%2 != 0 {
			return token{}, l.errorf(start, "malformed binary literal: odd number of hex digits")
		}
		bs, err := hex.DecodeString(text)
		if err != nil {
			return token{}, l.errorf(start, "malformed binary literal: not hex")
		}
		tok.lit = literal{kind: service.KindBinary, bytes: bs}
	default:
		return token{}, l.errorf(start, "unknown literal prefix "+strconv.Quote(prefix))
	}
	return tok, nil
}

// quoted lexes a string literal starting at the quote at start; two quotes stand for one.
func (l *lexer) quoted(start int) (string, error) {
	var b strings.Builder
	i := start + 1
	from := i
	for {
		j := strings.IndexByte(l.src[i:], '\'')
		if j < 0 {
			return "", l.errorf(start, "string literal has no closing quote")
		}
		i += j
		if i+1 < len(l.src) && l.src[i+1] == '\'' {
			b.WriteString(l.src[from : i+1])
			i += 2
			from = i
			continue
		}
		l.pos = i + 1
		if b.Len() == 0 {
			return l.src[from:i], nil
		}
		b.WriteString(l.src[from:i])
		return b.String(), nil
	}
}

// number lexes an integer (Edm.Int32), an integer with the L suffix (Edm.Int64) or a
// number with a fraction or an exponent (Edm.Double), each with an optional leading '-'.
func (l *lexer) number(start int) (token, error) {
	i := start
	if l.src[i] == '-' {
		i++
	}
	digits := func() bool {
		from := i
		for i < len(l.src) && isDigit(l.src[i]) {
			i++
		}
		return i > from
	}
	if !digits() {
		return token{}, l.errorf(start, "malformed number: '-' must be followed by digits")
	}
	double := false
	if i < len(l.src) && l.src[i] == '.' {
		i++
		if !digits() {
			return token{}, l.errorf(start, "malformed number: digits must follow the decimal point")
		}
		double = true
	}
	if i < len(l.src) && (l.src[i] == 'e' || l.src[i] == 'E') {
		i++
		if i < len(l.src) && (l.src[i] == '+' || l.src[i] == '-') {
			i++
		}
		if !digits() {
			return token{}, l.errorf(start, "malformed number: digits must follow the exponent")
		}
		double = true
	}
	text := l.src[start:i]
	long := !double && i < len(l.src) && l.src[i] == 'L'
	if long {
		i++
	}
	if r, size := utf8.DecodeRuneInString(l.src[i:]); i < len(l.src) && (isNameChar(r) || r == '.' || r == '\'') {
		return token{}, l.errorf(start, "malformed number "+strconv.Quote(l.src[start:i+size]))
	}
	l.pos = i
	tok := token{kind: tokLiteral, pos: start, end: i}
	switch {
	case double:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return token{}, l.errorf(start, "double literal out of range")
		}
		tok.lit = literal{kind: service.KindDouble, f: f}
	case long:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return token{}, l.errorf(start, "Int64 literal out of range")
		}
		tok.lit = literal{kind: service.KindInt64, i: n}
	default:
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return token{}, l.errorf(start, "integer literal out of the Int32 range; an Int64 literal needs the L suffix")
		}
		tok.lit = literal{kind: service.KindInt32, i: n}
	}
	return tok, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isNameStart and isNameChar follow the C# identifier rules that property names obey: a
// letter (any script) or '_' first, then letters, decimal digits, combining marks and
// connector punctuation. The service accepts names such as "Größe".
func isNameStart(r rune) bool {
	return r == '_' || r < utf8.RuneSelf && ('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') ||
		r >= utf8.RuneSelf && unicode.IsLetter(r)
}

func isNameChar(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc)
}

// IsName reports whether s is a property name by these rules. It does not check the
// length, nor refuse the names reserved for system properties.
func IsName(s string) bool {
	// Most names are ASCII (every column the codec writes for a Go field is): check their
	// bytes by table without decoding runes, and decode only a name that has other
	// characters. A byte of a multi-byte character is 0 in the table, as is every byte
	// that is not a name's.
	if s == "" {
		return false
	}
	if asciiName[s[0]]&nameStart != 0 {
		i := 1
		for i < len(s) && asciiName[s[i]]&nameChar != 0 {
			i++
		}
		if i == len(s) {
			return true
		}
		if s[i] < utf8.RuneSelf {
			return false
		}
	} else if s[0] < utf8.RuneSelf {
		return false
	}
	return isNameByRunes(s)
}

// isNameByRunes is IsName decoding every rune: the rules themselves, which the ASCII table
// only shortens.
func isNameByRunes(s string) bool {
	for i, r := range s {
		if i == 0 && !isNameStart(r) || !isNameChar(r) {
			return false
		}
	}
	return s != ""
}

// The classes of an ASCII byte in a property name (asciiName).
const (
	nameStart = 1 << iota // a name may begin with it
	nameChar              // a name may hold it
)

// asciiName classes each ASCII byte by isNameStart and isNameChar; other bytes are 0.
var asciiName = func() (t [256]uint8) {
	for c := range rune(utf8.RuneSelf) {
		if isNameStart(c) {
			t[c] |= nameStart
		}
		if isNameChar(c) {
			t[c] |= nameChar
		}
	}
	return t
}()
