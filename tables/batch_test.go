package tables

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func TestPlanChunks(t *testing.T) {
	act := func(pk string, props ...service.Property) service.Action {
		return service.Action{Op: service.OpInsert, Row: service.Row{PartitionKey: pk, RowKey: fmt.Sprint(len(props)), Properties: props}}
	}
	big := service.BinaryNoCopy(make([]byte, 64<<10))
	bigRow := []service.Property{{Name: "A", Value: big}, {Name: "B", Value: big}, {Name: "C", Value: big}, {Name: "D", Value: big}}
	repeat := func(n int, a service.Action) []service.Action {
		out := make([]service.Action, n)
		for i := range out {
			out[i] = a
		}
		return out
	}
	cases := []struct {
		name    string
		actions []service.Action
		want    []int // the length of each chunk
		first   []int // the first index of each chunk
	}{
		{"none", nil, nil, nil},
		{"one", []service.Action{act("a")}, []int{1}, []int{0}},
		{"partitions in order of first appearance", []service.Action{act("b"), act("a"), act("b"), act("c"), act("a")},
			[]int{2, 2, 1}, []int{0, 1, 3}},
		{"at most 100 actions", repeat(250, act("p")), []int{100, 100, 50}, []int{0, 100, 200}},
		{"at most 4 MiB", repeat(30, act("p", bigRow...)), []int{11, 11, 8}, []int{0, 11, 22}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &engine.Plan{Actions: tc.actions}
			chunks := p.Chunks()
			var lens, firsts []int
			seen := map[int]bool{}
			for _, c := range chunks {
				lens = append(lens, len(c))
				firsts = append(firsts, c[0])
				acts := make([]service.Action, len(c))
				for i, j := range c {
					if seen[j] {
						t.Errorf("action %d is in two chunks", j)
					}
					seen[j] = true
					if i > 0 && j <= c[i-1] {
						t.Errorf("chunk %v does not keep the plan's order", c)
					}
					acts[i] = tc.actions[j]
					if acts[i].Row.PartitionKey != acts[0].Row.PartitionKey {
						t.Errorf("chunk %v spans partitions", c)
					}
				}
				if service.TransactionBodySize(acts) > service.MaxBodySize {
					t.Errorf("chunk of %d actions is %d bytes", len(c), service.TransactionBodySize(acts))
				}
			}
			if len(seen) != len(tc.actions) {
				t.Errorf("%d of %d actions planned", len(seen), len(tc.actions))
			}
			if !reflect.DeepEqual(lens, tc.want) || !reflect.DeepEqual(firsts, tc.first) {
				t.Errorf("chunks of %v starting at %v, want %v starting at %v", lens, firsts, tc.want, tc.first)
			}
		})
	}
}

func items(pk string, n int) []*item {
	out := make([]*item, n)
	for i := range out {
		out[i] = &item{Entity: abstractions.Entity{ID: fmt.Sprintf("%s|%03d", pk, i)}, N: i}
	}
	return out
}

func TestCreateBatch(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	vs := append(items("P", 150), items("q", 3)...)
	if err := s.CreateBatch(ctx, vs); err != nil {
		t.Fatal(err)
	}
	if f.size("Items") != 153 || f.count("Transact") != 3 {
		t.Fatalf("%d rows in %d transactions", f.size("Items"), f.count("Transact"))
	}
	for _, v := range vs {
		// A batch reports no versions: the entity says so rather than keep a stale one.
		if v.ETag != "" || !v.Timestamp.IsZero() || !v.CreatedAt.Equal(testNow) || !v.UpdatedAt.Equal(testNow) {
			t.Fatalf("entity after the batch: %+v", v.Entity)
		}
	}
	if vs[0].ID != "p|000" {
		t.Errorf("id %q, want it normalised", vs[0].ID)
	}
	got, err := s.One(ctx, "p|149")
	if err != nil || got.N != 149 {
		t.Errorf("read back %+v, %v", got, err)
	}
	// Nothing to write sends nothing.
	f.resetCalls()
	if err := s.CreateBatch(ctx, nil); err != nil || len(f.calls) != 0 {
		t.Errorf("an empty batch: %v, sent %v", err, f)
	}
}

func TestCreateBatchRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		vs   []*item
		kind error
	}{
		{"one key twice", []*item{{Entity: abstractions.Entity{ID: "p|a"}}, {Entity: abstractions.Entity{ID: "P|A "}}}, abstractions.ErrDuplicateKey},
		{"a nil entity", []*item{{Entity: abstractions.Entity{ID: "p|a"}}, nil}, abstractions.ErrInvalidArgument},
		{"a bad key", []*item{{Entity: abstractions.Entity{ID: "p|a"}}, {Entity: abstractions.Entity{ID: "p|"}}}, abstractions.ErrInvalidKey},
		{"a value the service cannot store", []*item{{Entity: abstractions.Entity{ID: "p|a"}, Name: "\xff"}}, abstractions.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newStore[item](t, nil)
			wantKind(t, s.CreateBatch(ctx, tc.vs), tc.kind)
			if len(f.calls) != 0 {
				t.Errorf("a refused batch sent %v", f)
			}
		})
	}
}

// A batch is as atomic as one transaction: the transactions before the failing one stay
// committed, and the error names the row the service blamed.
func TestCreateBatchStopsAtTheFailingTransaction(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|120"}}); err != nil {
		t.Fatal(err)
	}
	vs := items("p", 150)
	vs = append(vs[:120], vs[121:]...) // p|120 is not in the batch …
	vs = append(vs, &item{Entity: abstractions.Entity{ID: "p|120"}})
	err := s.CreateBatch(ctx, vs)
	wantKind(t, err, abstractions.ErrDuplicateKey)
	var se *abstractions.StoreError
	if !errors.As(err, &se) || se.PartitionKey != "p" || se.RowKey != "120" || se.Op != "create batch" {
		t.Fatalf("error %v does not name the existing row", err)
	}
	if f.size("Items") != 101 {
		t.Errorf("%d rows, want the first transaction's 100 and the existing one", f.size("Items"))
	}
	if !vs[99].UpdatedAt.Equal(testNow) || !vs[100].UpdatedAt.IsZero() {
		t.Errorf("committed entity %+v, failed one %+v", vs[99].Entity, vs[100].Entity)
	}
}

func TestUpsertBatch(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	if err := s.Create(ctx, &item{Entity: abstractions.Entity{ID: "p|001"}, Name: "old"}); err != nil {
		t.Fatal(err)
	}
	n, err := s.UpsertBatch(ctx, items("p", 120))
	if err != nil || n != 120 || f.size("Items") != 120 {
		t.Fatalf("upserted %d, %v; %d rows", n, err, f.size("Items"))
	}
	if got, _ := s.One(ctx, "p|001"); got.Name != "" || got.N != 1 {
		t.Errorf("the existing row was not replaced: %+v", got)
	}
	// Keys with quotes go in batches too (the adapter doubles them in each action's URL).
	for _, id := range []string{"o'brien|1", "p|it's"} {
		n, err = s.UpsertBatch(ctx, []*item{{Entity: abstractions.Entity{ID: "p|x"}}, {Entity: abstractions.Entity{ID: id}, N: 7}})
		if err != nil || n != 2 {
			t.Fatalf("a key with a quote: %d written, %v", n, err)
		}
		if got, err := s.One(ctx, id); err != nil || got.N != 7 {
			t.Errorf("a key with a quote: read %+v, %v", got, err)
		}
	}
	n, err = s.UpsertBatch(ctx, []*item{nil})
	wantKind(t, err, abstractions.ErrInvalidArgument)
	if n != 0 {
		t.Errorf("a batch with a nil entity wrote %d", n)
	}
	// A failure after the first transaction reports what was written.
	f.before = func(call string) error {
		if call == "Transact" && f.count("Transact") == 1 {
			return fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
		}
		return nil
	}
	f.resetCalls()
	n, err = s.UpsertBatch(ctx, items("q", 150))
	wantKind(t, err, abstractions.ErrUnavailable)
	var se *abstractions.StoreError
	if n != 100 || !errors.As(err, &se) || se.PartitionKey != "q" || se.RowKey != "" {
		t.Errorf("after a failed second transaction: %d written, %v", n, err)
	}
}

func TestDeletePartition(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	if _, err := s.UpsertBatch(ctx, append(items("p", 250), items("q", 3)...)); err != nil {
		t.Fatal(err)
	}
	f.resetCalls()
	n, err := s.DeletePartition(ctx, "\t P") // the partition of the ids "\t P|…"
	if err != nil || n != 250 || f.size("Items") != 3 {
		t.Fatalf("deleted %d, %v; %d rows left", n, err, f.size("Items"))
	}
	for _, q := range f.queries {
		if q.Filter != "PartitionKey eq 'p'" || q.Select == nil || len(q.Select) != 0 {
			t.Errorf("the scan asked %+v, want the partition's keys only", q)
		}
	}
	if n, err := s.DeletePartition(ctx, "empty"); err != nil || n != 0 {
		t.Errorf("an empty partition: %d, %v", n, err)
	}
}

// A row another writer deletes between the scan and the delete is gone as asked: the
// transaction that failed on it is sent again without it.
func TestDeletePartitionSkipsRowsAlreadyGone(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	if _, err := s.UpsertBatch(ctx, items("p", 150)); err != nil {
		t.Fatal(err)
	}
	f.before = func(call string) error {
		if call == "Transact" && f.count("Transact") == 2 { // the first transaction of the delete
			f.remove("Items", "p", "005")
			f.remove("Items", "p", "140")
		}
		return nil
	}
	n, err := s.DeletePartition(ctx, "p")
	if err != nil || n != 148 || f.size("Items") != 0 {
		t.Fatalf("deleted %d, %v; %d rows left", n, err, f.size("Items"))
	}
	// Every row gone before the transaction: nothing is left to send.
	f.before = nil
	if _, err := s.UpsertBatch(ctx, items("r", 2)); err != nil {
		t.Fatal(err)
	}
	f.before = func(call string) error {
		if call == "Transact" {
			f.remove("Items", "r", "000")
			f.remove("Items", "r", "001")
		}
		return nil
	}
	if n, err := s.DeletePartition(ctx, "r"); err != nil || n != 0 {
		t.Errorf("every row gone meanwhile: %d, %v", n, err)
	}
}

func TestDeletePartitionFailures(t *testing.T) {
	ctx := context.Background()
	busy := fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
	cases := []struct {
		name string
		fail func(f *fakeTables, cancel context.CancelFunc) func(string) error
		n    int
		kind error
	}{
		{"the scan fails", func(f *fakeTables, _ context.CancelFunc) func(string) error {
			return func(call string) error {
				if call == "Query" {
					return busy
				}
				return nil
			}
		}, 0, abstractions.ErrUnavailable},
		{"the second transaction fails", func(f *fakeTables, _ context.CancelFunc) func(string) error {
			return func(call string) error {
				if call == "Transact" && f.count("Transact") == 1 {
					return busy
				}
				return nil
			}
		}, 100, abstractions.ErrUnavailable},
		{"cancelled after the first transaction", func(f *fakeTables, cancel context.CancelFunc) func(string) error {
			return func(call string) error {
				if call == "Transact" {
					cancel()
				}
				return nil
			}
		}, 100, context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newStore[item](t, nil)
			if _, err := s.UpsertBatch(ctx, items("p", 150)); err != nil {
				t.Fatal(err)
			}
			f.resetCalls()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			f.before = tc.fail(f, cancel)
			n, err := s.DeletePartition(cctx, "p")
			wantKind(t, err, tc.kind)
			if n != tc.n || f.size("Items") != 150-tc.n {
				t.Errorf("deleted %d (%d rows left), want %d", n, f.size("Items"), tc.n)
			}
		})
	}
}
