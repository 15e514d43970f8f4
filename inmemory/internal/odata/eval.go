package odata

import (
	"bytes"
	"cmp"
	"math"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// literal is a constant of a filter, decoded once at parse time so that evaluation only
// compares.
type literal struct {
	kind  service.Kind
	s     string // String; Guid in canonical lower-case form
	bytes []byte // Binary
	b     bool   // Boolean
	i     int64  // Int32, Int64
	f     float64
	t     time.Time // DateTime, UTC
}

// op is a comparison operator.
type op uint8

const (
	opEq op = iota
	opNe
	opGt
	opGe
	opLt
	opLe
)

var opNames = [...]string{"eq", "ne", "gt", "ge", "lt", "le"}

// flip returns the operator that gives the same answer with the operands swapped, so that
// 'a' lt S is evaluated as S gt 'a'.
func (o op) flip() op {
	switch o {
	case opGt:
		return opLt
	case opGe:
		return opLe
	case opLt:
		return opGt
	case opLe:
		return opGe
	}
	return o
}

// holds reports whether the operator accepts a three-way comparison result c.
func (o op) holds(c int) bool {
	switch o {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opGt:
		return c > 0
	case opGe:
		return c >= 0
	case opLt:
		return c < 0
	default:
		return c <= 0
	}
}

// unordered is the answer for operands that have no order, such as NaN: only ne holds.
func (o op) unordered() bool { return o == opNe }

// sysProp says whether a property reference names a system property, which lives in a Row
// field rather than in Row.Properties.
type sysProp uint8

const (
	sysNone sysProp = iota
	sysPartitionKey
	sysRowKey
	sysTimestamp
)

// propRef is a property named in a filter.
type propRef struct {
	name string
	sys  sysProp
}

func newPropRef(name string) propRef {
	switch name {
	case "PartitionKey":
		return propRef{name: name, sys: sysPartitionKey}
	case "RowKey":
		return propRef{name: name, sys: sysRowKey}
	case "Timestamp":
		return propRef{name: name, sys: sysTimestamp}
	}
	return propRef{name: name}
}

// node is a condition of the parsed filter.
type node interface {
	eval(row *service.Row) bool
	format(b *strings.Builder, need int)
}

type orNode struct{ l, r node }
type andNode struct{ l, r node }
type notNode struct{ x node }

// boolNode is a bare property used as a condition.
type boolNode struct{ prop propRef }

// cmpNode is property op literal (a literal written on the left has been moved right and
// the operator flipped).
type cmpNode struct {
	prop propRef
	op   op
	lit  literal
}

func (n *orNode) eval(row *service.Row) bool  { return n.l.eval(row) || n.r.eval(row) }
func (n *andNode) eval(row *service.Row) bool { return n.l.eval(row) && n.r.eval(row) }
func (n *notNode) eval(row *service.Row) bool { return !n.x.eval(row) }

// eval is true only for a property that exists, is an Edm.Boolean and is true.
func (n *boolNode) eval(row *service.Row) bool {
	if n.prop.sys != sysNone {
		return false
	}
	v, ok := row.Get(n.prop.name)
	return ok && v.Kind() == service.KindBool && v.Bool()
}

func (n *cmpNode) eval(row *service.Row) bool {
	switch n.prop.sys {
	case sysPartitionKey:
		return n.str(row.PartitionKey)
	case sysRowKey:
		return n.str(row.RowKey)
	case sysTimestamp:
		// A row that did not come from the service has no Timestamp.
		if row.Timestamp.IsZero() {
			return false
		}
		return n.time(row.Timestamp.Truncate(100 * time.Nanosecond))
	}
	for i := range row.Properties {
		if p := &row.Properties[i]; p.Name == n.prop.name {
			return n.value(&p.Value)
		}
	}
	return false // an absent property satisfies no comparison, not even ne
}

func (n *cmpNode) str(s string) bool {
	if n.lit.kind != service.KindString {
		return n.mismatch()
	}
	return n.op.holds(service.CompareUTF16(s, n.lit.s))
}

func (n *cmpNode) time(t time.Time) bool {
	if n.lit.kind != service.KindDateTime {
		return n.mismatch()
	}
	return n.op.holds(t.Compare(n.lit.t))
}

// mismatch is the answer for a stored value whose type the literal's does not meet: the
// service compares it as less than the literal, so ne, lt and le hold and eq, gt and ge
// do not (see the package doc).
func (n *cmpNode) mismatch() bool { return n.op.holds(-1) }

// value compares a stored value with the literal. Values compare within their type, except
// that an Int64 value also takes an Int32 literal and a Double value an Int32 or Int64 one,
// by value; any other pairing is a mismatch.
func (n *cmpNode) value(v *service.Value) bool {
	lk := n.lit.kind
	switch v.Kind() {
	case service.KindString:
		return n.str(v.Str())
	case service.KindDateTime:
		return n.time(v.Time())
	case service.KindGuid:
		if lk != service.KindGuid {
			return n.mismatch()
		}
		// Both sides are canonical lower-case text, whose order is the order of the
		// bytes in text order.
		return n.op.holds(strings.Compare(v.Str(), n.lit.s))
	case service.KindBinary:
		if lk != service.KindBinary {
			return n.mismatch()
		}
		return n.op.holds(bytes.Compare(v.Bytes(), n.lit.bytes))
	case service.KindBool:
		if lk != service.KindBool {
			return n.mismatch()
		}
		return n.op.holds(cmpBool(v.Bool(), n.lit.b))
	case service.KindInt32:
		if lk != service.KindInt32 {
			return n.mismatch()
		}
		return n.op.holds(cmp.Compare(v.Int64(), n.lit.i))
	case service.KindInt64:
		if lk != service.KindInt32 && lk != service.KindInt64 {
			return n.mismatch()
		}
		return n.op.holds(cmp.Compare(v.Int64(), n.lit.i))
	case service.KindDouble:
		switch lk {
		case service.KindInt32, service.KindInt64:
			return n.doubleInt(v.Float(), n.lit.i)
		case service.KindDouble:
			a, b := v.Float(), n.lit.f
			if math.IsNaN(a) || math.IsNaN(b) {
				return n.op.unordered()
			}
			return n.op.holds(cmp.Compare(a, b))
		}
		return n.mismatch()
	}
	return n.mismatch()
}

// doubleInt compares a stored double with an integer literal exactly (no rounding of i to
// float64).
func (n *cmpNode) doubleInt(f float64, i int64) bool {
	if math.IsNaN(f) {
		return n.op.unordered()
	}
	return n.op.holds(-cmpIntFloat(i, f))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

// cmpIntFloat compares i with a non-NaN f without converting i to float64, which would
// round integers above 2^53.
func cmpIntFloat(i int64, f float64) int {
	const two63 = 1 << 63
	switch {
	case f >= two63:
		return -1
	case f < -two63:
		return 1
	}
	t := math.Trunc(f) // in [-2^63, 2^63), so it converts exactly
	if c := cmp.Compare(i, int64(t)); c != 0 {
		return c
	}
	return cmp.Compare(t, f) // the fraction decides
}
