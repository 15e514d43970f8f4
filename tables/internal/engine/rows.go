package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/indexrow"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Write is a prepared entity as the code that writes rows sees it, whatever its type.
type Write struct {
	V      any                  // the copy: a *T
	Base   *abstractions.Entity // the Entity inside v
	PK, RK string
	Row    service.Row
	// Layout and logical are a split-aware entity's rows and its cells as one row (large
	// values whole), the form the read cache keeps.
	Layout  *largevalue.Layout
	Logical service.Row
	// Fixed, values and files are a split-aware entity's ordinary cells, large values and
	// files, kept to plan its rows once its files are hashed; uploaded are the blobs this
	// write has uploaded (or touched) so far.
	Fixed    []service.Property
	Values   []largevalue.Value
	Files    []FileValue
	Uploaded map[string]bool
	// Ix are the row keys of the entity's index rows (package indexrow), as its main row
	// lists them.
	Ix []string
	// IfMatch, in a batch (BatchLarge), makes the entity's write a replace of the version it
	// names (ModeStrict) whatever the batch's mode: a polymorphic batch mixes such writes
	// with the others.
	IfMatch string
}

// DeleteConflict is the error of a delete whose row is at another version than ifMatch.
func (s *Table) DeleteConflict(pk, rk string, err error) error {
	return &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: "delete", Table: s.Name, PartitionKey: pk, RowKey: rk, Err: err,
		Message: "the row changed since the version this delete was based on, and was not deleted; read it again to decide"}
}

// BadETag says why an ETag cannot be a write's condition. The value is quoted with %q, so
// control characters cannot reach a log line as they are.
func BadETag(etag string) string {
	if etag == service.ETagAny {
		return "the ETag \"*\" names no version; to act on whatever version is stored, leave the condition out " +
			"(LastWriterWins for Update, no WithETag for a patch, \"\" for Delete and MergeColumns); nothing was sent"
	}
	return fmt.Sprintf("the ETag %q is not an entity tag (a quoted string such as W/\"datetime'…'\", as a read returns it); nothing was sent", etag)
}

// KeysOnly is the projection of a read that needs no property.
var KeysOnly = []string{}

// OfOnly is the projection of a read that needs only to tell a continuation row (which
// carries _SplitOf) from an entity.
var OfOnly = []string{largevalue.OfColumn}

// Foreign reports a row that a store sharing its table (StoreOptions.SharedTable) leaves
// to the polymorphic stores: one that carries the discriminator column.
func (s *Table) Foreign(r *service.Row) bool {
	if indexrow.IsKey(r.RowKey) || indexrow.IsClaimPartition(r.PartitionKey) {
		return true // a partition index's row or a unique index's claim, never an entity
	}
	if feedrow.IsKey(r.RowKey) || feedrow.IsPartition(r.PartitionKey) {
		return true // a change record, a dead letter, a mark or a lease of a feed
	}
	if !s.Shared {
		return false
	}
	_, ok := r.Get(codec.TypeNameColumn)
	return ok
}

// SharedSel is the projection sel, with the discriminator column when the store shares its
// table, so that foreign can tell the rows it skips, and the expiry column when its rows
// expire. A nil projection reads every column.
func (s *Table) SharedSel(sel []string) []string {
	sel = s.WithExpiry(sel)
	if !s.Shared || sel == nil {
		return sel
	}
	return append(sel[:len(sel):len(sel)], codec.TypeNameColumn)
}

// Merge sends a patch's merge. It is the one place a partial write of a row happens: the
// row it sends holds only some columns, so the read cache cannot store it as the entity's
// version. When warm is set (every cell is a plain column that reads back as the value
// set), and the entity was cached when the merge was sent and still is, unchanged, when it
// returns, the cached entity is kept with the cells applied. It takes the merge's ETag only
// when the merge was conditional on exactly the cached version; otherwise it keeps the one
// it had, which is older than the row's, so a Strict write of it meets a conflict rather
// than overwriting a change it has not seen. In every other case the entity is dropped.
func (s *Table) Merge(ctx context.Context, row service.Row, ifMatch string, warm bool) (service.Written, error) {
	key := s.EntityKey(row.PartitionKey, row.RowKey)
	var before *cache.Entry
	if warm && s.Policy.Enabled() {
		before, _ = s.Acct.Cache.Get(key)
	}
	keys := s.WriteKeys([2]string{row.PartitionKey, row.RowKey})
	s.BeginWrite(keys)
	w, err := s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpMerge, Row: row, IfMatch: ifMatch})
	s.EndWriteWith(keys, err, func(current *cache.Entry) *cache.Entry {
		if before == nil || current != before {
			return nil
		}
		next := before.Row.Clone()
		for _, p := range row.Properties {
			replaced := false
			for i := range next.Properties {
				if next.Properties[i].Name == p.Name {
					next.Properties[i].Value, replaced = p.Value, true
				}
			}
			if !replaced {
				next.Properties = append(next.Properties, p)
			}
		}
		if ifMatch == before.Row.ETag && w.ETag != "" {
			next.ETag, next.Timestamp = w.ETag, w.Timestamp
		}
		return before.Derive(next)
	})
	return w, err
}

// CoveredByTypeLevel reports whether a type-level split or offload option may make f a
// large value: it covers the fields whose cells can grow (strings, binary and JSON).
func CoveredByTypeLevel(pl *codec.Plan, f *codec.Field) bool {
	if pl.Split() == "" && pl.Offload() == "" {
		return false
	}
	return f.JSON || f.Kind == service.KindString || f.Kind == service.KindBinary
}

// PrepareIndexed plans the rows of an entity of an indexed type that is not split-aware:
// its main row (p.Row, which lists the entity's index keys in indexrow.Column) as a layout of
// one row, which the unit path writes with the index rows.
func (s *Table) PrepareIndexed(op string, p *Write) error {
	props, keys, err := s.IndexCells(p.RK, p.Row.Properties)
	if err != nil {
		return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.Name, PartitionKey: p.PK, RowKey: p.RK,
			Message: err.Error() + "; nothing was sent"}
	}
	p.Row.Properties, p.Ix = props, keys
	p.Layout = &largevalue.Layout{Rows: []service.Row{p.Row}}
	p.Logical = p.Row
	return nil
}

// IndexCells returns the cells of a main row with indexrow.Column listing the keys of its
// index rows (no such cell when it has none), and those keys.
func (s *Table) IndexCells(rk string, props []service.Property) ([]service.Property, []string, error) {
	keys, err := indexrow.Keys(s.Indexes, &service.Row{RowKey: rk, Properties: props})
	if err != nil || len(keys) == 0 {
		return props, nil, err
	}
	out := append(props[:len(props):len(props)], service.Property{Name: indexrow.Column, Value: service.String(indexrow.Join(keys))})
	return out, keys, nil
}

// IndexActions returns the actions that bring the index rows of the entity p from what the
// stored row st lists to what p lists: a write of each new key, a delete of each key that
// went (unless another writer already removed it).
func IndexActions(p *Write, st *Stored) []service.Action {
	if len(p.Ix) == 0 && len(st.Ix) == 0 {
		return nil
	}
	var acts []service.Action
	had := map[string]bool{}
	for _, k := range st.Ix {
		had[k] = true
	}
	now := map[string]bool{}
	for _, k := range p.Ix {
		now[k] = true
		if !had[k] {
			acts = append(acts, service.Action{Op: service.OpUpsertReplace, Row: indexrow.Row(p.PK, k, p.RK)})
		}
	}
	for _, k := range st.Ix {
		if !now[k] && !st.Gone[k] {
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: p.PK, RowKey: k}, IfMatch: service.ETagAny})
		}
	}
	return acts
}

// EntityFilter is the filter a query of the store's entities sends: filter, and, for a
// store with partition indexes or a feed, not their rows, so that the service does not return them
// (they sort after ASCII row keys, and would take places in a page). The query's plan and
// its cursor's bounds are those of filter: this adds no scan.
func (s *Table) EntityFilter(filter string) string {
	var nots []string
	if len(s.Indexes) > 0 {
		nots = append(nots, "(RowKey lt "+service.QuoteString(indexrow.Prefix)+" or RowKey ge "+service.QuoteString(indexrow.PrefixEnd)+")")
	}
	if s.Feed != nil {
		nots = append(nots, "(RowKey lt "+service.QuoteString(feedrow.Prefix)+" or RowKey ge "+service.QuoteString(feedrow.PrefixEnd)+")")
	}
	if len(nots) == 0 {
		return filter
	}
	not := strings.Join(nots, " and ")
	if filter == "" {
		return not
	}
	return "(" + filter + ") and " + not
}

// GoValue converts a cell to the Go value of its EDM type, as a PolyEntry's Columns and a
// change record's Body hold it: string, []byte (a copy), bool, int32, int64, float64,
// time.Time or abstractions.GUID; nil for an invalid value.
func GoValue(v service.Value) any {
	switch v.Kind() {
	case service.KindString:
		return v.Str()
	case service.KindBool:
		return v.Bool()
	case service.KindInt32:
		return v.Int32()
	case service.KindInt64:
		return v.Int64()
	case service.KindDouble:
		return v.Float()
	case service.KindDateTime:
		return v.Time()
	case service.KindBinary:
		return append([]byte{}, v.Bytes()...)
	case service.KindGuid:
		return abstractions.GUID(v.GuidBytes())
	}
	return nil
}
