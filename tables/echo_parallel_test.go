package tables

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/internal/access"
	"github.com/unified-data/gotables/tables/service"
)

// A parallel batch whose transactions' answers are lost after they committed counts them as
// committed: in the count, and in the BatchError of a call another partition failed.
func TestParallelBatchTellsItsOwnEcho(t *testing.T) {
	ctx := context.Background()
	for _, degree := range []int{1, 4} {
		t.Run(map[int]string{1: "one at a time", 4: "four at once"}[degree], func(t *testing.T) {
			f := newFake()
			f.tables["items"] = map[fakeKey]service.Row{}
			ft := faults.NewTables(f)
			s, err := For[item](testAccount("test", ft, nil, &Options{Now: func() time.Time { return testNow }, BatchParallelism: degree}), &StoreOptions{Table: "Items"})
			if err != nil {
				t.Fatal(err)
			}
			// p3's second transaction meets a row of another writer.
			f.put("Items", service.Row{PartitionKey: "p3", RowKey: "0150", Properties: []service.Property{{Name: "N", Value: service.Int64(-1)}}})
			ft.Inject(faults.LoseResponse, faults.Transactions, 3)
			err = s.CreateBatch(ctx, spread(4, 200))
			wantKind(t, err, abstractions.ErrDuplicateKey)
			var be *abstractions.BatchError
			if !errors.As(err, &be) {
				t.Fatalf("error %v is not a BatchError", err)
			}
			if got, want := be.CommittedPartitions(), []string{"p0", "p1", "p2"}; !reflect.DeepEqual(got, want) {
				t.Errorf("committed partitions %v, want %v", got, want)
			}
			p3 := be.Partitions[3]
			if len(p3.Committed) != 100 || len(p3.NotCommitted) != 100 || len(p3.Unknown) != 0 {
				t.Errorf("p3: %d committed, %d not, %d unknown", len(p3.Committed), len(p3.NotCommitted), len(p3.Unknown))
			}
			if f.size("Items") != 3*200+100+1 {
				t.Errorf("%d rows stored", f.size("Items"))
			}
			// Every answer lost: the whole upsert is counted.
			ft.Inject(faults.LoseResponse, faults.Transactions, 8)
			if n, err := s.UpsertBatch(ctx, spread(4, 200)); err != nil || n != 800 {
				t.Fatalf("UpsertBatch after lost answers: %d, %v", n, err)
			}
		})
	}
}

// A split-aware write sent as a transaction whose answer was lost returns the version the
// table holds.
func TestSplitWriteTellsItsOwnEcho(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	f.tables["items"] = map[fakeKey]service.Row{}
	ft := faults.NewTables(f)
	s, err := For[doc](testAccount("test", ft, nil, &Options{Now: func() time.Time { return testNow }}), &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	ft.Inject(faults.LoseResponse, faults.Transactions, 1)
	d := &doc{Entity: abstractions.Entity{ID: "p|d"}, Body: bigText}
	if err := s.Create(ctx, d); err != nil {
		t.Fatalf("Create after a lost answer: %v", err)
	}
	stored, _ := f.row("Items", "p", "d")
	if d.ETag == "" || d.ETag != stored.ETag {
		t.Errorf("the entity's ETag %q is not the stored one %q", d.ETag, stored.ETag)
	}
}

// The partitions of a parallel batch that all meet the missing table create it without
// saying that a table was lost, even those that learn of the missing table after another
// partition created it and wrote; a table that was in use and is gone is logged once.
func TestParallelFirstWriteCreatesTheTableQuietly(t *testing.T) {
	ctx := context.Background()
	var logged lockedBuffer
	late := &lateNotFound{Tables: newFake(), first: "p0", written: make(chan struct{})}
	late.arrived.Add(4)
	acct := testAccount("test", late, nil, &Options{Now: func() time.Time { return testNow }, BatchParallelism: 4,
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s, err := For[item](acct, &StoreOptions{Table: "Items"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.UpsertBatch(ctx, spread(4, 10)); err != nil || n != 40 {
		t.Fatalf("UpsertBatch: %d, %v", n, err)
	}
	if strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "creating the table on its first write") {
		t.Errorf("a first write logged:\n%s", logged.String())
	}
	if err := late.Tables.DeleteTable(ctx, "Items"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.UpsertBatch(ctx, spread(1, 10)); err != nil || n != 10 {
		t.Fatalf("UpsertBatch after the table was lost: %d, %v", n, err)
	}
	if got := strings.Count(logged.String(), "level=WARN"); got != 1 {
		t.Errorf("%d warnings for a lost table:\n%s", got, logged.String())
	}
}

// lateNotFound is a table service whose first transaction of each partition waits until
// every partition sent one (so each meets the missing table), and whose partitions other
// than first hear of the missing table only after first's transaction committed.
type lateNotFound struct {
	service.Tables
	first   string
	arrived sync.WaitGroup
	sent    sync.Map
	written chan struct{}
	once    sync.Once
}

func (l *lateNotFound) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	pk := actions[0].Row.PartitionKey
	_, again := l.sent.LoadOrStore(pk, true)
	if !again {
		l.arrived.Done()
		l.arrived.Wait()
	}
	ws, err := l.Tables.Transact(ctx, table, actions)
	switch {
	case err == nil && pk == l.first:
		l.once.Do(func() { close(l.written) })
	case access.IsTableNotFound(err) && pk != l.first:
		<-l.written
	}
	return ws, err
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
