package memservice

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// TestNoLostUpdate runs many goroutines that each add one to a counter row with a read and
// a conditional replace, retrying on 412. Every increment must survive.
func TestNoLostUpdate(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, insert(row("p", "counter", prop("n", service.Int64(0)))))

	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for done := 0; done < each; {
				r, err := s.GetRow(ctx, "Tab1", "p", "counter", nil)
				if err != nil {
					errs <- err
					return
				}
				n, _ := r.Get("n")
				_, err = s.Write(ctx, "Tab1", service.Action{
					Op:      service.OpReplace,
					Row:     row("p", "counter", prop("n", service.Int64(n.Int64()+1))),
					IfMatch: r.ETag,
				})
				switch {
				case err == nil:
					done++
				case abstractions.HasStatus(err, 412, "UpdateConditionNotSatisfied"):
				default:
					errs <- err
					return
				}
			}
		})
	}
	// Readers and other writers run alongside.
	wg.Go(func() {
		for i := range 200 {
			if _, err := s.Query(ctx, "Tab1", service.Query{Top: 5}); err != nil {
				errs <- err
				return
			}
			if _, err := s.Write(ctx, "Tab1", insert(row("q", fmt.Sprint(i)))); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	final := mustGet(t, s, "p", "counter")
	n, _ := final.Get("n")
	if n.Int64() != workers*each {
		t.Fatalf("counter = %d, want %d", n.Int64(), workers*each)
	}
}

// TestPartitionsConcurrently runs writers on eight partitions at once (four per partition,
// each on rows of its own), whose deletes empty their partitions again and again while other
// writes make them anew, with transactions, point reads and queries over the whole table
// alongside. Every write must land, every query must return rows in key order, and at the
// end the table must hold exactly each writer's last rows.
func TestPartitionsConcurrently(t *testing.T) {
	ctx := context.Background()
	s := New(WithSharedReads())
	if err := s.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	const partitions, perPartition, rounds = 8, 4, 150
	var wg sync.WaitGroup
	errs := make(chan error, partitions*perPartition+8)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	var writers sync.WaitGroup
	for w := range partitions * perPartition {
		pk := fmt.Sprintf("p%d", w%partitions)
		writers.Go(func() {
			for i := range rounds {
				rk := fmt.Sprintf("w%02d-%03d", w, i)
				steps := []service.Action{
					insert(row(pk, rk, prop("n", service.Int64(int64(i))))),
					{Op: service.OpUpsertMerge, Row: row(pk, rk, prop("m", service.Int32(1)))},
					{Op: service.OpMerge, Row: row(pk, rk, prop("n", service.Int64(int64(i+1)))), IfMatch: "*"},
				}
				if i%2 == 0 {
					steps = append(steps, service.Action{Op: service.OpDelete, Row: row(pk, rk), IfMatch: "*"})
				}
				for _, a := range steps {
					if _, err := s.Write(ctx, "Tab1", a); err != nil {
						fail(fmt.Errorf("%v of (%s, %s): %w", a.Op, pk, rk, err))
						return
					}
				}
				if i%10 == 0 {
					tx := []service.Action{insert(row(pk, rk+"-a")), insert(row(pk, rk+"-b"))}
					if _, err := s.Transact(ctx, "Tab1", tx); err != nil {
						fail(fmt.Errorf("transaction in %s: %w", pk, err))
						return
					}
					del := []service.Action{{Op: service.OpDelete, Row: row(pk, rk+"-a"), IfMatch: "*"}, {Op: service.OpDelete, Row: row(pk, rk+"-b"), IfMatch: "*"}}
					if _, err := s.Transact(ctx, "Tab1", del); err != nil {
						fail(fmt.Errorf("transaction in %s: %w", pk, err))
						return
					}
				}
			}
		})
	}
	done := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				var last rowKey
				var next *service.Continuation
				for first := true; first || next != nil; first = false {
					page, err := s.Query(ctx, "Tab1", service.Query{Top: 37, Continuation: next})
					if err != nil {
						fail(err)
						return
					}
					for _, r := range page.Rows {
						k := rowKey{r.PartitionKey, r.RowKey}
						if last != (rowKey{}) && (service.CompareUTF16(k.pk, last.pk) < 0 || k.pk == last.pk && service.CompareUTF16(k.rk, last.rk) <= 0) {
							fail(fmt.Errorf("query order: %v after %v", k, last))
							return
						}
						last = k
					}
					next = page.Next
				}
				if _, err := s.GetRow(ctx, "Tab1", "p3", "w03-001", nil); err != nil && !abstractions.HasStatus(err, 404, "ResourceNotFound") {
					fail(err)
					return
				}
			}
		})
	}
	writers.Wait()
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := map[rowKey]bool{}
	for w := range partitions * perPartition {
		for i := 1; i < rounds; i += 2 {
			want[rowKey{fmt.Sprintf("p%d", w%partitions), fmt.Sprintf("w%02d-%03d", w, i)}] = true
		}
	}
	got := map[rowKey]bool{}
	var next *service.Continuation
	for first := true; first || next != nil; first = false {
		page, err := s.Query(ctx, "Tab1", service.Query{Continuation: next})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			got[rowKey{r.PartitionKey, r.RowKey}] = true
			if n, _ := r.Get("n"); n.Int64()%2 != 0 || len(r.Properties) != 2 {
				t.Fatalf("row %s/%s: %v", r.PartitionKey, r.RowKey, r.Properties)
			}
		}
		next = page.Next
	}
	if len(got) != len(want) {
		t.Fatalf("the table holds %d rows, want %d", len(got), len(want))
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("row %v is missing", k)
		}
	}
	tb := s.lookup("Tab1")
	if n := tb.rows.Load(); n != int64(len(want)) {
		t.Fatalf("the table counts %d rows, holds %d", n, len(want))
	}
}

func TestConcurrentBlobs(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.CreateContainer(ctx, "box"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprint("b", i%2)
			for range 50 {
				p, err := s.Upload(ctx, "box", name, []byte(name), service.UploadOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = s.Upload(ctx, "box", name, nil, service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p.ETag})
				if b, err := s.Download(ctx, "box", name, service.Conditions{}); err == nil {
					b.Body.Close()
				}
				if _, err := s.List(ctx, "box", service.ListOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
