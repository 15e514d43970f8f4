package outbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tools/examples/outbox"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type backend struct {
	name string
	svc  *outbox.Service
}

// backends wires the service to the in-memory backend and, when an emulator is configured,
// to Azurite, each in a table of its own.
func backends(t *testing.T) []backend {
	t.Helper()
	wire := func(name string, acct *tables.Account, table string) backend {
		svc, err := outbox.Open(acct, table)
		if err != nil {
			t.Fatal(err)
		}
		return backend{name: name, svc: svc}
	}
	out := []backend{wire("memory", inmemory.NewAccount(nil), "")}
	conn, ok := azuritetest.LookupConnectionString(t)
	if !ok {
		t.Log(azuritetest.ConnEnv + " not set: the in-memory backend only")
		return out
	}
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b [5]byte
	_, _ = rand.Read(b[:])
	table := outbox.Table + hex.EncodeToString(b[:])
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), table) })
	return append(out, wire("azurite", acct, table))
}

// sink is a publisher that records what it is handed, and can fail on a chosen event:
// after recording it (a crash between publish and mark), or before (a failed publish).
type sink struct {
	mu        sync.Mutex
	got       []string
	crashOn   int64 // published, then the relay stops before marking it
	refuseOn  int64 // not published; the relay stops
	published map[int64]int
}

var errCrash = errors.New("the relay process died")

func (s *sink) publish(_ context.Context, m outbox.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Seq == s.refuseOn {
		s.refuseOn = 0
		return errors.New("the broker is down")
	}
	s.got = append(s.got, fmt.Sprintf("%d:%s:%s", m.Seq, m.Type, m.Event.Base().Order))
	if s.published == nil {
		s.published = map[int64]int{}
	}
	s.published[m.Seq]++
	if m.Seq == s.crashOn {
		s.crashOn = 0
		return errCrash
	}
	return nil
}

// lifecycle places, pays and ships an order of the tenant: three events.
func lifecycle(ctx context.Context, t *testing.T, svc *outbox.Service, tenant, id string) *outbox.Order {
	t.Helper()
	o, err := svc.Place(ctx, tenant, id, 1650)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Pay(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := svc.Ship(ctx, o, "Nova"); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestEveryChangeWritesItsEvent(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			o := lifecycle(ctx, t, b.svc, "t1", "o-1")
			stored, err := b.svc.Orders().One(ctx, "t1|o-1")
			if err != nil || stored.Status != "shipped" || stored.ETag != o.ETag {
				t.Fatalf("the order: %+v, %v (the caller's ETag %q)", stored, err, o.ETag)
			}
			orders, err := b.svc.Orders().List(ctx, "t1")
			if err != nil || len(orders) != 1 {
				t.Fatalf("the orders of t1: %d, %v (the events and the marker are not orders)", len(orders), err)
			}
			entries, err := b.svc.Events().List(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, e := range entries {
				keys = append(keys, e.Key.RowKey+"/"+e.TypeName)
			}
			want := []string{outbox.EventKey(1) + "/order.placed", outbox.EventKey(2) + "/order.paid", outbox.EventKey(3) + "/order.shipped", "outbox/"}
			if !reflect.DeepEqual(keys, want) {
				t.Fatalf("the rows of the outbox: %v, want %v", keys, want)
			}

			s := &sink{}
			n, err := b.svc.NewRelay(s.publish).Run(ctx, "t1")
			if err != nil || n != 3 {
				t.Fatalf("relay: %d, %v", n, err)
			}
			if want := []string{"1:order.placed:o-1", "2:order.paid:o-1", "3:order.shipped:o-1"}; !reflect.DeepEqual(s.got, want) {
				t.Fatalf("published %v, want %v", s.got, want)
			}
			if n, err := b.svc.NewRelay(s.publish).Run(ctx, "t1"); err != nil || n != 0 || len(s.got) != 3 {
				t.Fatalf("a second run: %d, %v (published %v)", n, err, s.got)
			}
			m, err := b.svc.Events().One(ctx, abstractions.TableKey{PartitionKey: "t1", RowKey: outbox.MarkerKey})
			if err != nil || m.Columns[outbox.PendingColumn] != int64(4) || m.Columns[outbox.SeqColumn] != int64(3) {
				t.Fatalf("the marker after the relay: %v, %v", m, err)
			}
			// A tenant without events has nothing to relay.
			if n, err := b.svc.NewRelay(s.publish).Run(ctx, "t9"); err != nil || n != 0 {
				t.Fatalf("an empty tenant: %d, %v", n, err)
			}
		})
	}
}

// A change based on a stale read writes neither the order nor its event.
func TestStaleChangeWritesNothing(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			if _, err := b.svc.Place(ctx, "t1", "o-1", 100); err != nil {
				t.Fatal(err)
			}
			first, err := b.svc.Orders().One(ctx, "t1|o-1")
			if err != nil {
				t.Fatal(err)
			}
			second := *first
			if err := b.svc.Pay(ctx, first); err != nil {
				t.Fatal(err)
			}
			err = b.svc.Pay(ctx, &second)
			if !errors.Is(err, outbox.ErrConflict) || !errors.Is(err, abstractions.ErrConcurrencyConflict) {
				t.Fatalf("a stale Pay: %v, want ErrConflict", err)
			}
			if second.Status != "placed" {
				t.Errorf("a failed change moved the caller's order to %s", second.Status)
			}
			entries, err := b.svc.Events().List(ctx, "t1")
			if err != nil || len(entries) != 3 { // placed, paid, the marker
				t.Fatalf("%d rows after the stale change, %v", len(entries), err)
			}
			if _, err := b.svc.Place(ctx, "t1", "o-1", 100); !errors.Is(err, outbox.ErrConflict) {
				t.Fatalf("placing an order twice: %v", err)
			}
		})
	}
}

// A crash between publishing an event and marking it sent publishes it again on the next
// run: at least once, and none lost.
func TestCrashBetweenPublishAndMark(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			lifecycle(ctx, t, b.svc, "t1", "o-1")
			s := &sink{crashOn: 2}
			n, err := b.svc.NewRelay(s.publish).Run(ctx, "t1")
			if !errors.Is(err, errCrash) || n != 1 {
				t.Fatalf("the crashing run: %d, %v", n, err)
			}
			n, err = b.svc.NewRelay(s.publish).Run(ctx, "t1")
			if err != nil || n != 2 {
				t.Fatalf("the run after the crash: %d, %v", n, err)
			}
			if want := map[int64]int{1: 1, 2: 2, 3: 1}; !reflect.DeepEqual(s.published, want) {
				t.Fatalf("published %v, want %v (event 2 twice)", s.published, want)
			}
		})
	}
}

// A crash after marking an event, before the marker moves on, publishes nothing twice: the
// next run starts at the old _Pending and skips the events marked sent.
func TestCrashAfterMark(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			lifecycle(ctx, t, b.svc, "t1", "o-1")
			s := &sink{}
			r := b.svc.NewRelay(s.publish)
			outbox.SetAfterMark(r, func(seq int64) error {
				if seq == 2 {
					return errCrash
				}
				return nil
			})
			if n, err := r.Run(ctx, "t1"); !errors.Is(err, errCrash) || n != 2 {
				t.Fatalf("the crashing run: %d, %v", n, err)
			}
			if n, err := b.svc.NewRelay(s.publish).Run(ctx, "t1"); err != nil || n != 1 {
				t.Fatalf("the run after the crash: %d, %v", n, err)
			}
			if want := map[int64]int{1: 1, 2: 1, 3: 1}; !reflect.DeepEqual(s.published, want) {
				t.Fatalf("published %v, want each once", s.published)
			}
		})
	}
}

// A publish that fails leaves the event pending: the next run publishes it and the rest.
func TestFailedPublishIsRetried(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			lifecycle(ctx, t, b.svc, "t1", "o-1")
			s := &sink{refuseOn: 1}
			if n, err := b.svc.NewRelay(s.publish).Run(ctx, "t1"); err == nil || n != 0 || len(s.got) != 0 {
				t.Fatalf("the failing run: %d, %v, published %v", n, err, s.got)
			}
			if n, err := b.svc.NewRelay(s.publish).Run(ctx, "t1"); err != nil || n != 3 {
				t.Fatalf("the next run: %d, %v", n, err)
			}
			if want := map[int64]int{1: 1, 2: 1, 3: 1}; !reflect.DeepEqual(s.published, want) {
				t.Fatalf("published %v, want each once", s.published)
			}
		})
	}
}

// Writers racing each other and the relay, with crashes of the relay on the way: every
// event committed is published at least once, in sequence order on each run.
func TestConcurrentChangesAndCrashingRelay(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			const writers, orders = 3, 4
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Go(func() {
					for i := range orders {
						for {
							_, err := b.svc.Place(ctx, "t1", fmt.Sprintf("w%d-%d", w, i), 1)
							if errors.Is(err, outbox.ErrConflict) {
								continue // another writer moved the outbox: read again, retry
							}
							if err != nil {
								errs <- err
							}
							break
						}
					}
				})
			}
			s := &sink{}
			crash := int64(2)
			for range 20 {
				s.mu.Lock()
				s.crashOn, crash = crash, crash+3
				s.mu.Unlock()
				_, _ = b.svc.NewRelay(s.publish).Run(ctx, "t1")
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			s.mu.Lock()
			s.crashOn = 0
			s.mu.Unlock()
			if _, err := b.svc.NewRelay(s.publish).Run(ctx, "t1"); err != nil {
				t.Fatal(err)
			}
			for seq := int64(1); seq <= writers*orders; seq++ {
				if s.published[seq] == 0 {
					t.Errorf("event %d was never published (published %v)", seq, s.published)
				}
			}
			if len(s.published) != writers*orders {
				t.Errorf("published %d distinct events, want %d", len(s.published), writers*orders)
			}
		})
	}
}
