package tables

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Lists and counts read every page the service returns, empty pages with a continuation
// included, and nothing beyond the partition.
func TestListAndCount(t *testing.T) {
	ctx := context.Background()
	for _, empty := range []bool{false, true} {
		t.Run(fmt.Sprintf("empty pages %v", empty), func(t *testing.T) {
			s, f := newStore[item](t, nil)
			if _, err := s.UpsertBatch(ctx, append(append(items("a", 3), items("p", 2100)...), items("z", 4)...)); err != nil {
				t.Fatal(err)
			}
			f.emptyPages = empty
			f.resetCalls()
			got, err := s.List(ctx, "P")
			if err != nil || len(got) != 2100 || got[0].ID != "p|000" || got[2099].ID != "p|999" {
				t.Fatalf("List: %d rows, %v", len(got), err)
			}
			for _, q := range f.queries {
				if q.Filter != "PartitionKey eq 'p'" || q.Select != nil {
					t.Fatalf("List asked %+v", q)
				}
			}
			all, err := s.ListAll(ctx)
			if err != nil || len(all) != 2107 || all[0].ID != "a|000" || all[2106].ID != "z|003" {
				t.Fatalf("ListAll: %d rows, %v", len(all), err)
			}
			f.resetCalls()
			n, err := s.Count(ctx, "p")
			if err != nil || n != 2100 {
				t.Errorf("Count = %d, %v", n, err)
			}
			n, err = s.CountAll(ctx)
			if err != nil || n != 2107 {
				t.Errorf("CountAll = %d, %v", n, err)
			}
			for _, q := range f.queries {
				if q.Select == nil || len(q.Select) != 0 {
					t.Fatalf("a count asked for properties: %+v", q)
				}
			}
			if n, err := s.Count(ctx, "nobody"); err != nil || n != 0 {
				t.Errorf("an empty partition counts %d, %v", n, err)
			}
			if got, err := s.List(ctx, "nobody"); err != nil || got == nil || len(got) != 0 {
				t.Errorf("an empty partition lists %v, %v; want an empty slice", got, err)
			}
		})
	}
}

func TestListFailures(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	f.put("Items", service.Row{PartitionKey: "p", RowKey: "bad", Properties: []service.Property{{Name: "N", Value: service.Bool(true)}}})
	if _, err := s.List(ctx, "p"); err == nil {
		t.Error("a row that does not decode lists")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	f.resetCalls()
	if _, err := s.List(cancelled, "p"); !errors.Is(err, context.Canceled) || len(f.calls) != 0 {
		t.Errorf("a cancelled list: %v, sent %v", err, f)
	}
	if _, err := s.Count(cancelled, "p"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled count: %v", err)
	}
	_, err := s.List(ctx, "a|b")
	wantKind(t, err, abstractions.ErrInvalidKey)
}
