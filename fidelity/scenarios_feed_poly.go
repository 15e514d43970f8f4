package fidelity

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/feed"
	"github.com/unified-data/gotables/tables/service"
)

// The feed scenarios of polymorphic stores: every write path of a polymorphic store with a
// feed leaves its record, and a shared-table transaction carries the records of several
// stores, typed and polymorphic, which one relay delivers.

// fdNote is a second typed row of the shared-table scenario, of another type than its
// orders.
type fdNote struct {
	abstractions.Entity
	Text string
}

// fdDeliver runs passes of r until the table has no mark left, and returns what it
// delivered per partition, each record as entity, kind, version, the body's discriminator
// and an event's type.
func fdDeliver(ctx context.Context, e *Env, r *feed.Relay) map[string][]string {
	e.t.Helper()
	got := map[string][]string{}
	for i := 0; i < 50 && len(fdMarks(ctx, e)) > 0; i++ {
		_, err := r.Pass(ctx, func(_ context.Context, rec feed.Record) error {
			got[rec.Partition] = append(got[rec.Partition], fmt.Sprintf("%s %s v%d %v %s", rec.Entity, rec.Kind, rec.Version, rec.Body["_TypeName"], rec.Type))
			return nil
		})
		if err != nil {
			e.Errorf("pass: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return got
}

// observeDelivered records what fdDeliver returned, partition by partition.
func observeDelivered(e *Env, got map[string][]string) {
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.Observe("delivered "+k, got[k])
	}
}

// fdEnd records what a scenario's relays left (the marks, then the backlog Status reports,
// then the rows, without the main rows' random record keys) and clears the table:
// fdEnd(ctx, e)(feed.Status(ctx, s)).
func fdEnd(ctx context.Context, e *Env) func(feed.Backlog, error) {
	e.t.Helper()
	e.Observe("marks after passes", fdMarks(ctx, e))
	return func(b feed.Backlog, err error) {
		e.t.Helper()
		e.OK("status", err)
		e.Observe("status", fmt.Sprintf("%+v", b))
		rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
		e.OK("rows", err)
		for i := range rows {
			var props []service.Property
			for _, p := range rows[i].Properties {
				if p.Name != "_FdSeq" {
					props = append(props, p)
				}
			}
			rows[i].Properties = props
		}
		e.Observe("rows left behind", rows)
		e.clearTable(ctx)
	}
}

func feedPolyScenarios() []Scenario {
	return []Scenario{
		{
			Name: "feed/polymorphic-every-write-path",
			Run: func(ctx context.Context, e *Env) {
				ev := polyOf[polyEvent](e, polyTypes(e))
				e.OK("enable", feed.Enable(ev, &feed.Options{Body: true, Hold: time.Millisecond}))
				e.Is("enable twice", feed.Enable(ev, nil), abstractions.ErrInvalidArgument)
				placed := func(v int64, customer string) polyEvent {
					return &polyPlaced{polyEventBase: polyEventBase{Order: "o1", Version: v}, Customer: customer}
				}
				w := func(pk, rk string, item polyEvent) abstractions.PolyWrite[polyEvent] {
					return abstractions.PolyWrite[polyEvent]{Key: polyKey(pk, rk), Item: item}
				}

				tag1, err := ev.Insert(ctx, w("o1", "e1", placed(1, "Ann")))
				e.OK("insert", err)
				_, err = ev.Insert(ctx, w("o1", "e1", placed(1, "dup")))
				e.Is("insert over an existing row", err, abstractions.ErrDuplicateKey)
				_, err = ev.Upsert(ctx, w("o1", "e2", &polyPaid{polyEventBase: polyEventBase{Order: "o1", Version: 2}, AmountCents: 100}))
				e.OK("upsert new", err)
				_, err = ev.Upsert(ctx, w("o1", "e2", &polyPaid{polyEventBase: polyEventBase{Order: "o1", Version: 2}, AmountCents: 150}))
				e.OK("upsert over", err)
				replace := w("o1", "e1", placed(1, "Bea"))
				replace.IfMatch = tag1
				tag1b, err := ev.Insert(ctx, replace)
				e.OK("insert with IfMatch (a replace)", err)
				_, err = ev.Insert(ctx, replace)
				e.Is("insert with a stale IfMatch", err, abstractions.ErrConcurrencyConflict)
				replace = w("o1", "e1", placed(1, "Cy"))
				replace.IfMatch = tag1b
				tag1c, err := ev.Upsert(ctx, replace)
				e.OK("upsert with IfMatch", err)
				_, err = ev.MergeColumns(ctx, polyKey("o1", "e1"), map[string]any{"_Sent": true}, tag1c)
				e.OK("merge columns at a version", err)
				_, err = ev.MergeColumns(ctx, polyKey("o1", "e2"), map[string]any{"_Sent": false}, "")
				e.OK("merge columns", err)
				_, err = ev.MergeColumns(ctx, polyKey("o1", "e1"), map[string]any{"_Sent": false}, tag1c)
				e.Is("merge columns at a stale version", err, abstractions.ErrConcurrencyConflict)
				_, err = ev.MergeColumns(ctx, polyKey("o1", "none"), map[string]any{"_Sent": true}, "")
				e.Is("merge columns of a missing row", err, abstractions.ErrNotFound)
				_, err = ev.MergeColumns(ctx, polyKey("o1", "e1"), map[string]any{"_FdVer": int64(9)}, "")
				e.Is("merge a feed cell", err, abstractions.ErrInvalidArgument)
				_, err = ev.Insert(ctx, w("o1", "~fd.r.x", placed(9, "x")))
				e.Is("a feed key", err, abstractions.ErrInvalidKey)
				_, err = ev.Insert(ctx, abstractions.Marker[polyEvent](polyKey("o1", "head"), map[string]any{"_Seq": int64(2)}))
				e.OK("marker", err)

				e.OK("insert batch", ev.InsertBatch(ctx, []abstractions.PolyWrite[polyEvent]{
					w("o1", "e3", &polyShipped{polyEventBase: polyEventBase{Order: "o1", Version: 3}, Carrier: "Nova"}),
					w("o2", "e1", placed(1, "Dan")),
				}))
				head, err := ev.One(ctx, polyKey("o1", "head"))
				e.OK("read the head", err)
				moved := abstractions.Marker[polyEvent](polyKey("o1", "head"), map[string]any{"_Seq": int64(3)})
				moved.IfMatch = head.ETag
				e.OK("upsert batch with a conditional write", ev.UpsertBatch(ctx, []abstractions.PolyWrite[polyEvent]{
					moved, w("o1", "e4", &polyShipped{polyEventBase: polyEventBase{Order: "o1", Version: 4}, Carrier: "Ace"}),
				}))
				e.Is("upsert batch at a stale version", ev.UpsertBatch(ctx, []abstractions.PolyWrite[polyEvent]{
					moved, w("o1", "e5", placed(5, "never")),
				}), abstractions.ErrConcurrencyConflict)
				many := make([]abstractions.PolyWrite[polyEvent], 0, 60)
				for i := range 60 {
					many = append(many, w("o3", fmt.Sprintf("m%02d", i), placed(int64(i), "m")))
				}
				many[0].IfMatch = head.ETag
				e.Is("a conditional batch whose records need a second transaction", ev.UpsertBatch(ctx, many), abstractions.ErrInvalidArgument)
				e.Deleted("delete", true)(ev.Delete(ctx, polyKey("o1", "e4"), ""))
				e.Deleted("delete of a missing row", false)(ev.Delete(ctx, polyKey("o1", "e4"), ""))
				e2, err := ev.One(ctx, polyKey("o1", "e2"))
				e.OK("read e2", err)
				_, err = ev.Delete(ctx, polyKey("o1", "e2"), tag1)
				e.Is("delete at a stale version", err, abstractions.ErrConcurrencyConflict)

				// A transaction: an insert, a conditional upsert and an event, one commit.
				tx := ev.Transaction("o1")
				ev.InsertIn(tx, w("", "e6", placed(6, "Eve")))
				cond := w("o1", "e2", &polyPaid{polyEventBase: polyEventBase{Order: "o1", Version: 2}, AmountCents: 175})
				cond.IfMatch = e2.ETag
				ev.UpsertIn(tx, cond)
				feed.Publish(tx, ev, "OrderChanged", []byte("o1"))
				e.OK("transaction", tx.Commit(ctx))
				// A transaction that fails writes no record.
				tx = ev.Transaction("o1")
				ev.InsertIn(tx, w("o1", "e6", placed(6, "dup")))
				feed.Publish(tx, ev, "Never", nil)
				e.Is("failed transaction", tx.Commit(ctx), abstractions.ErrDuplicateKey)

				// Reads return no record and no feed cell.
				list, err := ev.List(ctx, "o1")
				e.OK("list", err)
				e.Observe("listed", polyEntries(list))
				page, err := ev.Page(ctx, abstractions.Query[abstractions.PolyEntry[polyEvent]]{Partition: "o1"})
				e.OK("page", err)
				e.Equal("paged", len(page.Items), len(list))
				e.Observe("records o1", fdRecordsOf(ctx, e, "o1", "_TypeName", "Customer", "_Sent", "_Seq"))
				e.Observe("records o2", fdRecordsOf(ctx, e, "o2", "_TypeName", "Customer"))
				e.Observe("records o3", fdRecordsOf(ctx, e, "o3"))
				e.Observe("main rows o1", fdMainCells(ctx, e, "o1"))
				e.Observe("marks", fdMarks(ctx, e))

				r, err := feed.NewRelay(ev, &feed.RelayOptions{Name: "r1", Parallel: 1})
				e.OK("relay", err)
				observeDelivered(e, fdDeliver(ctx, e, r))
				fdEnd(ctx, e)(feed.Status(ctx, ev))
			},
		},
		{
			// One transaction of a shared table holds writes of three stores with feeds:
			// orders and notes (typed, of two types) and events (polymorphic). Each write
			// carries its record, the partition is marked, and a relay of any of the stores
			// delivers them all.
			Name: "feed/shared-transaction-of-several-stores",
			Run: func(ctx context.Context, e *Env) {
				orders, events := sharedStores(e)
				notes, err := tables.For[fdNote](orders.Account(), &tables.StoreOptions{Table: e.Table, SharedTable: true})
				e.OK("notes", err)
				e.OK("enable orders", feed.Enable(orders, &feed.Options{Body: true, Hold: time.Millisecond}))
				e.OK("enable notes", feed.Enable(notes, &feed.Options{Body: true, Hold: time.Millisecond}))
				e.OK("enable events", feed.Enable(events, &feed.Options{Body: true, Hold: time.Millisecond}))

				order := &sharedOrder{Entity: abstractions.Entity{ID: "c1|order-1"}, Status: "placed", Cents: 1650}
				tx := orders.Transaction("c1")
				orders.CreateIn(tx, order)
				notes.CreateIn(tx, &fdNote{Entity: abstractions.Entity{ID: "c1|note-1"}, Text: "gift"})
				events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("c1", "evt-1"),
					Item: &polyPlaced{polyEventBase: polyEventBase{Order: "order-1", Version: 1}, Customer: "Alice"}})
				feed.Publish(tx, events, "OrderPlaced", []byte("order-1"))
				e.OK("commit", tx.Commit(ctx))

				order.Status = "paid"
				tx = events.Transaction("c1")
				orders.UpdateIn(tx, order, abstractions.Strict)
				notes.DeleteIn(tx, "c1|note-1", "")
				events.UpsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("c1", "evt-2"),
					Item: &polyPaid{polyEventBase: polyEventBase{Order: "order-1", Version: 2}, AmountCents: 1650}})
				feed.Publish(tx, orders, "OrderPaid", nil)
				e.OK("commit the change", tx.Commit(ctx))

				// A stale order fails the whole transaction: no record of any store.
				stale := *order
				stale.Status = "lost"
				stale.ETag = `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`
				tx = orders.Transaction("c1")
				orders.UpdateIn(tx, &stale, abstractions.Strict)
				events.InsertIn(tx, abstractions.PolyWrite[polyEvent]{Key: polyKey("c1", "evt-3"),
					Item: &polyShipped{polyEventBase: polyEventBase{Order: "order-1", Version: 3}, Carrier: "none"}})
				e.Is("stale transaction", tx.Commit(ctx), abstractions.ErrConcurrencyConflict)

				e.Observe("records c1", fdRecordsOf(ctx, e, "c1", "_TypeName", "Status", "Text"))
				e.Observe("main rows c1", fdMainCells(ctx, e, "c1"))
				e.Observe("marks", fdMarks(ctx, e))
				list, err := orders.List(ctx, "c1")
				e.OK("typed list", err)
				e.Observe("typed list", sharedOrders(list))
				entries, err := events.List(ctx, "c1")
				e.OK("poly list", err)
				e.Observe("poly list", polyEntries(entries))

				// The stores share one feed: a relay of the polymorphic store delivers the
				// typed stores' records too.
				r, err := feed.NewRelay(events, &feed.RelayOptions{Name: "r1", Parallel: 1})
				e.OK("relay", err)
				observeDelivered(e, fdDeliver(ctx, e, r))
				fdEnd(ctx, e)(feed.Status(ctx, orders))
			},
		},
	}
}
