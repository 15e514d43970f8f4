package tables

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Bad input is refused before anything is sent, with the sentinel the docs name.
func TestBadInputIsRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	name := abstractions.Field(func(i *item) *string { return &i.Name })
	p, err := s.prepareQuery("page", &abstractions.Query[item]{Partition: "p"})
	if err != nil {
		t.Fatal(err)
	}
	forged := func(pk string) string {
		return engine.EncodeCursor(engine.Cursor{Bounds: s.core.Bounds(p, abstractions.DefaultPageSize), PK: pk, RK: "r"})
	}
	cases := []struct {
		name string
		call func() error
		kind error
	}{
		{"a filter value with invalid UTF-8", func() error {
			_, err := s.Query(ctx, abstractions.Query[item]{Partition: "p", Where: name.Eq("a\xffb")})
			return err
		}, abstractions.ErrInvalidArgument},
		{"an ordering filter value with invalid UTF-8", func() error {
			_, err := s.Any(ctx, abstractions.Query[item]{Partition: "p", Where: name.Gt("\xfe")})
			return err
		}, abstractions.ErrInvalidArgument},
		{"a row-key prefix with invalid UTF-8", func() error {
			_, err := s.Query(ctx, abstractions.Query[item]{Partition: "p", RowKeyPrefix: "A\xff"})
			return err
		}, abstractions.ErrInvalidKey},
		{"a forged cursor of 100 KB", func() error {
			_, err := s.Page(ctx, abstractions.Query[item]{Partition: "p", Cursor: forged(strings.Repeat("x", 100_000))})
			return err
		}, abstractions.ErrInvalidArgument},
		{"a cursor of 100 KB of noise", func() error {
			_, err := s.Page(ctx, abstractions.Query[item]{Partition: "p", Cursor: strings.Repeat("A", 100_000)})
			return err
		}, abstractions.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.resetCalls()
			wantKind(t, tc.call(), tc.kind)
			if n := f.count("Query") + f.count("GetRow"); n != 0 {
				t.Errorf("%d requests were sent", n)
			}
		})
	}
	// A cursor Page made is still accepted.
	f.resetCalls()
	if _, err := s.Page(ctx, abstractions.Query[item]{Partition: "p", Cursor: forged("1!8!cA--")}); err != nil {
		t.Fatalf("a well-formed cursor: %v", err)
	}
}

// A stored cell whose type no longer fits the field is an integrity error.
func TestChangedColumnTypeIsIntegrity(t *testing.T) {
	s, f := newStore[item](t, nil)
	f.put("Items", service.Row{PartitionKey: "p", RowKey: "a", Properties: []service.Property{{Name: "N", Value: service.String("seven")}}})
	_, err := s.One(context.Background(), "p|a")
	if !errors.Is(err, abstractions.ErrIntegrity) {
		t.Fatalf("One = %v, want ErrIntegrity", err)
	}
	if errors.Is(err, abstractions.ErrInvalidArgument) || errors.Is(err, abstractions.ErrNotFound) {
		t.Errorf("%v matches another sentinel too", err)
	}
}
