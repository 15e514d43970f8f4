package tables

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// echoStore is a store over the fake behind a fault injector that retries like the SDK.
func echoStore(t *testing.T) (*Store[item], *faults.Tables, *fakeTables) {
	t.Helper()
	f := newFake()
	f.tables["items"] = map[fakeKey]service.Row{}
	ft := faults.NewTables(f)
	s, err := For[item](testAccount("test", ft, nil, &Options{Now: func() time.Time { return testNow }}), &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	return s, ft, f
}

// A write whose answer was lost and whose resend met the refusal its own first try caused
// reports success; a refusal another writer caused stands.
func TestWriteTellsItsOwnEcho(t *testing.T) {
	ctx := context.Background()
	s, ft, f := echoStore(t)

	ft.Inject(faults.LoseResponse, faults.Writes, 1)
	v := &item{Entity: abstractions.Entity{ID: "p|a"}, N: 1}
	if err := s.Create(ctx, v); err != nil {
		t.Fatalf("Create after a lost response: %v", err)
	}
	stored, _ := f.row("Items", "p", "a")
	if v.ETag == "" || v.ETag != stored.ETag {
		t.Errorf("the entity's ETag %q is not the stored one %q", v.ETag, stored.ETag)
	}

	ft.Inject(faults.LoseResponse, faults.Writes, 1)
	v.N = 2
	if err := s.Update(ctx, v, abstractions.Strict); err != nil {
		t.Fatalf("Strict update after a lost response: %v", err)
	}

	// Another writer's row under the same key: the refusal stands, though retried.
	ft.Inject(faults.LoseResponse, faults.Writes, 1)
	f.before = func(call string) error {
		if call == "Write" {
			f.before = nil
			f.put("Items", service.Row{PartitionKey: "p", RowKey: "b", Properties: []service.Property{{Name: "N", Value: service.Int64(9)}}})
		}
		return nil
	}
	err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|b"}, N: 1})
	if !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Fatalf("Create over another writer's row: %v, want ErrDuplicateKey", err)
	}

	// Without a retry a refusal is believed, with no read.
	f.resetCalls()
	wantKind(t, s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|a"}}), abstractions.ErrDuplicateKey)
	if f.count("GetRow") != 0 {
		t.Errorf("a plain refusal sent %d reads", f.count("GetRow"))
	}
}

// A transaction whose answer was lost is reported committed when every row holds what it
// sent, and DeletePartition counts the rows its first try deleted.
func TestTransactionTellsItsOwnEcho(t *testing.T) {
	ctx := context.Background()
	s, ft, f := echoStore(t)
	// 150 rows: two transactions, each of whose answers is lost.
	ft.Inject(faults.LoseResponse, faults.Transactions, 2)
	if err := s.CreateBatch(ctx, items("p", 150)); err != nil || f.size("Items") != 150 {
		t.Fatalf("CreateBatch after lost responses: %v (%d rows)", err, f.size("Items"))
	}
	ft.Inject(faults.ResetMidBody, faults.Transactions, 2)
	if n, err := s.UpsertBatch(ctx, items("p", 150)); err != nil || n != 150 {
		t.Fatalf("UpsertBatch after resets: %d, %v", n, err)
	}
	ft.Inject(faults.LoseResponse, faults.Transactions, 2)
	if n, err := s.DeletePartition(ctx, "p"); err != nil || n != 150 || f.size("Items") != 0 {
		t.Fatalf("DeletePartition after lost responses: %d, %v (%d left)", n, err, f.size("Items"))
	}
	// Faults until the client gives up: the transaction was not applied, and says so.
	ft.Inject(faults.ServerBusy, faults.Transactions, 10)
	err := s.CreateBatch(ctx, items("q", 3))
	ft.Clear()
	if !errors.Is(err, abstractions.ErrUnavailable) || f.size("Items") != 0 {
		t.Fatalf("CreateBatch against a busy service: %v (%d rows)", err, f.size("Items"))
	}
}

// A delete whose answer was lost reports that it deleted the row when the resend meets the
// absence its first try caused: 404, or 412 for a delete conditional on the version it
// removed. A 412 with the row still there (another writer's version) stands.
func TestDeleteTellsItsOwnEcho(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		conditional bool
		resend      error // the answer to the resend, nil: the service's own
	}{
		{"unconditional, resend meets 404", false, nil},
		{"conditional, resend meets 404", true, nil},
		{"conditional, resend meets 412", true, errFakeCondition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ft, f := echoStore(t)
			v := &item{Entity: abstractions.Entity{ID: "p|a"}, N: 1}
			if err := s.Create(ctx, v); err != nil {
				t.Fatal(err)
			}
			ifMatch := ""
			if tc.conditional {
				ifMatch = v.ETag
			}
			writes := 0
			f.before = func(call string) error {
				if call == "Write" {
					writes++
					if writes == 2 {
						return tc.resend
					}
				}
				return nil
			}
			ft.Inject(faults.LoseResponse, faults.Writes, 1)
			deleted, err := s.Delete(ctx, "p|a", ifMatch)
			if err != nil || !deleted || writes != 2 || f.size("Items") != 0 {
				t.Fatalf("Delete after a lost response: %v, %v (%d writes, %d rows)", deleted, err, writes, f.size("Items"))
			}
		})
	}
	t.Run("conditional, another writer's row", func(t *testing.T) {
		s, ft, f := echoStore(t)
		v := &item{Entity: abstractions.Entity{ID: "p|a"}, N: 1}
		if err := s.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		writes := 0
		f.before = func(call string) error {
			if call == "Write" {
				if writes++; writes == 2 {
					f.put("Items", service.Row{PartitionKey: "p", RowKey: "a", ETag: `W/"other"`})
				}
			}
			return nil
		}
		ft.Inject(faults.LoseResponse, faults.Writes, 1)
		deleted, err := s.Delete(ctx, "p|a", v.ETag)
		wantKind(t, err, abstractions.ErrConcurrencyConflict)
		if deleted || f.size("Items") != 1 {
			t.Errorf("deleted=%v, %d rows", deleted, f.size("Items"))
		}
	})
}
