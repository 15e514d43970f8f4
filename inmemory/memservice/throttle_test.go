package memservice

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// throttled returns a service with table Tab1 under the model, on a clock the test moves.
func throttled(t *testing.T, model Throttling) (*Service, *clock) {
	t.Helper()
	c := &clock{t: t0}
	model.Clock = c.now
	s := New(WithClock(c.now))
	if err := s.CreateTable(context.Background(), "Tab1"); err != nil {
		t.Fatal(err)
	}
	s.throttle = nil // the table is made before the model starts
	WithThrottling(model)(s)
	return s, c
}

func batchOf(pk string, from, n int) []service.Action {
	acts := make([]service.Action, n)
	for i := range acts {
		acts[i] = insert(row(pk, fmt.Sprintf("r%05d", from+i)))
	}
	return acts
}

func TestThrottlingPartition(t *testing.T) {
	ctx := context.Background()
	s, c := throttled(t, Throttling{PartitionRate: 200})
	// A full bucket holds one second: two transactions of 100.
	for i := range 2 {
		if err := txErr(s.Transact(ctx, "Tab1", batchOf("hot", 100*i, 100))); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
	}
	err := txErr(s.Transact(ctx, "Tab1", batchOf("hot", 200, 1)))
	wantStatus(t, err, http.StatusServiceUnavailable, "ServerBusy")
	_, err = s.Write(ctx, "Tab1", insert(row("hot", "x")))
	wantStatus(t, err, http.StatusServiceUnavailable, "ServerBusy")
	_, err = s.GetRow(ctx, "Tab1", "hot", "r00000", nil)
	wantStatus(t, err, http.StatusServiceUnavailable, "ServerBusy")
	if s.Throttled() != 3 {
		t.Errorf("%d refused, want 3", s.Throttled())
	}
	// A refused request changed nothing; another partition is not affected.
	if _, err := s.GetRow(ctx, "Tab1", "hot", "x", nil); err == nil {
		t.Error("a refused write was applied")
	}
	if err := txErr(s.Transact(ctx, "Tab1", batchOf("cold", 0, 100))); err != nil {
		t.Fatal(err)
	}
	// Half a second refills half the bucket.
	c.set(t0.Add(500 * time.Millisecond))
	if err := txErr(s.Transact(ctx, "Tab1", batchOf("hot", 200, 100))); err != nil {
		t.Fatalf("after half a second: %v", err)
	}
	wantStatus(t, txErr(s.Transact(ctx, "Tab1", batchOf("hot", 300, 1))), http.StatusServiceUnavailable, "ServerBusy")
	// Rows of another table's partition of the same name have a bucket of their own.
	if err := s.CreateTable(ctx, "Tab2"); err != nil {
		t.Fatal(err)
	}
	if err := txErr(s.Transact(ctx, "Tab2", batchOf("hot", 0, 100))); err != nil {
		t.Fatal(err)
	}
}

func TestThrottlingAccount(t *testing.T) {
	ctx := context.Background()
	s, c := throttled(t, Throttling{AccountRate: 150, PartitionRate: 1000, Burst: 2 * time.Second})
	// The account holds 300 tokens: three partitions of 100 pass, the fourth does not.
	for p := range 3 {
		if err := txErr(s.Transact(ctx, "Tab1", batchOf(fmt.Sprint("p", p), 0, 100))); err != nil {
			t.Fatal(err)
		}
	}
	err := txErr(s.Transact(ctx, "Tab1", batchOf("p3", 0, 100)))
	wantStatus(t, err, http.StatusServiceUnavailable, "ServerBusy")
	if se := err.Error(); se == "" {
		t.Error("no message")
	}
	_, err = s.Query(ctx, "Tab1", service.Query{})
	wantStatus(t, err, http.StatusServiceUnavailable, "ServerBusy")
	wantStatus(t, s.Ping(ctx), http.StatusServiceUnavailable, "ServerBusy")
	// A query page is charged for its rows: 300 rows empty the bucket the wait refilled.
	c.set(t0.Add(2 * time.Second))
	page, err := s.Query(ctx, "Tab1", service.Query{})
	if err != nil || len(page.Rows) != 300 {
		t.Fatalf("query: %d rows, %v", len(page.Rows), err)
	}
	wantStatus(t, s.Ping(ctx), http.StatusServiceUnavailable, "ServerBusy")
	c.set(t0.Add(3 * time.Second))
	if err := s.Ping(ctx); err != nil {
		t.Errorf("a second later: %v", err)
	}
}

// A request costing more than a bucket holds passes when the bucket is full.
func TestThrottlingOversizedRequest(t *testing.T) {
	ctx := context.Background()
	s, c := throttled(t, Throttling{PartitionRate: 50})
	if err := txErr(s.Transact(ctx, "Tab1", batchOf("p", 0, 100))); err != nil {
		t.Fatalf("a full bucket: %v", err)
	}
	c.set(t0.Add(time.Second)) // back to zero after the debt of 50
	wantStatus(t, txErr(s.Transact(ctx, "Tab1", batchOf("p", 100, 100))), http.StatusServiceUnavailable, "ServerBusy")
	c.set(t0.Add(2 * time.Second))
	if err := txErr(s.Transact(ctx, "Tab1", batchOf("p", 100, 100))); err != nil {
		t.Fatalf("full again: %v", err)
	}
}

func TestThrottlingOff(t *testing.T) {
	for _, model := range []Throttling{{}, {AccountRate: -1}} {
		s := New(WithThrottling(model))
		if s.throttle != nil || s.Throttled() != 0 {
			t.Errorf("%+v throttles", model)
		}
	}
	if AzureTargets.AccountRate != 20_000 || AzureTargets.PartitionRate != 2_000 {
		t.Errorf("targets %+v", AzureTargets)
	}
}

// Many partition buckets are pruned once full again, so the map does not grow without bound.
func TestThrottlingPrunesFullBuckets(t *testing.T) {
	th := newThrottle(Throttling{PartitionRate: 10, Clock: func() time.Time { return t0 }})
	for i := range pruneAt + 5 {
		if err := th.admit("t", fmt.Sprint(i), 1); err != nil {
			t.Fatal(err)
		}
	}
	th.model.Clock = func() time.Time { return t0.Add(time.Second) }
	if err := th.admit("t", "new", 1); err != nil {
		t.Fatal(err)
	}
	if n := len(th.partitions); n > 10 {
		t.Errorf("%d partition buckets kept", n)
	}
}
