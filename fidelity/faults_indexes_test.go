package fidelity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// ixCounter is counterRow with a partition index on N: each of its writes is a transaction
// of the entity and its index rows.
type ixCounter struct {
	abstractions.Entity
	N int `table:",index=n"`
}

type ixFaultCase struct {
	verb  string
	setup bool // store pk|a with N=0 first
	run   func(ctx context.Context, s *tables.Store[ixCounter], pk string) error
	// gone: the write deletes pk|a, so applied means it is missing.
	gone bool
}

func ixFaultCases() []ixFaultCase {
	one := func(pk string, n int) *ixCounter { return &ixCounter{Entity: abstractions.Entity{ID: pk + "|a"}, N: n} }
	nf := abstractions.Field(func(c *ixCounter) *int { return &c.N })
	return []ixFaultCase{
		{verb: "Create", run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			return s.Create(ctx, one(pk, 1))
		}},
		{verb: "Upsert", setup: true, run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			return s.Upsert(ctx, one(pk, 1))
		}},
		{verb: "Update Strict", setup: true, run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			v, err := s.One(ctx, pk+"|a")
			if err != nil {
				return err
			}
			v.N = 1
			return s.Update(ctx, v, abstractions.Strict)
		}},
		{verb: "Update LastWriterWins", setup: true, run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			return s.Update(ctx, one(pk, 1), abstractions.LastWriterWins)
		}},
		{verb: "Patch", setup: true, run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			_, err := s.Patch(ctx, pk+"|a", abstractions.Set(abstractions.NewPatch[ixCounter](), nf, 1))
			return err
		}},
		{verb: "Mutate", setup: true, run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			_, err := abstractions.Mutate(ctx, s, pk+"|a", func(c *ixCounter) error { c.N++; return nil }, nil)
			return err
		}},
		{verb: "Delete", setup: true, gone: true, run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			deleted, err := s.Delete(ctx, pk+"|a", "")
			if err == nil && !deleted {
				return errors.New("Delete said deleted=false for the row it deleted")
			}
			return err
		}},
		{verb: "Transaction", setup: true, run: func(ctx context.Context, s *tables.Store[ixCounter], pk string) error {
			tx := s.Transaction(pk)
			s.UpdateIn(tx, one(pk, 1), abstractions.LastWriterWins)
			return tx.Commit(ctx)
		}},
	}
}

// ixFaults are the faults of TestIndexFaultMatrix: in the short form (make test) the ones
// that lose or break an answer, which test what a retry meets; every fault with
// UNIFIED_TABLES_FAULTS_FULL=1 (make faults-full).
func ixFaults() []faults.Fault {
	if os.Getenv("UNIFIED_TABLES_FAULTS_FULL") == "1" {
		return faults.Faults
	}
	return []faults.Fault{faults.LoseResponse, faults.ResetMidBody, faults.ResetMidRequest}
}

// TestIndexFaultMatrix runs the writes of an indexed store under every fault: a call tells
// the truth as TestFaultMatrix requires, and whatever happened, the index rows agree with
// the entity (a write is never half-applied to its index).
func TestIndexFaultMatrix(t *testing.T) {
	bs := faultyBackends(t)
	outcomes := map[string]map[string]string{}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			fig := faultFigures{}
			table := "ixfaults" + randomSuffix()
			ctx := context.Background()
			if err := b.clean.CreateTable(ctx, table); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.clean.DeleteTable(context.Background(), table) }()
			newStore := func(svc service.Tables) *tables.Store[ixCounter] {
				s, err := tables.For[ixCounter](tables.NewAccountOver(b.name, svc, nil, &tables.Options{Logger: discardLogger()}), &tables.StoreOptions{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			faulty, clean := newStore(b.faulty), newStore(b.clean)
			seen := map[string]string{}
			for ci, fc := range ixFaultCases() {
				for fi, f := range ixFaults() {
					name := fc.verb + "/" + f.String()
					pk, err, injected := runFaulted(t, ctx, b.plan, f, faults.Writes|faults.Transactions, fmt.Sprintf("x%02df%d", ci, fi), func(pk string) error {
						if !fc.setup {
							return nil
						}
						return clean.Create(ctx, &ixCounter{Entity: abstractions.Entity{ID: pk + "|a"}})
					}, func(ctx context.Context, pk string) error {
						return fc.run(ctx, faulty, pk)
					})
					v, rerr := clean.One(ctx, pk+"|a")
					if rerr != nil && !errors.Is(rerr, abstractions.ErrNotFound) {
						t.Fatalf("%s: reading the outcome: %v", name, rerr)
					}
					applied := rerr == nil && v.N == 1
					half := rerr == nil && v.N != 0 && v.N != 1
					if fc.gone {
						applied, half = rerr != nil, false
					}
					if _, _, ierr := ixConsistent(ctx, b.clean, table, pk); ierr != nil {
						t.Errorf("%s: the index disagrees with the entity: %v", name, ierr)
						half = true
					}
					seen[name] = fig.judge(t, name, injected, applied, half, err, true, describeError, "in the table")
				}
			}
			outcomes[b.name] = seen
			t.Logf("%s: %d cases, %d truthful, %d ambiguous by design, %d acknowledged writes lost, %d half-applied",
				b.name, fig.cases, fig.truthful, fig.ambiguous, fig.lost, fig.half)
		})
	}
	compareOutcomes(t, outcomes)
}
