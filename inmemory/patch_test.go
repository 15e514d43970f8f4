package inmemory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
)

// level is an enum whose zero value cannot be written.
type level int

func (l level) MarshalText() ([]byte, error) {
	if l == 0 {
		return nil, errors.New("level 0 is not a level")
	}
	return []byte(fmt.Sprint(int(l))), nil
}

func (l *level) UnmarshalText(b []byte) error {
	_, err := fmt.Sscan(string(b), (*int)(l))
	return err
}

type Ticket struct {
	abstractions.Entity
	Level level
	Title string
}

// A patch looks only at the fields it sets: another field's unstorable zero value does not
// stop it.
func TestPatchIgnoresOtherFields(t *testing.T) {
	ctx := context.Background()
	s, err := tables.For[Ticket](inmemory.NewAccount(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &Ticket{Entity: abstractions.Entity{ID: "p|1"}, Level: 2, Title: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Patch(ctx, "p|1", abstractions.Set(abstractions.NewPatch[Ticket](), abstractions.Field(func(x *Ticket) *string { return &x.Title }), "b")); err != nil {
		t.Fatal(err)
	}
	got, err := s.One(ctx, "p|1")
	if err != nil || got.Title != "b" || got.Level != 2 {
		t.Fatalf("after the patch: %+v, %v", got, err)
	}
}
