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
