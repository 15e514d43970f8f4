package tables

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

type expiringItem struct {
	abstractions.Entity
	Name    string
	Expires time.Time `table:",expires=1h"`
}

// A create over an expired row in a transaction replaces it on condition of the version it
// read; when another writer changes that row before the commit, the transaction (which wrote
// nothing) is put together again from a fresh read, a bounded number of times.
func TestTransactionCreateOverAnExpiredRowThatChanges(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		other func(f *fakeTables, n int) // another writer, before the n-th transaction
		want  error                      // nil: the create succeeds
		txs   int
	}{
		{"swept meanwhile: inserted", func(f *fakeTables, n int) {
			if n == 1 {
				f.mu.Lock()
				for k := range f.tables["shop"] {
					if k.pk == "p" {
						delete(f.tables["shop"], k)
					}
				}
				f.mu.Unlock()
			}
		}, nil, 2},
		{"created by another meanwhile: a duplicate", func(f *fakeTables, n int) {
			if n == 1 {
				r, _ := f.row("shop", "p", "a")
				for i := range r.Properties {
					if r.Properties[i].Name == "Expires" {
						r.Properties[i].Value = service.DateTime(testNow.Add(10 * time.Hour))
					}
				}
				f.put("shop", r)
			}
		}, abstractions.ErrDuplicateKey, 2},
		{"changed every time: a conflict", func(f *fakeTables, _ int) {
			r, _ := f.row("shop", "p", "a")
			f.put("shop", r) // a new version, still expired
		}, abstractions.ErrConcurrencyConflict, maxOverAttempts},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			now := testNow
			s, err := For[expiringItem](testAccount("test", f, nil, &Options{Now: func() time.Time { return now }}), &StoreOptions{Table: "Shop"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, &expiringItem{Entity: abstractions.Entity{ID: "p|a"}, Name: "old"}); err != nil {
				t.Fatal(err)
			}
			now = now.Add(2 * time.Hour)
			n := 0
			f.before = func(call string) error {
				if call == "Transact" {
					n++
					tc.other(f, n)
				}
				return nil
			}
			tx := s.Transaction("p")
			s.CreateIn(tx, &expiringItem{Entity: abstractions.Entity{ID: "p|a"}, Name: "new"})
			err = tx.Commit(ctx)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("commit: %v", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("commit: %v, want %v", err, tc.want)
			}
			if n != tc.txs {
				t.Errorf("%d transactions sent, want %d (%v)", n, tc.txs, f)
			}
			if tc.want != nil {
				return
			}
			got, err := s.One(ctx, "p|a")
			if err != nil || got.Name != "new" {
				t.Fatalf("read: %+v, %v", got, err)
			}
			var ix []string
			f.mu.Lock()
			for k := range f.tables["shop"] {
				if strings.HasPrefix(k.rk, "~ix.") {
					ix = append(ix, k.rk)
				}
			}
			f.mu.Unlock()
			if len(ix) != 1 {
				t.Errorf("index rows %v, want the new row's one", ix)
			}
		})
	}
}
