package fidelity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

// uxHolder has a unique index on Email: a write of it is the entity's write, then the
// claim's (and the release of the value it held before).
type uxHolder struct {
	abstractions.Entity
	Email string `table:",unique=email"`
}

// claimRouter sends single writes and transactions to faulty when they address a unique
// index's claim partition (claims true) or any other partition (claims false), and to the
// clean service otherwise, so that a fault meets the chosen half of a unique write.
type claimRouter struct {
	service.Tables // clean
	faulty         service.Tables
	claims         bool
}

func (r *claimRouter) pick(pk string) service.Tables {
	if strings.HasPrefix(pk, "~ux.") == r.claims {
		return r.faulty
	}
	return r.Tables
}

func (r *claimRouter) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	return r.pick(a.Row.PartitionKey).Write(ctx, table, a)
}

func (r *claimRouter) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	return r.pick(acts[0].Row.PartitionKey).Transact(ctx, table, acts)
}

type uxFaultCase struct {
	verb  string
	setup bool // store key|a holding key-old first
	run   func(ctx context.Context, s *tables.Store[uxHolder], id, value string) error
	gone  bool // the write deletes key|a
}

func uxFaultCases() []uxFaultCase {
	return []uxFaultCase{
		{verb: "Create", run: func(ctx context.Context, s *tables.Store[uxHolder], id, v string) error {
			return s.Create(ctx, &uxHolder{Entity: abstractions.Entity{ID: id}, Email: v})
		}},
		{verb: "Upsert", setup: true, run: func(ctx context.Context, s *tables.Store[uxHolder], id, v string) error {
			return s.Upsert(ctx, &uxHolder{Entity: abstractions.Entity{ID: id}, Email: v})
		}},
		{verb: "Update Strict", setup: true, run: func(ctx context.Context, s *tables.Store[uxHolder], id, v string) error {
			e, err := s.One(ctx, id)
			if err != nil {
				return err
			}
			e.Email = v
			return s.Update(ctx, e, abstractions.Strict)
		}},
		{verb: "Update LastWriterWins", setup: true, run: func(ctx context.Context, s *tables.Store[uxHolder], id, v string) error {
			return s.Update(ctx, &uxHolder{Entity: abstractions.Entity{ID: id}, Email: v}, abstractions.LastWriterWins)
		}},
		{verb: "Mutate", setup: true, run: func(ctx context.Context, s *tables.Store[uxHolder], id, v string) error {
			_, err := abstractions.Mutate(ctx, s, id, func(e *uxHolder) error { e.Email = v; return nil }, nil)
			return err
		}},
		{verb: "Delete", setup: true, gone: true, run: func(ctx context.Context, s *tables.Store[uxHolder], id, _ string) error {
			deleted, err := s.Delete(ctx, id, "")
			if err == nil && !deleted {
				return errors.New("Delete said deleted=false for the row it deleted")
			}
			return err
		}},
	}
}

// uxFaults are the faults of TestUniqueFaultMatrix: in the short form (make test) an answer
// lost after the request was applied and a request that never arrived; every fault with
// UNIFIED_TABLES_FAULTS_FULL=1 (make faults-full).
func uxFaults() []faults.Fault {
	if os.Getenv("UNIFIED_TABLES_FAULTS_FULL") == "1" {
		return faults.Faults
	}
	return []faults.Fault{faults.LoseResponse, faults.ResetMidRequest}
}

// TestUniqueFaultMatrix runs the writes of a store with a unique index under uxFaults, once
// with the fault on the entity's half of the write and once on the claim's: each call tells
// the truth as TestFaultMatrix requires, and whatever happened, a lookup of the value the
// entity holds finds it and a lookup of the value it does not hold finds nothing (a claim
// left behind is stale, and reads treat it as absent). The one exception is a call that
// reports an unknown outcome after the entity's write was applied and before its claim (a
// crash there leaves the same): the value is unclaimed until the entity's next write.
func TestUniqueFaultMatrix(t *testing.T) {
	bs := faultyBackends(t)
	outcomes := map[string]map[string]string{}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			fig := faultFigures{}
			table := "uxfaults" + randomSuffix()
			ctx := context.Background()
			if err := b.clean.CreateTable(ctx, table); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.clean.DeleteTable(context.Background(), table) }()
			newStore := func(svc service.Tables) *tables.Store[uxHolder] {
				s, err := tables.For[uxHolder](tables.NewAccountOver(b.name, svc, nil, &tables.Options{Logger: discardLogger()}), &tables.StoreOptions{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			clean := newStore(b.clean)
			emails, err := index.On(clean, "email")
			if err != nil {
				t.Fatal(err)
			}
			holds := func(value, id string) error {
				e, err := emails.Get(ctx, value)
				switch {
				case id == "" && errors.Is(err, abstractions.ErrNotFound):
					return nil
				case id == "" && err == nil:
					return fmt.Errorf("%s is held by %s, which does not hold it", value, e.ID)
				case err != nil:
					return fmt.Errorf("looking %s up: %v", value, err)
				case e.ID != id:
					return fmt.Errorf("%s is held by %s, not %s", value, e.ID, id)
				}
				return nil
			}
			seen := map[string]string{}
			for hi, half := range []string{"entity", "claim"} {
				faulty := newStore(&claimRouter{Tables: b.clean, faulty: b.faulty, claims: half == "claim"})
				for ci, fc := range uxFaultCases() {
					for fi, f := range uxFaults() {
						name := fc.verb + "/" + half + "/" + f.String()
						key, err, injected := runFaulted(t, ctx, b.plan, f, faults.Writes|faults.Transactions, fmt.Sprintf("u%d%02df%d", hi, ci, fi), func(key string) error {
							if !fc.setup {
								return nil
							}
							return clean.Create(ctx, &uxHolder{Entity: abstractions.Entity{ID: key + "|a"}, Email: key + "-old"})
						}, func(ctx context.Context, key string) error {
							return fc.run(ctx, faulty, key+"|a", key+"-new")
						})
						id, old, nu := key+"|a", key+"-old", key+"-new"
						e, rerr := clean.One(ctx, id)
						if rerr != nil && !errors.Is(rerr, abstractions.ErrNotFound) {
							t.Fatalf("%s: reading the outcome: %v", name, rerr)
						}
						applied := rerr == nil && e.Email == nu
						if fc.gone {
							applied = rerr != nil
						}
						// The lookups agree with the entity, whatever the call reported.
						holder := map[string]string{old: "", nu: ""}
						if rerr == nil {
							holder[e.Email] = id
						}
						// A call whose outcome is unknown (its deadline passed after the
						// entity's write was sent) may have stopped before the claim, as a
						// crash there does: the entity then holds a value nobody claims,
						// which lookups do not find, until a write of it that keeps the
						// value claims it again.
						if rerr == nil && errors.Is(err, abstractions.ErrUnavailable) && holds(e.Email, id) != nil {
							if uerr := clean.Upsert(ctx, e); uerr != nil {
								t.Errorf("%s: the write that claims the value again: %v", name, uerr)
							}
						}
						broken := false
						for _, v := range []string{old, nu} {
							if herr := holds(v, holder[v]); herr != nil {
								t.Errorf("%s: %v", name, herr)
								broken = true
							}
						}
						seen[name] = fig.judge(t, name, injected, applied, broken, err, true, describeError, "in the table")
					}
				}
			}
			outcomes[b.name] = seen
			t.Logf("%s: %d cases, %d truthful, %d ambiguous by design, %d acknowledged writes lost, %d lookups wrong",
				b.name, fig.cases, fig.truthful, fig.ambiguous, fig.lost, fig.half)
		})
	}
	compareOutcomes(t, outcomes)
}
