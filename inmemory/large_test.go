package inmemory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
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
	s, err := tables.For[Note](acct, &tables.StoreOptions{Table: "Notes"})
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
	if deleted, err := s.Delete(ctx, "p|a", ""); err != nil || !deleted {
		t.Fatalf("delete: %v, %v", deleted, err)
	}
	_, err = s.One(ctx, "p|a")
	if !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatal(err)
	}
}

// GzNote stores its text gzip-compressed when split.
type GzNote struct {
	abstractions.Entity
	Body string `table:",split=gzip"`
}

// FuzzLargeRoundTrip writes values of random sizes and contents through split form on the
// memory service and reads them back: every value returns exactly as written, and a value
// too large for one transaction is refused with ErrOversizedValue, storing nothing.
func FuzzLargeRoundTrip(f *testing.F) {
	f.Add([]byte("hello"), uint32(70000), false)
	f.Add([]byte("жизнь 😀"), uint32(650000), true)
	f.Add([]byte{0, 1, 2, 255}, uint32(1_400_000), false)
	f.Add([]byte{}, uint32(32769), true)
	f.Fuzz(func(t *testing.T, seed []byte, n uint32, gz bool) {
		ctx := context.Background()
		acct := inmemory.NewAccount(nil)
		notes, err := tables.For[Note](acct, &tables.StoreOptions{Table: "Notes"})
		if err != nil || notes.EnsureCreated(ctx) != nil {
			t.Fatal(err)
		}
		text := strings.ToValidUTF8(string(seed), "?")
		if text == "" {
			text = "x"
		}
		size := int(n % 1_000_000)
		body := strings.Repeat(text, size/len(text)+1)
		for cut := size; cut < len(body); cut++ {
			if utf8.RuneStart(body[cut]) {
				body = body[:cut]
				break
			}
		}
		blob := make([]byte, int(n*7)%2_500_000)
		for i := range blob {
			blob[i] = byte(i)
			if len(seed) > 0 {
				blob[i] ^= seed[i%len(seed)]
			}
		}
		check := func(err error, table string, stored func() bool) {
			t.Helper()
			switch {
			case errors.Is(err, abstractions.ErrOversizedValue):
				if n := len(rowsOf(t, acct.Tables(), table)); n != 0 {
					t.Fatalf("a refused write left %d rows", n)
				}
			case err != nil:
				t.Fatal(err)
			case !stored():
				t.Fatal("the value did not read back as written")
			}
		}
		if gz {
			s, err := tables.For[GzNote](acct, &tables.StoreOptions{Table: "GzNotes"})
			if err != nil || s.EnsureCreated(ctx) != nil {
				t.Fatal(err)
			}
			err = s.Create(ctx, &GzNote{Entity: abstractions.Entity{ID: "p|g"}, Body: body})
			check(err, "GzNotes", func() bool { got, err := s.One(ctx, "p|g"); return err == nil && got.Body == body })
			return
		}
		err = notes.Create(ctx, &Note{Entity: abstractions.Entity{ID: "p|n"}, Body: body, Blob: blob})
		check(err, "Notes", func() bool {
			got, err := notes.One(ctx, "p|n")
			return err == nil && got.Body == body && string(got.Blob) == string(blob)
		})
	})
}

// An oversized value is refused, like every other error about one row, with a *StoreError
// naming the call, the table and the keys, whose Kind is ErrOversizedValue; nothing is stored.
func TestOversizedValueIsAStoreError(t *testing.T) {
	ctx := context.Background()
	s, err := tables.For[Note](inmemory.NewAccount(nil), &tables.StoreOptions{Table: "Oversized"})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 5_000_000)
	for i := range big {
		big[i] = byte(i*7919 + i>>8)
	}
	calls := map[string]func() error{
		"create": func() error { return s.Create(ctx, &Note{Entity: abstractions.Entity{ID: "p|r"}, Blob: big}) },
		"upsert": func() error { return s.Upsert(ctx, &Note{Entity: abstractions.Entity{ID: "p|r"}, Blob: big}) },
	}
	for op, call := range calls {
		err := call()
		var se *abstractions.StoreError
		if !errors.As(err, &se) || !errors.Is(err, abstractions.ErrOversizedValue) {
			t.Fatalf("%s: %T %v, want a *StoreError matching ErrOversizedValue", op, err, err)
		}
		if se.Kind != abstractions.ErrOversizedValue || se.Op != op || se.Table != "Oversized" || se.PartitionKey != "p" || se.RowKey != "r" {
			t.Errorf("%s: %+v", op, se)
		}
	}
	if n, err := s.CountAll(ctx); err != nil || n != 0 {
		t.Errorf("%d rows stored, %v", n, err)
	}
}

// A filter on a large field is refused: a value stored split or in a blob has no cell of
// its own, so the service would silently leave its row out.
func TestFilterOnLargeFieldRefused(t *testing.T) {
	ctx := context.Background()
	s, err := tables.For[Note](inmemory.NewAccount(nil), &tables.StoreOptions{Table: "LargeFilter"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, &Note{Entity: abstractions.Entity{ID: "p|s"}, Body: strings.Repeat("y", 70000)}); err != nil {
		t.Fatal(err)
	}
	body := abstractions.Field(func(n *Note) *string { return &n.Body })
	_, err = s.Query(ctx, abstractions.Query[Note]{Partition: "p", Where: body.Gt("a")})
	if !errors.Is(err, abstractions.ErrNotSupported) {
		t.Fatalf("filter on a split field: %v, want ErrNotSupported", err)
	}
	title := abstractions.Field(func(n *Note) *string { return &n.Title })
	if _, err := s.Query(ctx, abstractions.Query[Note]{Partition: "p", Where: title.Eq("t")}); err != nil {
		t.Fatalf("filter on a plain field of the same type: %v", err)
	}
}
