package odata

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

// Binding strengths for printing, loosest first. A node is parenthesised only where the
// parser would otherwise read it differently, so the printed filter parses back to the same
// tree and is never nested deeper than the filter it came from.
const (
	precOr = iota + 1
	precAnd
	precCmp
	precNot
	precAtom
)

// String returns the filter in a normal form that Parse reads back to the same filter:
// literals on the right, literals in one spelling, parentheses only where needed. Logs and
// tests use it to show how a filter was read.
func (f *Filter) String() string {
	var b strings.Builder
	f.root.format(&b, precOr)
	return b.String()
}

// open writes "(" when a node of strength prec appears where strength need is required, and
// returns the matching closer.
func open(b *strings.Builder, prec, need int) string {
	if prec < need {
		b.WriteByte('(')
		return ")"
	}
	return ""
}

func (n *orNode) format(b *strings.Builder, need int) {
	closer := open(b, precOr, need)
	n.l.format(b, precOr)
	b.WriteString(" or ")
	n.r.format(b, precAnd)
	b.WriteString(closer)
}

func (n *andNode) format(b *strings.Builder, need int) {
	closer := open(b, precAnd, need)
	n.l.format(b, precAnd)
	b.WriteString(" and ")
	n.r.format(b, precCmp)
	b.WriteString(closer)
}

func (n *notNode) format(b *strings.Builder, need int) {
	closer := open(b, precNot, need)
	b.WriteString("not ")
	n.x.format(b, precNot)
	b.WriteString(closer)
}

func (n *boolNode) format(b *strings.Builder, _ int) { b.WriteString(n.prop.name) }

func (n *cmpNode) format(b *strings.Builder, need int) {
	closer := open(b, precCmp, need)
	b.WriteString(n.prop.name)
	b.WriteByte(' ')
	b.WriteString(opNames[n.op])
	b.WriteByte(' ')
	n.lit.format(b)
	b.WriteString(closer)
}

// format writes the literal in the one spelling String uses for its type.
func (l *literal) format(b *strings.Builder) {
	switch l.kind {
	case service.KindString:
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(l.s, "'", "''"))
		b.WriteByte('\'')
	case service.KindBinary:
		b.WriteString("X'")
		b.WriteString(hex.EncodeToString(l.bytes))
		b.WriteByte('\'')
	case service.KindBool:
		b.WriteString(strconv.FormatBool(l.b))
	case service.KindInt32:
		b.WriteString(strconv.FormatInt(l.i, 10))
	case service.KindInt64:
		b.WriteString(strconv.FormatInt(l.i, 10))
		b.WriteByte('L')
	case service.KindDouble:
		s := strconv.FormatFloat(l.f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0" // a double spelled as an integer would read back as Int32
		}
		b.WriteString(s)
	case service.KindDateTime:
		b.WriteString("datetime'")
		b.WriteString(service.FormatDateTime(l.t))
		b.WriteByte('\'')
	case service.KindGuid:
		b.WriteString("guid'")
		b.WriteString(l.s)
		b.WriteByte('\'')
	}
}
