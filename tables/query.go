package tables

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// maxPage is the most rows the service returns in one page.
const maxPage = 1000

// preparedQuery is a query checked and translated, ready to send.
type preparedQuery struct {
	pk, prefix string
	filter     string
	sel        []string
	take       int
}

// prepareQuery checks q and translates it. Everything it refuses is refused before anything
// is sent.
func (s *Store[T]) prepareQuery(op string, q *abstractions.Query[T]) (*preparedQuery, error) {
	p := &preparedQuery{take: q.Take}
	if q.Take < 0 {
		return nil, s.queryError(op, abstractions.ErrInvalidArgument, fmt.Sprintf("Take is %d; it must not be negative", q.Take))
	}
	if q.Partition != "" {
		pk, err := s.checkPartition(op, q.Partition)
		if err != nil {
			return nil, err
		}
		p.pk = pk
	}
	if q.RowKeyPrefix != "" {
		if p.pk == "" {
			return nil, s.queryError(op, abstractions.ErrNotSupported,
				"a row-key prefix without a partition would scan every partition of the table; set Partition too")
		}
		prefix := q.RowKeyPrefix
		if !utf8.ValidString(prefix) {
			// Before normalising, which would turn the invalid bytes into U+FFFD.
			return nil, keyError(op, s.table, p.pk, prefix, "row-key prefix", "is not valid UTF-8")
		}
		prefix = s.normalRowKeyPrefix(prefix)
		if reason := checkKey(prefix); reason != "" {
			return nil, keyError(op, s.table, p.pk, prefix, "row-key prefix", reason)
		}
		p.prefix = prefix
	}
	filter, ferr := odata.Filter(s.plan, p.pk, p.prefix, driver.Root(q.Where))
	if ferr != nil {
		return nil, s.filterError(op, ferr)
	}
	p.filter = filter
	if q.Select != nil {
		refs := make([]*driver.Field, len(q.Select))
		for i, sel := range q.Select {
			if sel != nil {
				ref := driver.FieldOf(sel)
				refs[i] = &ref
			}
		}
		sel, ferr := odata.Projection(s.plan, refs)
		if ferr != nil {
			return nil, s.filterError(op, ferr)
		}
		p.sel = s.sharedSel(sel)
		if s.split {
			p.sel = s.splitProjection(sel)
		}
	}
	return p, nil
}

func (s *core) queryError(op string, kind error, msg string) error {
	return &abstractions.StoreError{Kind: kind, Op: op, Table: s.table, Message: msg + "; nothing was sent"}
}

func (s *core) filterError(op string, e *odata.Error) error {
	msg := e.Reason
	if e.Field != "" {
		msg = "cannot filter on " + e.Field + ": " + msg
	}
	return s.queryError(op, e.Kind, msg)
}

// pages runs the prepared query from cont, page by page, handing each row to fn until fn
// says stop, take rows were handed (0: no limit) or the service has no more. Each page asks
// for no more rows than are still wanted.
func (s *core) pages(ctx context.Context, op string, p *preparedQuery, sel []string, take int, fn func(*service.Row) (bool, error)) error {
	sq := service.Query{Filter: p.filter, Select: sel}
	remaining := take
	for {
		sq.Top = maxPage
		if remaining > 0 {
			sq.Top = min(remaining, maxPage)
		}
		page, err := s.acct.tables.Query(ctx, s.table, sq)
		if err != nil {
			return s.translate(op, p.pk, "", err)
		}
		for i := range page.Rows {
			if largevalue.IsContinuation(&page.Rows[i]) || s.foreign(&page.Rows[i]) {
				// A continuation row is part of another entity, never one of its own; a
				// polymorphic row of a shared table belongs to another store.
				continue
			}
			more, err := fn(&page.Rows[i])
			if err != nil || !more {
				return err
			}
			if remaining > 0 {
				remaining--
				if remaining == 0 {
					return nil
				}
			}
		}
		if page.Next == nil {
			return nil
		}
		sq.Continuation = page.Next
	}
}

func (s *Store[T]) noCursor(op string, q *abstractions.Query[T]) error {
	if q.Cursor != "" {
		return s.queryError(op, abstractions.ErrInvalidArgument, "a cursor resumes Page only; use Page, or clear Cursor")
	}
	return nil
}

// Query returns the rows q selects; see [abstractions.Storage.Query].
func (s *Store[T]) Query(ctx context.Context, q abstractions.Query[T]) (_ []*T, err error) {
	ctx, c := s.beginPartition(ctx, "query", q.Partition)
	defer c.Finish(&err)
	if err := s.noCursor("query", &q); err != nil {
		return nil, err
	}
	p, err := s.prepareQuery("query", &q)
	if err != nil {
		return nil, err
	}
	out := []*T{}
	err = s.pages(ctx, "query", p, p.sel, p.take, func(r *service.Row) (bool, error) {
		v, skip, err := s.decodeListed(ctx, "query", r)
		if err != nil || skip {
			return err == nil, err
		}
		out = append(out, v)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Stream yields the rows q selects one page at a time; see [abstractions.Storage.Stream].
func (s *Store[T]) Stream(ctx context.Context, q abstractions.Query[T]) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		ctx, c := s.beginPartition(ctx, "stream", q.Partition)
		var err error
		defer c.Finish(&err)
		if err = s.noCursor("query", &q); err != nil {
			yield(nil, err)
			return
		}
		var p *preparedQuery
		p, err = s.prepareQuery("query", &q)
		if err != nil {
			yield(nil, err)
			return
		}
		err = s.pages(ctx, "query", p, p.sel, p.take, func(r *service.Row) (bool, error) {
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
	ctx, c := s.beginPartition(ctx, "any", q.Partition)
	defer c.Finish(&err)
	if err := s.noCursor("any", &q); err != nil {
		return false, err
	}
	p, err := s.prepareQuery("any", &q)
	if err != nil {
		return false, err
	}
	found := false
	sel := keysOnly
	if s.split {
		sel = ofOnly
	}
	err = s.pages(ctx, "any", p, s.sharedSel(sel), 1, func(*service.Row) (bool, error) {
		found = true
		return false, nil
	})
	return found, err
}

// cursor is the content of a Page cursor: the service's continuation and a hash of the
// query's bounds, so that a cursor replayed with another query is recognised.
type cursor struct {
	Bounds string `json:"b"`
	// Table is a short hash of the table's name (tableTag), so that a cursor used on
	// another table is refused as that, not as another query of the same table.
	Table string `json:"t,omitempty"`
	PK    string `json:"p"`
	RK    string `json:"r"`
}

// tableTag is what a cursor records of its table: a hash of the lower-case name, as the
// service compares table names.
func tableTag(table string) string {
	h := sha256.Sum256([]byte(strings.ToLower(table)))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

// cursorRefusal returns why a cursor c cannot continue a query of table whose bounds are
// bounds ("" when it can).
func cursorRefusal(c cursor, table, bounds string) string {
	switch {
	case c.Bounds == bounds:
		return ""
	case c.Table != "" && c.Table != tableTag(table):
		return "the cursor belongs to a query of another table; start again without a cursor"
	}
	return "the cursor belongs to another query of this table (its partition, row-key prefix, page size or filter differ, or a store of another kind made it); start again without a cursor"
}

// bounds hashes what a cursor is bound to: the table, partition, prefix, page size and
// filter (which carries the partition and prefix too).
func (s *core) bounds(p *preparedQuery, size int) string {
	h := sha256.New()
	for _, part := range []string{strings.ToLower(s.table), p.pk, p.prefix, p.filter} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(size))
	h.Write(n[:])
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// Page returns one page of the rows q selects and the cursor of the next; see
// [abstractions.Storage.Page].
func (s *Store[T]) Page(ctx context.Context, q abstractions.Query[T]) (_ abstractions.Page[T], err error) {
	ctx, c := s.beginPartition(ctx, "page", q.Partition)
	defer c.Finish(&err)
	size := q.Take
	if size == 0 {
		size = abstractions.DefaultPageSize
	}
	if size > maxPage {
		return abstractions.Page[T]{}, s.queryError("page", abstractions.ErrInvalidArgument,
			fmt.Sprintf("a page holds at most %d rows, the service's page limit; Take is %d", maxPage, size))
	}
	p, err := s.prepareQuery("page", &q)
	if err != nil {
		return abstractions.Page[T]{}, err
	}
	bounds := s.bounds(p, size)
	sq := service.Query{Filter: p.filter, Select: p.sel, Top: size}
	if q.Cursor != "" {
		c, ok := decodeCursor(q.Cursor)
		if !ok {
			return abstractions.Page[T]{}, s.queryError("page", abstractions.ErrInvalidArgument, "the cursor is not one Page returned")
		}
		if why := cursorRefusal(c, s.table, bounds); why != "" {
			return abstractions.Page[T]{}, s.queryError("page", abstractions.ErrInvalidArgument, why)
		}
		sq.Continuation = &service.Continuation{NextPartitionKey: c.PK, NextRowKey: c.RK}
	}
	for {
		page, err := s.acct.tables.Query(ctx, s.table, sq)
		if err != nil {
			return abstractions.Page[T]{}, s.translate("page", p.pk, "", err)
		}
		if len(page.Rows) == 0 && page.Next != nil {
			// The service may end a page early, even with no row; that is not the end.
			sq.Continuation = page.Next
			continue
		}
		out := abstractions.Page[T]{Items: make([]*T, 0, len(page.Rows))}
		for i := range page.Rows {
			// A continuation row (or, in a shared table, a polymorphic row) takes a place
			// in the page and is not returned, so a page may hold fewer entities than its
			// size, or none, and still have a cursor.
			v, skip, err := s.decodeListed(ctx, "page", &page.Rows[i])
			if err != nil {
				return abstractions.Page[T]{}, err
			}
			if !skip {
				out.Items = append(out.Items, v)
			}
		}
		if page.Next != nil {
			out.Cursor = encodeCursor(cursor{Bounds: bounds, Table: tableTag(s.table), PK: page.Next.NextPartitionKey, RK: page.Next.NextRowKey})
		}
		return out, nil
	}
}

// decodeListed decodes a row a query returned: a split-aware entity is read whole (its
// continuation rows fetched and every value verified); a continuation row, or an entity
// deleted while it was read, is skipped.
func (s *Store[T]) decodeListed(ctx context.Context, op string, r *service.Row) (*T, bool, error) {
	row, skip, err := s.materialize(ctx, op, r)
	if err != nil || skip {
		return nil, skip, err
	}
	v, err := s.decode(&row)
	return v, false, err
}

// splitProjection narrows a split-aware query's projection only when every column is an
// ordinary one: a large value is always returned whole, so naming one fetches whole rows.
// The projection also asks for _SplitOf, so that continuation rows are recognised.
func (s *core) splitProjection(sel []string) []string {
	fields := s.plan.Fields()
	for i := range fields {
		if !fields[i].Large {
			continue
		}
		for _, n := range sel {
			if n == fields[i].Name || slices.Contains(fields[i].Cells, n) {
				return nil
			}
		}
	}
	return append(sel, largevalue.OfColumn)
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Cursor limits. The service's continuation tokens encode a key of at most 1 KiB (about
// 1.4 KiB of base64 with a short prefix), so a token above maxCursorToken, or a cursor
// above maxCursor, was not made by Page: it is refused before it reaches a request URL.
const (
	maxCursorToken = 4 << 10
	maxCursor      = 3*maxCursorToken + 256
)

func decodeCursor(s string) (cursor, bool) {
	var c cursor
	if len(s) > maxCursor {
		return cursor{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Bounds == "" || (c.PK == "" && c.RK == "") {
		return cursor{}, false
	}
	for _, tok := range []string{c.PK, c.RK} {
		if len(tok) > maxCursorToken || !utf8.ValidString(tok) || strings.ContainsFunc(tok, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return cursor{}, false
		}
	}
	return c, true
}
