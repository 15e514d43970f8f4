package backup

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"

	"github.com/unified-data/gotables/tables/internal/odata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// pageSize is the rows a backup asks for in one query.
const pageSize = 1000

// rereads is how many times an entity is read again when it changed while it was read
// (its continuation rows or blobs no longer match its main row).
const rereads = 5

// source reads the entities of a table.
type source struct {
	tbl   service.Tables
	table string
	r     *retrier
	// unordered says the service lists rows in no key order (Cosmos DB for Table): the
	// partitions cannot be found one by one from a key, so the table is read in one scan.
	unordered bool
}

// entity is one entity as read: its main row, then its continuation rows in order, and
// the SHA-256 of each of its split values.
type entity struct {
	rows   []service.Row
	values []valueRec
	err    error
}

// position is where a backup resumes: after the entity (PK, RK).
type position struct {
	PK, RK string
	Set    bool
}

// segment is one range of the table a worker reads: a partition, or the whole table.
type segment struct {
	filter string
}

// segments sends the segments of a backup in key order: each partition of opts.Partitions,
// the partitions found one by one when Parallel > 1, or one scan of the table.
func (s *source) segments(ctx context.Context, parts []string, parallel int, from position, emit func(segment) bool) error {
	switch {
	case parts != nil:
		for _, pk := range parts {
			if from.Set && service.CompareUTF16(pk, from.PK) < 0 {
				continue
			}
			f := odata.Partition(pk)
			if from.Set && pk == from.PK {
				f += " and RowKey gt " + service.QuoteString(from.RK)
			}
			if !emit(segment{filter: f}) {
				return nil
			}
		}
		return nil
	case parallel <= 1, s.unordered:
		if !from.Set {
			emit(segment{})
			return nil
		}
		// The rest of the partition, then the partitions after it: two range queries the
		// service answers from its index (an "or" of both may scan the table).
		if emit(segment{filter: odata.Partition(from.PK) + " and RowKey gt " + service.QuoteString(from.RK)}) {
			emit(segment{filter: "PartitionKey gt " + service.QuoteString(from.PK)})
		}
		return nil
	}
	// Discover partitions: the first row after the previous partition names the next.
	prev, first := "", true
	if from.Set {
		f := odata.Partition(from.PK) + " and RowKey gt " + service.QuoteString(from.RK)
		if !emit(segment{filter: f}) {
			return nil
		}
		prev, first = from.PK, false
	}
	for {
		q := service.Query{Top: 1, Select: []string{largevalue.OfColumn}}
		if !first {
			q.Filter = "PartitionKey gt " + service.QuoteString(prev)
		}
		pk, ok, err := s.firstKey(ctx, q)
		if err != nil || !ok {
			return err
		}
		if !emit(segment{filter: odata.Partition(pk)}) {
			return nil
		}
		prev, first = pk, false
	}
}

// firstKey returns the partition key of the first row q finds.
func (s *source) firstKey(ctx context.Context, q service.Query) (string, bool, error) {
	for {
		page, err := s.query(ctx, q)
		if err != nil {
			return "", false, s.wrap(err)
		}
		if len(page.Rows) > 0 {
			return page.Rows[0].PartitionKey, true, nil
		}
		if page.Next == nil {
			return "", false, nil
		}
		q.Continuation = page.Next
	}
}

// query reads one page of q, backing off and trying again while the service is busy.
func (s *source) query(ctx context.Context, q service.Query) (page service.Page, err error) {
	err = s.r.do(ctx, "query", func() (err error) {
		page, err = s.tbl.Query(ctx, s.table, q)
		return err
	})
	return page, err
}

// wrap classifies a failure to read the table (see serviceError).
func (s *source) wrap(err error) error {
	return serviceError("backup: reading", s.table, "", callerr.Read, err)
}

// scan reads the entities of one segment in key order and passes each to emit. A
// continuation row is read with its main row, never on its own; one whose main row is gone
// (a leftover the library takes back on its next write) is not backed up.
func (s *source) scan(ctx context.Context, seg segment, emit func(entity) bool) error {
	q := service.Query{Filter: seg.filter, Top: pageSize}
	for {
		page, err := s.query(ctx, q)
		if err != nil {
			return s.wrap(err)
		}
		for i := range page.Rows {
			row := page.Rows[i]
			if isContinuation(&row) {
				continue
			}
			ent, ok, err := s.complete(ctx, row)
			if err != nil {
				return err
			}
			if ok && !emit(ent) {
				return ctx.Err()
			}
		}
		if page.Next == nil {
			return nil
		}
		q.Continuation = page.Next
	}
}

// isContinuation reports a continuation row of the library's layout: a reserved key and
// _SplitOf naming its main row. Any other row, whatever its cells, is a row of its own.
func isContinuation(r *service.Row) bool {
	main, i, ok := largevalue.IsContinuationKey(r.RowKey)
	if !ok || i == 0 {
		return false
	}
	of, ok := r.Get(largevalue.OfColumn)
	return ok && of.Kind() == service.KindString && of.Str() == main
}

// complete returns the entity of a main row: with its continuation rows, its split values
// verified. A main row that changed while its parts were read is read again; one that is
// gone reports false.
func (s *source) complete(ctx context.Context, main service.Row) (entity, bool, error) {
	for attempt := 0; ; attempt++ {
		ent, err := s.parts(ctx, main)
		if err == nil {
			return ent, true, nil
		}
		if ctx.Err() != nil {
			return entity{}, false, ctx.Err()
		}
		if attempt == rereads {
			return entity{}, false, fmt.Errorf("backup: entity (%q, %q) of table %s does not read whole after %d attempts (it keeps changing, or it is damaged): %w",
				main.PartitionKey, main.RowKey, s.table, rereads+1, err)
		}
		var ok bool
		main, ok, err = s.reread(ctx, main.PartitionKey, main.RowKey)
		if err != nil || !ok {
			return entity{}, false, err
		}
	}
}

// reread reads a main row again; false when it is gone.
func (s *source) reread(ctx context.Context, pk, rk string) (service.Row, bool, error) {
	var row service.Row
	err := s.r.do(ctx, "read", func() (err error) {
		row, err = s.tbl.GetRow(ctx, s.table, pk, rk, nil)
		return err
	})
	if abstractions.HasStatus(err, http.StatusNotFound, "") && !abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound") {
		return service.Row{}, false, nil
	}
	if err != nil {
		return service.Row{}, false, s.wrap(err)
	}
	return row, true, nil
}

// parts reads the continuation rows a main row declares and verifies its split values.
func (s *source) parts(ctx context.Context, main service.Row) (entity, error) {
	rows := []service.Row{main}
	n := 1
	if largevalue.HasManifest(&main) {
		if p, err := largevalue.Parts(&main); err == nil {
			n = p
		}
	}
	if n > 1 {
		conts, err := s.continuations(ctx, main.PartitionKey, main.RowKey, n-1)
		if err != nil {
			return entity{}, err
		}
		if len(conts) != n-1 {
			return entity{}, fmt.Errorf("%w: %d of %d continuation rows found", abstractions.ErrIntegrity, len(conts), n-1)
		}
		rows = append(rows, conts...)
	}
	vals, err := splitValues(rows)
	if err != nil {
		return entity{}, err
	}
	return entity{rows: rows, values: vals}, nil
}

// continuations reads continuation rows 1…n of main row rk, in order.
func (s *source) continuations(ctx context.Context, pk, rk string, n int) ([]service.Row, error) {
	q := service.Query{
		Filter: odata.Partition(pk) + " and RowKey ge " + service.QuoteString(largevalue.ContinuationKey(rk, 1)) +
			" and RowKey le " + service.QuoteString(largevalue.ContinuationKey(rk, n)),
		Top: pageSize,
	}
	var out []service.Row
	idx := map[string]int{}
	for {
		page, err := s.query(ctx, q)
		if err != nil {
			return nil, s.wrap(err)
		}
		for _, r := range page.Rows {
			if i, ok := largevalue.BelongsTo(&r, rk); ok && i <= n {
				idx[r.RowKey] = i
				out = append(out, r)
			}
		}
		if page.Next == nil {
			break
		}
		q.Continuation = page.Next
	}
	sort.Slice(out, func(i, j int) bool { return idx[out[i].RowKey] < idx[out[j].RowKey] })
	return out, nil
}

// produce reads the segments with up to parallel workers and returns the entities in key
// order, one channel per segment in order. Cancelling ctx stops every goroutine; wait
// returns once they have all ended.
func (s *source) produce(ctx context.Context, parts []string, parallel int, from position) (segs <-chan chan entity, wait func()) {
	if parallel < 1 {
		parallel = 1
	}
	out := make(chan chan entity, parallel)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		sem := make(chan struct{}, parallel)
		fail := func(err error) {
			ch := make(chan entity, 1)
			ch <- entity{err: err}
			close(ch)
			select {
			case out <- ch:
			case <-ctx.Done():
			}
		}
		err := s.segments(ctx, parts, parallel, from, func(seg segment) bool {
			ch := make(chan entity, 64)
			select {
			case out <- ch:
			case <-ctx.Done():
				return false
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				close(ch)
				return false
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				defer close(ch)
				err := s.scan(ctx, seg, func(e entity) bool {
					select {
					case ch <- e:
						return true
					case <-ctx.Done():
						return false
					}
				})
				if err != nil && ctx.Err() == nil {
					select {
					case ch <- entity{err: err}:
					case <-ctx.Done():
					}
				}
			}()
			return true
		})
		if err != nil && ctx.Err() == nil {
			fail(err)
		}
	}()
	return out, wg.Wait
}
