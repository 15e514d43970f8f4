package fidelity

import (
	"context"
	"errors"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// storeIn returns the store of T over the scenario's services in the named table, on an
// account of its own: an account remembers which tables it has created, and these scenarios
// are about that memory starting empty.
func storeIn[T any, P abstractions.EntityPtr[T]](e *Env, table string) *tables.Store[T] {
	e.t.Helper()
	acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock})
	s, err := tables.For[T, P](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	return s
}

// tableExists records whether the table exists under step.
func (e *Env) tableExists(ctx context.Context, step, table string) bool {
	e.t.Helper()
	ok, err := e.Tables.TableExists(ctx, table)
	e.OK(step, err)
	e.Observe(step, ok)
	return ok
}

// storeTableScenarios cover a store's table life cycle (EnsureCreated, lazy creation) and what
// every method does with a context that has already ended.
var storeTableScenarios = []Scenario{
	{
		Name:    "store/ensure-created",
		NoTable: true,
		Run: func(ctx context.Context, e *Env) {
			table := e.Name("ens")
			s := storeIn[customerRow](e, table)
			e.Equal("the store names its table", s.Table() == table, true)
			if e.tableExists(ctx, "no table before", table) {
				e.Fatalf("table %s exists before the first use", table)
			}
			e.OK("ensure created", s.EnsureCreated(ctx))
			e.Equal("the table exists", e.tableExists(ctx, "table after", table), true)
			e.OK("ensure created again", s.EnsureCreated(ctx))
			// A second account knows nothing of the table: its create meets 409
			// TableAlreadyExists, which is success.
			other := storeIn[customerRow](e, table)
			e.OK("ensure created from another account", other.EnsureCreated(ctx))
			c := alice()
			e.OK("create", other.Create(ctx, c))
			n, err := s.CountAll(ctx)
			e.OK("count", err)
			e.Equal("count", n, 1)
			rows, err := storedRows(ctx, e.Tables, table, service.Query{})
			e.OK("rows", err)
			e.Observe("rows", rows)

			// A store whose table does not exist yet creates it on its first write, never on
			// a read.
			lazy := e.Name("lazy")
			ls := storeIn[customerRow](e, lazy)
			got, err := ls.One(ctx, "eu|nobody")
			e.Is("first use is a read", err, abstractions.ErrNotFound)
			e.Equal("nothing there", got == nil, true)
			e.Equal("the read created no table", e.tableExists(ctx, "lazy table after the read", lazy), false)
			e.OK("first write", ls.Create(ctx, alice()))
			e.Equal("the lazy table exists", e.tableExists(ctx, "lazy table after the write", lazy), true)

			// A table name the service would refuse is refused when the store is made.
			_, err = tables.For[customerRow](e.NewAccount(e.Tables, e.Blobs, nil), &tables.StoreOptions{Table: "1" + e.Suffix})
			e.Is("a bad table name", err, abstractions.ErrInvalidArgument)
			_, err = tables.For[customerRow](e.NewAccount(e.Tables, e.Blobs, nil), &tables.StoreOptions{Table: "Tables"})
			e.Is("the reserved name", err, abstractions.ErrInvalidArgument)
		},
	},
	{
		Name: "store/cancelled-context",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			seed := alice()
			// The seed also teaches the account that the table exists, so each call below
			// reaches its own request rather than stopping at the table's create.
			e.OK("seed", s.Create(ctx, seed))

			done, cancel := context.WithCancel(ctx)
			cancel()
			cancelled := func(step string, err error) {
				e.t.Helper()
				e.Is(step, err, context.Canceled)
			}

			c := alice()
			c.ID = "eu|bob"
			cancelled("create", s.Create(done, c))
			e.Equal("the entity is untouched", c.ID == "eu|bob" && c.ETag == "" && c.CreatedAt.IsZero(), true)
			up := *seed
			up.Name = "changed"
			cancelled("upsert", s.Upsert(done, &up))
			cancelled("update strict", s.Update(done, &up, abstractions.Strict))
			cancelled("update last-writer-wins", s.Update(done, &up, abstractions.LastWriterWins))
			e.Equal("the entity keeps its version", up.ETag == seed.ETag && up.UpdatedAt.Equal(seed.UpdatedAt), true)
			_, err := s.Delete(done, seed.ID, "")
			cancelled("delete", err)
			_, err = s.One(done, seed.ID)
			cancelled("one", err)
			_, err = s.Exists(done, seed.ID)
			cancelled("exists", err)
			_, err = s.List(done, "eu")
			cancelled("list", err)
			_, err = s.ListAll(done)
			cancelled("list all", err)
			_, err = s.Count(done, "eu")
			cancelled("count", err)
			_, err = s.CountAll(done)
			cancelled("count all", err)
			batch := []*customerRow{{Entity: abstractions.Entity{ID: "eu|carol"}}, {Entity: abstractions.Entity{ID: "us|dan"}}}
			cancelled("create batch", s.CreateBatch(done, batch))
			e.Equal("the batch is untouched", batch[0].ID == "eu|carol" && batch[0].CreatedAt.IsZero(), true)
			n, err := s.UpsertBatch(done, batch)
			cancelled("upsert batch", err)
			e.Equal("upserted", n, 0)
			n, err = s.DeletePartition(done, "eu")
			cancelled("delete partition", err)
			e.Equal("deleted", n, 0)

			// A store that has not created its table yet stops before the create.
			fresh := e.Name("cancel")
			fs := storeIn[customerRow](e, fresh)
			cancelled("ensure created", fs.EnsureCreated(done))
			cancelled("create in a new table", fs.Create(done, alice()))
			e.Equal("no table made", e.tableExists(ctx, "new table after", fresh), false)

			// A deadline that has passed is reported as such.
			late, stop := context.WithDeadline(ctx, time.Now().Add(-time.Second))
			defer stop()
			_, err = s.One(late, seed.ID)
			e.Is("one past the deadline", err, context.DeadlineExceeded)
			e.Equal("not a cancellation", errors.Is(err, context.Canceled), false)

			// Nothing above wrote: the seed is the only row, as it was.
			got, err := s.One(ctx, seed.ID)
			e.OK("read the seed", err)
			e.Equal("the seed is unchanged", got != nil && got.Name == seed.Name && got.ETag == seed.ETag, true)
			n, err = s.CountAll(ctx)
			e.OK("count", err)
			e.Equal("one row", n, 1)
		},
	},
}
