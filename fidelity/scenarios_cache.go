package fidelity

import (
	"context"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

var cacheScenarios = []Scenario{
	{
		// The read cache follows the writes made through its account, whichever store
		// made them, and does not see writes made through another account (another
		// process): the same on both backends.
		Name: "store/cache-coherence",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, &tables.Options{Cache: tables.Sliding(time.Hour)})
			c := alice()
			e.OK("create", s.Create(ctx, c))
			got, err := s.One(ctx, c.ID)
			e.OK("read after create", err)
			e.Equal("read after create", got.ETag == c.ETag, true)
			got.Balance = 1
			e.OK("update", s.Update(ctx, got, abstractions.Strict))
			again, err := s.One(ctx, c.ID)
			e.OK("read after update", err)
			e.Equal("read after update", again.Balance, 1.0)

			// Another account (as another process would) writes the row: this account's
			// cache keeps answering what it holds until the entry expires.
			other := storeOf[customerRow](e, nil)
			theirs, err := other.One(ctx, c.ID)
			e.OK("other reads", err)
			theirs.Balance = 2
			e.OK("other updates", other.Update(ctx, theirs, abstractions.Strict))
			stale, err := s.One(ctx, c.ID)
			e.OK("cached read after another account's write", err)
			e.Equal("still the cached version", stale.Balance, 1.0)

			// A write through this account that fails (the cached ETag is stale now) drops
			// the entry, so the next read asks the table.
			stale.Balance = 3
			err = s.Update(ctx, stale, abstractions.Strict)
			e.Is("update with the cached, stale etag", err, abstractions.ErrConcurrencyConflict)
			fresh, err := s.One(ctx, c.ID)
			e.OK("read after the conflict", err)
			e.Equal("the table's version", fresh.Balance, 2.0)

			list, err := s.List(ctx, "eu")
			e.OK("list", err)
			e.Equal("list", len(list), 1)
			e.Deleted("delete", true)(s.Delete(ctx, c.ID, ""))
			list, err = s.List(ctx, "eu")
			e.OK("list after delete", err)
			e.Equal("list after delete", len(list), 0)
			gone, err := s.One(ctx, c.ID)
			e.Is("read after delete", err, abstractions.ErrNotFound)
			e.Equal("read after delete", gone == nil, true)
		},
	},
}
