package tables

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/service"
)

// System columns.
//
// A polymorphic row's system columns are the cells whose names start with '_': a marker
// row holds nothing else, and an item row holds them beside the item's own columns (which
// never start with '_': the codec refuses such field names). The storage layer's own
// columns are refused as system columns, so a caller cannot forge a discriminator or a
// large-value marker.

// reservedColumns are the '_' columns the storage layer writes itself: the discriminator,
// the large-value planner's continuation-row markers and the cells a change feed keeps on
// an entity's row.
var reservedColumns = map[string]bool{
	codec.TypeNameColumn: true,
	"_SplitOf":           true,
	"_SplitIndex":        true,
	"_SplitParts":        true,
	feedrow.SeqColumn:    true,
	feedrow.VerColumn:    true,
}

func isSystemColumn(name string) bool { return strings.HasPrefix(name, "_") }

// The time range the service stores, as the codec checks it.
var (
	minServiceTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	endServiceTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// columns checks system columns and converts them to cells, in name order so that the
// same map always writes the same row.
func (s *PolyStore[B]) columns(op, pk, rk string, cols map[string]any) ([]service.Property, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(cols))
	for n := range cols {
		names = append(names, n)
	}
	sort.Strings(names)
	props := make([]service.Property, 0, len(cols))
	for _, n := range names {
		switch {
		case !isSystemColumn(n):
			return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
				fmt.Sprintf("the column %q is not a system column; system columns start with '_' (store data as the item's fields)", n))
		case reservedColumns[n]:
			return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument,
				fmt.Sprintf("the column %q belongs to the storage layer; choose another name", n))
		}
		v, err := cellOf(cols[n])
		if err != nil {
			return nil, s.refuse(op, pk, rk, abstractions.ErrInvalidArgument, fmt.Sprintf("the column %q %v", n, err))
		}
		if size, over := service.CellTooLarge(v); over {
			return nil, s.refuse(op, pk, rk, abstractions.ErrOversizedCell,
				fmt.Sprintf("the column %q holds %d bytes, above the %d-byte limit of one cell", n, size, service.MaxBinaryBytes))
		}
		props = append(props, service.Property{Name: n, Value: v})
	}
	return props, nil
}

// cellOf converts a system column's Go value to its cell.
func cellOf(v any) (service.Value, error) {
	switch x := v.(type) {
	case string:
		return service.String(x), nil
	case bool:
		return service.Bool(x), nil
	case int32:
		return service.Int32(x), nil
	case int64:
		return service.Int64(x), nil
	case int:
		return service.Int64(int64(x)), nil
	case float64:
		return service.Double(x), nil
	case time.Time:
		if x.Before(minServiceTime) || !x.Before(endServiceTime) {
			return service.Value{}, fmt.Errorf("holds %s, outside the range the service stores (1601-01-01 to the end of 9999)", x.UTC().Format(time.RFC3339Nano))
		}
		return service.DateTime(x), nil
	case []byte:
		if x == nil {
			return service.Value{}, fmt.Errorf("holds a nil []byte; a cell cannot be null")
		}
		return service.Binary(x), nil
	case abstractions.GUID:
		return service.Guid(x), nil
	case nil:
		return service.Value{}, fmt.Errorf("holds nil; a cell cannot be null")
	}
	return service.Value{}, fmt.Errorf("holds a %T; system columns hold string, bool, int32, int64, int, float64, time.Time, []byte or abstractions.GUID", v)
}
