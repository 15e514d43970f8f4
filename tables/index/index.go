// Package index looks entities up by the partition indexes their type declares, and lists a
// partition in an index's order.
//
// A field of a stored type declares an index with the `table` tag option index=:
//
//	type Order struct {
//		abstractions.Entity
//		Number int64     `table:",index=number"`
//		Placed time.Time `table:",index=newest:desc"`
//		Status string
//	}
//
// For each entity the store keeps one index row per index whose field holds a value, in the
// entity's partition, and writes it in the same entity-group transaction as the entity
// (Create, Upsert, Update in both modes, Delete, CreateBatch, UpsertBatch, DeletePartition,
// and the outcome verbs, which use them): an index row never disagrees with its entity.
// The declaration is on the type, not on a store, so every store and every process that
// writes the type keeps the same index rows. Index rows are invisible to every read of the
// store. See docs/indexes.md for the key encoding, the costs and the limits.
//
// [On] returns an index of a store; its [Index.Find], [Index.Count] and [Index.Page] read
// one partition through it, Page with the store's typed filters, over a [Range] of values or
// a prefix. A field tagged unique= keeps its value unique in the table with claim rows;
// [Index.Get] finds its entity. [Verify] and [Rebuild] check and repair both kinds on a
// table whose rows were written before the index was declared.
package index

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/odata"
	"github.com/unified-data/gotables/tables/service"
)

// Index is one partition index of a store. It is safe for concurrent use.
type Index[T any] struct {
	store *tables.Store[T]
	core  *engine.Table
	spec  *indexrow.Spec
	field *codec.Field
}

// On returns the index named name of the store. A name the type does not declare fails with
// [abstractions.ErrInvalidArgument], listing the names it does.
func On[T any](s *tables.Store[T], name string) (*Index[T], error) {
	if s == nil {
		return nil, fmt.Errorf("%w: index %q of a nil store", abstractions.ErrInvalidArgument, name)
	}
	core := engine.Of(s)
	sp := indexrow.Find(core.Indexes, name)
	if sp == nil {
		sp = indexrow.Find(core.Uniques, name)
	}
	if sp == nil {
		var names []string
		for _, x := range append(core.Indexes[:len(core.Indexes):len(core.Indexes)], core.Uniques...) {
			names = append(names, x.Name)
		}
		return nil, fmt.Errorf("%w: %v declares no index %q (it declares %q; declare one with the tag option `table:\",index=%s\"` on a field)",
			abstractions.ErrInvalidArgument, reflect.TypeFor[T](), name, names, name)
	}
	ix := &Index[T]{store: s, core: core, spec: sp}
	fields := core.Plan.Fields()
	for i := range fields {
		if fields[i].Cell == sp.Column {
			ix.field = &fields[i]
		}
	}
	return ix, nil
}

// Name returns the index's name.
func (ix *Index[T]) Name() string { return ix.spec.Name }

// value returns the cell value v stands for, encoded as a write of the field would store
// it: v is a value of the field's type (or, for a pointer field, of its element type), or a
// value convertible to it (an untyped constant, another integer type).
func (ix *Index[T]) value(op string, v any) (service.Value, error) {
	if v == nil {
		return service.Value{}, ix.refuse(op, "the value is nil; a nil field has no index row, so it cannot be looked up")
	}
	f := ix.field
	var zero T
	rv := reflect.ValueOf(&zero).Elem()
	fv, err := rv.FieldByIndexErr(f.Index)
	if err != nil || !fv.CanSet() {
		return service.Value{}, ix.refuse(op, fmt.Sprintf("the field %s lies below a pointer, so a value cannot be placed in it", f.Path))
	}
	val := reflect.ValueOf(v)
	target := fv.Type()
	ptr := target.Kind() == reflect.Pointer
	if ptr {
		target = target.Elem()
	}
	switch {
	case val.Type() == fv.Type():
		fv.Set(val)
		return ix.cell(op, &zero)
	case val.Type().AssignableTo(target):
	case val.Type().ConvertibleTo(target) && convertible(val.Kind(), target.Kind()):
		val = val.Convert(target)
	default:
		return service.Value{}, ix.refuse(op, fmt.Sprintf("the value is a %v; the field %s holds %v", val.Type(), f.Path, fv.Type()))
	}
	if ptr {
		p := reflect.New(target)
		p.Elem().Set(val)
		fv.Set(p)
	} else {
		fv.Set(val)
	}
	return ix.cell(op, &zero)
}

// convertible reports the conversions value accepts: between numbers, and between strings
// of named types; never number to string.
func convertible(from, to reflect.Kind) bool {
	num := func(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Float64 }
	return num(from) && num(to) || from == reflect.String && to == reflect.String
}

func (ix *Index[T]) cell(op string, v *T) (service.Value, error) {
	cells, err := codec.EncodeColumns(v, []string{ix.field.Name}, &ix.core.Acct.Codec)
	if err != nil {
		return service.Value{}, ix.refuse(op, "the value cannot be stored in the field: "+err.Error())
	}
	row := service.Row{Properties: cells}
	c, ok := row.Get(ix.spec.Column)
	if !ok {
		return service.Value{}, ix.refuse(op, "the value has no cell (a nil or omitted value has no index row)")
	}
	return c, nil
}

func (ix *Index[T]) refuse(op, msg string) error {
	return ix.refuseKind(op, abstractions.ErrInvalidArgument, msg)
}

func (ix *Index[T]) refuseKind(op string, kind error, msg string) error {
	return &abstractions.StoreError{Kind: kind, Op: "index " + op, Table: ix.core.Name,
		Message: fmt.Sprintf("index %q: %s; nothing was sent", ix.spec.Name, msg)}
}

// scan runs the query of a range of index rows of partition pk (those after the row key
// after, when it is not ""), handing each index row to fn until it says stop; with top > 0,
// it ends after the first page that holds rows. It reports whether the range may hold more
// rows than it handed to fn.
func (ix *Index[T]) scan(ctx context.Context, op, pk string, r indexrow.Range, after string, top int, fn func(*service.Row) bool) (bool, error) {
	q := service.Query{Filter: rangeFilter(pk, r, after), Select: []string{indexrow.OfColumn}, Top: top}
	if top > 0 && ix.core.Acct.Unordered() {
		// The service returns rows in no key order: the first rows of the range are those
		// of the whole range, sorted.
		rows, err := ix.core.SortedRange(ctx, "index "+op, pk, q, true)
		if err != nil {
			return false, err
		}
		for i := range rows {
			if i == top || !fn(&rows[i]) {
				return true, nil
			}
		}
		return false, nil
	}
	for {
		page, err := ix.core.Acct.Tables.Query(ctx, ix.core.Name, q)
		if err != nil {
			return false, ix.core.Translate("index "+op, pk, "", err)
		}
		for i := range page.Rows {
			if !fn(&page.Rows[i]) {
				return true, nil
			}
		}
		if page.Next == nil || top > 0 && len(page.Rows) > 0 {
			return page.Next != nil, nil
		}
		q.Continuation = page.Next
	}
}

// rangeFilter is the filter of the index rows of r in partition pk, after the row key after
// when it is not "".
func rangeFilter(pk string, r indexrow.Range, after string) string {
	from := " and RowKey ge " + service.QuoteString(r.From)
	if after != "" {
		from = " and RowKey gt " + service.QuoteString(after)
	}
	return "PartitionKey eq " + service.QuoteString(pk) + from + " and RowKey lt " + service.QuoteString(r.To)
}

// entity reads the entity an index row names and checks that it still holds the row's
// value (a writer that does not know the index, such as another program, may have changed
// it): it returns nil for an entity that is gone or holds another value. With a filter
// (where not nil), the entity is read by a point query that the filter narrows, so the
// service evaluates it, as it does for Store.Page; an entity it does not select is nil too.
func (ix *Index[T]) entity(ctx context.Context, pk string, r *service.Row, where *driver.Node) (*T, error) {
	rk, ok := indexrow.Of(r)
	if !ok {
		return nil, nil
	}
	if where != nil {
		return ix.selected(ctx, pk, rk, r.RowKey, where)
	}
	v, err := ix.store.One(ctx, pk+abstractions.IDSeparator+rk)
	if errors.Is(err, abstractions.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cells, err := codec.EncodeColumns(v, []string{ix.field.Name}, &ix.core.Acct.Codec)
	if err != nil {
		return nil, nil
	}
	row := service.Row{Properties: cells}
	c, ok := row.Get(ix.spec.Column)
	if !ok {
		return nil, nil
	}
	if k, err := ix.spec.Key(c, rk); err != nil || k != r.RowKey {
		return nil, nil
	}
	return v, nil
}

// selected reads the entity at pk, rk with a point query filtered by where, and returns it
// when the service selects it and it still holds the value of the index row key ixKey.
func (ix *Index[T]) selected(ctx context.Context, pk, rk, ixKey string, where *driver.Node) (*T, error) {
	f, ferr := odata.Point(ix.core.Plan, pk, rk, where)
	if ferr != nil {
		return nil, ix.core.FilterError("index page", ferr)
	}
	q := service.Query{Filter: f, Top: 1}
	for {
		page, err := ix.core.Acct.Tables.Query(ctx, ix.core.Name, q)
		if err != nil {
			return nil, ix.core.Translate("index page", pk, rk, err)
		}
		if len(page.Rows) == 0 {
			if page.Next == nil {
				return nil, nil
			}
			q.Continuation = page.Next // an empty page the service may return
			continue
		}
		row, skip, err := ix.core.Materialize(ctx, "index page", &page.Rows[0])
		if err != nil || skip {
			return nil, err
		}
		c, ok := row.Get(ix.spec.Column)
		if !ok {
			return nil, nil
		}
		if k, err := ix.spec.Key(c, rk); err != nil || k != ixKey {
			return nil, nil
		}
		return engine.Decode[T](ix.store, &row)
	}
}

// Find returns the entities of the partition whose field holds value, ordered by row key:
// one query of the index, then one read of each entity (which the store's read cache may
// answer). An entity that a writer which does not know the index changed or deleted is left
// out. A value of another type than the field's fails with
// [abstractions.ErrInvalidArgument] before anything is sent.
func (ix *Index[T]) Find(ctx context.Context, partition string, value any) (_ []*T, err error) {
	if err := ix.partitioned("find"); err != nil {
		return nil, err
	}
	pk, err := ix.core.CheckPartition("index find", partition)
	if err != nil {
		return nil, err
	}
	v, err := ix.value("find", value)
	if err != nil {
		return nil, err
	}
	r, err := ix.spec.Equal(v)
	if err != nil {
		return nil, ix.refuse("find", err.Error())
	}
	var rows []service.Row
	if _, err := ix.scan(ctx, "find", pk, r, "", 0, func(row *service.Row) bool {
		rows = append(rows, row.Clone())
		return true
	}); err != nil {
		return nil, err
	}
	if ix.core.Acct.Unordered() {
		engine.SortRows(rows)
	}
	out := make([]*T, 0, len(rows))
	for i := range rows {
		e, err := ix.entity(ctx, pk, &rows[i], nil)
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// Count returns how many index rows of the partition hold value: the number of its entities
// with that value, reading keys only. A type whose rows expire (package tables/expiry)
// counts the entities Find returns instead, since only an entity tells whether it expired.
func (ix *Index[T]) Count(ctx context.Context, partition string, value any) (int, error) {
	if err := ix.partitioned("count"); err != nil {
		return 0, err
	}
	if ix.core.Expiry != nil {
		found, err := ix.Find(ctx, partition, value)
		return len(found), err
	}
	pk, err := ix.core.CheckPartition("index count", partition)
	if err != nil {
		return 0, err
	}
	v, err := ix.value("count", value)
	if err != nil {
		return 0, err
	}
	r, err := ix.spec.Equal(v)
	if err != nil {
		return 0, ix.refuse("count", err.Error())
	}
	n := 0
	_, err = ix.scan(ctx, "count", pk, r, "", 0, func(*service.Row) bool { n++; return true })
	return n, err
}

// Range bounds a Page of an index: the values v with From ≤ v < To in the index's order
// (From ≥ v > To for an index declared :desc), that start with Prefix. A nil bound leaves
// that side open.
type Range struct {
	From, To any
	// Prefix keeps the values that start with it, for an index of a string field (compared
	// as strings.HasPrefix compares, byte by byte) or of a []byte field (its bytes); ""
	// keeps every value. An index of another type refuses it.
	Prefix string
}

// Page returns one page of the entities of q.Partition in the index's order (equal values
// in row-key order), those whose value is in r and that q.Where selects, as
// [tables.Store.Page] returns one page of a query: at most q.Take entities (0:
// [abstractions.DefaultPageSize], at most 1000), and the cursor of the next page ("" when
// the range holds no more). Give the cursor back in q.Cursor, with the same partition,
// range, filter and page size, to continue: it resumes after the last index row the page
// looked at.
//
// Each entity is read by its id, as Find reads them; with a filter, by a point query that
// the filter narrows, so the service evaluates the filter, exactly as it does for
// Store.Page (the store's read cache is not used then). Index rows whose entity is gone,
// holds another value, or is not selected take no place in the page, but are read: one
// page looks at 1000 index rows at most, so it may hold fewer than q.Take entities while
// more follow. Loop on HasMore.
//
// An index page lists one partition: q.Partition is required. q.RowKeyPrefix and q.Select
// are refused with [abstractions.ErrNotSupported] (the order is the index's, not the row
// keys', and each entity is read whole to check its value).
func (ix *Index[T]) Page(ctx context.Context, r Range, q abstractions.Query[T]) (_ abstractions.Page[T], err error) {
	if err := ix.partitioned("page"); err != nil {
		return abstractions.Page[T]{}, err
	}
	switch {
	case q.Partition == "":
		return abstractions.Page[T]{}, ix.refuse("page", "an index page lists one partition; set Partition")
	case q.RowKeyPrefix != "":
		return abstractions.Page[T]{}, ix.refuseKind("page", abstractions.ErrNotSupported, "a page of an index is in the index's order, not the row keys'; bound it with a Range, or use Store.Page")
	case q.Select != nil:
		return abstractions.Page[T]{}, ix.refuseKind("page", abstractions.ErrNotSupported, "a page of an index reads whole entities (each is checked against its index row); leave Select nil")
	}
	pk, err := ix.core.CheckPartition("index page", q.Partition)
	if err != nil {
		return abstractions.Page[T]{}, err
	}
	take := q.Take
	if take < 0 || take > engine.MaxPage {
		return abstractions.Page[T]{}, ix.refuse("page", fmt.Sprintf("Take is %d; a page holds 0 (the default, %d) to %d entities", take, abstractions.DefaultPageSize, engine.MaxPage))
	}
	if take == 0 {
		take = abstractions.DefaultPageSize
	}
	rg, err := ix.keyRange(r)
	if err != nil {
		return abstractions.Page[T]{}, err
	}
	where := driver.Root(q.Where)
	bound := "index " + ix.spec.Name + ": " + rangeFilter(pk, rg, "")
	if where != nil {
		// Checked once here, with the row key longest in the request URL, so that a filter the service would
		// refuse is refused before anything is sent.
		f, ferr := odata.Point(ix.core.Plan, pk, strings.Repeat("\u0800", indexrow.MaxKeyLength), where)
		if ferr != nil {
			return abstractions.Page[T]{}, ix.core.FilterError("index page", ferr)
		}
		bound += " where " + f
	}
	bounds := ix.core.Bounds(&engine.PreparedQuery{PK: pk, Filter: bound}, take)
	after := ""
	if q.Cursor != "" {
		c, ok := engine.DecodeCursor(q.Cursor)
		if !ok {
			return abstractions.Page[T]{}, ix.refuse("page", "the cursor is not one Page returned")
		}
		if why := engine.CursorRefusal(c, ix.core.Name, bounds); why != "" {
			return abstractions.Page[T]{}, ix.refuse("page", why)
		}
		after = c.RK
	}
	out := abstractions.Page[T]{Items: []*T{}}
	examined, more := 0, true
	for more && len(out.Items) < take && examined < engine.MaxPage {
		var rows []service.Row
		more, err = ix.scan(ctx, "page", pk, rg, after, min(take, engine.MaxPage-examined), func(row *service.Row) bool {
			rows = append(rows, row.Clone())
			return true
		})
		if err != nil {
			return abstractions.Page[T]{}, err
		}
		for i := range rows {
			if len(out.Items) == take {
				more = true // rows fetched and not looked at
				break
			}
			e, err := ix.entity(ctx, pk, &rows[i], where)
			if err != nil {
				return abstractions.Page[T]{}, err
			}
			examined++
			after = rows[i].RowKey
			if e != nil {
				out.Items = append(out.Items, e)
			}
		}
	}
	if more {
		out.Cursor = engine.EncodeCursor(engine.Cursor{PK: pk, RK: after, Table: engine.TableTag(ix.core.Name), Bounds: bounds})
	}
	return out, nil
}

// keyRange returns the range of index row keys of r.
func (ix *Index[T]) keyRange(r Range) (indexrow.Range, error) {
	var from, to service.Value
	var err error
	if r.From != nil {
		if from, err = ix.value("page", r.From); err != nil {
			return indexrow.Range{}, err
		}
	}
	if r.To != nil {
		if to, err = ix.value("page", r.To); err != nil {
			return indexrow.Range{}, err
		}
	}
	rg, err := ix.spec.Between(from, to)
	if err != nil {
		return indexrow.Range{}, ix.refuse("page", err.Error())
	}
	if r.Prefix != "" {
		pr, err := ix.spec.Prefix([]byte(r.Prefix))
		if err != nil {
			return indexrow.Range{}, ix.refuse("page", err.Error())
		}
		rg = rg.Intersect(pr)
	}
	return rg, nil
}

// partitioned refuses a partition index's call on a unique index.
func (ix *Index[T]) partitioned(op string) error {
	if !ix.spec.Unique {
		return nil
	}
	return ix.refuse(op, "it is a unique index, which has no rows in the entities' partitions; look a value up with Get")
}

// Get returns the entity that holds value in the field of a unique index (declared with
// `table:",unique=name"`), wherever its partition: the claim of the value, then the entity
// it names, two point reads. A claim whose entity is gone or holds another value (left by a
// crash, or by a writer that does not know the index) counts as none. No entity holding the
// value fails with an error matching [abstractions.ErrNotFound]; a partition index fails
// with [abstractions.ErrInvalidArgument] (use Find).
func (ix *Index[T]) Get(ctx context.Context, value any) (*T, error) {
	if !ix.spec.Unique {
		return nil, ix.refuse("get", "it is a partition index; look a value up with Find, in a partition")
	}
	v, err := ix.value("get", value)
	if err != nil {
		return nil, err
	}
	pk, rk, found, err := ix.core.LookupClaim(ctx, ix.spec, v)
	if err != nil {
		var se *abstractions.StoreError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, ix.refuse("get", err.Error())
	}
	if found {
		e, err := ix.store.One(ctx, pk+abstractions.IDSeparator+rk)
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, abstractions.ErrNotFound) {
			return nil, err
		}
	}
	return nil, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: "index get", Table: ix.core.Name,
		Message: fmt.Sprintf("no entity holds the value %v in the unique index %q", value, ix.spec.Name)}
}

// SweepClaims deletes the stale claims of a unique index (their entity gone or holding
// another value, left by a crash between an entity's write and its claim's release), each
// on condition of the version read, and returns how many it deleted. It reads the index's
// claims only, not the entities' partitions. Lookups already treat stale claims as absent.
func (ix *Index[T]) SweepClaims(ctx context.Context) (int, error) {
	if !ix.spec.Unique {
		return 0, ix.refuse("sweep claims", "it is a partition index, whose rows are written with their entities and need no sweep")
	}
	return ix.core.SweepClaims(ctx, ix.spec)
}
