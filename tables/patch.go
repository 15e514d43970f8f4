package tables

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/tables/internal/wire"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Patch merges the fields p sets into the stored row with the id, without reading it, and
// returns the row's new ETag; see [abstractions.Storage.Patch].
//
// A patched value is stored exactly as a whole-entity write would store it: same EDM type,
// same JSON text in {Name}__Json for a JSON-stored field, same oversized policy. A merge
// cannot remove a cell, which is why a value that stores none (a nil pointer, the zero time)
// is refused, and so is one that only fits compressed ({Name}__GZip): a read would still
// prefer an uncompressed cell the row may hold. Writes go to the canonical column, never to
// an alias, and the canonical column wins on every later read, so aliased rows converge.
func (s *Store[T]) Patch(ctx context.Context, id string, p *abstractions.Patch[T]) (_ string, err error) {
	// Each selected field is resolved to its column through the codec's plan (by its offset
	// in T and its type), and its cells are produced by the codec itself: the patched values
	// are set in a zero T and only the patched columns encoded (codec.EncodeColumns), so the
	// other fields' zero values are never looked at.
	ctx, c := s.core.BeginID(ctx, "patch", id)
	defer c.Finish(&err)
	const op = "patch"
	_, pk, rk, err := s.core.ResolveID(op, id)
	if err != nil {
		return "", err
	}
	refuse := func(kind error, cause error, format string, args ...any) error {
		return &abstractions.StoreError{Kind: kind, Op: op, Table: s.core.Name, PartitionKey: pk, RowKey: rk,
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
		return "", refuse(abstractions.ErrInvalidArgument, nil, "%s", strings.TrimSuffix(engine.BadETag(etag), "; nothing was sent"))
	}
	row, warm, err := s.patchRow(dp, pk, rk, refuse)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", s.core.Unsent(op, pk, rk, err)
	}
	if s.core.TouchesIndex(&row) || s.core.Expiry != nil || s.core.Feed != nil {
		// The index rows of the changed values, and the change record, go in the merge's
		// transaction; a row that expires is read first, and an expired one is not found.
		w, err := s.core.PatchIndexed(ctx, op, row, dp.ETag)
		if err != nil {
			return "", err
		}
		return w.ETag, nil
	}
	ifMatch := service.ETagAny
	if dp.ETag != "" {
		ifMatch = dp.ETag
	}
	w, err := s.core.Merge(ctx, row, ifMatch, warm)
	if err != nil {
		return "", s.core.Translate(op, pk, rk, err)
	}
	return w.ETag, nil
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
		f, ok := s.core.Plan.FieldByOffset(pf.Offset, pf.Type)
		if !ok {
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"%s has no column of its own (a nested struct as a whole, a field below a pointer, or an ignored field); "+
					"patch its fields one by one, or replace the entity", pf.Path)
		}
		switch {
		case f.Role != codec.RoleColumn:
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"%s is the row's %s, which a patch cannot change", f.Path, f.Role)
		case f.Split != "" || f.Offload != "" || f.File || (engine.CoveredByTypeLevel(s.core.Plan, f)):
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"%s may hold a large value, which partial updates cannot write; replace the entity instead", f.Path)
		case len(f.Uniques) > 0:
			return service.Row{}, false, refuse(abstractions.ErrNotSupported, nil,
				"%s has a unique index (unique=%s), whose claim a patch does not move; change it with Update", f.Path, strings.Join(f.Uniques, "|"))
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
		if f, ok := s.core.Plan.Field("UpdatedAt"); ok && f.Role == codec.RoleColumn {
			s.entity(probe).UpdatedAt = s.core.Acct.Now()
			cols = append(cols, f)
		}
	}
	names := make([]string, len(cols))
	for i, f := range cols {
		names[i] = f.Name
	}
	props, err := codec.EncodeColumns(probe, names, &s.core.Acct.Codec)
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
	if err := codec.DecodeInto(row, back, &s.core.Acct.Codec); err != nil {
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
