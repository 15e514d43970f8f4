package inmemory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables/service"
)

// Note is a split-aware type: Body is a large text value, Blob large bytes.
type Note struct {
	abstractions.Entity
	Title string
	Body  string `table:",split=text"`
	Blob  []byte `table:",split=binary"`
}

func rowsOf(t *testing.T, tables service.Tables, table string) []service.Row {
	t.Helper()
	page, err := tables.Query(context.Background(), table, service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	return page.Rows
}

func TestLargeSmoke(t *testing.T) {
	ctx := context.Background()
	acct := inmemory.NewAccount(nil)
	s, err := inmemory.For[Note](acct, &inmemory.StoreOptions{Table: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("жизнь", 140000)
	n := &Note{Entity: abstractions.Entity{ID: "p|a"}, Title: "t", Body: body}
	if err := s.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	for _, r := range rowsOf(t, acct.Tables(), "Notes") {
		t.Logf("%s: %d props", r.RowKey, len(r.Properties))
	}
	got, err := s.One(ctx, "p|a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Body != body {
		t.Fatal("mismatch")
	}
	n.Body, n.Blob = "", make([]byte, 2<<20)
	if err := s.Upsert(ctx, n); err != nil {
		t.Fatal(err)
	}
	for _, r := range rowsOf(t, acct.Tables(), "Notes") {
		t.Logf("%s: %d props", r.RowKey, len(r.Properties))
	}
	if got, err = s.One(ctx, "p|a"); err != nil || len(got.Blob) != 2<<20 || got.Body != "" {
		t.Fatal("mismatch", err)
	}
	n.Body = "small"
	n.Blob = nil
	if err := s.Upsert(ctx, n); err != nil {
		t.Fatal(err)
	}
	if rows := rowsOf(t, acct.Tables(), "Notes"); len(rows) != 1 {
		t.Fatalf("%d rows after shrink", len(rows))
	}
	c, err := s.Count(ctx, "p")
	if err != nil || c != 1 {
		t.Fatal(c, err)
	}
	if err := s.Delete(ctx, "p|a"); err != nil {
		t.Fatal(err)
	}
	_, err = s.One(ctx, "p|a")
	if !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatal(err)
	}
}
