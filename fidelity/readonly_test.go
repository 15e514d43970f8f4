package fidelity

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/unified-data/gotables/tables/service"
)

// readOnlyCheck wraps the suite's memory service, whose reads share the stored rows'
// property lists (memservice.WithSharedReads), and checks the promise that makes that safe:
// nothing above the service (the engine, the stores, the scenarios) changes a row it read.
// It keeps each row it hands out with a copy of its properties; verify reports any whose
// shared list no longer equals its copy.
type readOnlyCheck struct {
	service.Tables
	mu   sync.Mutex
	seen []sharedRow
	lost int // rows not kept, past maxKept
}

type sharedRow struct {
	table, pk, rk string
	shared, copy  []service.Property
}

// maxKept bounds the rows the check keeps (the suite reads fewer).
const maxKept = 1 << 20

func (c *readOnlyCheck) keep(table string, rows ...service.Row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rows {
		if len(r.Properties) == 0 {
			continue
		}
		if len(c.seen) == maxKept {
			c.lost++
			continue
		}
		c.seen = append(c.seen, sharedRow{table, r.PartitionKey, r.RowKey, r.Properties, slices.Clone(r.Properties)})
	}
}

func (c *readOnlyCheck) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	r, err := c.Tables.GetRow(ctx, table, pk, rk, sel)
	if err == nil {
		c.keep(table, r)
	}
	return r, err
}

func (c *readOnlyCheck) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	p, err := c.Tables.Query(ctx, table, q)
	if err == nil {
		c.keep(table, p.Rows...)
	}
	return p, err
}

// verify returns an error naming the first rows whose properties changed after they were
// read, and how many rows it checked.
func (c *readOnlyCheck) verify() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var bad []string
	for _, s := range c.seen {
		if !slices.Equal(s.shared, s.copy) {
			bad = append(bad, fmt.Sprintf("(%s, %q, %q): read as %v, now %v", s.table, s.pk, s.rk, s.copy, s.shared))
		}
	}
	if len(bad) > 0 {
		return len(c.seen), fmt.Errorf("%d rows read from the memory service were changed in place afterwards, the first: %s",
			len(bad), bad[0])
	}
	return len(c.seen), nil
}
