package fidelity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// The differential query check: random filters over a fixed random data set, run on every
// backend and compared with the rows Go selects.

// diffNames are the names of the differential data set: quotes, case, non-BMP characters.
var diffNames = []string{"", "a", "A", "alice", "Bob", "it's", "o''k", "émile", "😀", "｡", "zz", "a b"}

// diffItems returns the fixed random data set of the differential test: rows of itemRow in
// partitions "p" and "q", and rows of itemRowV1 (most columns absent).
func diffItems(r *rand.Rand) ([]*itemRow, []*itemRowV1) {
	var items []*itemRow
	for i := 0; i < 240; i++ {
		it := &itemRow{
			Entity: abstractions.Entity{ID: fmt.Sprintf("%s|r%03d", []string{"p", "p", "p", "q"}[r.IntN(4)], i)},
			Name:   diffNames[r.IntN(len(diffNames))],
			Count:  int32(r.IntN(7)-3) * 10,
			Big:    []int64{math.MinInt64, -5_000_000_000, -1, 0, 1, 5_000_000_000, math.MaxInt64}[r.IntN(7)],
			Small:  uint16(r.IntN(4)) * 20000,
			Mid:    uint32(r.IntN(4)) * 1_500_000_000,
			Huge:   []uint64{0, 7, math.MaxInt64, 1 << 63, math.MaxUint64}[r.IntN(5)],
			Score:  []float64{-2.5, -0.125, 0, 0.1, 1, 3.75, 1e300}[r.IntN(7)],
			Ratio:  float32(r.IntN(5)) / 4,
			Active: r.IntN(2) == 0,
			Span:   time.Duration(r.IntN(5)-1) * time.Minute,
			Ref:    guidOf(byte(r.IntN(4) * 60)),
			Level:  itemLevel(r.IntN(3)),
			Home:   address{City: []string{"Lviv", "Oslo", "", "lviv"}[r.IntN(4)]},
		}
		if r.IntN(5) > 0 {
			it.When = baseT.Add(time.Duration(r.IntN(6)) * time.Hour)
		}
		if r.IntN(2) == 0 {
			it.Nick = ptr(diffNames[r.IntN(4)])
			it.Opt = ptr(r.IntN(5) - 2)
			it.Flag = ptr(r.IntN(2) == 0)
		}
		items = append(items, it)
	}
	var old []*itemRowV1
	for i := 0; i < 20; i++ {
		old = append(old, &itemRowV1{Entity: abstractions.Entity{ID: fmt.Sprintf("p|old%02d", i)}, Name: diffNames[r.IntN(len(diffNames))]})
	}
	return items, old
}

// randomFilter returns a random filter of at most depth levels and at most budget
// comparisons, and the number it holds.
func randomFilter(r *rand.Rand, depth, budget int) (abstractions.Filter[itemRow], int) {
	if depth > 0 && budget > 1 && r.IntN(3) > 0 {
		switch r.IntN(3) {
		case 0:
			f, n := randomFilter(r, depth-1, budget)
			return abstractions.Not(f), n
		default:
			var fs []abstractions.Filter[itemRow]
			used := 0
			for k := 2 + r.IntN(2); k > 0 && used < budget; k-- {
				f, n := randomFilter(r, depth-1, budget-used)
				fs = append(fs, f)
				used += n
			}
			if r.IntN(2) == 0 {
				return abstractions.And(fs...), used
			}
			return abstractions.Or(fs...), used
		}
	}
	op := r.IntN(6)
	pick := func(vs ...any) any { return vs[r.IntN(len(vs))] }
	switch r.IntN(17) {
	case 0:
		return cmpOf(fName, op, diffNames[r.IntN(len(diffNames))]), 1
	case 1:
		return cmpOf(fCount, op, int32(r.IntN(9)-4)*10), 1
	case 2:
		return cmpOf(fBig, op, pick(int64(math.MinInt64), int64(-5_000_000_000), int64(-2), int64(0), int64(1), int64(math.MaxInt64)).(int64)), 1
	case 3:
		return cmpOf(fSmall, op, uint16(r.IntN(4))*20000), 1
	case 4:
		return cmpOf(fMid, op, uint32(r.IntN(4))*1_500_000_000), 1
	case 5:
		return cmpOf(fHuge, op%2, pick(uint64(0), uint64(7), uint64(math.MaxInt64), uint64(1<<63), uint64(math.MaxUint64)).(uint64)), 1
	case 6:
		return cmpOf(fScore, op, pick(-2.5, -0.125, 0.0, 0.1, 1.0, 2.0, 1e300, -1e300).(float64)), 1
	case 7:
		return cmpOf(fRatio, op, float32(r.IntN(5))/4), 1
	case 8:
		if r.IntN(2) == 0 {
			return fActIs, 0
		}
		return cmpOf(fActive, op, r.IntN(2) == 0), 1
	case 9:
		return cmpOf(fWhen, op, baseT.Add(time.Duration(r.IntN(7)-1)*time.Hour)), 1
	case 10:
		return cmpOf(fSpan, op, time.Duration(r.IntN(5)-1)*time.Minute), 1
	case 11:
		return cmpOf(fRef, op%2, guidOf(byte(r.IntN(4)*60))), 1
	case 12:
		return cmpOf(fLevel, op%2, itemLevel(r.IntN(3))), 1
	case 13:
		return cmpOf(fNick, op, diffNames[r.IntN(4)]), 1
	case 14:
		return cmpOf(fOpt, op, r.IntN(5)-2), 1
	case 15:
		return cmpOf(fFlag, op, r.IntN(2) == 0), 1
	default:
		return cmpOf(fCity, op, pick("Lviv", "Oslo", "", "lviv", "M").(string)), 1
	}
}

func cmpOf[V any](f abstractions.TypedField[itemRow, V], op int, v V) abstractions.Filter[itemRow] {
	return []func(V) abstractions.Filter[itemRow]{f.Eq, f.Ne, f.Lt, f.Le, f.Gt, f.Ge}[op](v)
}

// evalFilter evaluates a filter on an item in Go, with the service's rule for a missing
// column (a nil pointer, the zero time): every comparison on it is false.
func evalFilter(n *driver.Node, it *itemRow) bool {
	switch n.Op {
	case driver.OpAnd:
		for _, o := range n.Operands {
			if !evalFilter(o, it) {
				return false
			}
		}
		return true
	case driver.OpOr:
		for _, o := range n.Operands {
			if evalFilter(o, it) {
				return true
			}
		}
		return false
	case driver.OpNot:
		return !evalFilter(n.Operands[0], it)
	}
	fv := fieldValue(n.Field, it)
	if !fv.IsValid() {
		return false
	}
	if n.Op == driver.OpTrue {
		return fv.Bool()
	}
	c := compareValues(fv, reflect.ValueOf(n.Value))
	switch n.Op {
	case driver.OpEq:
		return c == 0
	case driver.OpNe:
		return c != 0
	case driver.OpLt:
		return c < 0
	case driver.OpLe:
		return c <= 0
	case driver.OpGt:
		return c > 0
	}
	return c >= 0
}

// fieldValue returns the field a reference names, dereferenced, or the zero Value when the
// row would hold no column for it.
func fieldValue(ref driver.Field, it *itemRow) reflect.Value {
	v := reflect.ValueOf(it).Elem()
	var found reflect.Value
	var walk func(v reflect.Value, base uintptr)
	walk = func(v reflect.Value, base uintptr) {
		for i := 0; i < v.NumField() && !found.IsValid(); i++ {
			sf := v.Type().Field(i)
			if base+sf.Offset == ref.Offset && sf.Type == ref.Type {
				found = v.Field(i)
				return
			}
			if sf.Type.Kind() == reflect.Struct && sf.Type != reflect.TypeFor[time.Time]() {
				walk(v.Field(i), base+sf.Offset)
			}
		}
	}
	walk(v, 0)
	if found.Kind() == reflect.Pointer {
		if found.IsNil() {
			return reflect.Value{}
		}
		found = found.Elem()
	}
	if t, ok := found.Interface().(time.Time); ok && t.IsZero() {
		return reflect.Value{}
	}
	return found
}

func compareValues(a, b reflect.Value) int {
	switch x := a.Interface().(type) {
	case string:
		return service.CompareUTF16(x, b.Interface().(string))
	case time.Time:
		return x.Compare(b.Interface().(time.Time))
	case abstractions.GUID:
		if x == b.Interface().(abstractions.GUID) {
			return 0
		}
		return 1
	case bool:
		y := b.Bool()
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	switch a.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp.Compare(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return cmp.Compare(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmp.Compare(a.Float(), b.Float())
	}
	panic(fmt.Sprintf("no comparison for %v", a.Type()))
}

// diffStore is the differential data set stored on one backend.
type diffStore struct {
	Backend string
	Store   *tables.Store[itemRow]
	// Items are the rows written as itemRow (not itemRowV1).
	Items []*itemRow
}

// newDiffStore stores the differential data set in a new table of the backend and returns it
// with a function that deletes the table.
func newDiffStore(ctx context.Context, b backend) (*diffStore, func(), error) {
	table := "fuzz" + randomSuffix()
	acct := tables.NewAccountOver(b.Name, b.Tables, b.Blobs, &tables.Options{Now: storeClock})
	s, err := tables.For[itemRow](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		return nil, nil, err
	}
	old, err := tables.For[itemRowV1](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		return nil, nil, err
	}
	drop := func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = b.Tables.DeleteTable(cctx, table)
	}
	items, olds := diffItems(rand.New(rand.NewPCG(2026, 11)))
	if err := s.CreateBatch(ctx, items); err != nil {
		drop()
		return nil, nil, err
	}
	if err := old.CreateBatch(ctx, olds); err != nil {
		drop()
		return nil, nil, err
	}
	return &diffStore{Backend: b.Name, Store: s, Items: items}, drop, nil
}

// checkRandomFilter runs the random filter of a seed on every store and returns what differs:
// between the backends, or between a backend and the Go evaluation of the filter. refused
// reports a filter every backend refused before sending it.
func checkRandomFilter(ctx context.Context, seed uint64, stores []*diffStore) (problem string, refused bool) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	f, _ := randomFilter(r, 3, 14)
	q := abstractions.Query[itemRow]{Where: f}
	if r.IntN(2) == 0 {
		q.Partition = "p"
	}
	var first string
	for i, ds := range stores {
		got, err := ds.Store.Query(ctx, q)
		var res string
		switch {
		case errors.Is(err, abstractions.ErrNotSupported) || errors.Is(err, abstractions.ErrInvalidArgument):
			res = "refused: " + strings.ReplaceAll(err.Error(), ds.Store.Table(), "T")
			refused = true
		case err != nil:
			return fmt.Sprintf("seed %d on %s: %v", seed, ds.Backend, err), false
		default:
			res = strings.Join(ids(got), " ")
			var want []string
			for _, it := range ds.Items {
				if pk, _ := abstractions.SplitID(it.ID); (q.Partition == "" || pk == q.Partition) && evalFilter(driver.Root(f), it) {
					want = append(want, it.ID)
				}
			}
			slices.Sort(want) // the keys are ASCII: byte order is the service's order
			var mine []string
			for _, id := range ids(got) {
				if !strings.Contains(id, "|old") {
					mine = append(mine, id)
				}
			}
			if g, w := strings.Join(mine, " "), strings.Join(want, " "); g != w {
				return fmt.Sprintf("seed %d on %s: the service selected\n%s\nGo selects\n%s", seed, ds.Backend, g, w), false
			}
		}
		if i == 0 {
			first = res
		} else if res != first {
			return fmt.Sprintf("seed %d: %s selected\n%s\n%s selected\n%s", seed, stores[0].Backend, first, ds.Backend, res), false
		}
	}
	return "", refused
}
