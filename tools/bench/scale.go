package bench

import (
	"context"
	"fmt"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/tables"
)

// bulkParts is the number of partitions of the bulk workloads (Config.BulkRows rows).
const bulkParts = 10

// bulkDegrees are the BatchParallelism settings the bulk workload compares.
var bulkDegrees = []int{1, 4, 8}

// bulkWorkloads upsert cfg.Sizes.BulkRows rows over 10 partitions through stores whose accounts send
// 1, 4 and 8 partitions' transactions at once, each beside the raw SDK sending the same
// transactions one after another. store returns a store of the benchmark table on an
// account with the given BatchParallelism.
func (s *sides) bulkWorkloads(cfg Config, store func(degree int) (*tables.Store[Order], error)) []workload {
	ops := max(3, cfg.Ops/40)
	rawRows := make([][]*rawOrder, cfg.Concurrency)
	libRows := make([][]*Order, cfg.Concurrency)
	for w := range cfg.Concurrency {
		for i := range cfg.Sizes.BulkRows {
			p := strconv.Itoa(i % bulkParts)
			libRows[w] = append(libRows[w], newOrder("bulklib"+p, rowKey(i), i))
			rawRows[w] = append(rawRows[w], newRawOrder("bulkraw"+p, rowKey(i), i))
		}
	}
	raw := func(ctx context.Context, w, _ int) error { return s.rawBatch(ctx, rawRows[w]) }
	var out []workload
	for _, d := range bulkDegrees {
		wl := workload{name: fmt.Sprintf("batch upsert %s rows / %d partitions, degree %d", thousands(cfg.Sizes.BulkRows), bulkParts, d), ops: ops, raw: raw}
		st, err := store(d)
		if err != nil {
			wl.library = func(context.Context, int, int) error { return err }
			out = append(out, wl)
			continue
		}
		wl.library = func(ctx context.Context, w, _ int) error {
			n, err := st.UpsertBatch(ctx, libRows[w])
			if err == nil && n != cfg.Sizes.BulkRows {
				err = fmt.Errorf("wrote %d rows, want %d", n, cfg.Sizes.BulkRows)
			}
			return err
		}
		out = append(out, wl)
	}
	return out
}

// thousands writes n with a comma between thousands, as the workload names do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// rawBatch upserts the rows with the SDK alone, partition after partition, in transactions
// of at most 100 sent one after another, as hand-written code does.
func (s *sides) rawBatch(ctx context.Context, rows []*rawOrder) error {
	byPartition := map[string][]aztables.TransactionAction{}
	var order []string
	now := s.now()
	for _, o := range rows {
		body, err := o.marshal(now)
		if err != nil {
			return err
		}
		if _, ok := byPartition[o.PartitionKey]; !ok {
			order = append(order, o.PartitionKey)
		}
		byPartition[o.PartitionKey] = append(byPartition[o.PartitionKey],
			aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: body})
	}
	for _, p := range order {
		actions := byPartition[p]
		for len(actions) > 0 {
			n := min(len(actions), txMax)
			if _, err := s.raw.SubmitTransaction(ctx, actions[:n], nil); err != nil {
				return err
			}
			actions = actions[n:]
		}
	}
	return nil
}
