package tables

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// doc is the split-aware type of the engine's large-value tests.
type doc struct {
	abstractions.Entity
	Title string
	Body  string `table:",split=text"`
	Data  []byte `table:",split=binary"`
}

// Values of the tests: one that fits a cell, one split on the main row, one that needs
// continuation rows (three rows in all), and one that needs a fourth row.
var (
	smallText = "small"
	mainText  = strings.Repeat("m", 100_000)
	bigText   = strings.Repeat("b", 1_000_000)
	hugeText  = strings.Repeat("h", 1_480_000)
)

// keysOf lists the table's row keys in key order.
func keysOf(f *fakeTables) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.tables["items"] {
		out = append(out, k.rk)
	}
	slices.Sort(out)
	return out
}

// opsOf lists the operations the fake received since the last reset, as "Op key".
func opsOf(f *fakeTables) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, a := range f.actions {
		out = append(out, a.Op.String()+" "+a.Row.RowKey)
	}
	return out
}

// A split-aware write plans the rows of its values, writes them in one transaction (one
// row alone in one write), and a read reassembles them.
func TestLargeWriteAndRead(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		body  string
		keys  []string
		calls map[string]int // the service calls of the create
	}{
		{"one cell", smallText, []string{"d"}, map[string]int{"Write": 1, "Transact": 0}},
		{"split on the main row", mainText, []string{"d"}, map[string]int{"Write": 1, "Transact": 0}},
		{"continuation rows", bigText, []string{"d", "d~0001", "d~0002"}, map[string]int{"Write": 0, "Transact": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newStore[doc](t, nil)
			d := &doc{Entity: abstractions.Entity{ID: "p|d"}, Title: "t", Body: tc.body, Data: []byte{1, 2, 3}}
			if err := s.Create(ctx, d); err != nil {
				t.Fatal(err)
			}
			for call, n := range tc.calls {
				if got := f.count(call); got != n {
					t.Errorf("%d %s calls, want %d (%v)", got, call, n, f)
				}
			}
			if got := keysOf(f); !slices.Equal(got, tc.keys) {
				t.Errorf("rows %v, want %v", got, tc.keys)
			}
			got, err := s.One(ctx, "p|d")
			if err != nil {
				t.Fatal(err)
			}
			if got.Body != tc.body || got.Title != "t" || !bytes.Equal(got.Data, []byte{1, 2, 3}) {
				t.Errorf("read back %d characters, %q, %v", len(got.Body), got.Title, got.Data)
			}
			// The write returns the stored version, from the transaction's response too.
			if d.ETag == "" || d.ETag != got.ETag || !d.Timestamp.Equal(got.Timestamp) {
				t.Errorf("the write returned %q at %v; the row is at %q, %v", d.ETag, d.Timestamp, got.ETag, got.Timestamp)
			}
		})
	}
}

// Without versions in the transaction's response, the entity carries no ETag after a
// write that needed one, rather than a wrong one.
func TestLargeWriteWithoutReportedVersion(t *testing.T) {
	s, f := newStore[doc](t, nil)
	f.noTransactionETags = true
	d := &doc{Entity: abstractions.Entity{ID: "p|d", ETag: `W/"old"`}, Body: bigText}
	if err := s.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if d.ETag != "" {
		t.Errorf("ETag %q after a transaction that reported none", d.ETag)
	}
}

// A write that needs a transaction does not cache the entity; one row's write does.
func TestLargeWritesAndTheCache(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[doc](t, &Options{Cache: Absolute(time.Hour)})
	for _, d := range []*doc{{Entity: abstractions.Entity{ID: "p|small"}, Body: mainText}, {Entity: abstractions.Entity{ID: "p|big"}, Body: bigText}} {
		if err := s.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	f.resetCalls()
	if v, err := s.One(ctx, "p|small"); err != nil || v.Body != mainText {
		t.Fatalf("small: %v", err)
	}
	if n := f.count("GetRow"); n != 0 {
		t.Errorf("the entity one write stored was read from the table (%d reads)", n)
	}
	if v, err := s.One(ctx, "p|big"); err != nil || v.Body != bigText {
		t.Fatalf("big: %v", err)
	}
	if n := f.count("GetRow"); n != 1 {
		t.Errorf("the entity a transaction stored was not read from the table (%d reads)", n)
	}
}

// Upsert and Update read the main row first (its part count, continuation marker and blob
// references) and write on condition of its version; a shrinking write deletes the stale
// continuation rows in the same transaction.
func TestLargeReplaceReadsFirst(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[doc](t, nil)
	if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: hugeText}); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(f); len(got) != 4 {
		t.Fatalf("rows %v", got)
	}
	stored, _ := f.row("Items", "p", "d")
	f.resetCalls()
	if err := s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
		t.Fatal(err)
	}
	wantSel := []string{largevalue.PartsColumn, largevalue.OfColumn, "Body__blob", "Data__blob"}
	if len(f.gets) != 1 || !slices.Equal(f.gets[0], wantSel) {
		t.Errorf("the read before the write projected %q, want %q", f.gets, wantSel)
	}
	if got, want := opsOf(f), []string{"Replace d", "UpsertReplace d~0001", "UpsertReplace d~0002", "Delete d~0003"}; !slices.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
	if f.actions[0].IfMatch != stored.ETag {
		t.Errorf("the main row was replaced on condition %q, want the version read, %q", f.actions[0].IfMatch, stored.ETag)
	}
	if got := keysOf(f); !slices.Equal(got, []string{"d", "d~0001", "d~0002"}) {
		t.Errorf("rows %v after shrinking", got)
	}
	// Down to one cell: every continuation row goes.
	v, err := s.One(ctx, "p|d")
	if err != nil {
		t.Fatal(err)
	}
	v.Body = smallText
	if err := s.Update(ctx, v, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(f); !slices.Equal(got, []string{"d"}) {
		t.Errorf("rows %v after shrinking to one cell", got)
	}
}

func TestLargeUpdateRefusals(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[doc](t, nil)
	if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
		t.Fatal(err)
	}
	f.resetCalls()
	stale := &doc{Entity: abstractions.Entity{ID: "p|d", ETag: `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`}, Body: smallText}
	wantKind(t, s.Update(ctx, stale, abstractions.Strict), abstractions.ErrConcurrencyConflict)
	if n := f.count("Transact") + f.count("Write"); n != 0 {
		t.Errorf("a Strict update of another version wrote (%v)", f)
	}
	wantKind(t, s.Update(ctx, &doc{Entity: abstractions.Entity{ID: "p|missing"}}, abstractions.LastWriterWins), abstractions.ErrNotFound)
	wantKind(t, s.Update(ctx, &doc{Entity: abstractions.Entity{ID: "p|missing", ETag: stale.ETag}}, abstractions.Strict), abstractions.ErrNotFound)
	wantKind(t, s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}}), abstractions.ErrDuplicateKey)
	wantKind(t, s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}), abstractions.ErrDuplicateKey)
	wantKind(t, s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|r~0001"}}), abstractions.ErrInvalidKey)
	wantKind(t, s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|" + strings.Repeat("k", 481)}}), abstractions.ErrInvalidKey)
	wantKind(t, s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|x"}, Data: make([]byte, 3_000_000)}), abstractions.ErrOversizedValue)
}

// A write that loses its condition to another writer reads again and retries, five attempts
// in all; a stale continuation row another writer removed is not a lost attempt.
func TestLargeWriteRaces(t *testing.T) {
	ctx := context.Background()
	t.Run("a lost race is retried", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		var losses atomic.Int32
		f.before = func(call string) error {
			if call == "Transact" && losses.Add(1) <= 2 {
				f.put("Items", service.Row{PartitionKey: "p", RowKey: "d", Properties: []service.Property{
					{Name: largevalue.PartsColumn, Value: service.Int32(3)}}})
			}
			return nil
		}
		if err := s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: hugeText}); err != nil {
			t.Fatal(err)
		}
		if n := f.count("Transact"); n != 3 {
			t.Errorf("%d transactions, want 3 (two lost)", n)
		}
		if v, err := s.One(ctx, "p|d"); err != nil || v.Body != hugeText {
			t.Fatalf("read: %v", err)
		}
	})
	t.Run("five lost races are a conflict", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		f.before = func(call string) error {
			if call == "Transact" {
				f.put("Items", service.Row{PartitionKey: "p", RowKey: "d", Properties: []service.Property{
					{Name: largevalue.PartsColumn, Value: service.Int32(3)}}})
			}
			return nil
		}
		err := s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: hugeText})
		wantKind(t, err, abstractions.ErrConcurrencyConflict)
		if n := f.count("Transact"); n != engine.SplitAttempts {
			t.Errorf("%d transactions, want %d", n, engine.SplitAttempts)
		}
		if !strings.Contains(err.Error(), "5 attempts") {
			t.Errorf("the message does not say what happened: %v", err)
		}
	})
	t.Run("a stale continuation row already gone", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: hugeText}); err != nil {
			t.Fatal(err)
		}
		var once atomic.Bool
		f.before = func(call string) error {
			if call == "Transact" && once.CompareAndSwap(false, true) {
				f.remove("Items", "p", "d~0003")
			}
			return nil
		}
		if err := s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		if got := keysOf(f); !slices.Equal(got, []string{"d", "d~0001", "d~0002"}) {
			t.Errorf("rows %v", got)
		}
	})
	t.Run("the row deleted before a Strict update", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		d := &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}
		if err := s.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		f.before = func(call string) error {
			if call == "Transact" {
				f.put("Items", service.Row{PartitionKey: "p", RowKey: "d"})
			}
			return nil
		}
		d.Body = hugeText
		wantKind(t, s.Update(ctx, d, abstractions.Strict), abstractions.ErrConcurrencyConflict)
	})
}

// Each attempt of a split-aware write, delete or read that another writer made it repeat is
// one debug line, with the keys only when the account records keys, and the last attempt
// says the call gives up.
func TestLargeLostAttemptsAreLogged(t *testing.T) {
	ctx := context.Background()
	// bump gives the main row another version, as another writer would.
	bump := func(f *fakeTables) {
		r, _ := f.row("Items", "p", "d")
		f.put("Items", r)
	}
	tests := []struct {
		name   string
		before func(f *fakeTables, call string) // the other writer, before each service call
		run    func(s *Store[doc]) error
		op     string
		reason string
	}{
		{
			name: "upsert",
			before: func(f *fakeTables, call string) {
				if call == "Transact" {
					bump(f)
				}
			},
			run: func(s *Store[doc]) error {
				return s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: hugeText})
			},
			op:     "upsert",
			reason: "the row changed since it was read",
		},
		{
			name: "delete",
			before: func(f *fakeTables, call string) {
				if call == "Transact" {
					bump(f)
				}
			},
			run:    func(s *Store[doc]) error { _, err := s.Delete(ctx, "p|d", ""); return err },
			op:     "delete",
			reason: "the row changed since it was read",
		},
		{
			name: "read",
			before: func(f *fakeTables, call string) {
				if call == "Query" {
					bump(f)
					f.remove("Items", "p", "d~0001")
				}
			},
			run:    func(s *Store[doc]) error { _, err := s.One(ctx, "p|d"); return err },
			op:     "read",
			reason: "the row was replaced while it was read",
		},
	}
	for _, tc := range tests {
		for _, record := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, record keys %v", tc.name, record), func(t *testing.T) {
				var logs bytes.Buffer
				logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				s, f := newStore[doc](t, &Options{Logger: logger, RecordKeys: record})
				if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
					t.Fatal(err)
				}
				logs.Reset()
				f.before = func(call string) error { tc.before(f, call); return nil }
				wantKind(t, tc.run(s), abstractions.ErrConcurrencyConflict)
				var lines []string
				for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
					if strings.Contains(l, "split-aware call lost its race") {
						lines = append(lines, l)
					}
				}
				if len(lines) != engine.SplitAttempts {
					t.Fatalf("%d lost-attempt lines, want %d:\n%s", len(lines), engine.SplitAttempts, logs.String())
				}
				for i, l := range lines {
					want := []string{"level=DEBUG", "op=" + tc.op, "table=Items", fmt.Sprintf("attempt=%d", i+1),
						fmt.Sprintf("attempts=%d", engine.SplitAttempts), fmt.Sprintf("reason=%q", tc.reason)}
					if i < engine.SplitAttempts-1 {
						want = append(want, "retrying")
					} else {
						want = append(want, "giving up")
					}
					for _, w := range want {
						if !strings.Contains(l, w) {
							t.Errorf("line %d lacks %s: %s", i+1, w, l)
						}
					}
					if got := strings.Contains(l, "partition=p") && strings.Contains(l, "row=d"); got != record {
						t.Errorf("line %d holds the keys: %v, want %v: %s", i+1, got, record, l)
					}
				}
			})
		}
	}
	t.Run("not at Info", func(t *testing.T) {
		var logs bytes.Buffer
		s, f := newStore[doc](t, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), RecordKeys: true})
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.before = func(call string) error {
			if call == "Transact" {
				bump(f)
			}
			return nil
		}
		_, err := s.Delete(ctx, "p|d", "")
		wantKind(t, err, abstractions.ErrConcurrencyConflict)
		if logs.Len() != 0 {
			t.Errorf("logged at Info: %s", logs.String())
		}
	})
}

// A create takes back leftover continuation rows of its entity (rows whose _SplitOf names
// it), and refuses a key held by any other row.
func TestLargeCreateTakesBackLeftovers(t *testing.T) {
	ctx := context.Background()
	leftover := func(rk string, of string) service.Row {
		return service.Row{PartitionKey: "p", RowKey: rk, Properties: []service.Property{
			{Name: largevalue.OfColumn, Value: service.String(of)}, {Name: largevalue.IndexColumn, Value: service.Int32(1)}}}
	}
	t.Run("leftovers", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		f.put("Items", leftover("d~0001", "d"), leftover("d~0009", "d"))
		if n, err := s.Count(ctx, "p"); err != nil || n != 0 {
			t.Fatalf("count %d, %v: leftovers are not entities", n, err)
		}
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		if got := keysOf(f); !slices.Equal(got, []string{"d", "d~0001", "d~0002"}) {
			t.Errorf("rows %v", got)
		}
		if v, err := s.One(ctx, "p|d"); err != nil || v.Body != bigText {
			t.Fatalf("read: %v", err)
		}
	})
	t.Run("a foreign row", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "d~0002", Properties: []service.Property{{Name: "Other", Value: service.String("x")}}})
		wantKind(t, s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}), abstractions.ErrInvalidKey)
		if got := keysOf(f); !slices.Equal(got, []string{"d~0002"}) {
			t.Errorf("rows %v: the refused create stored something", got)
		}
	})
	t.Run("another entity's continuation row", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		f.put("Items", leftover("d~0001", "other"))
		wantKind(t, s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}), abstractions.ErrInvalidKey)
	})
}

// Delete removes the main row and the continuation rows it declares on condition of the
// version read; with no main row it removes the leftovers that name the id; a row whose
// part count cannot be read is deleted with the rows found.
func TestLargeDelete(t *testing.T) {
	ctx := context.Background()
	t.Run("with continuation rows", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "e"})
		f.resetCalls()
		if deleted, err := s.Delete(ctx, "p|d", ""); err != nil || !deleted {
			t.Fatalf("delete: %v, %v", deleted, err)
		}
		if got := keysOf(f); !slices.Equal(got, []string{"e"}) {
			t.Errorf("rows %v", got)
		}
		if n := f.count("Transact"); n != 1 {
			t.Errorf("%d transactions", n)
		}
	})
	t.Run("leftovers without a main row", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "d~0004", Properties: []service.Property{
			{Name: largevalue.OfColumn, Value: service.String("d")}}})
		if deleted, err := s.Delete(ctx, "p|d", ""); err != nil || deleted {
			t.Fatalf("delete: %v, %v (want false: there was no entity)", deleted, err)
		}
		if n := f.size("Items"); n != 0 {
			t.Errorf("%d rows left", n)
		}
		if deleted, err := s.Delete(ctx, "p|d", ""); err != nil || deleted {
			t.Errorf("a second delete: %v, %v", deleted, err)
		}
	})
	t.Run("an unreadable part count", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		r, _ := f.row("Items", "p", "d")
		r.Properties = append(slices.DeleteFunc(r.Properties, func(p service.Property) bool { return p.Name == largevalue.PartsColumn }),
			service.Property{Name: largevalue.PartsColumn, Value: service.String("three")})
		f.put("Items", r)
		_, err := s.One(ctx, "p|d")
		wantKind(t, err, abstractions.ErrIntegrity)
		wantKind(t, s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}}), abstractions.ErrIntegrity)
		if deleted, err := s.Delete(ctx, "p|d", ""); err != nil || !deleted {
			t.Fatalf("delete: %v, %v", deleted, err)
		}
		if n := f.size("Items"); n != 0 {
			t.Errorf("%d rows left", n)
		}
	})
	t.Run("a continuation row's key", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		if deleted, err := s.Delete(ctx, "p|d~0001", ""); err != nil || deleted {
			t.Fatalf("delete: %v, %v (want false)", deleted, err)
		}
		if n := f.size("Items"); n != 3 {
			t.Errorf("%d rows left, want 3", n)
		}
	})
	t.Run("a continuation row already gone", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.remove("Items", "p", "d~0002")
		if deleted, err := s.Delete(ctx, "p|d", ""); err != nil || !deleted {
			t.Fatalf("delete: %v, %v", deleted, err)
		}
		if n := f.size("Items"); n != 0 {
			t.Errorf("%d rows left", n)
		}
	})
	t.Run("if match", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		v := &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}
		if err := s.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		stale := v.ETag
		if err := s.Update(ctx, v, abstractions.Strict); err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		deleted, err := s.Delete(ctx, "p|d", stale)
		wantKind(t, err, abstractions.ErrConcurrencyConflict)
		if deleted || f.size("Items") != 3 || f.count("Transact") != 0 {
			t.Fatalf("a delete at a stale version: deleted=%v, %d rows, %d transactions", deleted, f.size("Items"), f.count("Transact"))
		}
		if deleted, err := s.Delete(ctx, "p|d", v.ETag); err != nil || !deleted || f.size("Items") != 0 {
			t.Fatalf("a delete at the current version: %v, %v (%d rows left)", deleted, err, f.size("Items"))
		}
		if deleted, err := s.Delete(ctx, "p|d", v.ETag); err != nil || deleted {
			t.Errorf("a conditional delete of a missing entity: %v, %v; want false, nil", deleted, err)
		}
	})
	t.Run("if match loses a race", func(t *testing.T) {
		// Another writer replaces the entity between the read and the transaction: the next
		// read finds another version, which is a conflict at once, not a retry.
		s, f := newStore[doc](t, nil)
		v := &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}
		if err := s.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		f.before = func(call string) error {
			if call == "Transact" {
				f.before = nil
				r, _ := f.row("Items", "p", "d")
				f.put("Items", r) // another writer's version
			}
			return nil
		}
		deleted, err := s.Delete(ctx, "p|d", v.ETag)
		wantKind(t, err, abstractions.ErrConcurrencyConflict)
		if deleted || f.size("Items") != 3 || f.count("Transact") != 1 {
			t.Errorf("deleted=%v, %d rows, %d transactions", deleted, f.size("Items"), f.count("Transact"))
		}
	})
	t.Run("races", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.resetCalls()
		f.before = func(call string) error {
			if call == "Transact" {
				r, _ := f.row("Items", "p", "d")
				f.put("Items", r) // another writer's version
			}
			return nil
		}
		_, err := s.Delete(ctx, "p|d", "")
		wantKind(t, err, abstractions.ErrConcurrencyConflict)
		if n := f.count("Transact"); n != engine.SplitAttempts {
			t.Errorf("%d transactions, want %d", n, engine.SplitAttempts)
		}
	})
}

// A read that finds a value that does not reassemble reads the main row again: the same
// version is damage (ErrIntegrity); another one a replace that raced the read, which is
// retried, five attempts in all.
func TestLargeReads(t *testing.T) {
	ctx := context.Background()
	t.Run("damage", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.remove("Items", "p", "d~0002")
		_, err := s.One(ctx, "p|d")
		wantKind(t, err, abstractions.ErrIntegrity)
		_, err = s.List(ctx, "p")
		wantKind(t, err, abstractions.ErrIntegrity)
		if ok, err := s.Exists(ctx, "p|d"); err != nil || !ok {
			t.Errorf("exists: %v, %v", ok, err)
		}
	})
	t.Run("a replace racing the read", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		other := &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: hugeText}
		var queries atomic.Int32
		f.before = func(call string) error {
			if call == "Query" && queries.Add(1) == 1 {
				// Between the main row and its continuation rows, another writer replaces
				// the entity: the rows read no longer match the main row read.
				f.before = nil
				if err := s.Upsert(ctx, other); err != nil {
					t.Error(err)
				}
			}
			return nil
		}
		got, err := s.One(ctx, "p|d")
		if err != nil {
			t.Fatal(err)
		}
		if got.Body != hugeText {
			t.Errorf("read %d characters, want the replacing version's", len(got.Body))
		}
	})
	t.Run("a row that keeps changing", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.before = func(call string) error {
			if call == "Query" {
				r, _ := f.row("Items", "p", "d")
				f.put("Items", r)
				f.remove("Items", "p", "d~0001")
			}
			return nil
		}
		_, err := s.One(ctx, "p|d")
		wantKind(t, err, abstractions.ErrConcurrencyConflict)
		if !strings.Contains(err.Error(), "Nothing stored is damaged") {
			t.Errorf("the message does not say nothing is damaged: %v", err)
		}
		if !errors.Is(err, abstractions.ErrIntegrity) {
			t.Errorf("the last attempt's integrity error is not in the chain: %v", err)
		}
	})
	t.Run("the row deleted during the read", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		f.before = func(call string) error {
			if call == "Query" {
				f.before = nil
				f.remove("Items", "p", "d")
				f.remove("Items", "p", "d~0001")
			}
			return nil
		}
		_, err := s.One(ctx, "p|d")
		wantKind(t, err, abstractions.ErrNotFound)
	})
	t.Run("a continuation row's key", func(t *testing.T) {
		s, _ := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		_, err := s.One(ctx, "p|d~0001")
		wantKind(t, err, abstractions.ErrNotFound)
	})
	t.Run("a value held in a blob", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "b", Properties: []service.Property{
			{Name: "Body__blob", Value: service.String("ref")}}})
		_, err := s.One(ctx, "p|b")
		wantKind(t, err, abstractions.ErrBlobOffloadNotConfigured)
	})
}

// Queries skip continuation rows, read each entity whole, and skip one deleted meanwhile.
func TestLargeQueries(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[doc](t, nil)
	for i, body := range []string{bigText, smallText, mainText} {
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|d%d", i)}, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.List(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Body != bigText || all[1].Body != smallText || all[2].Body != mainText {
		t.Fatalf("listed %d entities", len(all))
	}
	if n, err := s.Count(ctx, "p"); err != nil || n != 3 {
		t.Errorf("count %d, %v", n, err)
	}
	var pages []int
	q := abstractions.Query[doc]{Partition: "p", Take: 2}
	for range 5 {
		pg, err := s.Page(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(pg.Items))
		if pg.Cursor == "" {
			break
		}
		q.Cursor = pg.Cursor
	}
	if !slices.Equal(pages, []int{1, 1, 1}) {
		t.Errorf("pages of %v: a continuation row takes a place in a page", pages)
	}
	// An entity deleted while a query reads it is skipped.
	var listed atomic.Bool
	f.before = func(call string) error {
		if call == "Query" && listed.CompareAndSwap(false, true) {
			return nil
		}
		if call == "Query" {
			f.before = nil
			f.remove("Items", "p", "d0")
			f.remove("Items", "p", "d0~0001")
			f.remove("Items", "p", "d0~0002")
		}
		return nil
	}
	all, err = s.List(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Errorf("listed %d entities, want the 2 left", len(all))
	}
}

// A projection of a split-aware type is narrowed only when it names ordinary columns.
func TestSplitProjection(t *testing.T) {
	s, _ := newStore[doc](t, nil)
	for _, tc := range []struct {
		sel, want []string
	}{
		{[]string{"Title"}, []string{"Title", largevalue.OfColumn}},
		{[]string{"Title", "Body"}, nil},
		{[]string{"Data"}, nil},
	} {
		if got := s.core.SplitProjection(slices.Clone(tc.sel)); !slices.Equal(got, tc.want) {
			t.Errorf("projection of %v: %v, want %v", tc.sel, got, tc.want)
		}
	}
}

// aliased is doc after renaming Body: rows written by doc are read through the alias.
type aliased struct {
	abstractions.Entity
	Title string
	Text  string `table:",split=text,alias=Body"`
}

// plainDoc shares doc's table without opting its fields in.
type plainDoc struct {
	abstractions.Entity
	Title string
	Body  string
}

// A value stored under an old column name is read through the alias, from continuation
// rows too; a type that is not split-aware reads a value split on the main row, and fails
// on one that continues on continuation rows.
func TestLargeAliasesAndPlainReaders(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[doc](t, nil)
	for id, body := range map[string]string{"p|main": mainText, "p|big": bigText} {
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: id}, Title: "t", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	acct := s.Account()
	renamed, err := For[aliased](acct, &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	for id, body := range map[string]string{"p|main": mainText, "p|big": bigText} {
		v, err := renamed.One(ctx, id)
		if err != nil || v.Text != body {
			t.Fatalf("%s through the alias: %v", id, err)
		}
	}
	v, _ := renamed.One(ctx, "p|big")
	v.Text = "renamed"
	if err := renamed.Update(ctx, v, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(f); !slices.Equal(got, []string{"big", "main"}) {
		t.Errorf("rows %v: the old continuation rows stay", got)
	}
	if r, _ := f.row("Items", "p", "big"); !slices.ContainsFunc(r.Properties, func(p service.Property) bool { return p.Name == "Text" }) {
		t.Errorf("the rewrite did not store the new column: %v", r.Properties)
	}

	plain, err := For[plainDoc](acct, &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := plain.One(ctx, "p|main"); err != nil || v.Body != mainText || v.Title != "t" {
		t.Fatalf("plain read of a value split on the main row: %v", err)
	}
	if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "q|big"}, Body: bigText}); err != nil {
		t.Fatal(err)
	}
	_, err = plain.One(ctx, "q|big")
	wantKind(t, err, abstractions.ErrIntegrity)
	_, err = plain.List(ctx, "q")
	wantKind(t, err, abstractions.ErrIntegrity)
}

// The read before a write names each large column's blob reference cell, or reads the whole
// row when that would name more than 200 columns or be longer than 2,000 characters.
func TestStateProjection(t *testing.T) {
	cols := func(n, nameLen int) []largevalue.Column {
		out := make([]largevalue.Column, n)
		for i := range out {
			name := fmt.Sprintf("C%0*d", nameLen-1, i)
			out[i] = largevalue.Column{Name: name, Cell: name}
		}
		return out
	}
	file := &codec.Field{Name: "Scan", Aliases: []string{"OldScan"}}
	longFile := &codec.Field{Name: "Scan", Aliases: []string{strings.Repeat("S", 250)}}
	tests := []struct {
		name  string
		cols  []largevalue.Column
		files []*codec.Field
		whole bool
	}{
		{"one column", cols(1, 4), nil, false},
		{"100 columns", cols(100, 3), nil, false},
		{"201 columns", cols(201, 4), nil, true},
		{"seven long names", cols(7, 250), nil, false},
		{"eight long names", cols(8, 250), nil, true},
		{"seven long names and a file's long alias", cols(7, 250), []*codec.Field{longFile}, true},
		{"a column and a file with an alias", cols(1, 4), []*codec.Field{file}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel := engine.StateProjection(tc.cols, tc.files)
			if (sel == nil) != tc.whole {
				t.Fatalf("projection of %d names, want whole row: %v", len(sel), tc.whole)
			}
			if sel == nil {
				return
			}
			want := []string{largevalue.PartsColumn, largevalue.OfColumn}
			for _, c := range tc.cols {
				want = append(want, c.Name+largevalue.BlobSuffix)
			}
			for _, f := range tc.files {
				want = append(want, f.Name+largevalue.BlobSuffix)
				for _, a := range f.Aliases {
					want = append(want, a+largevalue.BlobSuffix)
				}
			}
			if !slices.Equal(sel, want) {
				t.Errorf("projection %v, want %v", sel, want)
			}
		})
	}
}

// A write that replaces a row holding blob references logs the columns whose blobs it
// leaves to the sweep of the library that wrote them, with the keys only when the account
// records keys.
func TestLargeReleasedBlobsAreLogged(t *testing.T) {
	ctx := context.Background()
	for _, record := range []bool{false, true} {
		var logs bytes.Buffer
		s, f := newStore[doc](t, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), RecordKeys: record})
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "b", Properties: []service.Property{{Name: "Body__blob", Value: service.String("ref")}}})
		if err := s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|b"}, Body: "inline"}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "columns=[Body]") || strings.Contains(logs.String(), "row=b") != record {
			t.Errorf("record keys %v: logged %q", record, logs.String())
		}
		logs.Reset()
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "b", Properties: []service.Property{{Name: "Data__blob", Value: service.String("ref")}}})
		if _, err := s.Delete(ctx, "p|b", ""); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "columns=[Data]") {
			t.Errorf("the delete logged %q", logs.String())
		}
	}
}

// guarded is a split-aware type with a protected field: its writes read the whole main row
// to compare the protected value.
type guarded struct {
	abstractions.Entity
	Owner string `table:",protected=admin"`
	Body  string `table:",split=text"`
}

func TestLargeProtectedFields(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[guarded](t, nil)
	if err := s.Create(ctx, &guarded{Entity: abstractions.Entity{ID: "p|g"}, Owner: "ann", Body: bigText}); err != nil {
		t.Fatal(err)
	}
	f.resetCalls()
	wantKind(t, s.Upsert(ctx, &guarded{Entity: abstractions.Entity{ID: "p|g"}, Owner: "bob", Body: smallText}), abstractions.ErrProtectedProperty)
	if len(f.gets) != 1 || f.gets[0] != nil {
		t.Errorf("the read before the write projected %v, want the whole row", f.gets)
	}
	if err := s.Upsert(ctx, &guarded{Entity: abstractions.Entity{ID: "p|g"}, Owner: "ann", Body: smallText}); err != nil {
		t.Fatalf("an unchanged protected value: %v", err)
	}
	if got := keysOf(f); !slices.Equal(got, []string{"g"}) {
		t.Errorf("rows %v", got)
	}
	// A Strict update (and so Mutate) is checked as well: the ETag condition says nothing
	// about who may change the field.
	read, err := s.One(ctx, "p|g")
	if err != nil {
		t.Fatal(err)
	}
	read.Owner = "bob"
	wantKind(t, s.Update(ctx, read, abstractions.Strict), abstractions.ErrProtectedProperty)
	_, err = abstractions.Mutate(ctx, s, "p|g", func(g *guarded) error { g.Owner = "bob"; return nil }, nil)
	wantKind(t, err, abstractions.ErrProtectedProperty)
	if v, err := s.One(ctx, "p|g"); err != nil || v.Owner != "ann" {
		t.Errorf("the owner is now %v (%v), want ann", v, err)
	}
}

// Batches of a split-aware type keep each entity's rows in one transaction, pack entities
// in order while they fit, and an upsert batch writes a repeated key's last occurrence.
func TestLargeBatches(t *testing.T) {
	ctx := context.Background()
	t.Run("create batch", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		docs := []*doc{
			{Entity: abstractions.Entity{ID: "p|a"}, Body: bigText}, // 3 rows, about 2 MB
			{Entity: abstractions.Entity{ID: "p|b"}, Body: smallText},
			{Entity: abstractions.Entity{ID: "p|c"}, Body: bigText}, // does not fit beside a
			{Entity: abstractions.Entity{ID: "q|d"}, Body: mainText},
		}
		if err := s.CreateBatch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		// a and b share a transaction; c does not fit beside them; d is in its own
		// partition, one row alone, sent as one write.
		if !slices.Equal(f.txSizes, []int{4, 3}) {
			t.Errorf("transactions of %v actions, want [4 3] (%v)", f.txSizes, opsOf(f))
		}
		if tx, w := f.count("Transact"), f.count("Write"); tx != 2 || w != 1 {
			t.Errorf("%d transactions and %d writes, want 2 and 1", tx, w)
		}
		for _, d := range docs {
			v, err := s.One(ctx, d.ID)
			if err != nil || v.Body != d.Body {
				t.Fatalf("%s: %v", d.ID, err)
			}
		}
		wantKind(t, s.CreateBatch(ctx, []*doc{{Entity: abstractions.Entity{ID: "p|a"}}}), abstractions.ErrDuplicateKey)
		wantKind(t, s.CreateBatch(ctx, []*doc{{Entity: abstractions.Entity{ID: "p|x"}}, {Entity: abstractions.Entity{ID: "p|x"}}}), abstractions.ErrDuplicateKey)
	})
	t.Run("upsert batch", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|a"}, Body: hugeText}); err != nil {
			t.Fatal(err)
		}
		batch := []*doc{
			{Entity: abstractions.Entity{ID: "p|a"}, Body: "first"},
			{Entity: abstractions.Entity{ID: "p|b"}, Body: bigText},
			{Entity: abstractions.Entity{ID: "p|a"}, Body: "last"},
		}
		n, err := s.UpsertBatch(ctx, batch)
		if err != nil || n != 3 {
			t.Fatalf("upsert batch: %d, %v", n, err)
		}
		v, err := s.One(ctx, "p|a")
		if err != nil || v.Body != "last" {
			t.Fatalf("the last occurrence: %v, %v", v, err)
		}
		if got := keysOf(f); !slices.Equal(got, []string{"a", "b", "b~0001", "b~0002"}) {
			t.Errorf("rows %v: a's stale continuation rows are gone", got)
		}
		for _, d := range batch {
			if d.ETag != "" {
				t.Errorf("%s carries the ETag %q after a batch", d.ID, d.ETag)
			}
		}
	})
	t.Run("a batch that loses a race", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: "p|a"}, Body: bigText}); err != nil {
			t.Fatal(err)
		}
		var once atomic.Bool
		f.before = func(call string) error {
			if call == "Transact" && once.CompareAndSwap(false, true) {
				r, _ := f.row("Items", "p", "a")
				f.put("Items", r)
			}
			return nil
		}
		n, err := s.UpsertBatch(ctx, []*doc{{Entity: abstractions.Entity{ID: "p|a"}, Body: hugeText}, {Entity: abstractions.Entity{ID: "p|b"}}})
		if err != nil || n != 2 {
			t.Fatalf("upsert batch: %d, %v", n, err)
		}
		if v, err := s.One(ctx, "p|a"); err != nil || v.Body != hugeText {
			t.Fatalf("read: %v", err)
		}
	})
	t.Run("a failing transaction", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		f.put("Items", service.Row{PartitionKey: "q", RowKey: "c"})
		err := s.CreateBatch(ctx, []*doc{
			{Entity: abstractions.Entity{ID: "p|a"}, Body: bigText},
			{Entity: abstractions.Entity{ID: "q|b"}, Body: mainText},
			{Entity: abstractions.Entity{ID: "q|c"}, Body: mainText},
		})
		wantKind(t, err, abstractions.ErrDuplicateKey)
		if got := keysOf(f); !slices.Equal(got, []string{"a", "a~0001", "a~0002", "c"}) {
			t.Errorf("rows %v: the first partition stays committed, the failing transaction applies nothing", got)
		}
	})
}

func TestLastOccurrences(t *testing.T) {
	ps := []*engine.Write{{PK: "p", RK: "a"}, {PK: "p", RK: "b"}, {PK: "q", RK: "a"}, {PK: "p", RK: "a"}}
	if got := engine.LastOccurrences(ps); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("got %v", got)
	}
}

// DeletePartition of a split-aware type deletes each main row with its continuation rows
// in transactions that never divide an entity, counts entities, deletes leftovers last, and
// deletes the entities of a transaction that met a change one by one.
func TestLargeDeletePartition(t *testing.T) {
	ctx := context.Background()
	t.Run("entities and leftovers", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		for i, body := range []string{bigText, smallText, bigText} {
			if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|d%d", i)}, Body: body}); err != nil {
				t.Fatal(err)
			}
		}
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "gone~0001", Properties: []service.Property{
			{Name: largevalue.OfColumn, Value: service.String("gone")}}})
		f.put("Items", service.Row{PartitionKey: "q", RowKey: "other"})
		n, err := s.DeletePartition(ctx, "p")
		if err != nil || n != 3 {
			t.Fatalf("deleted %d, %v; want 3 entities", n, err)
		}
		if got := keysOf(f); !slices.Equal(got, []string{"other"}) {
			t.Errorf("rows %v", got)
		}
	})
	t.Run("an entity written meanwhile", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		for i := range 2 {
			if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|d%d", i)}, Body: bigText}); err != nil {
				t.Fatal(err)
			}
		}
		var once atomic.Bool
		f.before = func(call string) error {
			if call == "Transact" && once.CompareAndSwap(false, true) {
				// Another writer shrinks d1 after the listing.
				f.before = nil
				if err := s.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: "p|d1"}, Body: mainText}); err != nil {
					t.Error(err)
				}
			}
			return nil
		}
		n, err := s.DeletePartition(ctx, "p")
		if err != nil || n != 2 {
			t.Fatalf("deleted %d, %v", n, err)
		}
		if got := keysOf(f); len(got) != 0 {
			t.Errorf("rows %v left", got)
		}
	})
	t.Run("an entity deleted meanwhile", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		for i := range 2 {
			if err := s.Create(ctx, &doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|d%d", i)}, Body: bigText}); err != nil {
				t.Fatal(err)
			}
		}
		var once atomic.Bool
		f.before = func(call string) error {
			if call == "Transact" && once.CompareAndSwap(false, true) {
				f.before = nil
				if _, err := s.Delete(ctx, "p|d1", ""); err != nil { // another writer's delete
					t.Error(err)
				}
			}
			return nil
		}
		n, err := s.DeletePartition(ctx, "p")
		if err != nil || n != 1 {
			t.Fatalf("deleted %d, %v; want 1: the entity another writer deleted is not counted", n, err)
		}
		if got := keysOf(f); len(got) != 0 {
			t.Errorf("rows %v left", got)
		}
	})
	t.Run("a leftover whose entity exists after the listing", func(t *testing.T) {
		s, f := newStore[doc](t, nil)
		f.put("Items", service.Row{PartitionKey: "p", RowKey: "late~0001", Properties: []service.Property{
			{Name: largevalue.OfColumn, Value: service.String("late")}}})
		var listed atomic.Bool
		f.before = func(call string) error {
			if call == "GetRow" && listed.CompareAndSwap(false, true) {
				// The entity is written between the listing and the look at its main row.
				f.put("Items", service.Row{PartitionKey: "p", RowKey: "late"})
			}
			return nil
		}
		n, err := s.DeletePartition(ctx, "p")
		if err != nil || n != 0 {
			t.Fatalf("deleted %d, %v", n, err)
		}
		if got := keysOf(f); !slices.Equal(got, []string{"late", "late~0001"}) {
			t.Errorf("rows %v: the continuation row of an entity that exists is kept", got)
		}
	})
}
