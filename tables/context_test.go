package tables

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
)

// Every call honours a cancelled context, whether the read cache could answer it or not.
func TestEveryCallHonoursItsContext(t *testing.T) {
	ctx := context.Background()
	s, _, _ := cachingStore(t, Absolute(time.Hour))
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	// Warm the cache: these would be hits.
	if _, err := s.One(ctx, "p|a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListAll(ctx); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	name := abstractions.Field(func(i *item) *string { return &i.Name })
	calls := map[string]func() error{
		"EnsureCreated": func() error { return s.EnsureCreated(cancelled) },
		"Create":        func() error { return s.Create(cancelled, &item{Entity: abstractions.Entity{ID: "p|b"}}) },
		"Upsert":        func() error { return s.Upsert(cancelled, &item{Entity: abstractions.Entity{ID: "p|b"}}) },
		"Update": func() error {
			return s.Update(cancelled, &item{Entity: abstractions.Entity{ID: "p|a"}}, abstractions.LastWriterWins)
		},
		"Delete":   func() error { _, err := s.Delete(cancelled, "p|a", ""); return err },
		"One":      func() error { _, err := s.One(cancelled, "p|a"); return err },
		"Exists":   func() error { _, err := s.Exists(cancelled, "p|a"); return err },
		"List":     func() error { _, err := s.List(cancelled, "p"); return err },
		"ListAll":  func() error { _, err := s.ListAll(cancelled); return err },
		"Count":    func() error { _, err := s.Count(cancelled, "p"); return err },
		"CountAll": func() error { _, err := s.CountAll(cancelled); return err },
		"CreateBatch": func() error {
			return s.CreateBatch(cancelled, []*item{{Entity: abstractions.Entity{ID: "p|c"}}})
		},
		"UpsertBatch": func() error {
			_, err := s.UpsertBatch(cancelled, []*item{{Entity: abstractions.Entity{ID: "p|c"}}})
			return err
		},
		"DeletePartition": func() error { _, err := s.DeletePartition(cancelled, "p"); return err },
		"Patch": func() error {
			_, err := s.Patch(cancelled, "p|a", abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(i *item) *string { return &i.Name }), "b"))
			return err
		},
		"Query": func() error {
			_, err := s.Query(cancelled, abstractions.Query[item]{Partition: "p", Where: name.Eq("a")})
			return err
		},
		"Page": func() error { _, err := s.Page(cancelled, abstractions.Query[item]{Partition: "p"}); return err },
		"Any":  func() error { _, err := s.Any(cancelled, abstractions.Query[item]{Partition: "p"}); return err },
		"Stream": func() error {
			for _, err := range s.Stream(cancelled, abstractions.Query[item]{Partition: "p"}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
	// A deadline that passed before the call: the error names the call (a StoreError),
	// matches ErrUnavailable as a deadline passing during the call does, and does not say
	// that a write may have been applied, since nothing was sent.
	expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	cancelled = expired
	for name, call := range calls {
		err := call()
		var se *abstractions.StoreError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, abstractions.ErrUnavailable) || !errors.As(err, &se) ||
			strings.Contains(err.Error(), "may or may not") {
			t.Errorf("%s with a passed deadline: %v", name, err)
		}
	}
}
