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
	case top == 0 || top > maxPageRows:
		top = maxPageRows
	}
	// The table comes before the filter: the service answers 404 TableNotFound for a
	// missing table whatever the filter, even one that does not parse.
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.lookup(table)
	if t == nil {
		return service.Page{}, errTableNotFound()
	}
	var f *odata.Filter
	if q.Filter != "" {
		var err error
		if f, err = odata.Parse(q.Filter); err != nil {
			return service.Page{}, errInvalidInput(err.Error())
		}
	}
	var start rowKey
	if c := q.Continuation; c != nil {
		pk, ok1 := decodeToken(c.NextPartitionKey)
		rk, ok2 := decodeToken(c.NextRowKey)
		if !ok1 || !ok2 {
			return service.Page{}, errInvalidInput("The continuation token is not valid.")
		}
		start = rowKey{pk, rk}
	}
	if s.emptyEvery > 0 && s.queries.Add(1)%s.emptyEvery == 0 {
		return service.Page{Rows: []service.Row{}, Next: continuationAt(start)}, nil
	}
	i, _ := t.search(start)
	end := len(t.sorted)
	if pk, ok := f.PartitionKey(); ok {
		// Only the partition's rows can match, and they are contiguous: the query costs
		// what the partition holds, not the table.
		lo, hi := t.partition(pk)
		i, end = max(i, lo), hi
	}
	page := service.Page{Rows: make([]service.Row, 0, max(0, min(top, end-i)))}
	for ; i < end; i++ {
		r := t.sorted[i]
		if f != nil && !f.Match(r) {
			continue
		}
		if len(page.Rows) == top {
			page.Next = continuationAt(keyOf(r))
			break
		}
		page.Rows = append(page.Rows, project(r, q.Select))
	}
	s.throttle.charge(len(page.Rows) - 1)
	return page, nil
}
