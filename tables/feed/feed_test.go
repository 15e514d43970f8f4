package feed_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/feed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type order struct {
	abstractions.Entity
	Status string
	Note   string
}

type doc struct {
	abstractions.Entity
	Body string `table:",split=text"`
}

// account returns an account on Azurite and a table name of the test's own, deleted at its
// end; mp, when set, records the account's metrics.
func account(t *testing.T, mp *sdkmetric.MeterProvider) (*tables.Account, string) {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	o := &tables.Options{ClientOptions: azuritetest.ClientOptions(t)}
	if mp != nil {
		o.MeterProvider = mp
	}
	acct, err := tables.NewAccount(conn, o)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("fd%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), name) })
	return acct, name
}

func orders(t *testing.T, acct *tables.Account, table string, opts *feed.Options) *tables.Store[order] {
	t.Helper()
	s, err := tables.For[order](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed.Enable(s, opts); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRefusals: what the package refuses, before anything is sent.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	acct, table := account(t, nil)
	plain, err := tables.For[order](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := feed.NewRelay(plain, nil); !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "feed.Enable") {
		t.Errorf("a relay of a store without a feed: %v", err)
	}
	if _, err := feed.Status(ctx, plain); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("the status of a store without a feed: %v", err)
	}
	s := orders(t, acct, table, nil)
	if err := feed.Enable(s, nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a second feed: %v", err)
	}
	docs, err := tables.For[doc](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed.Enable(docs, &feed.Options{Body: true}); !errors.Is(err, abstractions.ErrNotSupported) {
		t.Errorf("bodies of a split-aware type: %v", err)
	}
	if _, err := feed.NewRelay(s, &feed.RelayOptions{PageSize: 1001}); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a page of 1001: %v", err)
	}
	r, err := feed.NewRelay(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Pass(ctx, nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a nil handler: %v", err)
	}
	// Polymorphic stores: nil ones, and one without a feed.
	if err := feed.Enable((*tables.PolyStore[any])(nil), nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a feed on a nil polymorphic store: %v", err)
	}
	if err := feed.Enable((*tables.Store[order])(nil), nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a feed on a nil store: %v", err)
	}
	if err := feed.Enable(nil, nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a feed on nil: %v", err)
	}
	events, err := tables.PolyFor[any](acct, new(abstractions.TypeRegistry), &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := feed.NewRelay(events, nil); !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "feed.Enable") {
		t.Errorf("a relay of a polymorphic store without a feed: %v", err)
	}
	if _, err := feed.Status(ctx, events); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("the status of a polymorphic store without a feed: %v", err)
	}
	if err := feed.Enable(events, nil); err != nil {
		t.Fatal(err)
	}
	if err := feed.Enable(events, nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("a second feed of a polymorphic store: %v", err)
	}
	// An event larger than a binary cell is refused by Commit.
	tx := s.Transaction("p")
	feed.Publish(tx, s, "Huge", make([]byte, 70000))
	if err := tx.Commit(ctx); !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("an event larger than a binary cell: %v", err)
	}
	// An event on a store without a feed.
	tx = plain.Transaction("p")
	feed.Publish(tx, plain, "E", nil)
	if err := tx.Commit(ctx); !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "feed.Enable") {
		t.Errorf("an event of a store without a feed: %v", err)
	}
}

// wide is a type whose entity nearly fills a row, so that its record with the body cannot.
type wide struct {
	abstractions.Entity
	A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P []byte
}

func TestOversizedRecordRefused(t *testing.T) {
	ctx := context.Background()
	acct, table := account(t, nil)
	s, err := tables.For[wide](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed.Enable(s, &feed.Options{Body: true}); err != nil {
		t.Fatal(err)
	}
	// 999,600 bytes of cells: the entity fits a row (the service's 1 MB), with the 112
	// bytes of its feed cells it does not.
	b := make([]byte, 65536)
	w := &wide{Entity: abstractions.Entity{ID: "p|wide"}, A: b, B: b, C: b, D: b, E: b, F: b, G: b, H: b, I: b, J: b, K: b, L: b, M: b, N: b, O: b, P: make([]byte, 16560)}
	plain, err := tables.For[wide](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Create(ctx, &wide{Entity: abstractions.Entity{ID: "p|fits"}, A: w.A, B: w.B, C: w.C, D: w.D, E: w.E, F: w.F, G: w.G, H: w.H, I: w.I, J: w.J, K: w.K, L: w.L, M: w.M, N: w.N, O: w.O, P: w.P}); err != nil {
		t.Fatalf("the entity without a feed: %v", err)
	}
	err = s.Create(ctx, w)
	var se *abstractions.StoreError
	if !errors.As(err, &se) || !errors.Is(err, abstractions.ErrInvalidArgument) || se.RowKey != "wide" || !strings.Contains(err.Error(), "feed cells") {
		t.Fatalf("a record larger than a row: %v", err)
	}
	if ok, err := s.Exists(ctx, "p|wide"); err != nil || ok {
		t.Fatalf("the refused write was stored: %v %v", ok, err)
	}
}

// TestTransactionOverTheLimitWithRecords: a transaction whose writes fit the service's 100
// actions alone but not with their change records is refused before sending, and the
// message counts both.
func TestTransactionOverTheLimitWithRecords(t *testing.T) {
	ctx := context.Background()
	acct, table := account(t, nil)
	s := orders(t, acct, table, nil)
	tx := s.Transaction("p")
	for i := range 60 {
		s.UpsertIn(tx, &order{Entity: abstractions.Entity{ID: fmt.Sprintf("p|o%02d", i)}, Status: "open"})
	}
	err := tx.Commit(ctx)
	if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "60 writes, 120 rows") {
		t.Fatalf("a transaction of 60 writes with their records: %v", err)
	}
	if n, err := s.Count(ctx, "p"); err != nil || n != 0 {
		t.Fatalf("the refused transaction wrote %d rows (%v)", n, err)
	}
}

// TestHandlerFailures: a handler that panics is recovered and counted and its record kept;
// the partition's later records wait; a record that keeps failing goes to the dead letters
// (counted in the metrics and the status), Replay brings it back, and it is delivered.
func TestHandlerFailures(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()
	acct, table := account(t, mp)
	s := orders(t, acct, table, &feed.Options{Hold: time.Millisecond})
	for _, id := range []string{"p|a", "p|b", "q|c"} {
		if err := s.Create(ctx, &order{Entity: abstractions.Entity{ID: id}, Status: "open"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := feed.NewRelay(s, &feed.RelayOptions{MaxFailures: 2, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	poisoned := true
	h := func(_ context.Context, rec feed.Record) error {
		if rec.Entity == "p|a" && poisoned {
			panic("handler bug")
		}
		got = append(got, fmt.Sprintf("%s/%d", rec.Entity, rec.Failures))
		return nil
	}
	st, err := r.Pass(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if st.Panics != 1 || st.Failed != 1 || st.DeadLettered != 0 || strings.Join(got, " ") != "q|c/0" {
		t.Fatalf("first pass: %+v, delivered %v (p|b must wait for p|a)", st, got)
	}
	st, err = r.Pass(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if st.Panics != 1 || st.DeadLettered != 1 || strings.Join(got, " ") != "q|c/0 p|b/0" {
		t.Fatalf("second pass: %+v, delivered %v", st, got)
	}
	b, err := feed.Status(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dead != 1 || b.DeadPartitions != 1 || b.Pending != 0 {
		t.Fatalf("status after the dead letter: %+v", b)
	}
	poisoned = false
	n, err := r.Replay(ctx)
	if err != nil || n != 1 {
		t.Fatalf("replay: %d, %v", n, err)
	}
	if _, err := r.Pass(ctx, h); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "q|c/0 p|b/0 p|a/0" {
		t.Fatalf("after the replay: %v", got)
	}
	sums := collect(t, reader).ints
	if sums["udtables.feed.deliveries"] != 3 || sums["udtables.feed.failures"] != 2 || sums["udtables.feed.dead_letters"] != 1 {
		t.Errorf("metrics: %v", sums)
	}
}

// TestKeep: with Keep, delivered records are kept and swept once older; Run ends with its
// context.
func TestKeep(t *testing.T) {
	ctx := context.Background()
	acct, table := account(t, nil)
	s := orders(t, acct, table, &feed.Options{Hold: time.Millisecond})
	for i := range 3 {
		if err := s.Upsert(ctx, &order{Entity: abstractions.Entity{ID: "p|a"}, Status: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	written := time.Now()
	const keep = 2 * time.Second
	r, err := feed.NewRelay(s, &feed.RelayOptions{Keep: keep, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	delivered := make(chan feed.Record, 10)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- r.Run(rctx, func(_ context.Context, rec feed.Record) error { delivered <- rec; return nil })
	}()
	for want := int64(1); want <= 3; want++ {
		rec := <-delivered
		if rec.Version != want || rec.Kind != feed.Upserted || rec.Entity != "p|a" {
			t.Errorf("delivery %d: %+v", want, rec)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := feed.Status(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if b.Kept == 3 && b.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status: %+v", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
	if n, err := r.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("an early sweep deleted %d: %v", n, err)
	}
	time.Sleep(time.Until(written.Add(keep + 50*time.Millisecond)))
	if n, err := r.Sweep(ctx); err != nil || n != 3 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	if b, err := feed.Status(ctx, s); err != nil || b.Kept != 0 || b.KeptPartitions != 0 {
		t.Fatalf("status after the sweep: %+v, %v", b, err)
	}
}
