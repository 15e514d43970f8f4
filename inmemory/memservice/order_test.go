package memservice

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// TestRowsFollowAModel makes random writes and deletes (single rows and transactions) over
// keys whose UTF-16 order differs from their byte order, and checks every read against a
// map of what should be stored: point reads, whole-table queries, partition queries and
// queries resumed at every key, in pages of 1, 7 and 1000 rows.
func TestRowsFollowAModel(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t)
	r := rand.New(rand.NewPCG(5, 6))
	parts := []string{"", "a", "b", "é", "😀", "｡", "a\u00a0"}
	keys := []string{"", "0", "B", "a", "a ", "a0", "b", "é", "😀", "😀x", "｡", "｡a", "z\U0010ffff"}
	model := map[rowKey]int32{}
	for step := range 3000 {
		pk := parts[r.IntN(len(parts))]
		rk := keys[r.IntN(len(keys))] + fmt.Sprint(r.IntN(4))
		k := rowKey{pk, rk}
		_, exists := model[k]
		switch op := r.IntN(10); {
		case op < 6:
			v := int32(step)
			if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpUpsertReplace, Row: row(pk, rk, prop("v", service.Int32(v)))}); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		case op < 9:
			_, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpDelete, Row: row(pk, rk)})
			switch {
			case exists && err != nil, !exists && !abstractions.HasStatus(err, 404, "ResourceNotFound"):
				t.Fatalf("delete %q/%q (stored %v): %v", pk, rk, exists, err)
			}
			delete(model, k)
		default:
			// A transaction inserting up to three rows of the partition: all or none.
			var actions []service.Action
			fresh := true
			for _, rk := range []string{rk, rk + "t", rk + "u"}[:1+r.IntN(3)] {
				if _, ok := model[rowKey{pk, rk}]; ok {
					fresh = false
				}
				actions = append(actions, insert(row(pk, rk, prop("v", service.Int32(int32(step))))))
			}
			_, err := s.Transact(ctx, "Tab1", actions)
			if fresh != (err == nil) {
				t.Fatalf("transaction of %d inserts into %q (all new: %v): %v", len(actions), pk, fresh, err)
			}
			if fresh {
				for _, a := range actions {
					model[rowKey{pk, a.Row.RowKey}] = int32(step)
				}
			}
		}
		if step%500 == 499 {
			checkModel(t, s, model, parts)
		}
	}
}

func checkModel(t *testing.T, s *Service, model map[rowKey]int32, parts []string) {
	t.Helper()
	var want []string
	for k := range model {
		want = append(want, k.pk+"|"+k.rk)
	}
	slices.SortFunc(want, func(a, b string) int {
		apk, ark, _ := strings.Cut(a, "|")
		bpk, brk, _ := strings.Cut(b, "|")
		if c := service.CompareUTF16(apk, bpk); c != 0 {
			return c
		}
		return service.CompareUTF16(ark, brk)
	})
	for k, v := range model {
		got := mustGet(t, s, k.pk, k.rk)
		if n, _ := got.Get("v"); n.Int32() != v {
			t.Fatalf("%q/%q holds %v, want %d", k.pk, k.rk, n, v)
		}
	}
	for _, top := range []int{1, 7, 1000} {
		rows, _ := queryAll(t, s, service.Query{Top: top})
		if got := keysOf(rows); !slices.Equal(got, want) {
			t.Fatalf("top %d: the table reads\n%q\nwant\n%q", top, got, want)
		}
	}
	for _, pk := range parts {
		var inPart []string
		for _, k := range want {
			if p, _, _ := strings.Cut(k, "|"); p == pk {
				inPart = append(inPart, k)
			}
		}
		rows, _ := queryAll(t, s, service.Query{Filter: "PartitionKey eq '" + pk + "'", Top: 7})
		if got := keysOf(rows); !slices.Equal(got, inPart) {
			t.Fatalf("partition %q reads\n%q\nwant\n%q", pk, got, inPart)
		}
	}
	// Resumed at each stored key, a query reads from that key on.
	for i, k := range want {
		pk, rk, _ := strings.Cut(k, "|")
		page, err := s.Query(context.Background(), "Tab1", service.Query{Top: 3, Continuation: continuationAt(rowKey{pk, rk})})
		if err != nil {
			t.Fatal(err)
		}
		end := min(i+3, len(want))
		if got := keysOf(page.Rows); !slices.Equal(got, want[i:end]) || (page.Next != nil) != (end < len(want)) {
			t.Fatalf("from %q: %q (next %v), want %q", k, got, page.Next, want[i:end])
		}
	}
}

// Calls racing with DeleteTable and CreateTable of their table either work or find no table
// (404 TableNotFound), never fail otherwise nor deadlock, and a table created again starts
// empty.
func TestDeleteTableDuringCalls(t *testing.T) {
	ctx := context.Background()
	s := New()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := s.Write(ctx, "Tab1", insert(row("p", fmt.Sprint(w, "-", i))))
				if err != nil && !abstractions.HasStatus(err, 404, "TableNotFound") {
					t.Error(err)
					return
				}
				if _, err := s.Query(ctx, "Tab1", service.Query{Top: 5}); err != nil && !abstractions.HasStatus(err, 404, "TableNotFound") {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 200 {
		if err := s.CreateTable(ctx, "Tab1"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteTable(ctx, "TAB1"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if err := s.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	if page, err := s.Query(ctx, "Tab1", service.Query{}); err != nil || len(page.Rows) != 0 {
		t.Fatalf("a new table holds %d rows (%v)", len(page.Rows), err)
	}
}

// Writes to many tables at once get distinct timestamps, each later than those of the
// writes that returned before it started.
func TestTimestampsAcrossTables(t *testing.T) {
	ctx := context.Background()
	s, _ := newTable(t) // a pinned clock: the service moves every stamp past the last itself
	for _, name := range []string{"Tab2", "Tab3", "Tab4"} {
		if err := s.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for w, name := range []string{"Tab1", "Tab2", "Tab3", "Tab4"} {
		wg.Go(func() {
			var last time.Time
			for i := range 200 {
				wr, err := s.Write(ctx, name, insert(row("p", fmt.Sprint(w, "-", i))))
				if err != nil {
					t.Error(err)
					return
				}
				if !wr.Timestamp.After(last) {
					t.Errorf("%s: stamp %v after %v", name, wr.Timestamp, last)
				}
				last = wr.Timestamp
				mu.Lock()
				if seen[wr.ETag] {
					t.Errorf("ETag %s handed out twice", wr.ETag)
				}
				seen[wr.ETag] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
