package abstractions

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

type sEvent struct {
	Entity
	Text string
}

type sSnap struct {
	VersionedEntity
	State string
}

// fakeLog is just enough of a Storage for the stream helpers (a Log): rows by id, queries
// by partition and prefix in key order.
type fakeLog[T any] struct {
	rows    map[string]T
	queries []Query[T]
}

func newFakeLog[T any]() *fakeLog[T] { return &fakeLog[T]{rows: map[string]T{}} }

func (f *fakeLog[T]) Table() string { return "Fake" }

func (f *fakeLog[T]) Create(_ context.Context, v *T) error {
	id := any(v).(interface{ Base() *Entity }).Base().ID
	if _, ok := f.rows[id]; ok {
		return &StoreError{Kind: ErrDuplicateKey, Op: "create", Message: "taken"}
	}
	f.rows[id] = *v
	return nil
}

func (f *fakeLog[T]) One(_ context.Context, id string) (*T, error) {
	if v, ok := f.rows[id]; ok {
		return &v, nil
	}
	return nil, &StoreError{Kind: ErrNotFound, Op: "read", Message: "missing"}
}

func (f *fakeLog[T]) Query(_ context.Context, q Query[T]) ([]*T, error) {
	f.queries = append(f.queries, q)
	var ids []string
	for id := range f.rows {
		pk, rk := SplitID(id)
		if pk == q.Partition && strings.HasPrefix(rk, q.RowKeyPrefix) {
			ids = append(ids, id)
		}
	}
	sortStrings(ids)
	var out []*T
	for _, id := range ids {
		v := f.rows[id]
		if q.Take > 0 && len(out) == q.Take {
			break
		}
		out = append(out, &v)
	}
	return out, nil
}

func (f *fakeLog[T]) Stream(ctx context.Context, q Query[T]) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		rows, err := f.Query(ctx, q)
		for _, r := range rows {
			if !yield(r, err) {
				return
			}
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestAppendKeysAndRecent(t *testing.T) {
	ctx := context.Background()
	s := newFakeLog[sEvent]()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{t0, t0.Add(time.Second), t0.Add(time.Second), t0.Add(2 * time.Second)} {
		ev := &sEvent{Text: string(rune('a' + i))}
		if err := AppendAt(ctx, s, "p", ev, "", at); err != nil {
			t.Fatal(err)
		}
		if i == 2 && ev.ID != "p|"+InvertedTicks(t0.Add(time.Second+100)) {
			t.Errorf("a taken tick did not move on: %s", ev.ID)
		}
	}
	if err := AppendAt(ctx, s, "p", &sEvent{Text: "s"}, "Chat", t0); err != nil {
		t.Fatal(err)
	}
	got, err := Recent(ctx, s, "p", 10, "")
	if err != nil || len(got) != 4 || got[0].Text != "d" || got[1].Text != "c" || got[3].Text != "a" {
		t.Fatalf("recent: %v %v", got, err)
	}
	got, err = Recent(ctx, s, "p", 10, "Chat")
	if err != nil || len(got) != 1 || got[0].Text != "s" {
		t.Fatalf("recent sub-stream: %v %v", got, err)
	}
	if q := s.queries[len(s.queries)-1]; q.RowKeyPrefix != "Chat|" || q.Take != 10 {
		t.Errorf("sub-stream query %+v", q)
	}
	for _, bad := range []string{"9lives", "a|b", " x"} {
		if err := AppendAt(ctx, s, "p", &sEvent{}, bad, t0); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("sub-stream %q: %v", bad, err)
		}
	}
	if err := AppendAt(ctx, s, "p", nil, "", t0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil: %v", err)
	}
	if err := AppendAt(ctx, s, "tenant|other", &sEvent{}, "", t0); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("a partition with \"|\": %v, want ErrInvalidKey", err)
	}
	if _, err := Recent(ctx, s, "tenant|other", 1, ""); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("recent of a partition with \"|\": %v, want ErrInvalidKey", err)
	}
	if got, err := Recent(ctx, s, "p", 0, ""); err != nil || len(got) != 0 {
		t.Errorf("recent 0: %v %v", got, err)
	}
}

func TestVersionedStream(t *testing.T) {
	ctx := context.Background()
	s := newFakeLog[sSnap]()
	for _, v := range []int{1, 2, 5} {
		snap := &sSnap{State: "v"}
		snap.Version = v
		if err := AppendVersion(ctx, s, "o", snap); err != nil || snap.ID != "o|"+VersionKey(v) {
			t.Fatalf("append %d: %v %s", v, err, snap.ID)
		}
	}
	dup := &sSnap{}
	dup.Version = 2
	if err := AppendVersion(ctx, s, "o", dup); !errors.Is(err, ErrDuplicateKey) || dup.ID != "" {
		t.Errorf("duplicate: %v, id %q", err, dup.ID)
	}
	if v, err := Latest(ctx, s, "o"); err != nil || v.Version != 5 {
		t.Errorf("latest: %v %v", v, err)
	}
	if v, err := AtVersion(ctx, s, "o", 3); !errors.Is(err, ErrNotFound) || v != nil {
		t.Errorf("at 3: %v %v, want ErrNotFound", v, err)
	}
	if _, err := Latest(ctx, s, "none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest of an empty stream: %v", err)
	}
	for _, call := range []func() error{
		func() error { _, err := Latest(ctx, s, "a|b"); return err },
		func() error { _, err := AtVersion(ctx, s, "a|b", 1); return err },
		func() error { return AppendVersion(ctx, s, "a|b", &sSnap{}) },
	} {
		if err := call(); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("a stream id with \"|\": %v, want ErrInvalidKey", err)
		}
	}
	if _, err := AtVersion(ctx, s, "o", -1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("at -1: %v", err)
	}
	_, _ = AtOrBefore(ctx, s, "o", 4)
	q := s.queries[len(s.queries)-1]
	if q.Take != 1 || q.Partition != "o" || q.Where.root().Op != backend.OpLe || q.Where.root().Value != 4 || q.Where.root().Field.Err != nil {
		t.Errorf("at or before asked %+v", q)
	}
	n := 0
	for v, err := range History(ctx, s, "o", 2) {
		if err != nil || (n == 0 && v.Version != 5) {
			t.Fatalf("history: %v %v", v, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("history yielded %d", n)
	}
}

// Every helper refuses an empty partition (which a Query reads as the whole table) and one
// holding "|" with ErrInvalidKey, before it calls the store: the fake records every query
// and every row, and panics on any other call.
func TestHelpersRefusePartitionsBeforeCallingTheStore(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, partition := range []string{"", "a|b", "|"} {
		evs := newFakeLog[sEvent]()
		snaps := newFakeLog[sSnap]()
		// A row in the partition "" and one elsewhere: a helper that queried would see one.
		evs.rows["|1"] = sEvent{Entity: Entity{ID: "|1"}}
		evs.rows["other|1"] = sEvent{Entity: Entity{ID: "other|1"}}
		snaps.rows["other|"+VersionKey(1)] = sSnap{VersionedEntity: VersionedEntity{Entity: Entity{ID: "other|" + VersionKey(1)}, Version: 1}}
		calls := []struct {
			name string
			call func() error
		}{
			{"Append", func() error { return Append(ctx, evs, partition, &sEvent{}, "") }},
			{"AppendAt", func() error { return AppendAt(ctx, evs, partition, &sEvent{}, "Chat", t0) }},
			{"Recent", func() error { _, err := Recent(ctx, evs, partition, 5, ""); return err }},
			{"Recent of a sub-stream", func() error { _, err := Recent(ctx, evs, partition, 5, "sub"); return err }},
			{"AppendVersion", func() error { return AppendVersion(ctx, snaps, partition, &sSnap{}) }},
			{"Latest", func() error { _, err := Latest(ctx, snaps, partition); return err }},
			{"AtVersion", func() error { _, err := AtVersion(ctx, snaps, partition, 1); return err }},
			{"AtOrBefore", func() error { _, err := AtOrBefore(ctx, snaps, partition, 1); return err }},
			{"History", func() error {
				n := 0
				var first error
				for v, err := range History(ctx, snaps, partition, 0) {
					if n == 0 {
						first = err
					}
					if v != nil {
						t.Errorf("History(%q) yielded a row %+v", partition, v)
					}
					n++
				}
				if n != 1 {
					t.Errorf("History(%q) yielded %d times, want once (the error)", partition, n)
				}
				return first
			}},
		}
		for _, c := range calls {
			err := c.call()
			if !errors.Is(err, ErrInvalidKey) {
				t.Errorf("%s(%q) = %v, want ErrInvalidKey", c.name, partition, err)
			}
			var se *StoreError
			if !errors.As(err, &se) || se.Table != "Fake" || !strings.Contains(err.Error(), "nothing was sent") {
				t.Errorf("%s(%q): %v does not name the table and say nothing was sent", c.name, partition, err)
			}
		}
		if len(evs.queries)+len(snaps.queries) != 0 || len(evs.rows) != 2 || len(snaps.rows) != 1 {
			t.Errorf("partition %q: the refusals reached the store: queries %v %v, rows %d %d",
				partition, evs.queries, snaps.queries, len(evs.rows), len(snaps.rows))
		}
	}
}
