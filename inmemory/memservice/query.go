package memservice

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/unified-data/gotables/inmemory/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// tokenPrefix marks the continuation tokens this service issues. It also keeps the token of
// an empty key non-empty, so an adapter that drops empty headers cannot lose it.
const tokenPrefix = "1!"

func encodeToken(key string) string {
	return tokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(key))
}

func decodeToken(tok string) (string, bool) {
	rest, ok := strings.CutPrefix(tok, tokenPrefix)
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func continuationAt(k rowKey) *service.Continuation {
	return &service.Continuation{NextPartitionKey: encodeToken(k.pk), NextRowKey: encodeToken(k.rk)}
}

// Query returns one page of the rows matching q, in (PartitionKey, RowKey) order by UTF-16
// code units. Top 0 or above 1000 asks for 1000 rows. Next is set only when another matching
// row follows the page, or on a page WithEmptyPages empties. A negative Top fails with 400
// InvalidInput; then a missing table with 404 TableNotFound, whatever the filter; then a
// filter that does not parse (or has more than 15 comparisons) and a continuation this
// service did not issue with 400 InvalidInput.
func (s *Service) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	if err := ctx.Err(); err != nil {
		return service.Page{}, err
	}
	if err := s.throttle.admit("", "", 1); err != nil {
		return service.Page{}, err
	}
	top := q.Top
	switch {
	case top < 0:
		return service.Page{}, errInvalidInput("One of the request inputs is not valid.")
	case s.cosmos:
		top = cosmosTop(top)
	case top == 0 || top > maxPageRows:
		top = maxPageRows
	}
	// The table comes before the filter: the service answers 404 TableNotFound for a
	// missing table whatever the filter, even one that does not parse. Both are read
	// before the table is locked.
	var f *odata.Filter
	var filterErr error
	if q.Filter != "" {
		f, filterErr = odata.Parse(q.Filter)
	}
	var start rowKey
	startOK := true
	if c := q.Continuation; c != nil {
		pk, ok1 := decodeToken(c.NextPartitionKey)
		rk, ok2 := decodeToken(c.NextRowKey)
		start, startOK = rowKey{pk, rk}, ok1 && ok2
	}
	t := s.readTable(table)
	if t == nil {
		return service.Page{}, errTableNotFound()
	}
	switch {
	case filterErr != nil:
		t.mu.RUnlock()
		return service.Page{}, errInvalidInput(filterErr.Error())
	case !startOK:
		t.mu.RUnlock()
		return service.Page{}, errInvalidInput("The continuation token is not valid.")
	case s.emptyEvery > 0 && s.queries.Add(1)%s.emptyEvery == 0:
		t.mu.RUnlock()
		return service.Page{Rows: []service.Row{}, Next: continuationAt(start)}, nil
	}
	// Only the partition's rows can match a filter that names one PartitionKey, and the
	// table keeps them together: the query costs what the partition holds, not the table.
	pk, only := f.PartitionKey()
	if s.cosmos {
		page := cosmosPage(t, f, only, pk, start, q.Continuation != nil, top)
		t.mu.RUnlock()
		copyProperties(page.Rows, q.Select, s.shareReads)
		s.throttle.charge(len(page.Rows) - 1)
		return page, nil
	}
	rows := int(t.rows.Load())
	if only {
		rows = 0
		if p := t.partitions[pk]; p != nil {
			p.mu.RLock()
			rows = len(p.rows)
			p.mu.RUnlock()
		}
	}
	// Within the partition, the filter's bounds on RowKey say where matches can begin and
	// end: the scan seeks to the first and stops past the last, as the service's does.
	from, hasFrom, to, hasTo := f.RowKeyRange()
	if only && hasFrom {
		if c := service.CompareUTF16(start.pk, pk); c < 0 || c == 0 && service.CompareUTF16(start.rk, from) < 0 {
			start = rowKey{pk, from}
		}
	}
	if only && (hasFrom || hasTo) {
		rows = min(rows, 64) // a key range may hold few of them: append grows the page
	}
	page := service.Page{Rows: make([]service.Row, 0, min(top, rows))}
	t.scan(start, only, pk, func(r *service.Row) bool {
		if only && hasTo && service.CompareUTF16(r.RowKey, to) > 0 {
			return false
		}
		if f != nil && !f.Match(r) {
			return true
		}
		if len(page.Rows) == top {
			page.Next = continuationAt(rowKey{r.PartitionKey, r.RowKey})
			return false
		}
		page.Rows = append(page.Rows, *r)
		return true
	})
	t.mu.RUnlock()
	// A stored row's properties never change: they are copied outside the lock.
	copyProperties(page.Rows, q.Select, s.shareReads)
	s.throttle.charge(len(page.Rows) - 1)
	return page, nil
}

// copyProperties gives each row a copy of its properties, only the selected ones when sel
// is not nil, as project does; the copies of a page share one allocation. With share
// (WithSharedReads) a row keeps its stored properties, clipped.
func copyProperties(rows []service.Row, sel []string, share bool) {
	switch {
	case sel != nil:
		for i := range rows {
			rows[i] = project(&rows[i], sel, share)
		}
		return
	case share:
		for i := range rows {
			rows[i].Properties = clipped(rows[i].Properties)
		}
		return
	}
	n := 0
	for i := range rows {
		n += len(rows[i].Properties)
	}
	arena := make([]service.Property, n)
	for i := range rows {
		if len(rows[i].Properties) == 0 {
			rows[i].Properties = nil
			continue
		}
		k := copy(arena, rows[i].Properties)
		rows[i].Properties, arena = arena[:k:k], arena[k:]
	}
}
