package tables

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

// Only writes that can create a row create a missing table; a delete of a row there
// succeeds and a merge or replace fails with ErrNotFound, creating nothing, with or without
// NeverCreateTables.
func TestMissingTableOnlyCreatingWritesCreateIt(t *testing.T) {
	ctx := context.Background()
	const etag = `W/"datetime'2026-01-01T00%3A00%3A00.0000001Z'"`
	for _, never := range []bool{false, true} {
		for _, tc := range []struct {
			name    string
			call    func(s *Store[item]) error
			kind    error // nil: success
			creates bool  // without NeverCreateTables
		}{
			{"create", func(s *Store[item]) error { return s.Create(ctx, &item{Entity: abstractions.Entity{ID: "eu|x"}}) }, nil, true},
			{"upsert", func(s *Store[item]) error { return s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "eu|x"}}) }, nil, true},
			{"upsert batch", func(s *Store[item]) error { _, err := s.UpsertBatch(ctx, items("eu", 2)); return err }, nil, true},
			{"delete", func(s *Store[item]) error { _, err := s.Delete(ctx, "eu|x", ""); return err }, nil, false},
			{"delete partition", func(s *Store[item]) error { _, err := s.DeletePartition(ctx, "eu"); return err }, nil, false},
			{"patch", func(s *Store[item]) error {
				_, err := s.Patch(ctx, "eu|x", abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(v *item) *int { return &v.N }), 1))
				return err
			}, abstractions.ErrNotFound, false},
			{"update last writer wins", func(s *Store[item]) error {
				return s.Update(ctx, &item{Entity: abstractions.Entity{ID: "eu|x"}}, abstractions.LastWriterWins)
			}, abstractions.ErrNotFound, false},
			{"update strict", func(s *Store[item]) error {
				return s.Update(ctx, &item{Entity: abstractions.Entity{ID: "eu|x", ETag: etag}}, abstractions.Strict)
			}, abstractions.ErrNotFound, false},
		} {
			name := tc.name
			if never {
				name += "/NeverCreateTables"
			}
			t.Run(name, func(t *testing.T) {
				f := newFake()
				s, err := For[item](testAccount("test", f, nil, &Options{NeverCreateTables: never}), &StoreOptions{Table: "Missing"})
				if err != nil {
					t.Fatal(err)
				}
				want, creates := tc.kind, tc.creates && !never
				if tc.creates && never {
					want = abstractions.ErrNotFound
				}
				err = tc.call(s)
				wantKind(t, err, want)
				if got := f.count("CreateTable"); got != map[bool]int{false: 0, true: 1}[creates] {
					t.Errorf("%d Create Table calls, want them only for a write that can create a row", got)
				}
				if _, ok := f.tables["missing"]; ok != creates {
					t.Errorf("table exists afterwards: %v, want %v", ok, creates)
				}
				if tc.creates && err != nil && !strings.Contains(err.Error(), "NeverCreateTables") {
					t.Errorf("the error %q does not say NeverCreateTables kept the table from being created", err)
				}
				if !never && err != nil && strings.Contains(err.Error(), "NeverCreateTables") {
					t.Errorf("the error %q should name NeverCreateTables only when the option is set", err)
				}
			})
		}
	}
}

// A transaction holding a delete, merge or replace meets the missing row its first such
// action names, and creates no table; one of inserts and upserts only creates it.
func TestMissingTableTransactions(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	acct := testAccount("test", f, nil, nil)
	row := func(rk string) service.Row { return service.Row{PartitionKey: "p", RowKey: rk} }
	_, err := acct.e.Tables.Transact(ctx, "Missing", []service.Action{
		{Op: service.OpInsert, Row: row("a")},
		{Op: service.OpDelete, Row: row("b"), IfMatch: service.ETagAny},
	})
	var te *service.TransactionError
	if !errors.As(err, &te) || te.Index != 1 || !abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		t.Fatalf("transaction with a delete: %v, want action 1 answered 404 ResourceNotFound", err)
	}
	if f.count("CreateTable") != 0 {
		t.Fatal("a transaction holding a delete created the table")
	}
	if _, err := acct.e.Tables.Transact(ctx, "Missing", []service.Action{{Op: service.OpUpsertMerge, Row: row("a")}}); err != nil {
		t.Fatal(err)
	}
	if f.count("CreateTable") != 1 {
		t.Fatalf("%d Create Table calls for an upsert transaction, want 1", f.count("CreateTable"))
	}
}

// A create answered TableAlreadyExists after the write was told TableNotFound (another
// writer created the table, or on Azurite it exists under a name in another case) logs no
// loss; a table the account had written to and that is really gone does.
func TestRecreatedTableWarnsOnlyOfLoss(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		exists   bool // the create answers TableAlreadyExists
		wantWarn bool
	}{
		{"gone", false, true},
		{"exists under another name", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			s, f := newStore[item](t, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}); err != nil {
				t.Fatal(err)
			}
			writes := 0
			f.before = func(call string) error {
				if call != "Write" {
					return nil
				}
				writes++
				if tc.exists && writes == 1 {
					return errFakeTableNotFound
				}
				return nil
			}
			if !tc.exists {
				if err := f.DeleteTable(ctx, "Items"); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|b"}}); err != nil {
				t.Fatal(err)
			}
			if warned := strings.Contains(logs.String(), "rows it held are lost"); warned != tc.wantWarn {
				t.Errorf("warned of a loss: %v, want %v; log:\n%s", warned, tc.wantWarn, logs.String())
			}
		})
	}
}

// A 400 answer to a write conditioned on an ETag (the service did not issue it) matches
// ErrInvalidArgument, keeps the service's StatusError and names the ETag; the same answer
// to an unconditional write matches no sentinel.
func TestServiceRefusedETag(t *testing.T) {
	ctx := context.Background()
	const etag = `"abc"`
	for _, code := range []string{"InvalidInput", "InvalidOperation", "InvalidHeaderValue"} {
		for _, tc := range []struct {
			name string
			call func(s *Store[item]) error
			kind error
		}{
			{"update strict", func(s *Store[item]) error {
				return s.Update(ctx, &item{Entity: abstractions.Entity{ID: "p|a", ETag: etag}}, abstractions.Strict)
			}, abstractions.ErrInvalidArgument},
			{"patch with etag", func(s *Store[item]) error {
				_, err := s.Patch(ctx, "p|a", abstractions.Set(abstractions.NewPatch[item](), abstractions.Field(func(v *item) *int { return &v.N }), 1).WithETag(etag))
				return err
			}, abstractions.ErrInvalidArgument},
			{"upsert", func(s *Store[item]) error { return s.Upsert(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}) }, nil},
		} {
			t.Run(code+"/"+tc.name, func(t *testing.T) {
				s, f := newStore[item](t, nil)
				f.before = func(call string) error {
					if call == "Write" {
						return fakeStatus(http.StatusBadRequest, code)
					}
					return nil
				}
				err := tc.call(s)
				var se *abstractions.StatusError
				if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest {
					t.Fatalf("error %v keeps no 400 StatusError", err)
				}
				if tc.kind == nil {
					if errors.Is(err, abstractions.ErrInvalidArgument) {
						t.Fatalf("an unconditional write's 400 %v matches ErrInvalidArgument", err)
					}
					return
				}
				wantKind(t, err, tc.kind)
				if !strings.Contains(err.Error(), "abc") || !strings.Contains(err.Error(), "not one the service issued") {
					t.Errorf("error %q does not say the ETag was not the service's", err)
				}
			})
		}
	}
}

// The TableNotFound error names NeverCreateTables only when the option kept the table from
// being created.
func TestTableNotFoundMessage(t *testing.T) {
	plain := callerr.Table("create", "T", "p", "a", errFakeTableNotFound)
	never := callerr.Table("create", "T", "p", "a", &callerr.NotCreated{Err: errFakeTableNotFound})
	wantKind(t, plain, abstractions.ErrNotFound)
	wantKind(t, never, abstractions.ErrNotFound)
	if strings.Contains(plain.Error(), "NeverCreateTables") || !strings.Contains(never.Error(), "NeverCreateTables") {
		t.Errorf("without the option: %q; with it: %q", plain, never)
	}
}
