package fidelity

import (
	"context"
	"fmt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

// The shared-table scenarios keep typed rows (orders, a Storage[T]) and polymorphic rows
// (their events and a head marker) in one table, each store reading only its own, and
// write them together in one transaction: the transactional outbox.

// sharedOrder is the typed row of the shared-table scenarios.
type sharedOrder struct {
	abstractions.Entity
	Status string
	Cents  int64
}

// sharedStores returns a typed store of orders and a polymorphic store of events sharing
// the scenario's table, through one account.
func sharedStores(e *Env) (*tables.Store[sharedOrder], *tables.PolyStore[polyEvent]) {
	e.t.Helper()
	acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock})
	orders, err := tables.For[sharedOrder](acct, &tables.StoreOptions{Table: e.Table, SharedTable: true})
	if err != nil {
		e.Fatalf("typed store: %v", err)
	}
	events, err := tables.PolyFor[polyEvent](acct, polyTypes(e), &tables.StoreOptions{Table: e.Table, SharedTable: true})
	if err != nil {
		e.Fatalf("poly store: %v", err)
	}
	return orders, events
}

func sharedOrders(os []*sharedOrder) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = fmt.Sprintf("%s status=%s cents=%d etag=%v", o.ID, o.Status, o.Cents, o.ETag != "")
	}
	return out
}

// sharedIxOrder is an indexed typed row of a shared table.
type sharedIxOrder struct {
	abstractions.Entity
	Status string `table:",index=status"`
	Cents  int64  `table:",index=cents:desc"`
}

func sharedScenarios() []Scenario {
	return []Scenario{
		{
			// An indexed type in a shared table: its index rows are written in the mixed
			// transactions too, and neither its reads nor its index see the polymorphic rows.
			Name: "shared/indexed-type",
			Run: func(ctx context.Context, e *Env) {
				acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock})
				orders, err := tables.For[sharedIxOrder](acct, &tables.StoreOptions{Table: e.Table, SharedTable: true})
				e.OK("typed store", err)
				events, err := tables.PolyFor[polyEvent](acct, polyTypes(e), &tables.StoreOptions{Table: e.Table, SharedTable: true})
				e.OK("poly store", err)
				tx := orders.Transaction("t1")
				orders.CreateIn(tx, &sharedIxOrder{Entity: abstractions.Entity{ID: "t1|o1"}, Status: "placed", Cents: 100})
				orders.CreateIn(tx, &sharedIxOrder{Entity: abstractions.Entity{ID: "t1|o2"}, Status: "paid", Cents: 300})
				events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("t1", "evt-1"),
					Item: &polyPlaced{polyEventBase: polyEventBase{Order: "o1", Version: 1}, Customer: "Ann"}})
				e.OK("commit", tx.Commit(ctx))
				e.OK("create", orders.Create(ctx, &sharedIxOrder{Entity: abstractions.Entity{ID: "t1|o3"}, Status: "placed", Cents: 200}))
				o2, err := orders.One(ctx, "t1|o2")
				e.OK("read o2", err)
				o2.Status = "placed"
				tx = orders.Transaction("t1")
				orders.UpdateIn(tx, o2, abstractions.Strict)
				events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("t1", "evt-2"),
					Item: &polyPlaced{polyEventBase: polyEventBase{Order: "o2", Version: 2}, Customer: "Bob"}})
				e.OK("commit an update", tx.Commit(ctx))

				status, err := index.On(orders, "status")
				e.OK("index status", err)
				found, err := status.Find(ctx, "t1", "placed")
				e.OK("find", err)
				var ids []string
				for _, o := range found {
					ids = append(ids, o.ID)
				}
				e.Equal("find placed", ids, []string{"t1|o1", "t1|o2", "t1|o3"})
				cents, err := index.On(orders, "cents")
				e.OK("index cents", err)
				p, err := cents.Page(ctx, index.Range{}, abstractions.Query[sharedIxOrder]{Partition: "t1", Take: 10})
				e.OK("page", err)
				e.Equal("page by cents, largest first", sharedIxOrders(p.Items), []string{"t1|o2:300", "t1|o3:200", "t1|o1:100"})
				rep, err := index.Verify(ctx, orders, "", nil)
				e.OK("verify", err)
				e.Equal("verify: consistent over the typed rows only", [2]any{rep.Consistent(), rep.Entities}, [2]any{true, 3})
				n, err := orders.Count(ctx, "t1")
				e.OK("count", err)
				e.Equal("count", n, 3)
				deleted, err := orders.DeletePartition(ctx, "t1")
				e.OK("delete partition", err)
				e.Equal("delete partition counts the orders", deleted, 3)
				left, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
				e.OK("rows left", err)
				var keys []string
				for _, r := range left {
					keys = append(keys, r.RowKey)
				}
				e.Equal("the events are left, no index row", keys, []string{"evt-1", "evt-2"})
			},
		},
		{
			Name: "shared/mixed-transaction-commits",
			Run: func(ctx context.Context, e *Env) {
				orders, events := sharedStores(e)
				order := &sharedOrder{Entity: abstractions.Entity{ID: "tenant-1|order-1"}, Status: "placed", Cents: 1650}
				tx := orders.Transaction("tenant-1")
				orders.CreateIn(tx, order)
				events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("tenant-1", "evt-000001"),
					Item: &polyPlaced{polyEventBase: polyEventBase{Order: "order-1", Version: 1}, Customer: "Alice"}, Columns: map[string]any{"_Sent": false}})
				events.InsertIn(tx, abstractions.Marker[polyEvent](polyKey("tenant-1", "head"), map[string]any{"_Seq": int64(1)}))
				e.Equal("nothing changed before the commit", order.ETag, "")
				e.OK("commit", tx.Commit(ctx))
				read, err := orders.One(ctx, "tenant-1|order-1")
				e.OK("read the order", err)
				e.Equal("the entity carries the version stored", order.ETag != "" && order.ETag == read.ETag, true)
				e.Observe("order", sharedOrders([]*sharedOrder{read}))

				// The order moves on and its next event goes with it, conditional on the
				// order's version and the head's.
				head, err := events.One(ctx, polyKey("tenant-1", "head"))
				e.OK("read the head", err)
				read.Status = "paid"
				tx = orders.Transaction("tenant-1")
				orders.UpdateIn(tx, read, abstractions.Strict)
				events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("tenant-1", "evt-000002"),
					Item: &polyPaid{polyEventBase: polyEventBase{Order: "order-1", Version: 2}, AmountCents: 1650}, Columns: map[string]any{"_Sent": false}})
				moved := abstractions.Marker[polyEvent](polyKey("tenant-1", "head"), map[string]any{"_Seq": int64(2)})
				moved.IfMatch = head.ETag
				events.InsertIn(tx, moved)
				e.OK("commit the change", tx.Commit(ctx))
				again, err := orders.One(ctx, "tenant-1|order-1")
				e.OK("read the order again", err)
				e.Equal("the update's version", read.ETag == again.ETag && again.Status == "paid", true)
				list, err := orders.List(ctx, "tenant-1")
				e.OK("typed list", err)
				e.Observe("typed list", sharedOrders(list))
				entries, err := events.List(ctx, "tenant-1")
				e.OK("poly list", err)
				e.Observe("poly list", polyEntries(entries))
			},
		},
		{
			Name: "shared/transaction-stale-etag-writes-nothing",
			Run: func(ctx context.Context, e *Env) {
				orders, events := sharedStores(e)
				order := &sharedOrder{Entity: abstractions.Entity{ID: "tenant-1|order-1"}, Status: "placed"}
				e.OK("create", orders.Create(ctx, order))
				stale := *order
				order.Status = "paid"
				e.OK("another writer updates", orders.Update(ctx, order, abstractions.Strict))
				stale.Status = "cancelled"
				tx := orders.Transaction("tenant-1")
				orders.UpdateIn(tx, &stale, abstractions.Strict)
				events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("tenant-1", "evt-000001"),
					Item: &polyShipped{polyEventBase: polyEventBase{Order: "order-1", Version: 2}, Carrier: "none"}})
				err := tx.Commit(ctx)
				e.polyErrNames("commit on a stale ETag", err, abstractions.ErrConcurrencyConflict, "order-1")
				list, err := orders.List(ctx, "tenant-1")
				e.OK("typed list", err)
				e.Observe("typed list", sharedOrders(list))
				entries, err := events.List(ctx, "tenant-1")
				e.OK("poly list", err)
				e.Equal("no event was written", len(entries), 0)
				e.dumpTable(ctx, e.Table)
			},
		},
		{
			Name: "shared/reads-and-counts",
			Run: func(ctx context.Context, e *Env) {
				orders, events := sharedStores(e)
				for i := 1; i <= 3; i++ {
					e.OK("create an order", orders.Create(ctx, &sharedOrder{Entity: abstractions.Entity{ID: fmt.Sprintf("tenant-1|order-%d", i)}, Status: "placed", Cents: int64(i)}))
				}
				ws := polyWrites("tenant-1", polyEvents("order-1")[:2])
				ws = append(ws, abstractions.Marker[polyEvent](polyKey("tenant-1", "order-2"+"~head"), map[string]any{"_Seq": int64(2)}))
				e.OK("write events and a marker", events.InsertBatch(ctx, ws))

				n, err := orders.Count(ctx, "tenant-1")
				e.OK("typed count", err)
				e.Equal("typed count", n, 3)
				all, err := orders.CountAll(ctx)
				e.OK("typed count all", err)
				e.Equal("typed count all", all, 3)
				list, err := orders.ListAll(ctx)
				e.OK("typed list all", err)
				e.Observe("typed list all", sharedOrders(list))
				some, err := orders.Query(ctx, abstractions.Query[sharedOrder]{Partition: "tenant-1", Take: 2})
				e.OK("typed query", err)
				e.Observe("typed query of 2", sharedOrders(some))
				page, err := orders.Page(ctx, abstractions.Query[sharedOrder]{Partition: "tenant-1", Take: 4})
				e.OK("typed page", err)
				e.Observe("typed page of 4 (the polymorphic rows take places)", sharedOrders(page.Items))
				_, err = orders.One(ctx, "tenant-1|000000001")
				e.Is("typed read of an event's key", err, abstractions.ErrNotFound)
				ok, err := orders.Exists(ctx, "tenant-1|order-2~head")
				e.OK("typed exists of a marker's key", err)
				e.Equal("a marker is no order", ok, false)

				entries, err := events.List(ctx, "tenant-1")
				e.OK("poly list", err)
				e.Observe("poly list", polyEntries(entries))
				_, err = events.One(ctx, polyKey("tenant-1", "order-1"))
				e.Is("poly read of an order's key", err, abstractions.ErrNotFound)
				owner := polyOf[polyEvent](e, polyTypes(e))
				_, err = owner.List(ctx, "tenant-1")
				e.Is("a poly store without the opt-in refuses the typed rows", err, abstractions.ErrIntegrity)

				deleted, err := orders.DeletePartition(ctx, "tenant-1")
				e.OK("typed delete partition", err)
				e.Equal("the typed rows only are deleted", deleted, 3)
				entries, err = events.List(ctx, "tenant-1")
				e.OK("poly list after", err)
				e.Equal("the polymorphic rows stay", len(entries), 3)
				e.dumpTable(ctx, e.Table)
			},
		},
		{
			Name: "poly/page-2500-rows-in-37s",
			Run: func(ctx context.Context, e *Env) {
				s := polyOf[polyEvent](e, polyTypes(e))
				const rows, size = 2500, 37
				ws := make([]abstractions.PolyWrite[polyEvent], rows)
				for i := range ws {
					ws[i] = abstractions.PolyWrite[polyEvent]{Key: polyKey("log", polyVersionKey(int64(i))),
						Item: &polyShipped{polyEventBase: polyEventBase{Order: "o", Version: int64(i)}, Carrier: "c"}}
				}
				e.OK("write 2500 rows", s.InsertBatch(ctx, ws))
				type q = abstractions.Query[abstractions.PolyEntry[polyEvent]]
				seen := map[string]bool{}
				repeated, disordered, pages, last := 0, 0, 0, ""
				for cur := ""; ; {
					p, err := s.Page(ctx, q{Partition: "log", Take: size, Cursor: cur})
					if err != nil {
						e.OK("page", err)
						break
					}
					pages++
					if len(p.Items) > size {
						e.Errorf("page %d holds %d rows", pages, len(p.Items))
					}
					for _, en := range p.Items {
						rk := en.Key.RowKey
						if seen[rk] {
							repeated++
						}
						if rk <= last {
							disordered++
						}
						seen[rk], last = true, rk
						if en.Item.Base().Version != int64(len(seen)-1) {
							disordered++
						}
					}
					if !p.HasMore() {
						break
					}
					cur = p.Cursor
				}
				e.Equal("rows read", len(seen), rows)
				e.Equal("rows repeated", repeated, 0)
				e.Equal("rows out of order", disordered, 0)
				e.Equal("pages of 37 (the last one short)", pages >= (rows+size-1)/size, true)

				rk := abstractions.Field(func(en *abstractions.PolyEntry[polyEvent]) *string { return &en.Key.RowKey })
				r, err := s.Page(ctx, q{Partition: "log", Take: 5, Where: abstractions.And(rk.Ge(polyVersionKey(1234)), rk.Lt(polyVersionKey(1237)))})
				e.OK("range", err)
				e.Observe("range 1234..1236", polyEntries(r.Items))
				p, err := s.Page(ctx, q{Partition: "log", RowKeyPrefix: "00000249", Take: 3})
				e.OK("prefix", err)
				e.Observe("prefix 00000249, 3 of them", polyEntries(p.Items))
				e.Equal("the prefix has more", p.HasMore(), true)
				_, err = s.Page(ctx, q{Partition: "log", Take: size + 1, Cursor: p.Cursor})
				e.Is("a cursor of another query", err, abstractions.ErrInvalidArgument)
			},
		},
	}
}

func sharedIxOrders(os []*sharedIxOrder) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = fmt.Sprintf("%s:%d", o.ID, o.Cents)
	}
	return out
}
