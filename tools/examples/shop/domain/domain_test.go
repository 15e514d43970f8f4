package domain_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tools/examples/shop"
	"github.com/unified-data/gotables/tools/examples/shop/domain"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newService wires the domain to a fresh in-memory account with the server's wiring
// (shop.Orders): the way the domain's tests run, with no emulator and no network. It
// returns the store too, to look at what was written.
func newService(t *testing.T) (*domain.Service, abstractions.Storage[domain.Order]) {
	t.Helper()
	store, err := shop.Orders(inmemory.NewAccount(nil), "")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	svc := domain.NewService(store).WithIDs(func() string { return fmt.Sprintf("o%03d", n.Add(1)) })
	return svc, store
}

func TestPlaceAndList(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	o, err := svc.Place(ctx, "Alice", []domain.Line{{SKU: "tea", Quantity: 2, PriceCents: 450}, {SKU: "mug", Quantity: 1, PriceCents: 1200}})
	if err != nil {
		t.Fatal(err)
	}
	if o.ID != "alice|o001" || o.Status != domain.Placed || o.TotalCents != 2100 || o.ETag == "" {
		t.Errorf("placed %+v", o)
	}
	if _, err := svc.Place(ctx, "alice", []domain.Line{{SKU: "tea", Quantity: 1, PriceCents: 450}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Place(ctx, "bob", []domain.Line{{SKU: "mug", Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	got, err := svc.OrdersOf(ctx, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "alice|o001" || got[1].ID != "alice|o002" {
		t.Fatalf("orders of alice: %d %v", len(got), got)
	}
	if len(got[0].Lines) != 2 || got[0].Lines[1] != (domain.Line{SKU: "mug", Quantity: 1, PriceCents: 1200}) {
		t.Errorf("lines read back: %+v", got[0].Lines)
	}
}

func TestPlaceRefusesBadOrders(t *testing.T) {
	ctx := context.Background()
	svc, store := newService(t)
	for name, tc := range map[string]struct {
		customer string
		lines    []domain.Line
	}{
		"no customer":    {"", []domain.Line{{SKU: "tea", Quantity: 1}}},
		"no lines":       {"alice", nil},
		"no SKU":         {"alice", []domain.Line{{Quantity: 1}}},
		"zero quantity":  {"alice", []domain.Line{{SKU: "tea"}}},
		"negative price": {"alice", []domain.Line{{SKU: "tea", Quantity: 1, PriceCents: -1}}},
	} {
		if _, err := svc.Place(ctx, tc.customer, tc.lines); !errors.Is(err, domain.ErrInvalidOrder) {
			t.Errorf("%s: got %v, want ErrInvalidOrder", name, err)
		}
	}
	// A customer id the table service would refuse as a key is refused by the store before
	// anything is sent, and the error says so.
	if _, err := svc.Place(ctx, "a/b", []domain.Line{{SKU: "tea", Quantity: 1}}); !errors.Is(err, abstractions.ErrInvalidKey) {
		t.Errorf("a customer id with /: got %v, want ErrInvalidKey", err)
	}
	if n, err := store.CountAll(ctx); err != nil || n != 0 {
		t.Errorf("stored %d orders (%v), want none", n, err)
	}
}

func TestShipAndCancel(t *testing.T) {
	ctx := context.Background()
	svc, store := newService(t)
	o, err := svc.Place(ctx, "alice", []domain.Line{{SKU: "tea", Quantity: 1, PriceCents: 450}})
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := svc.Ship(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if shipped.Status != domain.Shipped {
		t.Errorf("status %s, want shipped", shipped.Status)
	}
	if _, err := svc.Cancel(ctx, o.ID); !errors.Is(err, domain.ErrWrongStatus) {
		t.Errorf("cancel a shipped order: got %v, want ErrWrongStatus", err)
	}
	if _, err := svc.Ship(ctx, "alice|nope"); !errors.Is(err, domain.ErrNoSuchOrder) {
		t.Errorf("ship a missing order: got %v, want ErrNoSuchOrder", err)
	}
	stored, err := store.One(ctx, o.ID)
	if err != nil || stored == nil || stored.Status != domain.Shipped {
		t.Errorf("stored %+v (%v), want a shipped order", stored, err)
	}
}

// TestRacingTransitions ships and cancels one order from many goroutines at once: Strict
// updates let exactly one of them win, whatever the interleaving.
func TestRacingTransitions(t *testing.T) {
	ctx := context.Background()
	svc, store := newService(t)
	o, err := svc.Place(ctx, "alice", []domain.Line{{SKU: "tea", Quantity: 1, PriceCents: 450}})
	if err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int64
	var winner atomic.Value
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			move := svc.Ship
			if g%2 == 1 {
				move = svc.Cancel
			}
			got, err := move(ctx, o.ID)
			switch {
			case err == nil:
				wins.Add(1)
				winner.Store(got.Status)
			case errors.Is(err, domain.ErrWrongStatus), errors.Is(err, abstractions.ErrConcurrencyConflict):
			default:
				t.Errorf("goroutine %d: %v", g, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d transitions won, want exactly 1", wins.Load())
	}
	stored, err := store.One(ctx, o.ID)
	if err != nil || stored == nil || stored.Status != winner.Load().(domain.Status) {
		t.Errorf("stored %+v (%v), want the winner's status %v", stored, err, winner.Load())
	}
}

func TestAddLine(t *testing.T) {
	ctx := context.Background()
	svc, store := newService(t)
	o, err := svc.Place(ctx, "alice", []domain.Line{{SKU: "tea", Quantity: 1, PriceCents: 450}})
	if err != nil {
		t.Fatal(err)
	}
	// Lines added at once all land: Mutate reads again after a lost race.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := svc.AddLine(ctx, o.ID, domain.Line{SKU: "mug", Quantity: 1, PriceCents: 1200}); err != nil {
				t.Errorf("add a line: %v", err)
			}
		})
	}
	wg.Wait()
	stored, err := store.One(ctx, o.ID)
	if err != nil || len(stored.Lines) != 9 || stored.TotalCents != 450+8*1200 {
		t.Fatalf("stored %+v (%v), want 9 lines totalling %d", stored, err, 450+8*1200)
	}
	if _, err := svc.AddLine(ctx, o.ID, domain.Line{SKU: "mug"}); !errors.Is(err, domain.ErrInvalidOrder) {
		t.Errorf("a line without a quantity: got %v, want ErrInvalidOrder", err)
	}
	if _, err := svc.AddLine(ctx, "alice|nope", domain.Line{SKU: "mug", Quantity: 1}); !errors.Is(err, domain.ErrNoSuchOrder) {
		t.Errorf("a missing order: got %v, want ErrNoSuchOrder", err)
	}
	if _, err := svc.Ship(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddLine(ctx, o.ID, domain.Line{SKU: "mug", Quantity: 1}); !errors.Is(err, domain.ErrWrongStatus) {
		t.Errorf("a shipped order: got %v, want ErrWrongStatus", err)
	}
}

// fakeOrders is a repository of orders in a map, with the five methods of domain.Orders
// and nothing else: the verbs the service calls need no more.
type fakeOrders struct {
	mu   sync.Mutex
	rows map[string]domain.Order
	n    int // the last version written
}

func (f *fakeOrders) Table() string { return "Orders" }

func (f *fakeOrders) One(_ context.Context, id string) (*domain.Order, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.rows[id]
	if !ok {
		return nil, abstractions.ErrNotFound
	}
	return &o, nil
}

func (f *fakeOrders) Create(_ context.Context, o *domain.Order) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.rows[o.ID]; ok {
		return abstractions.ErrDuplicateKey
	}
	return f.write(o)
}

func (f *fakeOrders) Update(_ context.Context, o *domain.Order, _ abstractions.ConcurrencyMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch stored, ok := f.rows[o.ID]; {
	case !ok:
		return abstractions.ErrNotFound
	case stored.ETag != o.ETag:
		return abstractions.ErrConcurrencyConflict
	}
	return f.write(o)
}

func (f *fakeOrders) write(o *domain.Order) error {
	f.n++
	o.ETag = fmt.Sprint(f.n)
	f.rows[o.ID] = *o
	return nil
}

func (f *fakeOrders) List(context.Context, string) ([]*domain.Order, error) { return nil, nil }

// The service runs over a fake of its own contract: Mutate (AddLine) and TryTransition
// (Ship, Cancel) take the four methods they call, not a whole Storage.
func TestServiceOverAFake(t *testing.T) {
	ctx := context.Background()
	svc := domain.NewService(&fakeOrders{rows: map[string]domain.Order{}}).WithIDs(func() string { return "o1" })
	o, err := svc.Place(ctx, "alice", []domain.Line{{SKU: "tea", Quantity: 1, PriceCents: 450}})
	if err != nil {
		t.Fatal(err)
	}
	if o, err = svc.AddLine(ctx, o.ID, domain.Line{SKU: "mug", Quantity: 2, PriceCents: 1200}); err != nil || o.TotalCents != 2850 {
		t.Fatalf("add a line: %+v, %v", o, err)
	}
	if o, err = svc.Cancel(ctx, o.ID); err != nil || o.Status != domain.Cancelled {
		t.Fatalf("cancel: %+v, %v", o, err)
	}
	if _, err := svc.Ship(ctx, o.ID); !errors.Is(err, domain.ErrWrongStatus) {
		t.Errorf("ship a cancelled order: got %v, want ErrWrongStatus", err)
	}
	if _, err := svc.Ship(ctx, "alice|nope"); !errors.Is(err, domain.ErrNoSuchOrder) {
		t.Errorf("ship a missing order: got %v, want ErrNoSuchOrder", err)
	}
}
