package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/internal/plan"
	"github.com/unified-data/gotables/tables/service"
)

// Ordered reads where the service returns query results in no key order (Azure Cosmos DB
// for Table: Config.Unordered). The rule lives here, for every read that promises key order:
//
//   - a read that returns every row it selects (Query without Take, List, ListAll, an
//     index's Find) is sorted once read: it costs no request more;
//   - a read that returns the first rows of a range (a Take, a Page and its cursor, a log's
//     newest entries, an index page, the feed's pending records) reads the whole range and
//     keeps its first rows. It needs a partition (SortedNeedsPartition refuses, before
//     sending, a range across partitions), and reads at most MaxSortedRows rows: a range
//     that holds more fails with ErrNotSupported and returns nothing (errTooManyToSort).
//
// A Page's cursor then holds the key of the first row not returned, as the service's own
// continuation does, and the next page reads the rows from that key on (AtOrAfter, unless
// the filter has no comparison to spare; the rows before it are dropped either way), so a
// cursor neither skips nor repeats a row whatever order the service answers in.

// MaxSortedRows is the most rows a read of the first rows of a range reads, on a service
// that returns rows in no key order, to sort them.
const MaxSortedRows = 10_000

// Unordered reports whether the account's table service returns query results in no key
// order (Config.Unordered).
func (a *Account) Unordered() bool { return a.Cfg.Unordered }

// SortRows sorts rows in the service's key order: partition key, then row key, each by
// UTF-16 code units.
func SortRows(rows []service.Row) {
	slices.SortFunc(rows, func(a, b service.Row) int {
		return cmp.Or(service.CompareUTF16(a.PartitionKey, b.PartitionKey), service.CompareUTF16(a.RowKey, b.RowKey))
	})
}

// SortedNeedsPartition refuses, before sending, a read of the first rows of a range across
// partitions (pk is "") on a service that returns rows in no key order: it would read the
// whole table on every call. what names the read ("a Take", "a page"). nil otherwise.
func (s *Table) SortedNeedsPartition(op, pk, what string) error {
	if !s.Acct.Unordered() || pk != "" {
		return nil
	}
	return s.QueryError(op, abstractions.ErrNotSupported, fmt.Sprintf(
		"%s across partitions needs the table's rows in key order, and Azure Cosmos DB for Table returns query results in no order: "+
			"the library sorts the range of one partition (up to %d rows), not the whole table; set Partition, "+
			"or read every row with Query and no Take (sorted once read)", what, MaxSortedRows))
}

// CheckOrdered applies SortedNeedsPartition to a prepared query of Query or Stream, before
// the caller plans it, so that a refused query is not logged as a table scan; Pages
// applies it again.
func (s *Table) CheckOrdered(op string, p *PreparedQuery) error {
	switch {
	case s.Scans == ScanRefuse:
		return nil // Planned refuses a table scan first, as on Table Storage, and logs none
	case p.AnyOrder || p.Held && p.Take == 0:
		return nil
	}
	return s.SortedNeedsPartition(op, p.PK, "a Take or a stream")
}

// CheckPage is CheckOrdered for a page of partition pk ("" across partitions), after its
// cursor is checked and before the caller plans it; PageRows applies it again.
func (s *Table) CheckPage(op, pk string) error {
	if s.Scans == ScanRefuse {
		return nil // as in CheckOrdered
	}
	return s.SortedNeedsPartition(op, pk, "a page")
}

// errTooManyToSort ends the read of a range that holds more than MaxSortedRows rows.
var errTooManyToSort = errors.New("engine: too many rows to sort")

// SortedRange runs q to its end and returns its rows in key order. With bounded it reads
// at most MaxSortedRows rows, and a range that holds more fails with ErrNotSupported.
func (s *Table) SortedRange(ctx context.Context, op, pk string, q service.Query, bounded bool) ([]service.Row, error) {
	var rows []service.Row
	q.Top = 0
	err := s.Scan(ctx, q, func(r *service.Row) error {
		if bounded && len(rows) == MaxSortedRows {
			return errTooManyToSort
		}
		rows = append(rows, r.Clone())
		return nil
	})
	if errors.Is(err, errTooManyToSort) {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: op, Table: s.Name, PartitionKey: pk, Message: fmt.Sprintf(
			"the range holds more than %d rows: Azure Cosmos DB for Table returns query results in no key order, so the library reads a range whole "+
				"and sorts it to return its first rows, up to %d rows; narrow the range (RowKeyPrefix, Where) or spread the rows over more partitions; "+
				"nothing was returned", MaxSortedRows, MaxSortedRows)}
	}
	if err != nil {
		return nil, s.Translate(op, pk, "", err)
	}
	SortRows(rows)
	return rows, nil
}

// AtOrAfter narrows the filter of a query of one partition to the row keys from rk on.
func AtOrAfter(filter, rk string) string {
	from := "RowKey ge " + service.QuoteString(rk)
	if filter == "" {
		return from
	}
	return "(" + filter + ") and " + from
}

// PageRows reads one page of q, at most size rows from the continuation from (nil: the
// start), and returns them with the continuation of the next page (nil: none follows).
// On a service in key order it is the service's page (skipping the empty pages it may
// answer before the end); otherwise the first size rows of the sorted range from the key
// from names, and the key of the row after them.
func (s *Table) PageRows(ctx context.Context, op, pk string, q service.Query, size int, from *service.Continuation) ([]service.Row, *service.Continuation, error) {
	if s.Acct.Unordered() {
		if err := s.SortedNeedsPartition(op, pk, "a page"); err != nil {
			return nil, nil, err
		}
		if from != nil {
			if n := plan.Comparisons(q.Filter); n >= 0 && n < odata.MaxComparisons {
				q.Filter = AtOrAfter(q.Filter, from.NextRowKey)
			} // else the filter has no comparison to spare: the rows before from are dropped below
		}
		rows, err := s.SortedRange(ctx, op, pk, q, true)
		if err != nil {
			return nil, nil, err
		}
		if from != nil {
			rows = rows[sort.Search(len(rows), func(i int) bool { return service.CompareUTF16(rows[i].RowKey, from.NextRowKey) >= 0 }):]
		}
		if len(rows) <= size {
			return rows, nil, nil
		}
		return rows[:size], &service.Continuation{NextPartitionKey: rows[size].PartitionKey, NextRowKey: rows[size].RowKey}, nil
	}
	q.Top, q.Continuation = size, from
	for {
		page, err := s.Acct.Tables.Query(ctx, s.Name, q)
		if err != nil {
			return nil, nil, s.Translate(op, pk, "", err)
		}
		if len(page.Rows) == 0 && page.Next != nil {
			// The service may end a page early, even with no row; that is not the end.
			q.Continuation = page.Next
			continue
		}
		return page.Rows, page.Next, nil
	}
}
