package inmemory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/feed"
	"github.com/unified-data/gotables/tables/service"
)

// cosmosCounter is the Cosmos profile of the memory service, counting the row writes and
// transactions that reach it.
type cosmosCounter struct {
	*memservice.Service
	writes, txs atomic.Int64
}

func (c *cosmosCounter) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	c.writes.Add(1)
	return c.Service.Write(ctx, table, a)
}

func (c *cosmosCounter) Transact(ctx context.Context, table string, as []service.Action) ([]service.Written, error) {
	c.txs.Add(1)
	return c.Service.Transact(ctx, table, as)
}

type CosmosNote struct {
	abstractions.Entity
	Text string
}

// cosmosStore is a store of Notes on an account over the Cosmos profile, which the account
// recognises from the service (no Options.Service).
func cosmosStore[T any, P abstractions.EntityPtr[T]](t *testing.T, table string) (*tables.Store[T], *cosmosCounter) {
	t.Helper()
	c := &cosmosCounter{Service: memservice.New(memservice.Cosmos())}
	acct := inmemory.NewAccountOver(c, c, &tables.Options{IDs: tables.IDsAsWritten})
	if got := acct.Service(); got != service.Cosmos {
		t.Fatalf("Service() = %v over the Cosmos profile", got)
	}
	s, err := tables.For[T, P](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// refusedBeforeSending fails the test unless err matches kind and names want, and nothing
// reached the service.
func refusedBeforeSending(t *testing.T, err, kind error, want string, c *cosmosCounter) {
	t.Helper()
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("error = %v, want %v naming %q", err, kind, want)
	}
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		t.Fatalf("the service answered: %v", err)
	}
	if n := c.writes.Load() + c.txs.Load(); n != 0 {
		t.Fatalf("%d requests reached the service", n)
	}
}

func TestCosmosKeyOver255BytesRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	s, c := cosmosStore[CosmosNote, *CosmosNote](t, "notes")
	rk := strings.Repeat("k", 256)
	err := s.Create(ctx, &CosmosNote{Entity: abstractions.Entity{ID: "p|" + rk}})
	refusedBeforeSending(t, err, abstractions.ErrInvalidArgument, "255 bytes", c)
	err = s.Upsert(ctx, &CosmosNote{Entity: abstractions.Entity{ID: rk + "|r"}})
	refusedBeforeSending(t, err, abstractions.ErrInvalidArgument, "partition key is 256 bytes", c)
	if err := s.Create(ctx, &CosmosNote{Entity: abstractions.Entity{ID: "p|" + rk[1:]}}); err != nil {
		t.Fatalf("a 255-byte row key: %v", err)
	}
}

type Reserved struct {
	abstractions.Entity
	ResourceId string //nolint:revive // the name Cosmos DB reserves, on purpose
}

func TestCosmosReservedPropertyRefusedBeforeSending(t *testing.T) {
	s, c := cosmosStore[Reserved, *Reserved](t, "reserved")
	err := s.Create(context.Background(), &Reserved{Entity: abstractions.Entity{ID: "p|r"}, ResourceId: "x"})
	refusedBeforeSending(t, err, abstractions.ErrInvalidArgument, `"ResourceId" is reserved`, c)
}

func TestCosmosTransactionOver2MBRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	s, c := cosmosStore[CosmosNote, *CosmosNote](t, "bignotes")
	text := strings.Repeat("x", 30000)
	tx := s.Transaction("p")
	for i := range 80 { // about 2.4 MB: within Table Storage's 4 MiB, over Cosmos DB's 2 MB
		s.CreateIn(tx, &CosmosNote{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}, Text: text})
	}
	refusedBeforeSending(t, tx.Commit(ctx), abstractions.ErrInvalidArgument, "2 MB", c)

	// A batch is planned within 2 MB instead: two transactions.
	var notes []*CosmosNote
	for i := range 80 {
		notes = append(notes, &CosmosNote{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%d", i)}, Text: text})
	}
	if err := s.EnsureCreated(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBatch(ctx, notes); err != nil {
		t.Fatalf("CreateBatch: %v", err)
	}
	if n := c.txs.Load(); n != 2 {
		t.Fatalf("CreateBatch sent %d transactions, want 2", n)
	}
}

func TestCosmosTableNamesDifferingInCaseAreTwoTables(t *testing.T) {
	ctx := context.Background()
	acct := inmemory.NewAccount(&tables.Options{Service: service.Cosmos, Cache: tables.Sliding(time.Minute)})
	upper, err := tables.For[CosmosNote](acct, &tables.StoreOptions{Table: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	lower, err := tables.For[CosmosNote](acct, &tables.StoreOptions{Table: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	if err := upper.Create(ctx, &CosmosNote{Entity: abstractions.Entity{ID: "p|r"}, Text: "upper"}); err != nil {
		t.Fatal(err)
	}
	if _, err := upper.One(ctx, "p|r"); err != nil { // now in the read cache
		t.Fatal(err)
	}
	if _, err := lower.One(ctx, "p|r"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("notes read Notes' row: %v", err)
	}
	if err := lower.Create(ctx, &CosmosNote{Entity: abstractions.Entity{ID: "p|r"}, Text: "lower"}); err != nil {
		t.Fatalf("notes: %v", err)
	}
	for s, want := range map[*tables.Store[CosmosNote]]string{upper: "upper", lower: "lower"} {
		if n, err := s.One(ctx, "p|r"); err != nil || n.Text != want {
			t.Fatalf("read %v, %v; want %q", n, err, want)
		}
	}
	// On Table Storage the two names are one table.
	st := inmemory.NewAccount(nil)
	a, _ := tables.For[CosmosNote](st, &tables.StoreOptions{Table: "Notes"})
	b, _ := tables.For[CosmosNote](st, &tables.StoreOptions{Table: "notes"})
	if err := a.Create(ctx, &CosmosNote{Entity: abstractions.Entity{ID: "p|r"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.One(ctx, "p|r"); err != nil {
		t.Fatalf("Table Storage, notes after Notes: %v", err)
	}
}

// A large value is laid out within Cosmos DB's 2 MB transactions: one that fits is stored
// split and read back whole; one whose rows fit Table Storage's 4 MiB but not 2 MB is refused
// with ErrOversizedValue before anything is sent (offload is the remedy), where Table Storage
// stores it.
func TestCosmosLargeValueWithin2MB(t *testing.T) {
	ctx := context.Background()
	s, c := cosmosStore[Note](t, "cosmosnotes")
	// Bytes travel in base64: 1.2 MB are 1.6 MB on the wire, 1.7 MB are 2.3 MB.
	fits := &Note{Entity: abstractions.Entity{ID: "p|fits"}, Blob: bytes.Repeat([]byte("a"), 1_200_000)}
	if err := s.Create(ctx, fits); err != nil {
		t.Fatal(err)
	}
	got, err := s.One(ctx, "p|fits")
	if err != nil || !bytes.Equal(got.Blob, fits.Blob) {
		t.Fatalf("read back: %v (%d bytes)", err, len(got.Blob))
	}
	before := c.writes.Load() + c.txs.Load()
	big := &Note{Entity: abstractions.Entity{ID: "p|big"}, Blob: bytes.Repeat([]byte("b"), 1_700_000)}
	err = s.Create(ctx, big)
	if !errors.Is(err, abstractions.ErrOversizedValue) || !strings.Contains(err.Error(), "offload") {
		t.Fatalf("a value over 2 MB on Cosmos DB: %v, want ErrOversizedValue naming offload", err)
	}
	if n := c.writes.Load() + c.txs.Load(); n != before {
		t.Fatalf("%d requests reached the service for the refused value", n-before)
	}
	storage := inmemory.NewAccount(nil)
	ss, err := tables.For[Note](storage, &tables.StoreOptions{Table: "storagenotes"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ss.Create(ctx, big); err != nil {
		t.Fatalf("the same value on Table Storage: %v", err)
	}
}

// FedNote is an entity of about 90 KB on the wire, whose change records carry it whole.
type FedNote struct {
	abstractions.Entity
	A, B, C string
}

// A store with a change feed on Cosmos DB keeps every transaction within 2 MB: a batch of
// entities whose records double its size is planned in several transactions, and a relay
// that keeps delivered records moves them in as many transactions as 2 MB needs, each
// record's copy and delete together. The profile refuses a body over 2 MB, so a plan over
// it would fail the pass.
func TestCosmosFeedTransactionsWithin2MB(t *testing.T) {
	ctx := context.Background()
	s, c := cosmosStore[FedNote](t, "fednotes")
	if err := feed.Enable(s, &feed.Options{Body: true, Hold: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", 30000)
	var notes []*FedNote
	for i := range 30 { // 30 entities and 30 records of 90 KB: 5.4 MB
		notes = append(notes, &FedNote{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%02d", i)}, A: text, B: text, C: text})
	}
	if err := s.CreateBatch(ctx, notes); err != nil {
		t.Fatalf("CreateBatch: %v", err)
	}
	if n := c.txs.Load(); n < 3 {
		t.Fatalf("CreateBatch of 5.4 MB sent %d transactions, want at least 3", n)
	}

	r, err := feed.NewRelay(s, &feed.RelayOptions{Keep: time.Hour, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	delivered := 0
	before := c.txs.Load()
	if _, err := r.Pass(ctx, func(context.Context, feed.Record) error { delivered++; return nil }); err != nil {
		t.Fatalf("a pass that keeps 2.7 MB of records: %v", err)
	}
	if delivered != 30 {
		t.Fatalf("delivered %d records, want 30", delivered)
	}
	if n := c.txs.Load() - before; n < 2 {
		t.Fatalf("the checkpoint of 2.7 MB of records sent %d transactions, want at least 2", n)
	}
	b, err := feed.Status(ctx, s)
	if err != nil || b.Pending != 0 || b.Kept != 30 {
		t.Fatalf("status after the pass: %+v, %v", b, err)
	}
	if _, err := r.Pass(ctx, func(_ context.Context, rec feed.Record) error {
		t.Errorf("delivered again: %s", rec.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Receipt is a ledger item of 60 KB of bytes (80 KB on the wire).
type Receipt struct{ Scan []byte }

func (*Receipt) Amount() int64 { return 0 }

// A polymorphic store with a feed refuses, before sending, a batch with a write
// conditional on an ETag whose rows and records need more than one 2 MB transaction on
// Cosmos DB (one that fits Table Storage's 4 MiB): divided, the condition would guard only
// part of it.
func TestCosmosFedPolyConditionalBatchWithin2MB(t *testing.T) {
	ctx := context.Background()
	c := &cosmosCounter{Service: memservice.New(memservice.Cosmos())}
	reg := new(abstractions.TypeRegistry)
	if err := abstractions.RegisterType[Receipt](reg, "receipt"); err != nil {
		t.Fatal(err)
	}
	s, err := tables.PolyFor[Ledger](inmemory.NewAccountOver(c, c, nil), reg, &tables.StoreOptions{Table: "fedledger"})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed.Enable(s, &feed.Options{Body: true}); err != nil {
		t.Fatal(err)
	}
	scan := bytes.Repeat([]byte("s"), 60000)
	etag, err := s.Insert(ctx, abstractions.PolyWrite[Ledger]{Key: key("p", "00"), Item: &Receipt{Scan: scan}})
	if err != nil {
		t.Fatal(err)
	}
	ws := make([]abstractions.PolyWrite[Ledger], 14) // 14 rows and their records: 2.2 MB on the wire
	for i := range ws {
		ws[i] = abstractions.PolyWrite[Ledger]{Key: key("p", fmt.Sprintf("%02d", i)), Item: &Receipt{Scan: scan}}
	}
	ws[0].IfMatch = etag
	sent := c.writes.Load() + c.txs.Load()
	err = s.UpsertBatch(ctx, ws)
	if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "bytes on the wire") || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("a conditional batch of 2.2 MB on Cosmos DB: %v", err)
	}
	if n := c.writes.Load() + c.txs.Load() - sent; n != 0 {
		t.Fatalf("%d requests reached the service", n)
	}
	if err := s.UpsertBatch(ctx, ws[:8]); err != nil { // 1.3 MB: one transaction
		t.Fatalf("a conditional batch of 1.3 MB: %v", err)
	}
}

// CosmosScan is a split-aware entity whose cells fit one Table Storage row: 192,000
// characters of text and 576,000 bytes that Cosmos DB counts as 768,000.
type CosmosScan struct {
	abstractions.Entity
	T1, T2, T3, T4, T5, T6             string
	B1, B2, B3, B4, B5, B6, B7, B8, B9 []byte `table:",split=binary"`
}

// The large-value planner counts binary values as Cosmos DB does: an entity whose cells
// fit one row by Table Storage's count but not by Cosmos DB's is laid out over more rows
// on Cosmos DB (the profile refuses a row over 1 MiB by its count) and read back whole.
func TestCosmosBinaryPlannedAtItsCosmosSize(t *testing.T) {
	ctx := context.Background()
	text := strings.Repeat("t", 32000)
	b := func(c byte) []byte { return bytes.Repeat([]byte{c}, 64000) }
	v := &CosmosScan{Entity: abstractions.Entity{ID: "p|scan"}, T1: text, T2: text, T3: text, T4: text, T5: text, T6: text,
		B1: b('1'), B2: b('2'), B3: b('3'), B4: b('4'), B5: b('5'), B6: b('6'), B7: b('7'), B8: b('8'), B9: b('9')}
	s, c := cosmosStore[CosmosScan](t, "scans")
	if err := s.Create(ctx, v); err != nil {
		t.Fatalf("Cosmos DB: %v", err)
	}
	got, err := s.One(ctx, "p|scan")
	if err != nil || !bytes.Equal(got.B9, v.B9) || got.T6 != text {
		t.Fatalf("read back: %v", err)
	}
	cosmosRows, err := c.Service.Query(ctx, "scans", service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	// On Table Storage the same entity is one row.
	st := memservice.New()
	ss, err := tables.For[CosmosScan](inmemory.NewAccountOver(st, st, nil), &tables.StoreOptions{Table: "scans"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ss.Create(ctx, v); err != nil {
		t.Fatalf("Table Storage: %v", err)
	}
	storageRows, err := st.Query(ctx, "scans", service.Query{})
	if err != nil || len(storageRows.Rows) != 1 || len(cosmosRows.Rows) < 2 {
		t.Fatalf("Table Storage stored %d rows (%v), Cosmos DB %d; want 1 and more", len(storageRows.Rows), err, len(cosmosRows.Rows))
	}
}
