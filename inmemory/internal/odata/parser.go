package odata

import (
	"strconv"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/service"
)

// MaxComparisons is the most comparisons the service allows in one filter. Parse refuses a
// filter with more.
const MaxComparisons = 15

// maxDepth bounds the nesting of parentheses and not, so that a hostile filter cannot
// exhaust the stack. Real filters, limited to 15 comparisons, never come close.
const maxDepth = 100

// A Filter is a parsed $filter expression, safe for concurrent use by many goroutines.
type Filter struct {
	root        node
	comparisons int
}

// SyntaxError describes why Parse refused a filter. The in-memory service reports it as
// the service does: 400 InvalidInput.
type SyntaxError struct {
	// Offset is the byte offset in the filter where the problem was found.
	Offset int
	// Msg says what is wrong.
	Msg string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return "odata: invalid $filter at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Parse parses an OData $filter expression in the subset the table service accepts (see
// the package documentation). It returns a *SyntaxError for anything else, including an
// empty or all-blank filter (the caller skips Parse when there is no filter), the null
// literal, functions, keywords in the wrong case, comparisons between two properties or
// two literals, and more than MaxComparisons comparisons.
func Parse(filter string) (*Filter, error) {
	if !utf8.ValidString(filter) {
		off := 0
		for off < len(filter) {
			r, size := utf8.DecodeRuneInString(filter[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return nil, &SyntaxError{Offset: off, Msg: "filter is not valid UTF-8"}
	}
	p := &parser{lex: lexer{src: filter}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokEOF {
		return nil, &SyntaxError{Offset: 0, Msg: "empty filter"}
	}
	root, err := p.condition()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.unexpected("'and', 'or' or the end of the filter")
	}
	return &Filter{root: root, comparisons: p.comparisons}, nil
}

// Match reports whether the row satisfies the filter. It does not allocate.
func (f *Filter) Match(row *service.Row) bool { return f.root.eval(row) }

// Comparisons returns the number of comparison operators (eq, ne, gt, ge, lt, le) in the
// filter. A bare Boolean property is not counted.
func (f *Filter) Comparisons() int { return f.comparisons }

// parser is a recursive-descent parser with one token of lookahead. The grammar, loosest
// binding first:
//
//	condition  = conjunction { "or" conjunction }
//	conjunction = comparison { "and" comparison }
//	comparison = unary [ relop unary ]   (one side a property, the other a literal)
//	unary      = "not" unary | primary
//	primary    = "(" condition ")" | property | literal
//
// A unary that is not part of a comparison must be a condition: a parenthesised condition,
// a not, or a bare property (a Boolean test). Because not binds tighter than a comparison,
// "not X eq 1" compares "not X" with 1 and is refused; write "not (X eq 1)".
type parser struct {
	lex         lexer
	tok         token
	depth       int
	comparisons int
}

// term is the result of unary: a condition, or an operand still waiting to learn whether
// it is compared or tested.
type term struct {
	cond node     // a parenthesised condition or a not
	prop *propRef // a bare property
	lit  *literal // a bare literal
	pos  int
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errorf(pos int, msg string) error { return &SyntaxError{Offset: pos, Msg: msg} }

// unexpected reports the current token where something else was expected.
func (p *parser) unexpected(want string) error {
	if p.tok.kind == tokEOF {
		return p.errorf(p.tok.pos, "unexpected end of filter; expected "+want)
	}
	text := p.lex.src[p.tok.pos:p.tok.end]
	if len(text) > 40 {
		text = text[:40] + "…"
	}
	msg := "unexpected " + strconv.Quote(text) + "; expected " + want
	if p.tok.kind == tokName && p.tok.end < len(p.lex.src) && p.lex.src[p.tok.end] == '(' {
		msg = "functions such as " + strconv.Quote(text) + " are not supported"
	}
	return p.errorf(p.tok.pos, msg)
}

func (p *parser) condition() (node, error) {
	l, err := p.conjunction()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tokOr {
		if err := p.advance(); err != nil {
			return nil, err
		}
		r, err := p.conjunction()
		if err != nil {
			return nil, err
		}
		l = &orNode{l: l, r: r}
	}
	return l, nil
}

func (p *parser) conjunction() (node, error) {
	l, err := p.comparison()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tokAnd {
		if err := p.advance(); err != nil {
			return nil, err
		}
		r, err := p.comparison()
		if err != nil {
			return nil, err
		}
		l = &andNode{l: l, r: r}
	}
	return l, nil
}

func (p *parser) comparison() (node, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	if p.tok.kind < tokEq {
		return p.asCondition(left)
	}
	o := op(p.tok.kind - tokEq)
	opPos := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	right, err := p.unary()
	if err != nil {
		return nil, err
	}
	p.comparisons++
	if p.comparisons > MaxComparisons {
		return nil, p.errorf(opPos, "more than "+strconv.Itoa(MaxComparisons)+" comparisons; the service allows at most "+strconv.Itoa(MaxComparisons))
	}
	switch {
	case left.prop != nil && right.lit != nil:
		return &cmpNode{prop: *left.prop, op: o, lit: *right.lit}, nil
	case left.lit != nil && right.prop != nil:
		return &cmpNode{prop: *right.prop, op: o.flip(), lit: *left.lit}, nil
	case left.prop != nil && right.prop != nil:
		return nil, p.errorf(opPos, "cannot compare property "+left.prop.name+" with property "+right.prop.name+"; one side must be a literal")
	case left.lit != nil && right.lit != nil:
		return nil, p.errorf(opPos, "a comparison of two literals references no property")
	}
	return nil, p.errorf(opPos, "a comparison needs a property on one side and a literal on the other")
}

// asCondition turns a term that stands alone into a condition.
func (p *parser) asCondition(t term) (node, error) {
	switch {
	case t.cond != nil:
		return t.cond, nil
	case t.prop != nil:
		return &boolNode{prop: *t.prop}, nil
	}
	return nil, p.errorf(t.pos, "a literal is not a condition")
}

func (p *parser) unary() (term, error) {
	pos := p.tok.pos
	switch p.tok.kind {
	case tokNot:
		if err := p.enter(); err != nil {
			return term{}, err
		}
		if err := p.advance(); err != nil {
			return term{}, err
		}
		x, err := p.unary()
		if err != nil {
			return term{}, err
		}
		p.depth--
		c, err := p.asCondition(x)
		if err != nil {
			return term{}, err
		}
		return term{cond: &notNode{x: c}, pos: pos}, nil
	case tokLParen:
		if err := p.enter(); err != nil {
			return term{}, err
		}
		if err := p.advance(); err != nil {
			return term{}, err
		}
		c, err := p.condition()
		if err != nil {
			return term{}, err
		}
		if p.tok.kind != tokRParen {
			return term{}, p.unexpected("')'")
		}
		p.depth--
		if err := p.advance(); err != nil {
			return term{}, err
		}
		return term{cond: c, pos: pos}, nil
	case tokName:
		r := newPropRef(p.tok.name)
		if err := p.advance(); err != nil {
			return term{}, err
		}
		if p.tok.kind == tokLParen && p.tok.pos == pos+len(r.name) {
			return term{}, p.errorf(pos, "functions such as "+strconv.Quote(r.name)+" are not supported")
		}
		return term{prop: &r, pos: pos}, nil
	case tokLiteral:
		l := p.tok.lit
		if err := p.advance(); err != nil {
			return term{}, err
		}
		return term{lit: &l, pos: pos}, nil
	}
	return term{}, p.unexpected("a property, a literal, 'not' or '('")
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf(p.tok.pos, "nested more than "+strconv.Itoa(maxDepth)+" levels deep")
	}
	return nil
}
