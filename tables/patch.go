package tables

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Patch merges the fields p sets into the stored row with the id, without reading it, and
// returns the row's new ETag; see [abstractions.Storage.Patch].
//
// Each selected field is resolved to its column through the codec's plan (by its offset in
// T and its type), and its cells are produced by the codec itself: the engine sets the
// patched values in a zero T and encodes only the patched columns (codec.EncodeColumns), so
// the other fields' zero values are never looked at. So a patched
// value is stored exactly as a whole-entity write would store it: same EDM type, same JSON
// text in {Name}__Json for a JSON-stored field, same oversized policy. A merge cannot remove
// a cell, which is why a value that stores none (a nil pointer, the zero time) is refused,
// and so is one that only fits compressed ({Name}__GZip): a read would still prefer an
// uncompressed cell the row may hold. Writes go to the canonical column, never to an alias,
// and the canonical column wins on every later read, so aliased rows converge.
func (s *Store[T]) Patch(ctx context.Context, id string, p *abstractions.Patch[T]) (_ string, err error) {
	ctx, c := s.beginID(ctx, "patch", id)
	defer c.Finish(&err)
	const op = "patch"
	_, pk, rk, err := s.resolveID(op, id)
	if err != nil {
		return "", err
	}
	refuse := func(kind error, cause error, format string, args ...any) error {
		return &abstractions.StoreError{Kind: kind, Op: op, Table: s.table, PartitionKey: pk, RowKey: rk,
			Message: fmt.Sprintf(format, args...) + "; nothing was sent", Err: cause}
	}
	dp := driver.PatchOf(p)
	if len(dp.Fields) == 0 && dp.Err == nil {
		return "", refuse(abstractions.ErrInvalidArgument, nil, "the patch sets no field")
	}
	if err := dp.Err; err != nil {
		kind := abstractions.ErrInvalidArgument
		if errors.Is(err, abstractions.ErrNotSupported) {
			kind = abstractions.ErrNotSupported
		}
		return "", refuse(kind, err, "the patch cannot be resolved")
	}
	if etag := dp.ETag; etag != "" && !wire.IsEntityTag(etag) {
		return "", refuse(abstractions.ErrInvalidArgument, nil, "%s", strings.TrimSuffix(badETag(etag), "; nothing was sent"))
	}
	row, warm, err := s.patchRow(dp, pk, rk, refuse)
	if err != nil {
		return "", err
	}
	ifMatch := service.ETagAny
	if dp.ETag != "" {
		ifMatch = dp.ETag
	}
	w, err := s.merge(ctx, row, ifMatch, warm)
	if err != nil {
		return "", s.translate(op, pk, rk, err)
	}
	return w.ETag, nil
}

// merge sends a patch's merge. It is the one place a partial write of a row happens: the
// row it sends holds only some columns, so the read cache cannot store it as the entity's
// version. When warm is set (every cell is a plain column that reads back as the value
// set), and the entity was cached when the merge was sent and still is, unchanged, when it
// returns, the cached entity is kept with the cells applied. It takes the merge's ETag only
// when the merge was conditional on exactly the cached version; otherwise it keeps the one
// it had, which is older than the row's, so a Strict write of it meets a conflict rather
// than overwriting a change it has not seen. In every other case the entity is dropped.
func (s *core) merge(ctx context.Context, row service.Row, ifMatch string, warm bool) (service.Written, error) {
	key := s.entityKey(row.PartitionKey, row.RowKey)
	var before *cache.Entry
	if warm && s.policy.enabled() {
		before, _ = s.acct.cache.Get(key)
	}
	keys := s.writeKeys([2]string{row.PartitionKey, row.RowKey})
	s.beginWrite(keys)
	w, err := s.acct.tables.Write(ctx, s.table, service.Action{Op: service.OpMerge, Row: row, IfMatch: ifMatch})
	s.endWriteWith(keys, err, func(current *cache.Entry) *cache.Entry {
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

// patchRow checks every field of p and builds the merge row: the cells of the patched
// columns and of UpdatedAt.
//
// warm reports whether a cached entity may take the row's cells as they are: every patched
// field is a top-level plain column (not JSON-stored, not part of a nested struct) whose cell
// reads back as exactly the value set.
func (s *Store[T]) patchRow(p driver.Patch, pk, rk string,
	refuse func(kind error, cause error, format string, args ...any) error) (row service.Row, warm bool, err error) {
	probe := new(T)
	var cols []*codec.Field
	stampsUpdated := true
	for _, pf := range p.Fields {
		f, ok := s.plan.FieldByOffset(pf.Offset, pf.Type)
		if !ok {
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"%s has no column of its own (a nested struct as a whole, a field below a pointer, or an ignored field); "+
					"patch its fields one by one, or replace the entity", pf.Path)
		}
		switch {
		case f.Role != codec.RoleColumn:
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"%s is the row's %s, which a patch cannot change", f.Path, f.Role)
		case f.Split != "" || f.Offload != "" || f.File || (coveredByTypeLevel(s.plan, f)):
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"%s may hold a large value, which partial updates cannot write; replace the entity instead", f.Path)
		case len(f.Protected) > 0 && !p.AllowProtected:
			return service.Row{}, false, refuse(abstractions.ErrProtectedProperty, nil,
				"%s is protected (roles %s); check the caller's right yourself and call AllowProtected on the patch",
				f.Path, strings.Join(f.Protected, "|"))
		}
		if f.Name == "UpdatedAt" {
			stampsUpdated = false
		}
		reflect.NewAt(f.Type, unsafe.Add(unsafe.Pointer(probe), f.Offset)).Elem().Set(pf.Value)
		cols = append(cols, f)
	}
	if stampsUpdated {
		if f, ok := s.plan.Field("UpdatedAt"); ok && f.Role == codec.RoleColumn {
			s.entity(probe).UpdatedAt = s.acct.now()
			cols = append(cols, f)
		}
	}
	names := make([]string, len(cols))
	for i, f := range cols {
		names[i] = f.Name
	}
	props, err := codec.EncodeColumns(probe, names, &s.acct.codec)
	if err != nil {
		kind := abstractions.ErrInvalidArgument
		if errors.Is(err, abstractions.ErrOversizedCell) {
			kind = abstractions.ErrOversizedCell
		}
		return service.Row{}, false, refuse(kind, err, "the patch's values cannot be stored")
	}
	row = service.Row{PartitionKey: pk, RowKey: rk}
	warm = true
	for _, f := range cols {
		if f.JSON || f.Nested {
			warm = false
		}
		found := false
		for _, pr := range props {
			switch {
			case pr.Name == f.Cell:
				row.Properties = append(row.Properties, pr)
				found = true
			case f.Compressed != "" && pr.Name == f.Compressed:
				return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
					"the value of %s fits a cell only compressed, which a merge cannot write safely; replace the entity instead", f.Path)
			}
		}
		if !found {
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"the value of %s stores no cell (a nil pointer, slice or map, or the zero time) and a merge cannot remove one; "+
					"replace the entity to clear it", f.Path)
		}
	}
	if warm {
		warm = s.readsBack(&row, probe, cols)
	}
	return row, warm, nil
}

// readsBack reports whether decoding the row's cells gives every field of cols the value it
// has in probe (a float64 that is not what a read converts back, a time a read normalises,
// and the like make it false).
func (s *Store[T]) readsBack(row *service.Row, probe *T, cols []*codec.Field) bool {
	back := new(T)
	if err := codec.DecodeInto(row, back, &s.acct.codec); err != nil {
		return false
	}
	for _, f := range cols {
		if f.Indirect {
			return false
		}
		a := reflect.NewAt(f.Type, unsafe.Add(unsafe.Pointer(probe), f.Offset)).Elem().Interface()
		b := reflect.NewAt(f.Type, unsafe.Add(unsafe.Pointer(back), f.Offset)).Elem().Interface()
		if !reflect.DeepEqual(a, b) {
			return false
		}
	}
	return true
}

// coveredByTypeLevel reports whether a type-level split or offload option may make f a
// large value: it covers the fields whose cells can grow (strings, binary and JSON).
func coveredByTypeLevel(pl *codec.Plan, f *codec.Field) bool {
	if pl.Split() == "" && pl.Offload() == "" {
		return false
	}
	return f.JSON || f.Kind == service.KindString || f.Kind == service.KindBinary
}
