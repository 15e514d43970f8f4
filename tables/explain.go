package tables

import (
	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/plan"
)

// TableScanPolicy is what a store does with a query that bounds no partition, which the
// service answers by reading every row of the table (a table scan): a filter on other
// columns only, a row-key condition without a partition, an or that reaches beyond one
// partition. The zero policy, the default, sends a table scan and logs it once per query
// shape (its filter with the values left out) at Warn, with the call site; ListAll and
// CountAll, which name the whole table themselves, are not logged.
type TableScanPolicy uint8

// The table-scan policies other than the zero one.
const (
	// AllowTableScans sends table scans without a word.
	AllowTableScans TableScanPolicy = iota + 1
	// RefuseTableScans refuses every table scan, ListAll and CountAll included, with an
	// error matching abstractions.ErrInvalidArgument that names the query and how to bound
	// it; nothing is sent.
	RefuseTableScans
)

// QueryPlan is how the table service runs a query, as Explain returns it.
type QueryPlan struct {
	// Class is the query's class, the value of the azure.tables.query.plan attribute on
	// its span and duration: "point_read" (one row by its keys), "row_range" (a range of
	// row keys of one partition), "partition_scan" (every row of one partition, filtered
	// when there is a filter), "partitions" (several partitions, each scanned) or
	// "table_scan" (no bound on the partition: every row of the table).
	Class string
	// Filter is the $filter text the query sends, "" for none. It holds the query's values.
	Filter string
}

// Explain returns the plan of q without sending anything: the filter a Query, Stream, Any
// or Page of q sends and how the service runs it. A query those calls would refuse is
// refused the same way; the store's table-scan policy is not applied.
func (s *Store[T]) Explain(q abstractions.Query[T]) (QueryPlan, error) {
	p, err := s.prepareQuery("explain", &q)
	if err != nil {
		return QueryPlan{}, err
	}
	return QueryPlan{Class: plan.Of(p.Filter).Class.String(), Filter: p.Filter}, nil
}

// scanPolicy is the engine's form of the policy of a store: its own, else the account's.
func scanPolicy(account, store TableScanPolicy) engine.ScanPolicy {
	if store != 0 {
		return engine.ScanPolicy(store)
	}
	return engine.ScanPolicy(account)
}
