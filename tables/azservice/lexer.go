package azservice

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON lexer for the service's responses (flat entity objects inside a "value"
// array), used by decode.go. It scans text held in a string or a byte slice without
// building a tree, and returns names and string values without escapes as substrings of
// its input.

// errSyntax reports a response body that is not the JSON the service sends.
var errSyntax = errors.New("azservice: malformed JSON in the service's response")

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
