package tables

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// watched is a table service that lets a test see, hold or fail each transaction before the
// service underneath answers it.
type watched struct {
	service.Tables
	mu       sync.Mutex
	out, max int                 // transactions out now, and the most at once
	sent     map[string][]string // per partition, the first row key of each transaction
	// before runs before each transaction, outside the lock; its error is the answer.
	before func(ctx context.Context, actions []service.Action) error
}

func (w *watched) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	w.mu.Lock()
	w.out++
	w.max = max(w.max, w.out)
	if w.sent == nil {
		w.sent = map[string][]string{}
	}
	pk := actions[0].Row.PartitionKey
	w.sent[pk] = append(w.sent[pk], actions[0].Row.RowKey)
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.out--
		w.mu.Unlock()
	}()
	if w.before != nil {
		if err := w.before(ctx, actions); err != nil {
			return nil, err
		}
	}
	return w.Tables.Transact(ctx, table, actions)
}

func watchedStore(t *testing.T, degree int) (*Store[item], *watched, *fakeTables) {
	t.Helper()
	f := newFake()
	f.tables["items"] = map[fakeKey]service.Row{} // a first write to a missing table would send Create Table and the write again
	w := &watched{Tables: f}
	acct := testAccount("test", w, nil, &Options{Now: func() time.Time { return testNow }, BatchParallelism: degree})
	s, err := For[item](acct, &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	return s, w, f
}

// spread returns n items in each of the partitions p0…p(parts-1), interleaved.
func spread(parts, n int) []*item {
	var out []*item
	for i := range n {
		for p := range parts {
			out = append(out, &item{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|%04d", p, i)}, N: i})
		}
	}
	return out
}

// The outcome of a batch does not depend on the degree: every partition is tried, a
// failure stops only its own partition, and the error lists exactly what committed.
func TestBatchOutcomeIsTheSameAtEveryDegree(t *testing.T) {
	ctx := context.Background()
	for _, degree := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprint("degree ", degree), func(t *testing.T) {
			s, _, f := watchedStore(t, degree)
			// p3 holds a row the batch creates again, in its second transaction.
			if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p3|0150"}}); err != nil {
				t.Fatal(err)
			}
			vs := spread(6, 200)
			err := s.CreateBatch(ctx, vs)
			wantKind(t, err, abstractions.ErrDuplicateKey)
			var be *abstractions.BatchError
			if !errors.As(err, &be) {
				t.Fatalf("error %v is not a BatchError", err)
			}
			if got, want := be.CommittedPartitions(), []string{"p0", "p1", "p2", "p4", "p5"}; !reflect.DeepEqual(got, want) {
				t.Errorf("committed partitions %v, want %v", got, want)
			}
			if got := be.FailedPartitions(); !reflect.DeepEqual(got, []string{"p3"}) {
				t.Errorf("failed partitions %v", got)
			}
			var se *abstractions.StoreError
			if !errors.As(err, &se) || se.PartitionKey != "p3" || se.RowKey != "0150" {
				t.Errorf("the first failure %v does not name the existing row", se)
			}
			p3 := be.Partitions[3]
			if p3.PartitionKey != "p3" || len(p3.Committed) != 100 || len(p3.NotCommitted) != 100 || len(p3.Unknown) != 0 {
				t.Errorf("p3: %d committed, %d not, %d unknown", len(p3.Committed), len(p3.NotCommitted), len(p3.Unknown))
			}
			// Retry names exactly the entities of p3's second transaction, which are unchanged.
			retry := be.Retry()
			if len(retry) != 100 {
				t.Fatalf("%d entities to retry, want 100", len(retry))
			}
			for _, i := range retry {
				if vs[i].ID[:2] != "p3" || vs[i].N < 100 || !vs[i].UpdatedAt.IsZero() {
					t.Errorf("retry names %+v", vs[i])
				}
			}
			if f.size("Items") != 5*200+100+1 {
				t.Errorf("%d rows stored, want %d", f.size("Items"), 5*200+100+1)
			}
			n, err := s.Count(ctx, "p3")
			if err != nil || n != 101 {
				t.Errorf("p3 holds %d rows, %v", n, err)
			}
		})
	}
}

// Transactions of different partitions are out together, never more than the degree, and
// each partition's go in order.
func TestBatchSendsPartitionsConcurrently(t *testing.T) {
	ctx := context.Background()
	const degree = 4
	s, w, _ := watchedStore(t, degree)
	// The first transactions wait until degree of them are out at once.
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	w.before = func(ctx context.Context, _ []service.Action) error {
		mu.Lock()
		arrived++
		if arrived == degree {
			close(all)
		}
		first := arrived <= degree
		mu.Unlock()
		if first {
			select {
			case <-all:
			case <-time.After(30 * time.Second): // a guard against a hang, not a measurement
				return errors.New("the transactions were not sent concurrently")
			}
		}
		return nil
	}
	n, err := s.UpsertBatch(ctx, spread(10, 250))
	if err != nil || n != 2500 {
		t.Fatalf("upserted %d, %v", n, err)
	}
	if w.max != degree {
		t.Errorf("at most %d transactions out at once, want %d", w.max, degree)
	}
	for pk, firsts := range w.sent {
		if !slices.IsSorted(firsts) || len(firsts) != 3 {
			t.Errorf("partition %s sent %v, want 3 transactions in order", pk, firsts)
		}
	}
}

// With a degree of 1 the transactions go one after another in the order of the input.
func TestBatchDegreeOneKeepsTheOrder(t *testing.T) {
	ctx := context.Background()
	s, w, _ := watchedStore(t, 1)
	var order []string
	w.before = func(_ context.Context, actions []service.Action) error {
		order = append(order, actions[0].Row.PartitionKey+"|"+actions[0].Row.RowKey)
		return nil
	}
	if _, err := s.UpsertBatch(ctx, spread(3, 150)); err != nil {
		t.Fatal(err)
	}
	want := []string{"p0|0000", "p0|0100", "p1|0000", "p1|0100", "p2|0000", "p2|0100"}
	if !reflect.DeepEqual(order, want) || w.max != 1 {
		t.Errorf("sent %v (at most %d at once), want %v", order, w.max, want)
	}
}

// A failure that concerns the whole service stops the batch: no new transaction is sent,
// the failed one's rows are reported unknown, the others not committed.
func TestBatchStopsOnUnavailable(t *testing.T) {
	ctx := context.Background()
	s, w, f := watchedStore(t, 1)
	w.before = func(_ context.Context, actions []service.Action) error {
		if actions[0].Row.PartitionKey == "p1" {
			return fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
		}
		return nil
	}
	n, err := s.UpsertBatch(ctx, spread(3, 10))
	wantKind(t, err, abstractions.ErrUnavailable)
	var be *abstractions.BatchError
	if !errors.As(err, &be) || n != 10 || f.size("Items") != 10 {
		t.Fatalf("wrote %d (%d rows), %v", n, f.size("Items"), err)
	}
	got := []int{len(be.Partitions[0].Committed), len(be.Partitions[1].Unknown), len(be.Partitions[2].NotCommitted)}
	if !reflect.DeepEqual(got, []int{10, 10, 10}) || be.Partitions[2].Err == nil || !errors.Is(be.Partitions[2].Err, abstractions.ErrUnavailable) {
		t.Errorf("partitions %+v", be.Partitions)
	}
	if len(be.Retry()) != 20 {
		t.Errorf("retry %v, want the 20 entities of p1 and p2", be.Retry())
	}
}

// A cancelled context stops the batch; every goroutine has returned when the call does
// (TestMain checks with goleak).
func TestBatchCancelled(t *testing.T) {
	for _, degree := range []int{1, 4} {
		t.Run(fmt.Sprint("degree ", degree), func(t *testing.T) {
			s, w, f := watchedStore(t, degree)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once sync.Once
			w.before = func(ctx context.Context, actions []service.Action) error {
				if actions[0].Row.PartitionKey == "p2" {
					once.Do(cancel)
					return ctx.Err()
				}
				return nil
			}
			vs := spread(8, 100)
			n, err := s.UpsertBatch(ctx, vs)
			wantKind(t, err, context.Canceled)
			var be *abstractions.BatchError
			if !errors.As(err, &be) {
				t.Fatalf("error %v", err)
			}
			committed := 0
			for _, p := range be.Partitions {
				committed += len(p.Committed)
				if len(p.Committed)+len(p.NotCommitted)+len(p.Unknown) != 100 {
					t.Errorf("partition %s reports %d rows", p.PartitionKey, len(p.Committed)+len(p.NotCommitted)+len(p.Unknown))
				}
			}
			if committed != n || f.size("Items") != n || len(be.Retry()) != len(vs)-n {
				t.Errorf("%d committed, %d counted, %d stored, %d to retry", committed, n, f.size("Items"), len(be.Retry()))
			}
		})
	}
}

// The split-aware batch runs partitions concurrently too, and reports the same way.
func TestLargeBatchInParallel(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	w := &watched{Tables: f}
	acct := testAccount("test", w, nil, &Options{Now: func() time.Time { return testNow }, BatchParallelism: 4})
	s, err := For[patchee](acct, &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &patchee{Entity: abstractions.Entity{ID: "p2|0003"}}); err != nil {
		t.Fatal(err)
	}
	var vs []*patchee
	for i := range 5 {
		for p := range 4 {
			vs = append(vs, &patchee{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|%04d", p, i)}, Big: fmt.Sprint(i)})
		}
	}
	err = s.CreateBatch(ctx, vs)
	wantKind(t, err, abstractions.ErrDuplicateKey)
	var be *abstractions.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("error %v", err)
	}
	if got := be.CommittedPartitions(); !reflect.DeepEqual(got, []string{"p0", "p1", "p3"}) {
		t.Errorf("committed %v", got)
	}
	for _, i := range be.Retry() {
		if vs[i].ID[:2] != "p2" {
			t.Errorf("retry names %s", vs[i].ID)
		}
	}
	n, err := s.UpsertBatch(ctx, vs)
	if err != nil || n != len(vs) {
		t.Errorf("upsert: %d, %v", n, err)
	}
}

// Without Options.BatchParallelism, batch calls have defaultBatchParallelism transactions
// out at once. (The window itself is tested in package retry.)
func TestDefaultBatchParallelism(t *testing.T) {
	if n := (*Options)(nil).batchParallelism(); n != defaultBatchParallelism {
		t.Errorf("default %d", n)
	}
	if n := (&Options{BatchParallelism: 3}).batchParallelism(); n != 3 {
		t.Errorf("3 gives %d", n)
	}
}
