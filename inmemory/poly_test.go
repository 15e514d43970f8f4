package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
)

// Ledger is the base of the polymorphic tests: an interface the pointer of every entry
// type implements.
type Ledger interface{ Amount() int64 }

type Credit struct{ Cents int64 }

func (c *Credit) Amount() int64 { return c.Cents }

type Debit struct {
	Cents int64
	Memo  string
}

func (d *Debit) Amount() int64 { return -d.Cents }

// Salary has a protected field, which a polymorphic store does not check.
type Salary struct {
	Cents int64 `table:",protected=payroll"`
}

func (s *Salary) Amount() int64 { return s.Cents }

// Scan has a large-value option, which a polymorphic store does not plan.
type Scan struct {
	Body string `table:",split=gzip"`
}

func (*Scan) Amount() int64 { return 0 }

// Cents is not a struct.
type Cents int64

func (c Cents) Amount() int64 { return int64(c) }

func ledgerTypes(t testing.TB) *abstractions.TypeRegistry {
	t.Helper()
	reg := new(abstractions.TypeRegistry)
	for _, err := range []error{
		abstractions.RegisterType[Credit](reg, "credit"),
		abstractions.RegisterType[Debit](reg, "debit"),
		abstractions.RegisterType[Salary](reg, "salary"),
		abstractions.RegisterType[Scan](reg, "scan"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func ledgerStore(t testing.TB) (*tables.PolyStore[Ledger], *sentCounter) {
	t.Helper()
	svc := &sentCounter{Tables: memservice.New()}
	s, err := tables.PolyFor[Ledger](inmemory.NewAccountOver(svc, nil, nil), ledgerTypes(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureCreated(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, svc
}

func key(pk, rk string) abstractions.TableKey {
	return abstractions.TableKey{PartitionKey: pk, RowKey: rk}
}

func TestPolyForRefusals(t *testing.T) {
	acct := inmemory.NewAccount(nil)
	reg := ledgerTypes(t)
	for _, tc := range []struct {
		name string
		make func() error
		want error
	}{
		{"a struct base", func() error { _, err := tables.PolyFor[Credit](acct, reg, nil); return err }, abstractions.ErrInvalidArgument},
		{"a pointer base", func() error { _, err := tables.PolyFor[*Credit](acct, reg, nil); return err }, abstractions.ErrInvalidArgument},
		{"no registry", func() error { _, err := tables.PolyFor[Ledger](acct, nil, nil); return err }, abstractions.ErrInvalidArgument},
		{"no account", func() error { _, err := tables.PolyFor[Ledger](nil, reg, nil); return err }, abstractions.ErrInvalidArgument},
		{"a zero account", func() error { _, err := tables.PolyFor[Ledger](&tables.Account{}, reg, nil); return err }, abstractions.ErrInvalidArgument},
		{"an unnamed base", func() error { _, err := tables.PolyFor[any](acct, reg, nil); return err }, abstractions.ErrInvalidArgument},
		{"a bad table name", func() error {
			_, err := tables.PolyFor[Ledger](acct, reg, &tables.StoreOptions{Table: "no_underscores"})
			return err
		}, abstractions.ErrInvalidArgument},
		{"caching", func() error {
			_, err := tables.PolyFor[Ledger](acct, reg, &tables.StoreOptions{Cache: tables.Sliding(time.Minute)})
			return err
		}, abstractions.ErrNotSupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.make(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	s, err := tables.PolyFor[Ledger](acct, reg, &tables.StoreOptions{Cache: tables.Disabled})
	if err != nil {
		t.Fatal(err)
	}
	if s.Table() != "Ledger" || s.Account() != acct {
		t.Errorf("table %q, account %p", s.Table(), s.Account())
	}
	if _, err := tables.PolyFor[any](acct, reg, &tables.StoreOptions{Table: "Anything"}); err != nil {
		t.Errorf("an empty-interface base with a named table: %v", err)
	}
}

// Every refusal of the caller's input is made before anything reaches the service.
func TestPolyRefusalsSendNothing(t *testing.T) {
	ctx := context.Background()
	s, svc := ledgerStore(t)
	etag := `W/"datetime'2026-01-01T00%3A00%3A00.0000000Z'"`
	k := key("p", "r")
	for _, tc := range []struct {
		name string
		call func() error
		want error
		says string
	}{
		{"protected field", func() error {
			_, err := s.Insert(ctx, abstractions.PolyWrite[Ledger]{Key: k, Item: &Salary{Cents: 1}})
			return err
		},
			abstractions.ErrNotSupported, "Salary.Cents is protected"},
		{"split field", func() error {
			_, err := s.Insert(ctx, abstractions.PolyWrite[Ledger]{Key: k, Item: &Scan{Body: "x"}})
			return err
		},
			abstractions.ErrNotSupported, "split or offload"},
		{"not a struct", func() error {
			_, err := s.Insert(ctx, abstractions.PolyWrite[Ledger]{Key: k, Item: Cents(5)})
			return err
		},
			abstractions.ErrInvalidArgument, "structs"},
		{"an unregistered type", func() error {
			_, err := s.Upsert(ctx, abstractions.PolyWrite[Ledger]{Key: k, Item: &unregistered{}})
			return err
		}, abstractions.ErrInvalidArgument, "not registered"},
		{"zero time column", func() error {
			_, err := s.Insert(ctx, abstractions.Marker[Ledger](k, map[string]any{"_At": time.Time{}}))
			return err
		}, abstractions.ErrInvalidArgument, "_At"},
		{"nil bytes column", func() error {
			_, err := s.Insert(ctx, abstractions.Marker[Ledger](k, map[string]any{"_Raw": []byte(nil)}))
			return err
		}, abstractions.ErrInvalidArgument, "nil []byte"},
		{"split marker column", func() error {
			_, err := s.Insert(ctx, abstractions.Marker[Ledger](k, map[string]any{"_SplitOf": "x"}))
			return err
		}, abstractions.ErrInvalidArgument, "storage layer"},
		{"merge with a bad etag", func() error {
			_, err := s.MergeColumns(ctx, k, map[string]any{"_A": 1}, "not-an-etag")
			return err
		}, abstractions.ErrInvalidArgument, "entity tag"},
		{"delete of a bad key", func() error { _, err := s.Delete(ctx, key("p", "a#b"), ""); return err }, abstractions.ErrInvalidKey, "#"},
		{"read of an empty key", func() error { _, err := s.One(ctx, key("", "r")); return err }, abstractions.ErrInvalidKey, "empty"},
		{"list of a bad partition", func() error { _, err := s.List(ctx, "a?b"); return err }, abstractions.ErrInvalidKey, "?"},
		{"a conditional batch over 100 rows", func() error {
			ws := make([]abstractions.PolyWrite[Ledger], 101)
			for i := range ws {
				ws[i] = abstractions.PolyWrite[Ledger]{Key: key("p", fmt.Sprintf("%03d", i)), Item: &Credit{Cents: 1}}
			}
			ws[100].IfMatch = etag
			return s.InsertBatch(ctx, ws)
		}, abstractions.ErrInvalidArgument, "2 transactions"},
		{"a bad write in the middle of a batch", func() error {
			return s.UpsertBatch(ctx, []abstractions.PolyWrite[Ledger]{
				{Key: key("p", "1"), Item: &Credit{Cents: 1}},
				abstractions.Marker[Ledger](key("p", "2"), map[string]any{"NoUnderscore": 1}),
			})
		}, abstractions.ErrInvalidArgument, "NoUnderscore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := svc.n.Load()
			err := tc.call()
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want %v saying %q", err, tc.want, tc.says)
			}
			if n := svc.n.Load() - before; n != 0 {
				t.Errorf("%d calls reached the service", n)
			}
		})
	}
}

type unregistered struct{}

func (*unregistered) Amount() int64 { return 0 }

func TestPolyColumnsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := ledgerStore(t)
	when := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	guid := abstractions.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	raw := []byte{1, 2, 3}
	cols := map[string]any{
		"_S": "text", "_B": true, "_I32": int32(-7), "_I64": int64(1) << 40, "_I": 42, "_F": 2.0,
		"_T": when, "_Bin": raw, "_G": guid,
	}
	if _, err := s.Insert(ctx, abstractions.Marker[Ledger](key("p", "m"), cols)); err != nil {
		t.Fatal(err)
	}
	raw[0] = 99 // the row does not share the caller's bytes
	got, err := s.One(ctx, key("p", "m"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"_S": "text", "_B": true, "_I32": int32(-7), "_I64": int64(1) << 40, "_I": int64(42), "_F": 2.0,
		"_T": when.UTC().Truncate(100 * time.Nanosecond), "_Bin": []byte{1, 2, 3}, "_G": guid,
	}
	if !reflect.DeepEqual(got.Columns, want) {
		t.Errorf("columns\n got %#v\nwant %#v", got.Columns, want)
	}
	if !got.IsMarker() || got.Item != nil || got.TypeName != "" || got.ETag == "" || got.Timestamp.IsZero() {
		t.Errorf("entry %+v", got)
	}

	// A marker with no columns at all is a row that exists and holds nothing.
	if _, err := s.Upsert(ctx, abstractions.Marker[Ledger](key("p", "empty"), nil)); err != nil {
		t.Fatal(err)
	}
	empty, err := s.One(ctx, key("p", "empty"))
	if err != nil || !empty.IsMarker() || empty.Columns != nil {
		t.Errorf("empty marker %+v, %v", empty, err)
	}
}

// A row with data columns but no discriminator (a plain store's row on the same table) is
// neither an item nor a marker, and is refused rather than read with its data dropped.
func TestPolyRefusesForeignRows(t *testing.T) {
	ctx := context.Background()
	acct := inmemory.NewAccount(nil)
	docs, err := tables.For[Doc](acct, &tables.StoreOptions{Table: "Shared"})
	if err != nil {
		t.Fatal(err)
	}
	if err := docs.Create(ctx, &Doc{Entity: abstractions.Entity{ID: "p|doc"}, N: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := tables.PolyFor[Ledger](acct, ledgerTypes(t), &tables.StoreOptions{Table: "Shared"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.One(ctx, key("p", "doc"))
	if !errors.Is(err, abstractions.ErrIntegrity) || !strings.Contains(err.Error(), "no _TypeName") {
		t.Errorf("One: %v", err)
	}
	if _, err := s.List(ctx, "p"); !errors.Is(err, abstractions.ErrIntegrity) {
		t.Errorf("List: %v", err)
	}
}

// A polymorphic write keeps the account's read cache coherent for a caching store of
// another type on the same table.
func TestPolyWritesKeepTheCacheCoherent(t *testing.T) {
	ctx := context.Background()
	acct := inmemory.NewAccount(&tables.Options{Cache: tables.Sliding(time.Hour)})
	type Row struct {
		abstractions.Entity
		Cents int64
	}
	plain, err := tables.For[Row](acct, &tables.StoreOptions{Table: "Ledger"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tables.PolyFor[Ledger](acct, ledgerTypes(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Insert(ctx, abstractions.PolyWrite[Ledger]{Key: key("p", "r"), Item: &Credit{Cents: 1}}); err != nil {
		t.Fatal(err)
	}
	if r, err := plain.One(ctx, "p|r"); err != nil || r.Cents != 1 {
		t.Fatalf("first read %+v, %v", r, err)
	}
	for i, write := range []func() error{
		func() error {
			_, err := s.Upsert(ctx, abstractions.PolyWrite[Ledger]{Key: key("p", "r"), Item: &Credit{Cents: 2}})
			return err
		},
		func() error {
			return s.UpsertBatch(ctx, []abstractions.PolyWrite[Ledger]{{Key: key("p", "r"), Item: &Credit{Cents: 3}}})
		},
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		if r, err := plain.One(ctx, "p|r"); err != nil || r.Cents != int64(i+2) {
			t.Errorf("after write %d: %+v, %v", i, r, err)
		}
	}
	if _, err := s.Delete(ctx, key("p", "r"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.One(ctx, "p|r"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

// Many writers appending on the same version: exactly one wins, and only its rows exist.
func TestPolyConditionalAppendRace(t *testing.T) {
	ctx := context.Background()
	s, _ := ledgerStore(t)
	head := key("acct", "head")
	etag, err := s.Insert(ctx, abstractions.Marker[Ledger](head, map[string]any{"_Version": int64(0)}))
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := abstractions.Marker[Ledger](head, map[string]any{"_Version": int64(1)})
			m.IfMatch = etag
			errs[w] = s.InsertBatch(ctx, []abstractions.PolyWrite[Ledger]{m,
				{Key: key("acct", "000000001"), Item: &Credit{Cents: int64(w)}},
				{Key: key("acct", fmt.Sprintf("extra-%d", w)), Item: &Debit{Cents: int64(w)}},
			})
		}()
	}
	wg.Wait()
	winner := -1
	for w, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, w)
		case err == nil:
			winner = w
		case !errors.Is(err, abstractions.ErrConcurrencyConflict):
			t.Errorf("writer %d: %v", w, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	got, err := s.List(ctx, "acct")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range got {
		keys = append(keys, e.Key.RowKey)
	}
	want := []string{"000000001", fmt.Sprintf("extra-%d", winner), "head"}
	if !reflect.DeepEqual(keys, want) || got[0].Item.Amount() != int64(winner) || got[2].Columns["_Version"] != int64(1) {
		t.Errorf("rows %v, want %v; first %+v, head %v", keys, want, got[0].Item, got[2].Columns)
	}
}

// A batch without conditions may span partitions and more than 100 rows: one transaction
// per partition and 100 rows, in order.
func TestPolyBatchChunks(t *testing.T) {
	ctx := context.Background()
	s, svc := ledgerStore(t)
	var ws []abstractions.PolyWrite[Ledger]
	for i := range 250 {
		ws = append(ws, abstractions.PolyWrite[Ledger]{Key: key("big", fmt.Sprintf("%04d", i)), Item: &Credit{Cents: int64(i)}})
	}
	ws = append(ws, abstractions.PolyWrite[Ledger]{Key: key("small", "1"), Item: &Debit{Cents: 1, Memo: "m"}})
	before := svc.n.Load()
	if err := s.InsertBatch(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if n := svc.n.Load() - before; n != 4 {
		t.Errorf("%d transactions, want 4", n)
	}
	big, err := s.List(ctx, "big")
	if err != nil || len(big) != 250 || big[249].Item.(*Credit).Cents != 249 {
		t.Fatalf("big partition: %d rows, %v", len(big), err)
	}
	small, err := s.One(ctx, key("small", "1"))
	if err != nil || small.Item.(*Debit).Memo != "m" || small.TypeName != "debit" {
		t.Errorf("small: %+v, %v", small, err)
	}
}

// A cancelled context commits nothing.
func TestPolyCancelledContext(t *testing.T) {
	s, _ := ledgerStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := abstractions.PolyWrite[Ledger]{Key: key("p", "r"), Item: &Credit{Cents: 1}}
	_, err := s.Insert(ctx, w)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Insert: %v", err)
	}
	if err := s.InsertBatch(ctx, []abstractions.PolyWrite[Ledger]{w}); !errors.Is(err, context.Canceled) {
		t.Errorf("InsertBatch: %v", err)
	}
	if _, err := s.One(ctx, key("p", "r")); !errors.Is(err, context.Canceled) {
		t.Errorf("One: %v", err)
	}
	if _, err := s.List(ctx, "p"); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v", err)
	}
	got, err := s.List(context.Background(), "p")
	if err != nil || len(got) != 0 {
		t.Errorf("rows after cancelled writes: %d, %v", len(got), err)
	}
}

// The store's first write creates its table, and a write creates it again when it was
// deleted behind its back.
func TestPolyCreatesItsTable(t *testing.T) {
	ctx := context.Background()
	svc := memservice.New()
	s, err := tables.PolyFor[Ledger](inmemory.NewAccountOver(svc, nil, nil), ledgerTypes(t), &tables.StoreOptions{Table: "Entries"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Insert(ctx, abstractions.PolyWrite[Ledger]{Key: key("p", "1"), Item: &Credit{Cents: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteTable(ctx, "Entries"); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertBatch(ctx, []abstractions.PolyWrite[Ledger]{{Key: key("p", "2"), Item: &Credit{Cents: 2}}}); err != nil {
		t.Fatalf("after the table was deleted: %v", err)
	}
	got, err := s.One(ctx, key("p", "2"))
	if err != nil || got.Item.Amount() != 2 {
		t.Errorf("%+v, %v", got, err)
	}
}

func BenchmarkPolyInsertAndRead(b *testing.B) {
	ctx := context.Background()
	s, _ := ledgerStore(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := key("p", fmt.Sprintf("%09d", i))
		if _, err := s.Insert(ctx, abstractions.PolyWrite[Ledger]{Key: k, Item: &Debit{Cents: int64(i), Memo: "rent"}}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.One(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
}
