package fidelity

import (
	"context"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// planScenarios assert the plan of each query shape the suite's store scenarios send, and
// that a store refusing table scans sends none.
var planScenarios = []Scenario{
	{
		Name: "store/query-plans",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[itemRow](e, nil)
			e.OK("seed", s.CreateBatch(ctx, items()))
			explain := func(name string, q abstractions.Query[itemRow], want string) {
				p, err := s.Explain(q)
				e.OK(name, err)
				e.Equal(name+": plan", p.Class, want)
				e.Observe(name, p.Class+" "+p.Filter)
			}
			explain("partition", abstractions.Query[itemRow]{Partition: "p"}, "partition_scan")
			explain("partition, take", abstractions.Query[itemRow]{Partition: "p", Take: 3}, "partition_scan")
			explain("partition, select", abstractions.Query[itemRow]{Partition: "p", Select: []abstractions.Selector[itemRow]{fName}}, "partition_scan")
			explain("partition, prefix", abstractions.Query[itemRow]{Partition: "p", RowKeyPrefix: "a"}, "row_range")
			explain("partition, prefix at the top", abstractions.Query[itemRow]{Partition: "p", RowKeyPrefix: "\uffff"}, "row_range")
			explain("partition, prefix, filter", abstractions.Query[itemRow]{Partition: "p", RowKeyPrefix: "a", Where: fName.Eq("carol")}, "row_range")
			for _, f := range supportedFilters() {
				explain("partition, "+f.name, abstractions.Query[itemRow]{Partition: "p", Where: f.f}, "partition_scan")
			}
			explain("no partition", abstractions.Query[itemRow]{}, "table_scan")
			explain("no partition, filter", abstractions.Query[itemRow]{Where: fName.Eq("carol")}, "table_scan")
			explain("no partition, or", abstractions.Query[itemRow]{Where: abstractions.Or(fName.Eq("alice"), fCount.Gt(30))}, "table_scan")

			// The plan is what the call runs: the filter Explain gives selects what Query returns.
			for _, q := range []abstractions.Query[itemRow]{{Partition: "p", RowKeyPrefix: "a"}, {Where: fName.Eq("carol")}} {
				got, err := s.Query(ctx, q)
				e.OK("query", err)
				e.Observe(fmt.Sprintf("rows of %+v", q.Partition+"/"+q.RowKeyPrefix), ids(got))
			}

			c, ct := countingStoreOf[itemRow](e)
			refusing, err := tables.For[itemRow](c.Account(), &tables.StoreOptions{Table: e.Table, TableScans: tables.RefuseTableScans})
			e.OK("refusing store", err)
			_, err = refusing.Query(ctx, abstractions.Query[itemRow]{Where: fName.Eq("carol")})
			e.Is("table scan refused", err, abstractions.ErrInvalidArgument)
			_, err = refusing.ListAll(ctx)
			e.Is("ListAll refused", err, abstractions.ErrInvalidArgument)
			_, err = refusing.Page(ctx, abstractions.Query[itemRow]{Where: abstractions.Or(fName.Eq("alice"), fCount.Gt(30))})
			e.Is("or refused", err, abstractions.ErrInvalidArgument)
			e.Equal("refusals sent nothing", ct.n.Load(), int64(0))
			got, err := refusing.Query(ctx, abstractions.Query[itemRow]{Partition: "p", Where: fName.Eq("carol")})
			e.OK("a bounded query runs", err)
			e.Observe("bounded", ids(got))
		},
	},
}
