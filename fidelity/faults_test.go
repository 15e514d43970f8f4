package fidelity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// A faultyBackend is a backend whose calls go through a fault injector, with a clean
// service beside it to check what the table holds afterwards.
type faultyBackend struct {
	name   string
	plan   *faults.Plan
	faulty service.Tables
	clean  service.Tables
}

// faultRetry is the SDK retry policy of the Azurite half: the default three retries,
// without the default's seconds of backoff.
var faultRetry = policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond}

// faultyBackends returns the memory service behind faults.Tables and, when a connection
// string is set, Azurite behind faults.Transport.
func faultyBackends(t *testing.T) []faultyBackend {
	t.Helper()
	mem := memservice.New()
	ft := faults.NewTables(mem)
	out := []faultyBackend{{name: Memory, plan: &ft.Plan, faulty: ft, clean: mem}}
	conn, ok := azuritetest.LookupConnectionString(t)
	if !ok {
		t.Log(azuritetest.ConnEnv + " not set: the fault matrix runs on the memory service only")
		return out
	}
	tr := faults.NewTransport(&http.Client{Transport: transport})
	faulty, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: azcore.ClientOptions{Transport: tr, Retry: faultRetry}})
	if err != nil {
		t.Fatal(err)
	}
	clean, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: transport}}})
	if err != nil {
		t.Fatal(err)
	}
	return append([]faultyBackend{{name: Azurite, plan: &tr.Plan, faulty: faulty, clean: clean}}, out...)
}

// A faultCase is one write verb of the matrix. setup prepares the partition through a
// clean store; run calls the verb through the faulty one and says what it reported; check
// reads the partition through the clean store and says whether the verb's write is there
// in full (applied), not at all (!applied), or in part (half: a transaction half-applied,
// a counter applied twice).
type faultCase struct {
	verb  string
	on    faults.Calls
	setup func(ctx context.Context, s *tables.Store[counterRow], pk string) error
	run   func(ctx context.Context, s *tables.Store[counterRow], pk string) (report string, err error)
	check func(ctx context.Context, s *tables.Store[counterRow], pk string) (applied, half bool, err error)
}

const faultBatch = 5

func counterIDs(pk string) []string {
	ids := make([]string, faultBatch)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s|r%d", pk, i)
	}
	return ids
}

func counters(pk string, n int) []*counterRow {
	var vs []*counterRow
	for _, id := range counterIDs(pk) {
		vs = append(vs, &counterRow{Entity: abstractions.Entity{ID: id}, N: n})
	}
	return vs
}

// seedOne stores pk|a with N=0.
func seedOne(ctx context.Context, s *tables.Store[counterRow], pk string) error {
	return s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: pk + "|a"}})
}

func seedAll(ctx context.Context, s *tables.Store[counterRow], pk string) error {
	return s.CreateBatch(ctx, counters(pk, 0))
}

// nIs checks pk|a: applied when it holds N=1, half when N is anything else but 0.
func nIs(ctx context.Context, s *tables.Store[counterRow], pk string) (bool, bool, error) {
	v, err := s.One(ctx, pk+"|a")
	if errors.Is(err, abstractions.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return v.N == 1, v.N != 0 && v.N != 1, nil
}

// allAre checks the batch's rows: applied when each holds N=want, half when only some do
// (or some are missing while others are there).
func allAre(want int, mustExist bool) func(context.Context, *tables.Store[counterRow], string) (bool, bool, error) {
	return func(ctx context.Context, s *tables.Store[counterRow], pk string) (bool, bool, error) {
		vs, err := s.List(ctx, pk)
		if err != nil {
			return false, false, err
		}
		hit := 0
		for _, v := range vs {
			if v.N == want {
				hit++
			}
		}
		if mustExist {
			return hit == faultBatch, hit > 0 && hit < faultBatch, nil
		}
		return len(vs) == 0, len(vs) > 0 && len(vs) < faultBatch, nil
	}
}

func update(mode abstractions.ConcurrencyMode) func(context.Context, *tables.Store[counterRow], string) (string, error) {
	return func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
		v, err := s.One(ctx, pk+"|a")
		if err != nil {
			return "", err
		}
		v.N = 1
		if err := s.Update(ctx, v, mode); err != nil {
			return "", err
		}
		if v.ETag == "" {
			return "", errors.New("the update reported no ETag")
		}
		return "", nil
	}
}

// deleteRow deletes pk|a, conditional on the version read when ifMatch is set; a success
// must say it deleted the row.
func deleteRow(ifMatch bool) func(context.Context, *tables.Store[counterRow], string) (string, error) {
	return func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
		etag := ""
		if ifMatch {
			v, err := s.One(ctx, pk+"|a")
			if err != nil {
				return "", err
			}
			etag = v.ETag
		}
		deleted, err := s.Delete(ctx, pk+"|a", etag)
		if err == nil && !deleted {
			return "", errors.New("Delete said deleted=false for the row it deleted")
		}
		return "", err
	}
}

// gone checks that pk|a is gone: applied when it is.
func gone(ctx context.Context, s *tables.Store[counterRow], pk string) (bool, bool, error) {
	ok, err := s.Exists(ctx, pk+"|a")
	return !ok, false, err
}

func faultCases() []faultCase {
	return []faultCase{
		{verb: "Create", on: faults.Writes,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				return "", s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: pk + "|a"}, N: 1})
			}, check: nIs},
		{verb: "Upsert", on: faults.Writes, setup: seedOne,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				return "", s.Upsert(ctx, &counterRow{Entity: abstractions.Entity{ID: pk + "|a"}, N: 1})
			}, check: nIs},
		{verb: "Update Strict", on: faults.Writes, setup: seedOne, run: update(abstractions.Strict), check: nIs},
		{verb: "Update Auto", on: faults.Writes, setup: seedOne, run: update(abstractions.Auto), check: nIs},
		{verb: "Update LastWriterWins", on: faults.Writes, setup: seedOne, run: update(abstractions.LastWriterWins), check: nIs},
		{verb: "Patch", on: faults.Writes, setup: seedOne,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				_, err := s.Patch(ctx, pk+"|a", abstractions.Set(abstractions.NewPatch[counterRow](), abstractions.Field(func(c *counterRow) *int { return &c.N }), 1))
				return "", err
			}, check: nIs},
		{verb: "Patch conditional", on: faults.Writes, setup: seedOne,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				v, err := s.One(ctx, pk+"|a")
				if err != nil {
					return "", err
				}
				_, err = s.Patch(ctx, pk+"|a", abstractions.Set(abstractions.NewPatch[counterRow](), abstractions.Field(func(c *counterRow) *int { return &c.N }), 1).WithETag(v.ETag))
				return "", err
			}, check: nIs},
		{verb: "Delete", on: faults.Writes, setup: seedOne, run: deleteRow(false), check: gone},
		{verb: "Delete conditional", on: faults.Writes, setup: seedOne, run: deleteRow(true), check: gone},
		{verb: "CreateBatch", on: faults.Transactions,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				return "", s.CreateBatch(ctx, counters(pk, 1))
			}, check: allAre(1, true)},
		{verb: "UpsertBatch", on: faults.Transactions, setup: seedAll,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				n, err := s.UpsertBatch(ctx, counters(pk, 1))
				if err == nil && n != faultBatch {
					return "", fmt.Errorf("UpsertBatch counted %d of %d", n, faultBatch)
				}
				return "", err
			}, check: allAre(1, true)},
		{verb: "DeletePartition", on: faults.Transactions, setup: seedAll,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				n, err := s.DeletePartition(ctx, pk)
				if err == nil && n != faultBatch {
					return "", fmt.Errorf("DeletePartition counted %d of %d deleted rows", n, faultBatch)
				}
				return "", err
			}, check: allAre(0, false)},
		{verb: "Mutate", on: faults.Writes, setup: seedOne,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				_, err := abstractions.Mutate(ctx, s, pk+"|a", func(c *counterRow) error { c.N++; return nil }, nil)
				return "", err
			}, check: nIs},
		{verb: "GetOrCreate", on: faults.Writes,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				_, created, err := abstractions.GetOrCreate(ctx, s, pk+"|a", func() *counterRow { return &counterRow{N: 1} })
				if err == nil && !created {
					return "", errors.New("GetOrCreate said created=false for the row it created")
				}
				return "", err
			}, check: nIs},
		{verb: "TryTransition", on: faults.Writes, setup: seedOne,
			run: func(ctx context.Context, s *tables.Store[counterRow], pk string) (string, error) {
				out, err := abstractions.TryTransition(ctx, s, pk+"|a", func(c *counterRow) bool { return c.N == 0 },
					func(c *counterRow) error { c.N = 1; return nil }, nil)
				if err == nil && out.Status != abstractions.OutcomeUpdated {
					return "", fmt.Errorf("TryTransition reported %v for the transition it made", out.Status)
				}
				return "", err
			}, check: nIs},
	}
}

// faultFigures are a fault matrix's counts, for the reliability guide.
type faultFigures struct {
	cases, truthful, ambiguous, lost, half int
}

// judge counts one case of a fault matrix and returns its outcome, which both backends must
// report alike; it fails t where the call did not tell the truth. injected says the fault
// was met, applied and half what the table or container holds afterwards (the write, or
// part of it or more than once). ambiguous says whether ErrUnavailable for an applied write
// is by design in this case; describe renders a refusal for the comparison; where names
// where a write is kept ("in the table", "stored").
func (fig *faultFigures) judge(t *testing.T, name string, injected, applied, half bool, err error,
	ambiguous bool, describe func(error) string, where string) string {
	t.Helper()
	fig.cases++
	switch {
	case !injected:
		t.Errorf("%s: the fault was never injected", name)
	case half:
		fig.half++
		t.Errorf("%s: the write is %s in part, or more than once (err %v)", name, where, err)
	case err == nil && applied:
		fig.truthful++
		return "ok, applied"
	case err == nil:
		fig.lost++
		t.Errorf("%s: success reported, but the write is not %s", name, where)
	case errors.Is(err, abstractions.ErrUnavailable) && applied && ambiguous:
		fig.ambiguous++
		return "unavailable, applied"
	case !classified(err):
		t.Errorf("%s: the error matches no sentinel: %v", name, err)
	case applied:
		t.Errorf("%s: the write is %s but the call failed with %v", name, where, err)
	default:
		fig.truthful++
		return "failed (" + describe(err) + "), not applied"
	}
	return ""
}

// runFaulted runs one case of a fault matrix: it sets up a fresh key (base and a try
// number), injects f once on the calls on selects, runs the call and reports the key, the
// call's error and whether the fault was injected. A stall lasts until the call's deadline;
// on a loaded machine that deadline can pass before the faulted request is even sent (a verb
// reads first), and then the case tested nothing, so it runs again with a longer deadline,
// up to six times (the last with almost 10 s). A setup failure fails t at once.
func runFaulted(t *testing.T, ctx context.Context, plan *faults.Plan, f faults.Fault, on faults.Calls, base string,
	setup func(key string) error, run func(ctx context.Context, key string) error) (key string, err error, injected bool) {
	for try := 0; try < 6 && !injected; try++ {
		key = fmt.Sprintf("%st%d", base, try)
		if err := setup(key); err != nil {
			t.Fatalf("%s: setup: %v", key, err)
		}
		plan.Clear()
		plan.Inject(f, on, 1)
		timeout := 30 * time.Second
		if f == faults.Stall || f == faults.StallAfterSend {
			timeout = 300 * time.Millisecond << try
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		err = run(cctx, key)
		cancel()
		injected = plan.Pending() == 0
		plan.Clear()
	}
	return key, err, injected
}

// compareOutcomes fails t for every case whose outcome differs between Azurite and memory.
func compareOutcomes(t *testing.T, outcomes map[string]map[string]string) {
	t.Helper()
	if az, ok := outcomes[Azurite]; ok {
		for name, mem := range outcomes[Memory] {
			if az[name] != mem {
				t.Errorf("%s: azurite %q, memory %q", name, az[name], mem)
			}
		}
	}
}

// TestFaultMatrix runs every write verb under every fault: the call must tell the truth.
// Success means the write is in the table, once; an error is classified (a sentinel) and,
// unless it is ErrUnavailable ("may or may not have been applied", ambiguous by design),
// means the write is not there. No acknowledged write may be lost, no transaction
// half-applied, and both backends must report the same outcome for each case.
func TestFaultMatrix(t *testing.T) {
	bs := faultyBackends(t)
	outcomes := map[string]map[string]string{}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			fig := faultFigures{}
			table := "faults" + randomSuffix()
			ctx := context.Background()
			if err := b.clean.CreateTable(ctx, table); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.clean.DeleteTable(context.Background(), table) }()
			newStore := func(svc service.Tables) *tables.Store[counterRow] {
				s, err := tables.For[counterRow](tables.NewAccountOver(b.name, svc, nil, &tables.Options{Logger: discardLogger()}), &tables.StoreOptions{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			faulty, clean := newStore(b.faulty), newStore(b.clean)
			seen := map[string]string{}
			for ci, fc := range faultCases() {
				for fi, f := range faults.Faults {
					name := fc.verb + "/" + f.String()
					pk, err, injected := runFaulted(t, ctx, b.plan, f, fc.on, fmt.Sprintf("c%02df%d", ci, fi), func(pk string) error {
						if fc.setup == nil {
							return nil
						}
						return fc.setup(ctx, clean, pk)
					}, func(ctx context.Context, pk string) error {
						_, err := fc.run(ctx, faulty, pk)
						return err
					})
					applied, half, cerr := fc.check(ctx, clean, pk)
					if cerr != nil {
						t.Fatalf("%s: reading the outcome: %v", name, cerr)
					}
					outcome := fig.judge(t, name, injected, applied, half, err, true, describeError, "in the table")
					seen[name] = outcome
				}
			}
			outcomes[b.name] = seen
			t.Logf("%s: %d cases, %d truthful, %d ambiguous by design (ErrUnavailable for an applied write), %d acknowledged writes lost, %d half-applied",
				b.name, fig.cases, fig.truthful, fig.ambiguous, fig.lost, fig.half)
		})
	}
	compareOutcomes(t, outcomes)
}

// classified reports an error that matches one of the library's sentinels or a context
// error.
func classified(err error) bool {
	for _, s := range []error{abstractions.ErrNotFound, abstractions.ErrDuplicateKey, abstractions.ErrConcurrencyConflict,
		abstractions.ErrUnavailable, abstractions.ErrInvalidArgument, abstractions.ErrInvalidKey, abstractions.ErrNotSupported,
		abstractions.ErrIntegrity, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// Every deviation says whether a user of the stores can meet it.
func TestDeviationsSayWhetherStoresMeetThem(t *testing.T) {
	for name, d := range Deviations {
		if !strings.HasPrefix(d.Stores, "met") && !strings.HasPrefix(d.Stores, "not met: ") {
			t.Errorf("deviation %q: Stores = %q, want \"met…\" or \"not met: …\"", name, d.Stores)
		}
	}
}
