package tables

import (
	"context"
	"fmt"
	"iter"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// prepareQuery checks q and translates it. Everything it refuses is refused before anything
// is sent.
func (s *Store[T]) prepareQuery(op string, q *abstractions.Query[T]) (*engine.PreparedQuery, error) {
	p := &engine.PreparedQuery{Take: q.Take}
	if q.Take < 0 {
		return nil, s.core.QueryError(op, abstractions.ErrInvalidArgument, fmt.Sprintf("Take is %d; it must not be negative", q.Take))
	}
	if q.Partition != "" {
		pk, err := s.core.CheckPartition(op, q.Partition)
		if err != nil {
			return nil, err
		}
		p.PK = pk
	}
	if q.RowKeyPrefix != "" {
		if p.PK == "" {
			return nil, s.core.QueryError(op, abstractions.ErrNotSupported,
				"a row-key prefix without a partition would scan every partition of the table; set Partition too")
		}
		prefix := q.RowKeyPrefix
		if !utf8.ValidString(prefix) {
			// Before normalising, which would turn the invalid bytes into U+FFFD.
			return nil, engine.KeyError(op, s.core.Name, p.PK, prefix, "row-key prefix", "is not valid UTF-8")
		}
		prefix = s.core.NormalRowKeyPrefix(prefix)
		if reason := engine.CheckKey(prefix); reason != "" {
			return nil, engine.KeyError(op, s.core.Name, p.PK, prefix, "row-key prefix", reason)
		}
		p.Prefix = prefix
	}
	filter, ferr := odata.Filter(s.core.Plan, p.PK, p.Prefix, driver.Root(q.Where))
	if ferr != nil {
		return nil, s.core.FilterError(op, ferr)
	}
	p.Filter = filter
	if q.Select != nil {
		refs := make([]*driver.Field, len(q.Select))
		for i, sel := range q.Select {
			if sel != nil {
				ref := driver.FieldOf(sel)
				refs[i] = &ref
			}
		}
		sel, ferr := odata.Projection(s.core.Plan, refs)
		if ferr != nil {
			return nil, s.core.FilterError(op, ferr)
		}
		p.Sel = s.core.SharedSel(sel)
		if s.core.Split {
			p.Sel = s.core.SplitProjection(sel)
		}
	}
	return p, nil
}

func (s *Store[T]) noCursor(op string, q *abstractions.Query[T]) error {
	if q.Cursor != "" {
		return s.core.QueryError(op, abstractions.ErrInvalidArgument, "a cursor resumes Page only; use Page, or clear Cursor")
	}
	return nil
}

// Query returns the rows q selects; see [abstractions.Log.Query].
func (s *Store[T]) Query(ctx context.Context, q abstractions.Query[T]) (_ []*T, err error) {
	ctx, c := s.core.BeginPartition(ctx, "query", q.Partition)
	defer c.Finish(&err)
	if err := s.noCursor("query", &q); err != nil {
		return nil, err
	}
	p, err := s.prepareQuery("query", &q)
	if err != nil {
		return nil, err
	}
	p.Held = true
	if err := s.core.CheckOrdered("query", p); err != nil {
		return nil, err
	}
	if err := s.core.Planned(&c, "query", p.Filter, false); err != nil {
		return nil, err
	}
	out := []*T{}
	values := slab[T]{take: p.Take}
	err = s.core.Pages(ctx, "query", p, p.Sel, p.Take, func(r *service.Row) (bool, error) {
		v := values.next()
		skip, err := s.decodeListedAt(ctx, "query", r, v)
		if err != nil {
			return false, err
		}
		if skip {
			values.unused()
			return true, nil
		}
		out = append(out, v)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Stream yields the rows q selects one page at a time; see [abstractions.Log.Stream]. On
// Azure Cosmos DB for Table, which returns rows in no key order, it reads its range of one
// partition whole and sorts it before the first row (docs/cosmos.md), as Query with Take
// and Page do.
func (s *Store[T]) Stream(ctx context.Context, q abstractions.Query[T]) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		ctx, c := s.core.BeginPartition(ctx, "stream", q.Partition)
		var err error
		defer c.Finish(&err)
		if err = s.noCursor("query", &q); err != nil {
			yield(nil, err)
			return
		}
		var p *engine.PreparedQuery
		p, err = s.prepareQuery("query", &q)
		if err == nil {
			err = s.core.CheckOrdered("query", p)
		}
		if err == nil {
			err = s.core.Planned(&c, "query", p.Filter, false)
		}
		if err != nil {
			yield(nil, err)
			return
		}
		err = s.core.Pages(ctx, "query", p, p.Sel, p.Take, func(r *service.Row) (bool, error) {
			v, skip, err := s.decodeListed(ctx, "query", r)
			if err != nil || skip {
				return err == nil, err
			}
			return yield(v, nil), nil
		})
		if err != nil {
			yield(nil, err)
		}
	}
}

// Any reports whether q selects a row, reading keys only; see [abstractions.Storage.Any].
func (s *Store[T]) Any(ctx context.Context, q abstractions.Query[T]) (_ bool, err error) {
	ctx, c := s.core.BeginPartition(ctx, "any", q.Partition)
	defer c.Finish(&err)
	if err := s.noCursor("any", &q); err != nil {
		return false, err
	}
	p, err := s.prepareQuery("any", &q)
	if err != nil {
		return false, err
	}
	if err := s.core.Planned(&c, "any", p.Filter, false); err != nil {
		return false, err
	}
	found := false
	p.AnyOrder = true
	sel := engine.KeysOnly
	if s.core.Split {
		sel = engine.OfOnly
	}
	err = s.core.Pages(ctx, "any", p, s.core.SharedSel(sel), 1, func(*service.Row) (bool, error) {
		found = true
		return false, nil
	})
	return found, err
}

// Page returns one page of the rows q selects and the cursor of the next; see
// [abstractions.Storage.Page].
func (s *Store[T]) Page(ctx context.Context, q abstractions.Query[T]) (_ abstractions.Page[T], err error) {
	ctx, c := s.core.BeginPartition(ctx, "page", q.Partition)
	defer c.Finish(&err)
	size := q.Take
	if size == 0 {
		size = abstractions.DefaultPageSize
	}
	if size > engine.MaxPage {
		return abstractions.Page[T]{}, s.core.QueryError("page", abstractions.ErrInvalidArgument,
			fmt.Sprintf("a page holds at most %d rows, the service's page limit; Take is %d", engine.MaxPage, size))
	}
	p, err := s.prepareQuery("page", &q)
	if err != nil {
		return abstractions.Page[T]{}, err
	}
	bounds := s.core.Bounds(p, size)
	sq := service.Query{Filter: s.core.EntityFilter(p.Filter), Select: p.Sel}
	var from *service.Continuation
	if q.Cursor != "" {
		c, ok := engine.DecodeCursor(q.Cursor)
		if !ok {
			return abstractions.Page[T]{}, s.core.QueryError("page", abstractions.ErrInvalidArgument, "the cursor is not one Page returned")
		}
		if why := engine.CursorRefusal(c, s.core.Name, bounds); why != "" {
			return abstractions.Page[T]{}, s.core.QueryError("page", abstractions.ErrInvalidArgument, why)
		}
		from = &service.Continuation{NextPartitionKey: c.PK, NextRowKey: c.RK}
	}
	// Refused before it is planned, a page is not logged as a table scan: nothing is sent.
	if err := s.core.CheckPage("page", p.PK); err != nil {
		return abstractions.Page[T]{}, err
	}
	if err := s.core.Planned(&c, "page", p.Filter, false); err != nil {
		return abstractions.Page[T]{}, err
	}
	rows, next, err := s.core.PageRows(ctx, "page", p.PK, sq, size, from)
	if err != nil {
		return abstractions.Page[T]{}, err
	}
	out := abstractions.Page[T]{Items: make([]*T, 0, len(rows))}
	values := slab[T]{take: len(rows)}
	for i := range rows {
		// A continuation row (or, in a shared table, a polymorphic row) takes a place in
		// the page and is not returned, so a page may hold fewer entities than its size,
		// or none, and still have a cursor.
		v := values.next()
		skip, err := s.decodeListedAt(ctx, "page", &rows[i], v)
		if err != nil {
			return abstractions.Page[T]{}, err
		}
		if skip {
			values.unused()
			continue
		}
		out.Items = append(out.Items, v)
	}
	if next != nil {
		out.Cursor = engine.EncodeCursor(engine.Cursor{Bounds: bounds, Table: engine.TableTag(s.core.Name), PK: next.NextPartitionKey, RK: next.NextRowKey})
	}
	return out, nil
}

// slab hands out the values a page, a query or a list decodes into from arrays of up to
// slabSize, so that a read of many rows allocates once per slabSize entities instead of once
// per entity (an entity kept from the result keeps its array alive). take, when not 0, is
// the most values the read can need (a page's rows, a query's Take) and bounds each array.
type slab[T any] struct {
	take   int
	values []T
}

const slabSize = 128

// next returns a zero T to decode into.
func (s *slab[T]) next() *T {
	if len(s.values) == cap(s.values) {
		n := slabSize
		if s.take > 0 && s.take < n {
			n = s.take
		}
		s.values = make([]T, 0, n)
	}
	s.values = s.values[:len(s.values)+1]
	return &s.values[len(s.values)-1]
}

// unused gives back the value next returned last, which a skipped row left zero, for the
// next row.
func (s *slab[T]) unused() { s.values = s.values[:len(s.values)-1] }

// decodeListed decodes a row a query returned: a split-aware entity is read whole (its
// continuation rows fetched and every value verified); a continuation row, or an entity
// deleted while it was read, is skipped.
func (s *Store[T]) decodeListed(ctx context.Context, op string, r *service.Row) (*T, bool, error) {
	v := new(T)
	skip, err := s.decodeListedAt(ctx, op, r, v)
	if err != nil || skip {
		return nil, skip, err
	}
	return v, false, nil
}

// decodeListedAt is decodeListed into *v, which holds T's zero value; a skipped row leaves
// it so.
func (s *Store[T]) decodeListedAt(ctx context.Context, op string, r *service.Row, v *T) (bool, error) {
	row, skip, err := s.core.Materialize(ctx, op, r)
	if err != nil || skip {
		return skip, err
	}
	return false, s.decodeAt(&row, v)
}
