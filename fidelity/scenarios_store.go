package fidelity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// customerRow is the entity of the store scenarios.
type customerRow struct {
	abstractions.Entity
	Name    string
	Email   string
	Balance float64
	Tags    []string
	Address address
}

// address is stored flattened into Address_* columns.
type address struct {
	City    string
	Country string
}

// counterRow is the entity of the concurrency scenarios.
type counterRow struct {
	abstractions.Entity
	N int
}

// storeClock is the clock of the store scenarios: CreatedAt and UpdatedAt are then the same
// on both backends, so the rows left behind compare cell for cell.
func storeClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 123456700, time.UTC) }

// storeOf returns the store of T over the scenario's services, in the scenario's table.
func storeOf[T any, P abstractions.EntityPtr[T]](e *Env, opts *tables.Options) *tables.Store[T] {
	e.t.Helper()
	o := tables.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = storeClock
	}
	acct := e.NewAccount(e.Tables, e.Blobs, &o)
	s, err := tables.For[T, P](acct, &tables.StoreOptions{Table: e.Table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	return s
}

// customer renders a customer without the values the service assigns.
func customer(c *customerRow) string {
	if c == nil {
		return "nil"
	}
	return fmt.Sprintf("%s name=%q email=%q balance=%v tags=%q address=%+v etag=%v ts=%v created=%v updated=%v",
		c.ID, c.Name, c.Email, c.Balance, c.Tags, c.Address, c.ETag != "", !c.Timestamp.IsZero(), !c.CreatedAt.IsZero(), !c.UpdatedAt.IsZero())
}

func customers(cs []*customerRow) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = customer(c)
	}
	return out
}

// Is records err under step and checks that it matches the sentinel.
func (e *Env) Is(step string, err, sentinel error) {
	e.t.Helper()
	e.ObserveErr(step, err)
	if !errors.Is(err, sentinel) {
		e.Errorf("%s: got %v, want an error matching %v", step, err, sentinel)
	}
}

func alice() *customerRow {
	return &customerRow{Entity: abstractions.Entity{ID: "  EU|Alice Smith "}, Name: "Alice", Email: "alice@example.com", Balance: 100,
		Tags: []string{"vip", "eu"}, Address: address{City: "Lviv", Country: "UA"}}
}

var storeBasics = []Scenario{
	{
		Name: "store/create-and-read",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			c := alice()
			e.OK("create", s.Create(ctx, c))
			e.Equal("id is normalised", c.ID, "eu|alice-smith")
			e.Equal("version filled", c.ETag != "" && !c.Timestamp.IsZero() && !c.CreatedAt.IsZero() && c.CreatedAt.Equal(c.UpdatedAt), true)
			got, err := s.One(ctx, "eu|Alice Smith")
			e.OK("one", err)
			e.Observe("read back", customer(got))
			e.Equal("same version", got.ETag == c.ETag && got.Timestamp.Equal(c.Timestamp) && got.CreatedAt.Equal(c.CreatedAt), true)
			ok, err := s.Exists(ctx, "eu|alice-smith")
			e.OK("exists", err)
			e.Equal("exists", ok, true)
		},
	},
	{
		Name: "store/create-duplicate",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			e.OK("create", s.Create(ctx, alice()))
			again := alice()
			again.Name = "Impostor"
			err := s.Create(ctx, again)
			e.Is("create again", err, abstractions.ErrDuplicateKey)
			e.Equal("the error names table and key", err != nil && strings.Contains(err.Error(), e.Table) && strings.Contains(err.Error(), "alice-smith"), true)
			e.Equal("the service error is kept", abstractions.HasStatus(err, 409, "EntityAlreadyExists"), true)
			e.Equal("the caller's entity is untouched", again.ID == "  EU|Alice Smith " && again.ETag == "", true)
		},
	},
	{
		Name: "store/missing-row",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			got, err := s.One(ctx, "eu|nobody")
			e.Is("one", err, abstractions.ErrNotFound)
			e.Equal("one", got == nil, true)
			ok, err := s.Exists(ctx, "eu|nobody")
			e.OK("exists", err)
			e.Equal("exists", ok, false)
			e.Deleted("delete is idempotent", false)(s.Delete(ctx, "eu|nobody", ""))
			c := alice()
			e.Is("update last-writer-wins", s.Update(ctx, c, abstractions.LastWriterWins), abstractions.ErrNotFound)
			c.ETag = `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`
			e.Is("update strict", s.Update(ctx, c, abstractions.Strict), abstractions.ErrNotFound)
		},
	},
	{
		Name: "store/upsert",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			c := alice()
			e.OK("upsert creates", s.Upsert(ctx, c))
			created := c.CreatedAt
			c.Name = "Alice B."
			e.OK("upsert replaces", s.Upsert(ctx, c))
			got, err := s.One(ctx, c.ID)
			e.OK("one", err)
			e.Observe("read back", customer(got))
			e.Equal("CreatedAt kept", got.CreatedAt.Equal(created), true)
			e.Equal("UpdatedAt moved", !got.UpdatedAt.Before(created), true)
		},
	},
	{
		Name: "store/update-modes",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			c := alice()
			e.OK("create", s.Create(ctx, c))
			stale := *c
			c.Balance = 150
			e.OK("strict with the current etag", s.Update(ctx, c, abstractions.Strict))
			stale.Balance = 999
			err := s.Update(ctx, &stale, abstractions.Auto)
			e.Is("auto with a stale etag", err, abstractions.ErrConcurrencyConflict)
			e.Equal("the 412 is kept", abstractions.HasStatus(err, 412, "UpdateConditionNotSatisfied"), true)
			noTag := *c
			noTag.ETag = ""
			e.Is("auto without an etag is refused", s.Update(ctx, &noTag, abstractions.Auto), abstractions.ErrInvalidArgument)
			e.Is("strict without an etag is refused", s.Update(ctx, &noTag, abstractions.Strict), abstractions.ErrInvalidArgument)
			noTag.Balance = 200
			e.OK("last writer wins", s.Update(ctx, &noTag, abstractions.LastWriterWins))
			got, err := s.One(ctx, c.ID)
			e.OK("one", err)
			e.Observe("read back", customer(got))
		},
	},
	{
		Name: "store/conditional-delete",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			c := alice()
			e.OK("create", s.Create(ctx, c))
			stale := c.ETag
			c.Balance = 150
			e.OK("update", s.Update(ctx, c, abstractions.Strict))
			deleted, err := s.Delete(ctx, c.ID, stale)
			e.Is("delete at a stale version", err, abstractions.ErrConcurrencyConflict)
			e.Equal("the 412 is kept", abstractions.HasStatus(err, 412, "UpdateConditionNotSatisfied"), true)
			e.Equal("a stale delete deletes nothing", deleted, false)
			got, err := s.One(ctx, c.ID)
			e.OK("the row stays", err)
			e.Observe("read back", customer(got))
			e.Deleted("delete at the current version", true)(s.Delete(ctx, c.ID, c.ETag))
			ok, err := s.Exists(ctx, c.ID)
			e.OK("exists", err)
			e.Equal("gone", ok, false)
			e.Deleted("a conditional delete of a missing row", false)(s.Delete(ctx, c.ID, c.ETag))
			for _, bad := range []string{"*", "abc", `"a` + "\n" + `b"`} {
				_, err := s.Delete(ctx, c.ID, bad)
				e.Is("refused before sending: "+bad, err, abstractions.ErrInvalidArgument)
			}
		},
	},
	{
		Name: "store/implicit-last-writer-wins",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, &tables.Options{ImplicitLastWriterWins: true, Logger: discardLogger()})
			c := alice()
			e.OK("create", s.Create(ctx, c))
			c.ETag = ""
			c.Balance = 1
			e.OK("auto without an etag writes", s.Update(ctx, c, abstractions.Auto))
		},
	},
	{
		Name: "store/ids",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			e.OK("lone id", s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "Single"}, Name: "lone"}))
			got, err := s.One(ctx, "single|single")
			e.OK("one by the composite form", err)
			e.Observe("lone", customer(got))
			e.OK("row key with |", s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "vision|exec|agent"}}))
			got, err = s.One(ctx, "vision|exec|agent")
			e.OK("one", err)
			e.Observe("pipe", customer(got))
			raw := storeOf[customerRow](e, &tables.Options{IDs: tables.IDsAsWritten})
			e.OK("as written", raw.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: "Case|Kept Here"}}))
			got, err = raw.One(ctx, "case|kept-here")
			e.Is("normalised id misses", err, abstractions.ErrNotFound)
			e.Equal("normalised id misses", got == nil, true)
			got, err = raw.One(ctx, "Case|Kept Here")
			e.OK("as-written id hits", err)
			e.Observe("as written", customer(got))
		},
	},
	{
		Name: "store/bad-input-sends-nothing",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			for _, id := range []string{"a/b|c", "a|b#c", "|empty", "empty|", "p|" + strings.Repeat("r", 513), "p|tab\there", "p|del\x7f"} {
				e.Is("create "+id, s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: id}}), abstractions.ErrInvalidKey)
				if !strings.HasPrefix(id, "|") && !strings.HasSuffix(id, "|") { // a read takes an empty key (store/empty-keys)
					e.Is("one "+id, func() error { _, err := s.One(ctx, id); return err }(), abstractions.ErrInvalidKey)
				}
				_, err := s.Delete(ctx, id, "")
				e.Is("delete "+id, err, abstractions.ErrInvalidKey)
			}
			e.Is("one of an empty id", func() error { _, err := s.One(ctx, ""); return err }(), abstractions.ErrInvalidKey)
			e.Is("nil entity", s.Create(ctx, nil), abstractions.ErrInvalidArgument)
			e.Is("nil in a batch", s.CreateBatch(ctx, []*customerRow{alice(), nil}), abstractions.ErrInvalidArgument)
			_, err := tables.For[struct {
				abstractions.Entity
				Foo_Bar string
			}](e.NewAccount(e.Tables, e.Blobs, nil), &tables.StoreOptions{Table: e.Table})
			e.Is("a field named with _", err, abstractions.ErrNotSupported)
			// A type without Entity does not compile (abstractions.EntityPtr); a zero account
			// is refused.
			_, err = tables.For[customerRow](&tables.Account{}, nil)
			e.Is("a zero account", err, abstractions.ErrInvalidArgument)
			n, err := s.CountAll(ctx)
			e.OK("count", err)
			e.Equal("nothing stored", n, 0)
		},
	},
	{
		Name: "store/list-and-count",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			for _, id := range []string{"eu|zed", "eu|amy", "us|bob", "eu|Émile", "asia|chen"} {
				e.OK("create "+id, s.Create(ctx, &customerRow{Entity: abstractions.Entity{ID: id}, Name: id}))
			}
			eu, err := s.List(ctx, "EU")
			e.OK("list eu", err)
			e.Observe("eu", customers(eu))
			all, err := s.ListAll(ctx)
			e.OK("list all", err)
			e.Observe("all", customers(all))
			n, err := s.Count(ctx, "eu")
			e.OK("count eu", err)
			e.Equal("count eu", n, 3)
			n, err = s.CountAll(ctx)
			e.OK("count all", err)
			e.Equal("count all", n, 5)
			none, err := s.List(ctx, "nowhere")
			e.OK("list empty", err)
			e.Equal("list empty", len(none), 0)
		},
	},
	{
		Name: "store/create-batch",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			var batch []*customerRow
			for i := 0; i < 250; i++ {
				batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|%03d", i%3, i)}, Name: fmt.Sprint(i)})
			}
			e.OK("250 across 3 partitions", s.CreateBatch(ctx, batch))
			e.Equal("ids normalised, no etag", batch[7].ID == "p1|007" && batch[7].ETag == "" && !batch[7].CreatedAt.IsZero(), true)
			n, err := s.CountAll(ctx)
			e.OK("count", err)
			e.Equal("count", n, 250)
			repeated := []*customerRow{{Entity: abstractions.Entity{ID: "q|1"}}, {Entity: abstractions.Entity{ID: "q|2"}}, {Entity: abstractions.Entity{ID: "Q|1"}}}
			e.Is("a repeated key is refused before sending", s.CreateBatch(ctx, repeated), abstractions.ErrDuplicateKey)
			n, err = s.Count(ctx, "q")
			e.OK("count q", err)
			e.Equal("nothing sent", n, 0)
			// Partition "a" commits; partition "p0" holds an existing key and fails whole;
			// partition "z" commits too: a failure stops only its own partition.
			mixed := []*customerRow{
				{Entity: abstractions.Entity{ID: "a|1"}}, {Entity: abstractions.Entity{ID: "p0|new"}},
				{Entity: abstractions.Entity{ID: "p0|000"}}, {Entity: abstractions.Entity{ID: "z|1"}},
			}
			err = s.CreateBatch(ctx, mixed)
			e.Is("an existing key fails its transaction", err, abstractions.ErrDuplicateKey)
			e.Equal("the error names the key", err != nil && strings.Contains(err.Error(), `"000"`), true)
			for _, p := range []string{"a", "p0", "z"} {
				n, err := s.Count(ctx, p)
				e.OK("count "+p, err)
				e.Observe("count "+p, n)
			}
		},
	},
	{
		Name: "store/upsert-batch",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			var batch []*customerRow
			for i := 0; i < 120; i++ {
				batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: fmt.Sprintf("p|%03d", i)}, Name: "v1"})
			}
			n, err := s.UpsertBatch(ctx, batch)
			e.OK("upsert 120", err)
			e.Equal("written", n, 120)
			for _, c := range batch {
				c.Name = "v2"
			}
			n, err = s.UpsertBatch(ctx, batch[:10])
			e.OK("upsert again", err)
			e.Equal("written", n, 10)
			twice := []*customerRow{{Entity: abstractions.Entity{ID: "r|1"}}, {Entity: abstractions.Entity{ID: "r|1"}}}
			n, err = s.UpsertBatch(ctx, twice)
			e.Status("a key twice in one transaction", err, 400, "InvalidDuplicateRow")
			e.Equal("written", n, 0)
			all, err := s.List(ctx, "p")
			e.OK("list", err)
			e.Equal("v2 rows", strings.Count(strings.Join(customers(all), "\n"), `name="v2"`), 10)
		},
	},
	{
		Name: "store/delete-partition",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			var batch []*customerRow
			for i := 0; i < 230; i++ {
				batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: fmt.Sprintf("gone|%03d", i)}})
			}
			batch = append(batch, &customerRow{Entity: abstractions.Entity{ID: "kept|1"}})
			e.OK("seed", s.CreateBatch(ctx, batch))
			n, err := s.DeletePartition(ctx, "gone")
			e.OK("delete partition", err)
			e.Equal("deleted", n, 230)
			n, err = s.DeletePartition(ctx, "gone")
			e.OK("again", err)
			e.Equal("deleted again", n, 0)
			e.Deleted("delete one", true)(s.Delete(ctx, "kept|1", ""))
		},
	},
	{
		Name: "store/strict-counter-16x50",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[counterRow](e, nil)
			e.OK("create", s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "c|1"}}))
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 50; i++ {
						for {
							c, err := s.One(ctx, "c|1")
							if err != nil {
								errs <- err
								return
							}
							c.N++
							err = s.Update(ctx, c, abstractions.Strict)
							if errors.Is(err, abstractions.ErrConcurrencyConflict) {
								continue
							}
							if err != nil {
								errs <- err
								return
							}
							break
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				e.Errorf("worker: %v", err)
			}
			c, err := s.One(ctx, "c|1")
			e.OK("read", err)
			e.Equal("counter", c.N, 800)
		},
	},
}
