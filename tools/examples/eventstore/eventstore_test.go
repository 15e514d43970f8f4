package eventstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tools/examples/eventstore"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// backend is one wiring of the example (eventstore.Rows), over the in-memory backend or Azure.
type backend struct {
	name  string
	rows  abstractions.PolyStorage[eventstore.Event]
	store *eventstore.Store
}

// wire wires the event store to acct as every host does, with eventstore.Rows.
func wire(t *testing.T, name string, acct *tables.Account, table string) backend {
	t.Helper()
	rows, err := eventstore.Rows(acct, table)
	if err != nil {
		t.Fatal(err)
	}
	return backend{name: name, rows: rows, store: eventstore.New(rows)}
}

// backends wires the store to the in-memory backend and, when an emulator is configured, to
// Azurite, each in a table of its own.
func backends(t *testing.T) []backend {
	t.Helper()
	out := []backend{wire(t, "memory", inmemory.NewAccount(nil), "")}
	conn, ok := azuritetest.LookupConnectionString(t)
	if !ok {
		t.Log(azuritetest.ConnEnv + " not set: the in-memory backend only")
		return out
	}
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b [5]byte
	_, _ = rand.Read(b[:])
	table := eventstore.EventsTable + hex.EncodeToString(b[:])
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), table) })
	return append(out, wire(t, "azurite", acct, table))
}

func TestAppendAndLoad(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			v, err := b.store.Append(ctx, "ACC-1", 0, &eventstore.Opened{Owner: "Alice"}, &eventstore.Deposited{Cents: 500})
			if err != nil || v != 2 {
				t.Fatalf("first append: %d, %v", v, err)
			}
			if v, err = b.store.Append(ctx, "ACC-1", 2, &eventstore.Withdrawn{Cents: 120, Memo: "tea"}); err != nil || v != 3 {
				t.Fatalf("second append: %d, %v", v, err)
			}
			events, version, err := b.store.Load(ctx, "ACC-1")
			if err != nil {
				t.Fatal(err)
			}
			want := []eventstore.Event{
				&eventstore.Opened{EventBase: eventstore.EventBase{Account: "ACC-1", Version: 1}, Owner: "Alice"},
				&eventstore.Deposited{EventBase: eventstore.EventBase{Account: "ACC-1", Version: 2}, Cents: 500},
				&eventstore.Withdrawn{EventBase: eventstore.EventBase{Account: "ACC-1", Version: 3}, Cents: 120, Memo: "tea"},
			}
			if version != 3 || !reflect.DeepEqual(events, want) {
				t.Errorf("loaded version %d:\n got %#v\nwant %#v", version, events, want)
			}
			// The rows as the table holds them: zero-padded versions, then the head.
			entries, err := b.rows.List(ctx, "ACC-1")
			if err != nil {
				t.Fatal(err)
			}
			var keys, names []string
			for _, e := range entries {
				keys, names = append(keys, e.Key.RowKey), append(names, e.TypeName)
			}
			if !reflect.DeepEqual(keys, []string{"000000001", "000000002", "000000003", "head"}) ||
				!reflect.DeepEqual(names, []string{"account.opened", "account.deposited", "account.withdrawn", ""}) ||
				entries[3].Columns[eventstore.VersionColumn] != int64(3) {
				t.Errorf("rows %v %v, head %v", keys, names, entries[3].Columns)
			}
			// Keys are verbatim: another case is another account.
			if events, v, err := b.store.Load(ctx, "acc-1"); err != nil || len(events) != 0 || v != 0 {
				t.Errorf("acc-1: %d events at %d, %v", len(events), v, err)
			}
		})
	}
}

func TestStaleAppendLoses(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			if _, err := b.store.Append(ctx, "acc-2", 0, &eventstore.Opened{Owner: "Bob"}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.store.Append(ctx, "acc-2", 1, &eventstore.Deposited{Cents: 1}); err != nil {
				t.Fatal(err)
			}
			_, err := b.store.Append(ctx, "acc-2", 1, &eventstore.Withdrawn{Cents: 1})
			if !errors.Is(err, eventstore.ErrConflict) || !errors.Is(err, abstractions.ErrConcurrencyConflict) {
				t.Errorf("stale append: %v", err)
			}
			_, err = b.store.Append(ctx, "acc-2", 0, &eventstore.Opened{Owner: "Mallory"})
			if !errors.Is(err, eventstore.ErrConflict) {
				t.Errorf("re-opening: %v", err)
			}
			if events, v, err := b.store.Load(ctx, "acc-2"); err != nil || len(events) != 2 || v != 2 {
				t.Errorf("after the losers: %d events at %d, %v", len(events), v, err)
			}
		})
	}
}

// Writers that read the same version race; each transaction is conditional on the head, so
// exactly one wins each round, and a loser that reloads and retries eventually gets in. The
// stream ends with every writer's events, each version once.
func TestConcurrentWritersRetry(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			const writers, each = 4, 3
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; {
						v, _, err := b.store.Version(ctx, "acc-3")
						if err != nil {
							errs <- err
							return
						}
						_, err = b.store.Append(ctx, "acc-3", v, &eventstore.Deposited{Cents: int64(100*w + i)})
						switch {
						case errors.Is(err, eventstore.ErrConflict):
							continue
						case err != nil:
							errs <- err
							return
						}
						i++
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			events, version, err := b.store.Load(ctx, "acc-3")
			if err != nil || version != writers*each || len(events) != writers*each {
				t.Fatalf("%d events at version %d, %v", len(events), version, err)
			}
			seen := map[int64]bool{}
			for i, ev := range events {
				d := ev.(*eventstore.Deposited)
				if d.Version != int64(i+1) || seen[d.Cents] {
					t.Errorf("event %d: %+v", i, d)
				}
				seen[d.Cents] = true
			}
		})
	}
}

func TestAppendRefusals(t *testing.T) {
	ctx := context.Background()
	s := eventstore.New(backends(t)[0].rows)
	if _, err := s.Append(ctx, "acc-4", 0); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("empty append: %v", err)
	}
	many := make([]eventstore.Event, eventstore.MaxAppend+1)
	for i := range many {
		many[i] = &eventstore.Deposited{Cents: 1}
	}
	if _, err := s.Append(ctx, "acc-4", 0, many...); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("too many: %v", err)
	}
	if v, err := s.Append(ctx, "acc-4", 0, many[:eventstore.MaxAppend]...); err != nil || v != eventstore.MaxAppend {
		t.Errorf("a full transaction: %d, %v", v, err)
	}
}

// Example wires the event store to the in-memory backend, as a test would; production
// passes Rows its Azure account (tables.NewAccount) instead.
func Example() {
	ctx := context.Background()
	rows, err := eventstore.Rows(inmemory.NewAccount(nil), "")
	if err != nil {
		panic(err)
	}
	store := eventstore.New(rows)

	v, _ := store.Append(ctx, "acc-9", 0, &eventstore.Opened{Owner: "Dana"}, &eventstore.Deposited{Cents: 700})
	_, err = store.Append(ctx, "acc-9", 1, &eventstore.Withdrawn{Cents: 50}) // read at 1, but 2 is stored
	fmt.Println("at version", v, "stale append conflicts:", errors.Is(err, eventstore.ErrConflict))

	events, _, _ := store.Load(ctx, "acc-9")
	for _, ev := range events {
		fmt.Printf("%s %T\n", eventstore.VersionKey(ev.Base().Version), ev)
	}
	// Output:
	// at version 2 stale append conflicts: true
	// 000000001 *eventstore.Opened
	// 000000002 *eventstore.Deposited
}
