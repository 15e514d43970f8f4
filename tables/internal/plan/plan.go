package plan

import (
	"strings"
)

// Class is how the service runs a query, from cheapest to dearest.
type Class uint8

// The classes of a query; see the package doc.
const (
	PointRead Class = iota
	RowRange
	PartitionScan
	Partitions
	TableScan
)

var classNames = [...]string{"point_read", "row_range", "partition_scan", "partitions", "table_scan"}

// String is the class's name as spans, metrics, logs and Explain spell it.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "table_scan"
}

// Plan is a query's class and the filter the service will run.
type Plan struct {
	Class  Class
	Filter string // the $filter text sent, "" for none
}

// Of classifies the query that sends filter.
func Of(filter string) Plan {
	p := Plan{Class: TableScan, Filter: filter}
	if strings.TrimSpace(filter) == "" {
		return p
	}
	n, ok := parse(filter)
	if !ok {
		return p
	}
	b := bounds(n)
	switch {
	case b.pk == anyPK:
		p.Class = TableScan
	case b.pk == rangePK || len(b.pks) != 1:
		p.Class = Partitions
	case b.rk == eqRK:
		p.Class = PointRead
	case b.rk == rangeRK:
		p.Class = RowRange
	default:
		p.Class = PartitionScan
	}
	return p
}

// Shape is the filter with every literal replaced by "?": the form of a query whatever
// its values.
func Shape(filter string) string {
	toks, ok := lex(filter)
	if !ok {
		return "(a filter that could not be read)"
	}
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && t.kind != tokClose && toks[i-1].kind != tokOpen {
			b.WriteByte(' ')
		}
		switch t.kind {
		case tokLiteral:
			b.WriteByte('?')
		default:
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// pkBound and rkBound say how far a filter bounds a key, from loosest to tightest.
type pkBound uint8

const (
	anyPK   pkBound = iota // no bound: every partition
	rangePK                // a range of partition keys
	setPK                  // the partitions in pks
)

type rkBound uint8

const (
	anyRK rkBound = iota
	rangeRK
	eqRK
)

type keyBounds struct {
	pk  pkBound
	pks []string
	rk  rkBound
}

// bounds is what a filter's tree bounds of the keys. It is conservative: a bound it cannot
// prove is no bound.
func bounds(n *node) keyBounds {
	switch n.op {
	case "and":
		a, b := bounds(n.l), bounds(n.r)
		out := keyBounds{pk: max(a.pk, b.pk), rk: max(a.rk, b.rk)}
		switch {
		case a.pk == setPK && b.pk == setPK:
			for _, p := range a.pks {
				for _, q := range b.pks {
					if p == q {
						out.pks = append(out.pks, p)
					}
				}
			}
		case a.pk == setPK:
			out.pks = a.pks
		case b.pk == setPK:
			out.pks = b.pks
		}
		return out
	case "or":
		a, b := bounds(n.l), bounds(n.r)
		out := keyBounds{pk: min(a.pk, b.pk), rk: min(a.rk, b.rk)}
		if out.pk == setPK {
			out.pks = append(append([]string{}, a.pks...), b.pks...)
			out.pks = dedupe(out.pks)
		}
		if out.rk == eqRK {
			// Two row keys: the service reads the range between them.
			out.rk = rangeRK
		}
		return out
	case "not":
		return keyBounds{}
	case "cmp":
		switch n.name {
		case "PartitionKey":
			switch n.cmp {
			case "eq":
				return keyBounds{pk: setPK, pks: []string{n.value}}
			case "lt", "le", "gt", "ge":
				return keyBounds{pk: rangePK}
			}
		case "RowKey":
			switch n.cmp {
			case "eq":
				return keyBounds{rk: eqRK}
			case "lt", "le", "gt", "ge":
				return keyBounds{rk: rangeRK}
			}
		}
	}
	return keyBounds{}
}

func dedupe(s []string) []string {
	out := s[:0]
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
