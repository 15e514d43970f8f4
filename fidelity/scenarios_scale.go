package fidelity

import (
	"context"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// scaleScenarios are the store scenarios of bulk writes across partitions: transactions of
// different partitions sent concurrently, and what the error of a partly failed batch says.
func scaleScenarios() []Scenario {
	var out []Scenario
	for _, degree := range []int{1, 4} {
		out = append(out, Scenario{
			Name: fmt.Sprintf("scale/parallel-batch-one-partition-fails-degree-%d", degree),
			Run:  func(ctx context.Context, e *Env) { parallelBatchOnePartitionFails(ctx, e, degree) },
		})
	}
	return out
}

// parallelBatchOnePartitionFails: a batch over six partitions of 150 rows each (two
// transactions per partition) in which partition p2's second transaction creates a row that
// exists. Every other partition commits, p2 keeps its first transaction only, and the
// BatchError lists exactly that; the rows left behind (compared across backends) are exactly
// those. The outcome is the same whether the partitions go one after another or four at once.
func parallelBatchOnePartitionFails(ctx context.Context, e *Env, degree int) {
	s := storeOf[customerRow](e, &tables.Options{BatchParallelism: degree})
	e.OK("the row in the way", s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "p2|120"}, Name: "first"}))
	var batch []*customerRow
	for i := range 150 {
		for p := range 6 {
			batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|%03d", p, i)}, Name: fmt.Sprint(i)})
		}
	}
	err := s.CreateBatch(ctx, batch)
	e.Is("the batch fails on the existing row", err, abstractions.ErrDuplicateKey)
	var be *abstractions.BatchError
	if !errors.As(err, &be) {
		e.Fatalf("error %v is not a BatchError", err)
	}
	e.Equal("committed partitions", be.CommittedPartitions(), []string{"p0", "p1", "p3", "p4", "p5"})
	e.Equal("failed partitions", be.FailedPartitions(), []string{"p2"})
	for _, p := range be.Partitions {
		e.Observe("partition "+p.PartitionKey, fmt.Sprintf("committed=%d not=%d unknown=%d err=%s",
			len(p.Committed), len(p.NotCommitted), len(p.Unknown), describeError(p.Err)))
	}
	var se *abstractions.StoreError
	e.Equal("the failure names the existing row", errors.As(err, &se) && se.PartitionKey == "p2" && se.RowKey == "120", true)
	retry := be.Retry()
	e.Equal("rows to retry", len(retry), 50)
	inP2 := true
	for _, i := range retry {
		inP2 = inP2 && batch[i].ID[:3] == "p2|" && batch[i].UpdatedAt.IsZero()
	}
	e.Equal("they are p2's second transaction, untouched", inP2, true)
	for p := range 6 {
		n, err := s.Count(ctx, fmt.Sprint("p", p))
		e.OK("count", err)
		e.Observe(fmt.Sprint("rows in p", p), n)
	}
	got, err := s.One(ctx, "p2|120")
	e.OK("read the row in the way", err)
	e.Equal("the row in the way is unchanged", got.Name, "first")
	// Retrying what failed, without the row in the way, completes the batch.
	var again []*customerRow
	for _, i := range retry {
		if batch[i].ID != "p2|120" {
			again = append(again, batch[i])
		}
	}
	e.OK("retry the rest", s.CreateBatch(ctx, again))
	n, err := s.CountAll(ctx)
	e.OK("count all", err)
	e.Equal("every row stored", n, 6*150)
}
