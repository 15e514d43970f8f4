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
