package odata

import "github.com/unified-data/gotables/tables/service"

// PartitionKey returns the partition key every matching row has, when the filter requires
// one: a comparison PartitionKey eq 'value' at its top level or inside a top-level chain of
// and. A query with one reads only that partition's rows, which the memory service keeps
// together in key order.
func (f *Filter) PartitionKey() (string, bool) {
	if f == nil {
		return "", false
	}
	return partitionOf(f.root)
}

func partitionOf(n node) (string, bool) {
	switch n := n.(type) {
	case *andNode:
		if pk, ok := partitionOf(n.l); ok {
			return pk, true
		}
		return partitionOf(n.r)
	case *cmpNode:
		if n.prop.sys == sysPartitionKey && n.op == opEq && n.lit.kind == service.KindString {
			return n.lit.s, true
		}
	}
	return "", false
}

// RowKeyRange returns the bounds a filter puts on RowKey: the greatest of its comparisons
// RowKey ge, gt or eq 'value' and the least of RowKey le, lt or eq 'value', each at its top
// level or inside a top-level chain of and (ok false where there is none). No row outside
// [from, to] in the service's key order matches, so a query of one partition may start at
// from and stop past to; the rows between are still matched against the whole filter.
func (f *Filter) RowKeyRange() (from string, hasFrom bool, to string, hasTo bool) {
	if f == nil {
		return "", false, "", false
	}
	var walk func(n node)
	walk = func(n node) {
		switch n := n.(type) {
		case *andNode:
			walk(n.l)
			walk(n.r)
		case *cmpNode:
			if n.prop.sys != sysRowKey || n.lit.kind != service.KindString {
				return
			}
			v := n.lit.s
			if (n.op == opEq || n.op == opGe || n.op == opGt) && (!hasFrom || service.CompareUTF16(v, from) > 0) {
				from, hasFrom = v, true
			}
			if (n.op == opEq || n.op == opLe || n.op == opLt) && (!hasTo || service.CompareUTF16(v, to) < 0) {
				to, hasTo = v, true
			}
		}
	}
	walk(f.root)
	return from, hasFrom, to, hasTo
}
