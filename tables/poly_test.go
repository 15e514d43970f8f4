package tables

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// event is the base of the polymorphic tests' items.
type event interface{ Kind() string }

type opened struct {
	At time.Time
	By string
}

func (*opened) Kind() string { return "opened" }

type noted struct {
	Text string
}

func (*noted) Kind() string { return "noted" }

// Item types a polymorphic store refuses to write.
type (
	guardedEvent struct {
		Owner string `table:",protected=admin"`
	}
	splitEvent struct {
		Body string `table:",split=text"`
	}
	splitTypeEvent struct {
		_    struct{} `table:",split=text"`
		Body string
	}
	expiringEvent struct {
		Expires time.Time `table:",expires=1h"`
	}
	// stranger is registered but is not an event.
	stranger struct{ X int }
	// chanEvent is registered but has a field the codec cannot map.
	chanEvent struct{ C chan int }
)

func (*guardedEvent) Kind() string   { return "guarded" }
func (*splitEvent) Kind() string     { return "split" }
func (*splitTypeEvent) Kind() string { return "split type" }
func (*expiringEvent) Kind() string  { return "expiring" }
func (*chanEvent) Kind() string      { return "chan" }

var openedAt = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// polyStore returns a polymorphic store of event over a fresh fake, its table Events.
func polyStore(t *testing.T) (*PolyStore[event], *fakeTables) {
	t.Helper()
	types := new(abstractions.TypeRegistry)
	for _, err := range []error{
		abstractions.RegisterType[opened](types, "Opened"),
		abstractions.RegisterType[noted](types, "Noted"),
		abstractions.RegisterType[guardedEvent](types, "Guarded"),
		abstractions.RegisterType[splitEvent](types, "Split"),
		abstractions.RegisterType[splitTypeEvent](types, "SplitType"),
		abstractions.RegisterType[expiringEvent](types, "Expiring"),
		abstractions.RegisterType[stranger](types, "Stranger"),
		abstractions.RegisterType[chanEvent](types, "Chan"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	f := newFake()
	s, err := PolyFor[event](testAccount("test", f, nil, nil), types, &StoreOptions{Table: "Events"})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func TestNewPolyRefuses(t *testing.T) {
	acct := testAccount("test", newFake(), nil, nil)
	types := new(abstractions.TypeRegistry)
	cases := []struct {
		name string
		err  error
		kind error
	}{
		{"a base that is not an interface", func() error { _, err := PolyFor[opened](acct, types, nil); return err }(), abstractions.ErrInvalidArgument},
		{"no registry", func() error { _, err := PolyFor[event](acct, nil, nil); return err }(), abstractions.ErrInvalidArgument},
		{"a cache", func() error {
			_, err := PolyFor[event](acct, types, &StoreOptions{Cache: Absolute(time.Minute)})
			return err
		}(), abstractions.ErrNotSupported},
		{"a table name the service refuses", func() error {
			_, err := PolyFor[event](acct, types, &StoreOptions{Table: "no"})
			return err
		}(), abstractions.ErrInvalidArgument},
		{"no account", func() error { _, err := PolyFor[event](nil, types, nil); return err }(), abstractions.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantKind(t, tc.err, tc.kind) })
	}
	s, err := PolyFor[event](acct, types, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Table() != "event" || s.Account() != acct {
		t.Errorf("table %q, account %v", s.Table(), s.Account())
	}
}

// Items of the registered types and marker rows round-trip with their system columns and
// keys as written; a write returns the row's version.
func TestPolyRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := polyStore(t)
	if err := s.EnsureCreated(ctx); err != nil {
		t.Fatal(err)
	}
	key := func(rk string) abstractions.TableKey {
		return abstractions.TableKey{PartitionKey: "Stream A", RowKey: rk}
	}
	tag, err := s.Insert(ctx, abstractions.PolyWrite[event]{Key: key("0001"), Item: &opened{At: openedAt, By: "ann"},
		Columns: map[string]any{"_Seq": 1, "_By": "ann"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upsert(ctx, abstractions.Marker[event](key("head"), map[string]any{"_Version": int32(1)})); err != nil {
		t.Fatal(err)
	}
	e, err := s.One(ctx, key("0001"))
	if err != nil {
		t.Fatal(err)
	}
	o, ok := e.Item.(*opened)
	if !ok || !o.At.Equal(openedAt) || o.By != "ann" || e.TypeName != "Opened" || e.ETag != tag || e.IsMarker() {
		t.Fatalf("read %+v", e)
	}
	if e.Columns["_Seq"] != int64(1) || e.Columns["_By"] != "ann" {
		t.Errorf("system columns %v", e.Columns)
	}
	list, err := s.List(ctx, "Stream A")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || !list[1].IsMarker() || list[1].Columns["_Version"] != int32(1) {
		t.Fatalf("listed %+v", list)
	}
	// The keys are used as written: another case is another row.
	_, err = s.One(ctx, abstractions.TableKey{PartitionKey: "stream a", RowKey: "0001"})
	wantKind(t, err, abstractions.ErrNotFound)

	next, err := s.MergeColumns(ctx, key("head"), map[string]any{"_Version": int32(2)}, list[1].ETag)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.MergeColumns(ctx, key("head"), map[string]any{"_Version": int32(3)}, list[1].ETag)
	wantKind(t, err, abstractions.ErrConcurrencyConflict)
	if err != nil && strings.Contains(err.Error(), "Mutate") {
		t.Errorf("the conflict's advice names Mutate: %v", err)
	}
	if _, err := s.MergeColumns(ctx, key("head"), map[string]any{"_Note": "x"}, ""); err != nil {
		t.Fatal(err)
	}
	_, err = s.MergeColumns(ctx, key("missing"), map[string]any{"_Note": "x"}, "")
	wantKind(t, err, abstractions.ErrNotFound)
	_, err = s.Upsert(ctx, abstractions.PolyWrite[event]{Key: key("head"), Columns: map[string]any{"_Version": int32(9)}, IfMatch: next})
	wantKind(t, err, abstractions.ErrConcurrencyConflict)
	_, err = s.Insert(ctx, abstractions.PolyWrite[event]{Key: key("0001"), Item: &noted{Text: "again"}})
	wantKind(t, err, abstractions.ErrDuplicateKey)

	if deleted, err := s.Delete(ctx, key("0001"), ""); err != nil || !deleted {
		t.Fatalf("delete: %v, %v", deleted, err)
	}
	if deleted, err := s.Delete(ctx, key("0001"), ""); err != nil || deleted {
		t.Errorf("a second delete: %v, %v (want false, nil)", deleted, err)
	}
	_, err = s.One(ctx, key("0001"))
	wantKind(t, err, abstractions.ErrNotFound)
}

// What a polymorphic store refuses before it sends anything.
func TestPolyRefusals(t *testing.T) {
	ctx := context.Background()
	s, f := polyStore(t)
	k := abstractions.TableKey{PartitionKey: "p", RowKey: "r"}
	write := func(item event, cols map[string]any, ifMatch string) error {
		_, err := s.Insert(ctx, abstractions.PolyWrite[event]{Key: k, Item: item, Columns: cols, IfMatch: ifMatch})
		return err
	}
	type unregistered struct{ noted }
	cases := []struct {
		name string
		err  error
		kind error
	}{
		{"a key the service refuses", func() error {
			_, err := s.Insert(ctx, abstractions.PolyWrite[event]{Key: abstractions.TableKey{PartitionKey: "a/b", RowKey: "r"}})
			return err
		}(), abstractions.ErrInvalidKey},
		{"a row key the service refuses", func() error {
			_, err := s.One(ctx, abstractions.TableKey{PartitionKey: "p", RowKey: "a#b"})
			return err
		}(), abstractions.ErrInvalidKey},
		{"a partition the service refuses", func() error { _, err := s.List(ctx, "a?b"); return err }(), abstractions.ErrInvalidKey},
		{"an empty partition", func() error { _, err := s.List(ctx, ""); return err }(), abstractions.ErrInvalidKey},
		{"a partition that is not UTF-8", func() error { _, err := s.List(ctx, "p\xff"); return err }(), abstractions.ErrInvalidKey},
		{"a nil item pointer", write((*noted)(nil), nil, ""), abstractions.ErrInvalidArgument},
		{"an unregistered type", write(&unregistered{}, nil, ""), abstractions.ErrInvalidArgument},
		{"a protected field", write(&guardedEvent{Owner: "x"}, nil, ""), abstractions.ErrNotSupported},
		{"a split field", write(&splitEvent{Body: "x"}, nil, ""), abstractions.ErrNotSupported},
		{"a type-level split", write(&splitTypeEvent{Body: "x"}, nil, ""), abstractions.ErrNotSupported},
		{"a registered type the codec cannot map", write(&chanEvent{}, nil, ""), abstractions.ErrNotSupported},
		{"an expiry time", write(&expiringEvent{Expires: openedAt}, nil, ""), abstractions.ErrNotSupported},
		{"an expiry time in a batch", s.InsertBatch(ctx, []abstractions.PolyWrite[event]{{Key: k, Item: &expiringEvent{}}}), abstractions.ErrNotSupported},
		{"a column without '_'", write(nil, map[string]any{"Name": "x"}, ""), abstractions.ErrInvalidArgument},
		{"the discriminator", write(nil, map[string]any{codec.TypeNameColumn: "Opened"}, ""), abstractions.ErrInvalidArgument},
		{"a large-value marker", write(nil, map[string]any{largevalue.OfColumn: "x"}, ""), abstractions.ErrInvalidArgument},
		{"a nil value", write(nil, map[string]any{"_X": nil}, ""), abstractions.ErrInvalidArgument},
		{"a nil []byte", write(nil, map[string]any{"_X": []byte(nil)}, ""), abstractions.ErrInvalidArgument},
		{"a time before 1601", write(nil, map[string]any{"_X": time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}, ""), abstractions.ErrInvalidArgument},
		{"a value of another type", write(nil, map[string]any{"_X": uint8(1)}, ""), abstractions.ErrInvalidArgument},
		{"an ETag that is not one", write(nil, nil, "nope"), abstractions.ErrInvalidArgument},
		{"a merge of nothing", func() error { _, err := s.MergeColumns(ctx, k, nil, ""); return err }(), abstractions.ErrInvalidArgument},
		{"a merge under an ETag that is not one", func() error {
			_, err := s.MergeColumns(ctx, k, map[string]any{"_X": 1}, "*")
			return err
		}(), abstractions.ErrInvalidArgument},
		{"a key named twice in a batch", s.InsertBatch(ctx, []abstractions.PolyWrite[event]{{Key: k}, {Key: k}}), abstractions.ErrDuplicateKey},
		{"a conditional batch of two transactions", s.UpsertBatch(ctx, []abstractions.PolyWrite[event]{
			{Key: k, IfMatch: `W/"x"`}, {Key: abstractions.TableKey{PartitionKey: "q", RowKey: "r"}}}), abstractions.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantKind(t, tc.err, tc.kind) })
	}
	if n := f.count("Write") + f.count("Transact") + f.count("Query") + f.count("GetRow"); n != 0 {
		t.Errorf("refused calls sent %d requests (%v)", n, f)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := s.Insert(cctx, abstractions.PolyWrite[event]{Key: k})
	wantKind(t, err, context.Canceled)
	_, err = s.One(cctx, k)
	wantKind(t, err, context.Canceled)
	_, err = s.List(cctx, "p")
	wantKind(t, err, context.Canceled)
}

// Batches write per partition, each transaction atomic; a conditional write guards the rows
// of its transaction.
func TestPolyBatches(t *testing.T) {
	ctx := context.Background()
	s, f := polyStore(t)
	head := abstractions.TableKey{PartitionKey: "s", RowKey: "head"}
	tag, err := s.Insert(ctx, abstractions.Marker[event](head, map[string]any{"_Version": 1}))
	if err != nil {
		t.Fatal(err)
	}
	err = s.InsertBatch(ctx, []abstractions.PolyWrite[event]{
		{Key: abstractions.TableKey{PartitionKey: "s", RowKey: "0002"}, Item: &noted{Text: "two"}},
		{Key: head, Columns: map[string]any{"_Version": 2}, IfMatch: tag},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The same batch again: the marker moved on, so nothing of it is written.
	err = s.UpsertBatch(ctx, []abstractions.PolyWrite[event]{
		{Key: abstractions.TableKey{PartitionKey: "s", RowKey: "0003"}, Item: &noted{Text: "three"}},
		{Key: head, Columns: map[string]any{"_Version": 3}, IfMatch: tag},
	})
	wantKind(t, err, abstractions.ErrConcurrencyConflict)
	if _, ok := f.row("Events", "s", "0003"); ok {
		t.Error("the failed transaction wrote a row")
	}
	if err := s.UpsertBatch(ctx, nil); err != nil {
		t.Errorf("an empty batch: %v", err)
	}
	err = s.UpsertBatch(ctx, []abstractions.PolyWrite[event]{
		{Key: abstractions.TableKey{PartitionKey: "a", RowKey: "1"}, Item: &noted{Text: "a"}},
		{Key: abstractions.TableKey{PartitionKey: "b", RowKey: "1"}, Item: &noted{Text: "b"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !f.hasRow("Events", "a", "1") || !f.hasRow("Events", "b", "1") {
		t.Error("a batch over two partitions did not write both")
	}
	err = s.InsertBatch(ctx, []abstractions.PolyWrite[event]{{Key: abstractions.TableKey{PartitionKey: "a", RowKey: "1"}}})
	wantKind(t, err, abstractions.ErrDuplicateKey)
}

// hasRow reports whether the table holds the row.
func (f *fakeTables) hasRow(table, pk, rk string) bool {
	_, ok := f.row(table, pk, rk)
	return ok
}

// Rows the store cannot read as an item or a marker fail with ErrIntegrity; an item type
// reassembles a value another store wrote split on the main row.
func TestPolyReads(t *testing.T) {
	ctx := context.Background()
	s, f := polyStore(t)
	row := func(rk string, props ...service.Property) service.Row {
		return service.Row{PartitionKey: "p", RowKey: rk, Properties: props}
	}
	typeName := func(n string) service.Property {
		return service.Property{Name: codec.TypeNameColumn, Value: service.String(n)}
	}
	f.put("Events",
		row("no-discriminator", service.Property{Name: "Text", Value: service.String("x")}),
		row("unregistered", typeName("Closed")),
		row("not-an-event", typeName("Stranger")),
	)
	for _, rk := range []string{"no-discriminator", "unregistered", "not-an-event"} {
		_, err := s.One(ctx, abstractions.TableKey{PartitionKey: "p", RowKey: rk})
		wantKind(t, err, abstractions.ErrIntegrity)
	}
	_, err := s.List(ctx, "p")
	wantKind(t, err, abstractions.ErrIntegrity)
	f.remove("Events", "p", "no-discriminator")
	f.remove("Events", "p", "unregistered")
	f.remove("Events", "p", "not-an-event")
	f.put("Events", row("bad-cell", typeName("Opened"), service.Property{Name: "At", Value: service.String("not a time")}))
	var ve *codec.ValueError
	if _, err := s.One(ctx, abstractions.TableKey{PartitionKey: "p", RowKey: "bad-cell"}); !errors.As(err, &ve) {
		t.Errorf("a cell that does not fit its field: %v", err)
	}
	// A value that does not fit its field is the codec's error, not an unavailable service.
	_, err = s.List(ctx, "p")
	if !errors.As(err, &ve) || errors.Is(err, abstractions.ErrUnavailable) {
		t.Errorf("list of a cell that does not fit its field: %v", err)
	}

	// A value split on the main row, as a split-aware store writes it.
	text := strings.Repeat("n", 50_000)
	lay, err := largevalue.Plan("q", "split", []service.Property{typeName("Noted")},
		[]largevalue.Value{{Column: "Text", Cell: "Text", Value: service.String(text), Encoding: largevalue.EncText}}, nil, largevalue.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	f.put("Events", lay.Rows...)
	e, err := s.One(ctx, abstractions.TableKey{PartitionKey: "q", RowKey: "split"})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := e.Item.(*noted); !ok || n.Text != text {
		t.Fatalf("read %+v", e.Item)
	}
	// Damaged, it is refused.
	f.put("Events", service.Row{PartitionKey: "q", RowKey: "split", Properties: slicesWithout(lay.Rows[0].Properties, "Text__c1")})
	_, err = s.One(ctx, abstractions.TableKey{PartitionKey: "q", RowKey: "split"})
	wantKind(t, err, abstractions.ErrIntegrity)
}

// slicesWithout returns props without the named cell.
func slicesWithout(props []service.Property, name string) []service.Property {
	var out []service.Property
	for _, p := range props {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out
}

// System columns convert to cells and back with the types PolyWrite lists.
func TestPolySystemColumnValues(t *testing.T) {
	ctx := context.Background()
	s, _ := polyStore(t)
	g := abstractions.GUID{1, 2, 3}
	in := map[string]any{
		"_S": "text", "_B": true, "_I32": int32(-7), "_I64": int64(1 << 40), "_Int": 42, "_F": 2.5,
		"_T": openedAt, "_Bin": []byte{1, 2}, "_G": g,
	}
	k := abstractions.TableKey{PartitionKey: "p", RowKey: "m"}
	if _, err := s.Insert(ctx, abstractions.Marker[event](k, in)); err != nil {
		t.Fatal(err)
	}
	e, err := s.One(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"_S": "text", "_B": true, "_I32": int32(-7), "_I64": int64(1 << 40), "_Int": int64(42), "_F": 2.5,
		"_T": openedAt, "_Bin": []byte{1, 2}, "_G": g,
	}
	for name, w := range want {
		got := e.Columns[name]
		switch w := w.(type) {
		case []byte:
			if b, ok := got.([]byte); !ok || string(b) != string(w) {
				t.Errorf("%s = %#v, want %#v", name, got, w)
			}
		case time.Time:
			if tm, ok := got.(time.Time); !ok || !tm.Equal(w) {
				t.Errorf("%s = %#v, want %#v", name, got, w)
			}
		default:
			if got != w {
				t.Errorf("%s = %#v (%T), want %#v (%T)", name, got, got, w, w)
			}
		}
	}
	if engine.GoValue(service.Value{}) != nil {
		t.Error("an invalid cell has a value")
	}
}
