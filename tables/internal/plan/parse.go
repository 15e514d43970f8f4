package plan

import "strings"

// The filter language read here is the service's: comparisons of a property with a
// literal (name op literal, or literal op name), joined by and, or and not, in
// parentheses, and bare Boolean properties.

type tokKind uint8

const (
	tokName tokKind = iota
	tokLiteral
	tokOpen
	tokClose
)

type token struct {
	kind tokKind
	text string // a literal's text as written; for a quoted string, value holds its value
	val  string
}

// lex splits a filter into tokens; ok is false for text it cannot read.
func lex(s string) ([]token, bool) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			out = append(out, token{kind: tokOpen, text: "("})
			i++
		case c == ')':
			out = append(out, token{kind: tokClose, text: ")"})
			i++
		case c == '\'':
			v, n, ok := quoted(s[i:])
			if !ok {
				return nil, false
			}
			out = append(out, token{kind: tokLiteral, text: s[i : i+n], val: v})
			i += n
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n()'", rune(s[j])) {
				j++
			}
			word := s[i:j]
			if j < len(s) && s[j] == '\'' {
				// A typed literal: datetime'…', guid'…', X'…', binary'…'.
				_, n, ok := quoted(s[j:])
				if !ok {
					return nil, false
				}
				out = append(out, token{kind: tokLiteral, text: s[i : j+n]})
				i = j + n
				continue
			}
			if isLiteralWord(word) {
				out = append(out, token{kind: tokLiteral, text: word})
			} else {
				out = append(out, token{kind: tokName, text: word})
			}
			i = j
		}
	}
	return out, true
}

// quoted reads a quoted string at the start of s (” is a quote inside it): its value and
// the length of its text.
func quoted(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

func isLiteralWord(w string) bool {
	if w == "true" || w == "false" {
		return true
	}
	return w != "" && (w[0] == '-' || w[0] == '+' || w[0] == '.' || (w[0] >= '0' && w[0] <= '9'))
}

// node is a filter's tree: op is "and", "or", "not", "cmp" (name cmp value) or "bool" (a
// bare property).
type node struct {
	op    string
	l, r  *node
	name  string
	cmp   string
	value string // a quoted string's value
}

type parser struct {
	toks []token
	i    int
}

func parse(s string) (*node, bool) {
	toks, ok := lex(s)
	if !ok {
		return nil, false
	}
	p := &parser{toks: toks}
	n, ok := p.or()
	return n, ok && p.i == len(p.toks)
}

func (p *parser) peekWord(w string) bool {
	return p.i < len(p.toks) && p.toks[p.i].kind == tokName && strings.EqualFold(p.toks[p.i].text, w)
}

func (p *parser) or() (*node, bool) {
	l, ok := p.and()
	for ok && p.peekWord("or") {
		p.i++
		var r *node
		r, ok = p.and()
		l = &node{op: "or", l: l, r: r}
	}
	return l, ok
}

func (p *parser) and() (*node, bool) {
	l, ok := p.unary()
	for ok && p.peekWord("and") {
		p.i++
		var r *node
		r, ok = p.unary()
		l = &node{op: "and", l: l, r: r}
	}
	return l, ok
}

var comparisons = map[string]bool{"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true}

// flipped is the comparison with its operands swapped (literal op name).
var flipped = map[string]string{"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}

func (p *parser) unary() (*node, bool) {
	if p.i >= len(p.toks) {
		return nil, false
	}
	if p.peekWord("not") {
		p.i++
		n, ok := p.unary()
		return &node{op: "not", l: n}, ok
	}
	t := p.toks[p.i]
	if t.kind == tokOpen {
		p.i++
		n, ok := p.or()
		if !ok || p.i >= len(p.toks) || p.toks[p.i].kind != tokClose {
			return nil, false
		}
		p.i++
		return n, true
	}
	if p.i+2 < len(p.toks) && p.toks[p.i+1].kind == tokName && comparisons[strings.ToLower(p.toks[p.i+1].text)] {
		a, op, b := t, strings.ToLower(p.toks[p.i+1].text), p.toks[p.i+2]
		p.i += 3
		switch {
		case a.kind == tokName && b.kind == tokLiteral:
			return &node{op: "cmp", name: a.text, cmp: op, value: b.val}, true
		case a.kind == tokLiteral && b.kind == tokName:
			return &node{op: "cmp", name: b.text, cmp: flipped[op], value: a.val}, true
		}
		// Two properties, or two literals: no bound on a key.
		return &node{op: "cmp"}, true
	}
	if t.kind == tokName {
		p.i++
		return &node{op: "bool", name: t.text}, true
	}
	return nil, false
}

// Comparisons counts the comparisons of a filter, as the service counts them toward its
// limit of 15; -1 for text it cannot read.
func Comparisons(filter string) int {
	toks, ok := lex(filter)
	if !ok {
		return -1
	}
	n := 0
	for _, t := range toks {
		if t.kind == tokName {
			switch t.text {
			case "eq", "ne", "lt", "le", "gt", "ge":
				n++
			}
		}
	}
	return n
}
