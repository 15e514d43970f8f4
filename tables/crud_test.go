package tables

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

func TestCreate(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	created := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	cases := []struct {
		name    string
		v       *item
		kind    error
		id      string
		created time.Time
	}{
		{"new row", &item{Entity: abstractions.Entity{ID: "P|A"}, Name: "a", N: 1}, nil, "p|a", testNow},
		{"keeps the caller's CreatedAt", &item{Entity: abstractions.Entity{ID: "p|b", CreatedAt: created}}, nil, "p|b", created},
		{"existing row", &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "again"}, abstractions.ErrDuplicateKey, "p|a", time.Time{}},
		{"nil", nil, abstractions.ErrInvalidArgument, "", time.Time{}},
		{"a value the service cannot store", &item{Entity: abstractions.Entity{ID: "p|c"}, Name: "a\xffb"}, abstractions.ErrInvalidArgument, "p|c", time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before item
			if tc.v != nil {
				before = *tc.v
			}
			err := s.Create(ctx, tc.v)
			wantKind(t, err, tc.kind)
			if tc.kind != nil {
				if tc.v != nil && *tc.v != before {
					t.Errorf("a failed create changed the entity: %+v", *tc.v)
				}
				return
			}
			row, ok := f.row("Items", "p", strings.TrimPrefix(tc.id, "p|"))
			if !ok {
				t.Fatalf("no row %s", tc.id)
			}
			v := tc.v
			if v.ID != tc.id || !v.CreatedAt.Equal(tc.created) || !v.UpdatedAt.Equal(testNow) ||
				v.ETag != row.ETag || !v.Timestamp.Equal(row.Timestamp) || v.ETag == "" {
				t.Errorf("entity after create %+v; row ETag %s", v.Entity, row.ETag)
			}
			got, err := s.One(ctx, tc.id)
			if err != nil || *got != *v {
				t.Errorf("read back %+v, %v; want %+v", got, err, v)
			}
		})
	}
}

func TestUpsert(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	v := &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "first", N: 1}
	if err := s.Upsert(ctx, v); err != nil {
		t.Fatal(err)
	}
	first := v.ETag
	w := &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "second"}
	if err := s.Upsert(ctx, w); err != nil {
		t.Fatal(err)
	}
	if w.ETag == first || w.ETag == "" {
		t.Errorf("the replacing upsert returned ETag %q (the first was %q)", w.ETag, first)
	}
	got, err := s.One(ctx, "p|a")
	if err != nil || got.Name != "second" || got.N != 0 {
		t.Errorf("after two upserts: %+v, %v (a replace keeps nothing of the old row)", got, err)
	}
	if a := f.actions[len(f.actions)-1]; a.Op != service.OpUpsertReplace {
		t.Errorf("sent %v", a.Op)
	}
	wantKind(t, s.Upsert(ctx, nil), abstractions.ErrInvalidArgument)
}

func TestUpdateModes(t *testing.T) {
	ctx := context.Background()
	const stale = `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`
	cases := []struct {
		name     string
		implicit bool // Options.ImplicitLastWriterWins
		etag     string
		current  bool // use the stored row's ETag
		missing  bool // the row does not exist
		mode     abstractions.ConcurrencyMode
		kind     error
		ifMatch  string // the condition sent; "" when nothing may be sent
		warns    bool
	}{
		{name: "auto with the current ETag", current: true, mode: abstractions.Auto, ifMatch: "current"},
		{name: "auto with a stale ETag", etag: stale, mode: abstractions.Auto, kind: abstractions.ErrConcurrencyConflict, ifMatch: stale},
		{name: "auto without an ETag", mode: abstractions.Auto, kind: abstractions.ErrInvalidArgument},
		{name: "auto without an ETag, implicit last writer wins", implicit: true, mode: abstractions.Auto, ifMatch: "*", warns: true},
		{name: "strict with the current ETag", current: true, mode: abstractions.Strict, ifMatch: "current"},
		{name: "strict with a stale ETag", etag: stale, mode: abstractions.Strict, kind: abstractions.ErrConcurrencyConflict, ifMatch: stale},
		{name: "strict without an ETag", mode: abstractions.Strict, kind: abstractions.ErrInvalidArgument},
		{name: "strict with *", etag: "*", mode: abstractions.Strict, kind: abstractions.ErrInvalidArgument},
		{name: "strict with a malformed ETag", etag: "v1", mode: abstractions.Strict, kind: abstractions.ErrInvalidArgument},
		{name: "last writer wins over a stale ETag", etag: stale, mode: abstractions.LastWriterWins, ifMatch: "*"},
		{name: "last writer wins on a missing row", missing: true, mode: abstractions.LastWriterWins, kind: abstractions.ErrNotFound, ifMatch: "*"},
		{name: "auto on a missing row", missing: true, etag: stale, mode: abstractions.Auto, kind: abstractions.ErrNotFound, ifMatch: stale},
		{name: "unknown mode", current: true, mode: abstractions.ConcurrencyMode(99), kind: abstractions.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			s, f := newStore[item](t, &Options{ImplicitLastWriterWins: tc.implicit, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if !tc.missing {
				if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "old"}); err != nil {
					t.Fatal(err)
				}
			}
			stored, _ := f.row("Items", "p", "a")
			f.resetCalls()
			v := &item{Entity: abstractions.Entity{ID: "p|a", ETag: tc.etag}, Name: "new"}
			if tc.current {
				v.ETag = stored.ETag
			}
			before := *v
			err := s.Update(ctx, v, tc.mode)
			wantKind(t, err, tc.kind)
			if tc.ifMatch == "" {
				if len(f.calls) != 0 {
					t.Errorf("a refused update sent %v", f)
				}
			} else {
				want := tc.ifMatch
				if want == "current" {
					want = stored.ETag
				}
				if len(f.actions) != 1 || f.actions[0].Op != service.OpReplace || f.actions[0].IfMatch != want {
					t.Errorf("sent %+v, want a replace on condition %q", f.actions, want)
				}
			}
			after, _ := f.row("Items", "p", "a")
			if tc.kind != nil {
				if *v != before {
					t.Errorf("a failed update changed the entity: %+v", v.Entity)
				}
				if after.ETag != stored.ETag {
					t.Error("a failed update changed the row")
				}
			} else if v.ETag != after.ETag || after.ETag == stored.ETag {
				t.Errorf("entity ETag %q, row %q (was %q)", v.ETag, after.ETag, stored.ETag)
			}
			if warned := strings.Contains(logs.String(), "last-writer-wins"); warned != tc.warns {
				t.Errorf("warning logged: %v, want %v (%q)", warned, tc.warns, logs.String())
			}
		})
	}
	s, _ := newStore[item](t, nil)
	wantKind(t, s.Update(ctx, nil, abstractions.Auto), abstractions.ErrInvalidArgument)
}

// Delete reports whether it deleted a row; a missing row is not an error.
func TestDelete(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want bool
	}{{"P|A", true}, {"p|a", false}, {"p|never", false}} {
		if deleted, err := s.Delete(ctx, tc.id, ""); err != nil || deleted != tc.want {
			t.Errorf("delete %s: %v, %v; want %v, nil", tc.id, deleted, err, tc.want)
		}
	}
	if f.size("Items") != 0 {
		t.Error("the row is still there")
	}
	for _, a := range f.actions[1:] {
		if a.Op != service.OpDelete || a.IfMatch != service.ETagAny {
			t.Errorf("sent %+v", a)
		}
	}
}

// A delete conditional on an ETag sends it as If-Match: the current version is deleted, a
// stale one fails with ErrConcurrencyConflict and leaves the row, a missing row is false.
// An ifMatch that is not an entity tag is refused before anything is sent.
func TestDeleteIfMatch(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	v := &item{Entity: abstractions.Entity{ID: "p|a"}, N: 1}
	if err := s.Create(ctx, v); err != nil {
		t.Fatal(err)
	}
	stale := v.ETag
	v.N = 2
	if err := s.Update(ctx, v, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	deleted, err := s.Delete(ctx, "p|a", stale)
	wantKind(t, err, abstractions.ErrConcurrencyConflict)
	if deleted || f.size("Items") != 1 {
		t.Fatalf("a delete at a stale version: deleted=%v, %d rows", deleted, f.size("Items"))
	}
	if !strings.Contains(err.Error(), "not deleted") {
		t.Errorf("the conflict does not say the row stays: %v", err)
	}
	if deleted, err := s.Delete(ctx, "p|a", v.ETag); err != nil || !deleted || f.size("Items") != 0 {
		t.Fatalf("a delete at the current version: %v, %v (%d rows)", deleted, err, f.size("Items"))
	}
	if a := f.actions[len(f.actions)-1]; a.Op != service.OpDelete || a.IfMatch != v.ETag {
		t.Errorf("sent %+v, want a delete on If-Match %s", a, v.ETag)
	}
	if deleted, err := s.Delete(ctx, "p|a", v.ETag); err != nil || deleted {
		t.Errorf("a conditional delete of a missing row: %v, %v; want false, nil", deleted, err)
	}
	f.resetCalls()
	for _, bad := range []string{"*", "abc", "\"\n\""} {
		_, err := s.Delete(ctx, "p|a", bad)
		wantKind(t, err, abstractions.ErrInvalidArgument)
	}
	if n := f.count("Write"); n != 0 {
		t.Errorf("refused deletes sent %d writes", n)
	}
}

func TestOneAndExists(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	in := &item{Entity: abstractions.Entity{ID: "p|a"}, Name: "a", N: 7}
	if err := s.Create(ctx, in); err != nil {
		t.Fatal(err)
	}
	f.put("Items", service.Row{PartitionKey: "p", RowKey: "bad", Properties: []service.Property{{Name: "N", Value: service.String("seven")}}})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		id     string
		want   *item
		exists bool
		kind   error
	}{
		{"found", ctx, "P|A", in, true, nil},
		{"missing", ctx, "p|b", nil, false, abstractions.ErrNotFound},
		{"cancelled", cancelled, "p|a", nil, false, context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.resetCalls()
			got, err := s.One(tc.ctx, tc.id)
			wantKind(t, err, tc.kind)
			if tc.want != nil && (got == nil || *got != *tc.want) {
				t.Errorf("One = %+v, want %+v", got, tc.want)
			}
			var se *abstractions.StoreError
			if errors.Is(err, abstractions.ErrNotFound) && (!errors.As(err, &se) || se.Table != "Items" || se.RowKey != "b") {
				t.Errorf("not found does not name the row: %v", err)
			}
			ok, err := s.Exists(tc.ctx, tc.id)
			if tc.kind == abstractions.ErrNotFound {
				wantKind(t, err, nil)
			} else {
				wantKind(t, err, tc.kind)
			}
			if ok != tc.exists {
				t.Errorf("Exists = %v, want %v", ok, tc.exists)
			}
			if tc.ctx.Err() != nil && len(f.calls) != 0 {
				t.Errorf("a cancelled read sent %v", f)
			}
		})
	}
	// A stored cell the field cannot take is reported with the row, not hidden.
	_, err := s.One(ctx, "p|bad")
	var ve *codec.ValueError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("a row that does not decode: %v", err)
	}
}

// A single-row write that succeeded leaves its copy of the entity and its cells for the next
// write to reuse: what the service and the read cache keep of the earlier writes is theirs,
// whatever the later writes encode into the same array.
func TestWritesReuseNothingTheyHandedOver(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, &Options{Cache: Sliding(time.Hour)})
	var written []*item
	for i, write := range []func(*item) error{
		func(v *item) error { return s.Create(ctx, v) },
		func(v *item) error { return s.Upsert(ctx, v) },
		func(v *item) error { return s.Create(ctx, v) },
	} {
		v := &item{Entity: abstractions.Entity{ID: "p|" + string(rune('a'+i))}, Name: strings.Repeat("x", i+1), N: i}
		if err := write(v); err != nil {
			t.Fatal(err)
		}
		written = append(written, v)
	}
	u := *written[0]
	u.Name, u.N = "changed", 42
	if err := s.Update(ctx, &u, abstractions.Strict); err != nil {
		t.Fatal(err)
	}
	written[0] = &u
	for _, v := range written {
		got, err := s.One(ctx, v.ID)
		if err != nil || *got != *v {
			t.Errorf("cached read of %s: %+v, %v; want %+v", v.ID, got, err, v)
		}
		pk, rk := abstractions.SplitID(v.ID)
		row, _ := f.row("Items", pk, rk)
		stored, err := codec.Decode[item](&row, nil)
		if err != nil || stored.Name != v.Name || stored.N != v.N {
			t.Errorf("stored row of %s: %+v, %v; want %+v", v.ID, stored, err, v)
		}
	}
}
