package tables

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// polyQuery is the query of a polymorphic store's Page: an abstractions.Query of its
// entries.
type polyQuery[B any] = abstractions.Query[abstractions.PolyEntry[B]]

// Page returns one page of the rows q selects, in key order, and the cursor of the next;
// see abstractions.PolyStorage. It follows the cursor rules of Storage.Page: a page holds at most q.Take rows (0 means
// abstractions.DefaultPageSize, at most 1000), may hold fewer while more follow (loop on
// HasMore), and its cursor resumes the same query only (another partition, prefix, page
// size or filter is refused with ErrInvalidArgument).
//
// The query's parts are used as a polymorphic store uses keys, exactly as written:
//
//   - Partition scopes the query to one partition ("" reads the whole table);
//   - RowKeyPrefix keeps the row keys that start with it (it needs Partition);
//   - Where may bound the row keys, comparing the entry's Key.RowKey (Eq, Lt, Le, Gt, Ge,
//     combined with And), for a range: with rk := abstractions.Field(func(e
//     *abstractions.PolyEntry[B]) *string { return &e.Key.RowKey }), Where:
//     abstractions.And(rk.Ge("000000010"), rk.Lt("000000020")). Other filters, and Select,
//     are refused with ErrNotSupported: an item's columns are not filtered on.
//
// The newest N rows of a log whose row keys are inverted times (abstractions.InvertedTicks)
// are its first page with Take N. A row One would refuse fails the call; in a shared table
// (StoreOptions.SharedTable) a typed row takes its place in the page and is not returned.
func (s *PolyStore[B]) Page(ctx context.Context, q abstractions.Query[abstractions.PolyEntry[B]]) (_ abstractions.Page[abstractions.PolyEntry[B]], err error) {
	const op = "page"
	ctx, c := s.begin(ctx, op, abstractions.TableKey{PartitionKey: q.Partition})
	defer c.Finish(&err)
	var none abstractions.Page[abstractions.PolyEntry[B]]
	size := q.Take
	if size == 0 {
		size = abstractions.DefaultPageSize
	}
	if size < 0 || size > engine.MaxPage {
		return none, s.queryRefusal(op, abstractions.ErrInvalidArgument,
			fmt.Sprintf("a page holds 1 to %d rows, the service's page limit; Take is %d", engine.MaxPage, q.Take))
	}
	p, err := s.prepareQuery(op, &q)
	if err != nil {
		return none, err
	}
	// The cursor is bound to a polymorphic query: the prefix's share says so, so that a
	// typed store's cursor of the same table and bounds is not taken.
	bounds := s.host.Bounds(&engine.PreparedQuery{PK: p.PK, Prefix: "poly\x00" + p.Prefix, Filter: p.Filter}, size)
	var from *service.Continuation
	if q.Cursor != "" {
		c, ok := engine.DecodeCursor(q.Cursor)
		if !ok {
			return none, s.queryRefusal(op, abstractions.ErrInvalidArgument, "the cursor is not one Page returned")
		}
		if why := engine.CursorRefusal(c, s.host.Name, bounds); why != "" {
			return none, s.queryRefusal(op, abstractions.ErrInvalidArgument, why)
		}
		from = &service.Continuation{NextPartitionKey: c.PK, NextRowKey: c.RK}
	}
	// Refused before it is planned, a page is not logged as a table scan: nothing is sent.
	if err := s.host.CheckPage(op, p.PK); err != nil {
		return none, err
	}
	if err := s.host.Planned(&c, op, p.Filter, false); err != nil {
		return none, err
	}
	if err := ctx.Err(); err != nil {
		return none, s.translate(op, p.PK, "", err)
	}
	rows, next, err := s.host.PageRows(ctx, op, p.PK, service.Query{Filter: p.Filter}, size, from)
	if err != nil {
		return none, err
	}
	out := abstractions.Page[abstractions.PolyEntry[B]]{Items: make([]*abstractions.PolyEntry[B], 0, len(rows))}
	for i := range rows {
		r := &rows[i]
		if s.foreign(r) {
			continue
		}
		e, err := s.entry(op, r)
		if err != nil {
			return none, err
		}
		out.Items = append(out.Items, e)
	}
	if next != nil {
		out.Cursor = engine.EncodeCursor(engine.Cursor{Bounds: bounds, Table: engine.TableTag(s.host.Name), PK: next.NextPartitionKey, RK: next.NextRowKey})
	}
	return out, nil
}

// prepareQuery checks a polymorphic query and builds its filter, keys as written.
func (s *PolyStore[B]) prepareQuery(op string, q *polyQuery[B]) (*engine.PreparedQuery, error) {
	p := &engine.PreparedQuery{}
	if q.Select != nil {
		return nil, s.queryRefusal(op, abstractions.ErrNotSupported, "a polymorphic page reads whole rows; leave Select nil")
	}
	if q.Partition != "" {
		if reason := engine.CheckKey(q.Partition); reason != "" {
			return nil, engine.KeyError(op, s.host.Name, q.Partition, "", "partition key", reason)
		}
		p.PK = q.Partition
	}
	if q.RowKeyPrefix != "" {
		if p.PK == "" {
			return nil, s.queryRefusal(op, abstractions.ErrNotSupported,
				"a row-key prefix without a partition would scan every partition of the table; set Partition too")
		}
		if !utf8.ValidString(q.RowKeyPrefix) {
			return nil, engine.KeyError(op, s.host.Name, p.PK, q.RowKeyPrefix, "row-key prefix", "is not valid UTF-8")
		}
		if reason := engine.CheckKey(q.RowKeyPrefix); reason != "" {
			return nil, engine.KeyError(op, s.host.Name, p.PK, q.RowKeyPrefix, "row-key prefix", reason)
		}
		p.Prefix = q.RowKeyPrefix
	}
	filter, _ := odata.Filter(nil, p.PK, p.Prefix, nil)
	if root := driver.Root(q.Where); root != nil {
		var parts []string
		if filter != "" {
			parts = append(parts, filter)
		}
		parts, reason := s.rowKeyBounds(parts, root)
		if reason != "" {
			return nil, s.queryRefusal(op, abstractions.ErrNotSupported, "the filter "+reason)
		}
		// The partition and the prefix are three comparisons at most, all in parts[0].
		if n := len(parts) + strings.Count(filter, " and "); n > odata.MaxComparisons {
			return nil, s.queryRefusal(op, abstractions.ErrNotSupported,
				fmt.Sprintf("the query needs %d comparisons; the service allows at most %d in one filter", n, odata.MaxComparisons))
		}
		filter = strings.Join(parts, " and ")
	}
	p.Filter = filter
	return p, nil
}

// rowKeyBounds translates the filter of a polymorphic page, which may only compare the
// entry's row key (combined with And, which needs no parentheses), appending its
// comparisons to parts, or says why it cannot.
func (s *PolyStore[B]) rowKeyBounds(parts []string, n *driver.Node) ([]string, string) {
	if n == nil {
		return nil, "holds a zero Filter as an operand of And; leave it out"
	}
	switch n.Op {
	case driver.OpAnd:
		if len(n.Operands) == 0 {
			return nil, "holds an And of nothing"
		}
		for _, o := range n.Operands {
			var reason string
			if parts, reason = s.rowKeyBounds(parts, o); reason != "" {
				return nil, reason
			}
		}
		return parts, ""
	case driver.OpEq, driver.OpLt, driver.OpLe, driver.OpGt, driver.OpGe:
	default:
		return nil, fmt.Sprintf("uses %v; a polymorphic page compares the row key only (Eq, Lt, Le, Gt, Ge, combined with And)", n.Op)
	}
	f := n.Field
	if f.Err != nil {
		return nil, "names a field it cannot use: " + f.Err.Error()
	}
	if f.Owner != reflect.TypeFor[abstractions.PolyEntry[B]]() || f.Offset != polyRowKeyOffset || f.Type != reflect.TypeFor[string]() {
		return nil, "compares a field other than the entry's Key.RowKey; a polymorphic page filters on the row key only"
	}
	v, _ := n.Value.(string)
	if !utf8.ValidString(v) {
		return nil, fmt.Sprintf("compares the row key with %q, which is not valid UTF-8", v)
	}
	return append(parts, "RowKey "+n.Op.String()+" "+service.QuoteString(v)), ""
}

// polyRowKeyOffset is where Key.RowKey sits in every PolyEntry (its layout does not depend
// on B, an interface).
var polyRowKeyOffset = reflect.TypeFor[abstractions.PolyEntry[any]]().Field(0).Offset +
	reflect.TypeFor[abstractions.TableKey]().Field(1).Offset

// queryRefusal is the refusal of a query, before anything is sent.
func (s *PolyStore[B]) queryRefusal(op string, kind error, msg string) error {
	return &abstractions.StoreError{Kind: kind, Op: op, Table: s.host.Name, Message: msg + "; nothing was sent"}
}
