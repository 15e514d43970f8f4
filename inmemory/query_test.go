package inmemory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// upper is stored as its plain string: it marshals to text but cannot be read from it, so
// the codec (and therefore the filter) treat it by its kind.
type upper string

func (u upper) MarshalText() ([]byte, error) { return []byte(strings.ToUpper(string(u))), nil }

type Coded struct {
	abstractions.Entity
	Code upper
}

func TestFilterUsesTheStoredFormOfTextTypes(t *testing.T) {
	ctx := context.Background()
	s, err := tables.For[Coded](inmemory.NewAccount(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &Coded{Entity: abstractions.Entity{ID: "p|1"}, Code: "abc"}); err != nil {
		t.Fatal(err)
	}
	code := abstractions.Field(func(c *Coded) *upper { return &c.Code })
	got, err := s.Query(ctx, abstractions.Query[Coded]{Partition: "p", Where: code.Eq("abc")})
	if err != nil || len(got) != 1 {
		t.Fatalf("Eq on the stored form: %d rows, %v", len(got), err)
	}
}

// A filter too long for a request URL is refused before anything is sent.
func TestLongFilterIsRefused(t *testing.T) {
	ctx := context.Background()
	s, g := cachedStore(t, tables.Disabled)
	name := abstractions.Field(func(d *Doc) *int { return &d.N })
	where := abstractions.Or(name.Eq(1), abstractions.Field(func(d *Doc) *string { return &d.Place.City }).Eq(strings.Repeat("x", 9000)))
	before := g.queries.Load()
	_, err := s.Query(ctx, abstractions.Query[Doc]{Partition: "p", Where: where})
	if !errors.Is(err, abstractions.ErrNotSupported) {
		t.Fatalf("Query: %v", err)
	}
	if g.queries.Load() != before {
		t.Fatal("a refused query sent requests")
	}
}
