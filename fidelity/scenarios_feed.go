package fidelity

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/feed"
	"github.com/unified-data/gotables/tables/service"
)

// The feed scenarios write a store with a change feed through every write path and compare
// the records each leaves in the entity's partition (read raw, rendered without their
// random keys), the registry's marks, the main rows' feed cells, and what a relay delivers.

// fdOrder is the type of the feed scenarios; its index shows records and index rows
// sharing a transaction.
type fdOrder struct {
	abstractions.Entity
	Status string `table:",index=status"`
	Cents  int64
}

// fdStore returns a store of fdOrder with a feed of hold (bodies carried).
func fdStore(e *Env, hold time.Duration) *tables.Store[fdOrder] {
	s := storeOf[fdOrder](e, nil)
	if err := feed.Enable(s, &feed.Options{Body: true, Hold: hold}); err != nil {
		e.Fatalf("feed.Enable: %v", err)
	}
	return s
}

// fdRecords renders the records of partition pk in key order, each as entity, kind,
// version and the Status and Cents cells it carries, and checks that each entity's versions
// rise.
func fdRecords(ctx context.Context, e *Env, pk string) []string {
	e.t.Helper()
	return fdRecordsOf(ctx, e, pk, "Status", "Cents")
}

// fdRecordsOf is fdRecords rendering the cells cols of each record's body.
func fdRecordsOf(ctx context.Context, e *Env, pk string, cols ...string) []string {
	e.t.Helper()
	rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey eq '" + pk + "' and RowKey ge '~fd.r.' and RowKey lt '~fd.r/'"})
	if err != nil {
		e.Fatalf("records: %v", err)
	}
	last := map[string]int64{}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		get := func(name string) string {
			v, ok := r.Get(name)
			if !ok {
				return "-"
			}
			return v.String()
		}
		ent, _ := r.Get("_FdEntity")
		ver, _ := r.Get("_FdVersion")
		if ent.Str() != "" && ver.Int64() <= last[ent.Str()] && ver.Int64() != 1 {
			e.Errorf("records of %s: version %d after %d", ent.Str(), ver.Int64(), last[ent.Str()])
		}
		last[ent.Str()] = ver.Int64()
		line := fmt.Sprintf("%s %s v%s", get("_FdEntity"), get("_FdKind"), get("_FdVersion"))
		for _, c := range cols {
			line += " " + strings.ToLower(c) + "=" + get(c)
		}
		out = append(out, line+" type="+get("_FdType"))
	}
	return out
}

// fdMainCells renders the feed cells of the main rows of pk.
func fdMainCells(ctx context.Context, e *Env, pk string) []string {
	rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey eq '" + pk + "' and RowKey lt '~'", Select: []string{"_FdVer", "_FdSeq"}})
	if err != nil {
		e.Fatalf("main rows: %v", err)
	}
	var out []string
	for _, r := range rows {
		ver, _ := r.Get("_FdVer")
		seq, ok := r.Get("_FdSeq")
		out = append(out, fmt.Sprintf("%s ver=%d seq=%v", r.RowKey, ver.Int64(), ok && strings.HasPrefix(seq.Str(), "~fd.r.")))
	}
	return out
}

// fdMarks renders the registry: the partitions marked.
func fdMarks(ctx context.Context, e *Env) []string {
	rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey eq '~fd.marks'", Select: []string{}})
	if err != nil {
		e.Fatalf("marks: %v", err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.RowKey)
	}
	return out
}

func feedScenarios() []Scenario {
	return []Scenario{
		{
			Name: "feed/every-write-path",
			Run: func(ctx context.Context, e *Env) {
				s := fdStore(e, time.Millisecond)
				e.OK("create", s.Create(ctx, &fdOrder{Entity: abstractions.Entity{ID: "t1|o1"}, Status: "open", Cents: 100}))
				e.Is("create over an existing row", s.Create(ctx, &fdOrder{Entity: abstractions.Entity{ID: "t1|o1"}, Status: "x"}), abstractions.ErrDuplicateKey)
				e.OK("upsert new", s.Upsert(ctx, &fdOrder{Entity: abstractions.Entity{ID: "t1|o2"}, Status: "open", Cents: 200}))
				e.OK("upsert over", s.Upsert(ctx, &fdOrder{Entity: abstractions.Entity{ID: "t1|o2"}, Status: "paid", Cents: 200}))
				o1, err := s.One(ctx, "t1|o1")
				e.OK("one", err)
				stale := *o1
				o1.Status = "paid"
				e.OK("strict update", s.Update(ctx, o1, abstractions.Strict))
				stale.Status = "lost"
				e.Is("stale strict update", s.Update(ctx, &stale, abstractions.Strict), abstractions.ErrConcurrencyConflict)
				e.OK("lww update", s.Update(ctx, &fdOrder{Entity: abstractions.Entity{ID: "t1|o1"}, Status: "shipped", Cents: 101}, abstractions.LastWriterWins))
				e.Is("lww update of a missing row", s.Update(ctx, &fdOrder{Entity: abstractions.Entity{ID: "t1|none"}}, abstractions.LastWriterWins), abstractions.ErrNotFound)
				cents := abstractions.Field(func(o *fdOrder) *int64 { return &o.Cents })
				_, err = s.Patch(ctx, "t1|o2", abstractions.Set(abstractions.NewPatch[fdOrder](), cents, 250))
				e.OK("patch", err)
				_, err = abstractions.Mutate(ctx, s, "t1|o2", func(o *fdOrder) error { o.Status = "refunded"; return nil }, nil)
				e.OK("mutate", err)
				e.OK("create batch", s.CreateBatch(ctx, []*fdOrder{
					{Entity: abstractions.Entity{ID: "t1|o3"}, Status: "open", Cents: 300},
					{Entity: abstractions.Entity{ID: "t2|o1"}, Status: "open", Cents: 900},
				}))
				n, err := s.UpsertBatch(ctx, []*fdOrder{
					{Entity: abstractions.Entity{ID: "t1|o3"}, Status: "paid", Cents: 300},
					{Entity: abstractions.Entity{ID: "t1|o4"}, Status: "open", Cents: 400},
				})
				e.OK("upsert batch", err)
				e.Observe("upsert batch count", n)
				e.Deleted("delete", true)(s.Delete(ctx, "t1|o4", ""))
				e.Deleted("delete of a missing row", false)(s.Delete(ctx, "t1|o4", ""))

				// A transaction: a change, a create and an application event, one commit.
				o3, err := s.One(ctx, "t1|o3")
				e.OK("one o3", err)
				o3.Status = "shipped"
				tx := s.Transaction("t1")
				s.UpdateIn(tx, o3, abstractions.Strict)
				s.CreateIn(tx, &fdOrder{Entity: abstractions.Entity{ID: "t1|o5"}, Status: "open", Cents: 500})
				feed.Publish(tx, s, "OrderShipped", []byte(`{"order":"o3"}`))
				e.OK("transaction", tx.Commit(ctx))
				// A transaction that fails writes no record.
				tx = s.Transaction("t1")
				s.CreateIn(tx, &fdOrder{Entity: abstractions.Entity{ID: "t1|o5"}, Status: "dup"})
				feed.Publish(tx, s, "Never", nil)
				e.Is("failed transaction", tx.Commit(ctx), abstractions.ErrDuplicateKey)

				// Typed reads see no record.
				list, err := s.List(ctx, "t1")
				e.OK("list", err)
				e.Observe("listed", len(list))
				cnt, err := s.Count(ctx, "t1")
				e.OK("count", err)
				e.Observe("count", cnt)
				e.Observe("records t1", fdRecords(ctx, e, "t1"))
				e.Observe("records t2", fdRecords(ctx, e, "t2"))
				e.Observe("main rows t1", fdMainCells(ctx, e, "t1"))
				e.Observe("marks", fdMarks(ctx, e))

				// DeleteWhere and DeletePartition record each delete.
				_, err = s.DeleteWhere(ctx, abstractions.Query[fdOrder]{Partition: "t1", Where: abstractions.Field(func(o *fdOrder) *string { return &o.Status }).Eq("open")}, nil)
				e.OK("delete where", err)
				dn, err := s.DeletePartition(ctx, "t2")
				e.OK("delete partition", err)
				e.Observe("delete partition count", dn)
				e.Observe("records t1 after deletes", fdRecords(ctx, e, "t1"))
				e.Observe("records t2 after deletes", fdRecords(ctx, e, "t2"))
				// A raw delete by filter (udtables delete) deletes entities, never the feed's
				// rows, though the records carry the cells the filter names.
				before := fdRecords(ctx, e, "t1")
				st, err := backup.Delete(ctx, s.Account(), e.Table, "Status eq 'shipped'", nil)
				e.OK("raw delete", err)
				e.Observe("raw delete", fmt.Sprintf("%d entities", st.Entities))
				if st.Entities == 0 {
					e.Errorf("the raw delete deleted nothing")
				}
				e.Equal("records after a raw delete", fdRecords(ctx, e, "t1"), before)

				// A relay delivers every record once, each partition in key order, and
				// clears the marks once the partitions are drained.
				r, err := feed.NewRelay(s, &feed.RelayOptions{Name: "r1", Parallel: 1})
				e.OK("relay", err)
				got := map[string][]string{}
				h := func(_ context.Context, rec feed.Record) error {
					got[rec.Partition] = append(got[rec.Partition], fmt.Sprintf("%s %s v%d %v %s", rec.Entity, rec.Kind, rec.Version, rec.Body["Status"], rec.Type))
					return nil
				}
				pst, err := r.Pass(ctx, h)
				e.OK("pass", err)
				e.Observe("first pass", fmt.Sprintf("partitions=%d delivered=%d", pst.Partitions, pst.Delivered))
				observeDelivered(e, got)
				for i := 0; i < 50 && len(fdMarks(ctx, e)) > 0; i++ {
					time.Sleep(5 * time.Millisecond)
					pst, err = r.Pass(ctx, h)
					if err != nil {
						e.Errorf("pass again: %v", err)
					}
					if pst.Delivered != 0 {
						e.Errorf("a later pass delivered %d records", pst.Delivered)
					}
				}
				e.Observe("records left", append(fdRecords(ctx, e, "t1"), fdRecords(ctx, e, "t2")...))
				// The rows left: entities and index rows (records delivered and deleted).
				fdEnd(ctx, e)(feed.Status(ctx, s))
			},
		},
		{
			// A split-aware type: the record rides in the transaction of the main and
			// continuation rows; a unique-indexed type: a duplicate value's create is undone,
			// and the feed says so (created, then deleted).
			Name: "feed/large-values-and-unique",
			Run: func(ctx context.Context, e *Env) {
				docs := storeOf[largeDoc](e, nil)
				e.OK("enable docs", feed.Enable(docs, &feed.Options{Hold: time.Millisecond}))
				e.Is("bodies of a split-aware type", feed.Enable(storeOf[largeDoc](e, nil), &feed.Options{Body: true}), abstractions.ErrNotSupported)
				big := strings.Repeat("0123456789", 9000) // 90,000 characters: three rows
				e.OK("create large", docs.Create(ctx, &largeDoc{Entity: abstractions.Entity{ID: "d|1"}, Title: "a", Body: big}))
				e.OK("upsert smaller", docs.Upsert(ctx, &largeDoc{Entity: abstractions.Entity{ID: "d|1"}, Title: "b", Body: "short"}))
				e.Deleted("delete large", true)(docs.Delete(ctx, "d|1", ""))
				e.Observe("records d", fdRecords(ctx, e, "d"))
				got, err := docs.List(ctx, "d")
				e.OK("list docs", err)
				e.Observe("docs listed", len(got))

				users := storeOf[ixUser](e, nil)
				e.OK("enable users", feed.Enable(users, &feed.Options{Hold: time.Millisecond}))
				e.OK("create ann", users.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "u|ann"}, Email: "a@x", Name: "Ann"}))
				e.Is("create a duplicate email", users.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "u|bob"}, Email: "a@x", Name: "Bob"}), abstractions.ErrDuplicateKey)
				e.OK("create bob", users.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "u|bob"}, Email: "b@x", Name: "Bob"}))
				e.Observe("records u", fdRecords(ctx, e, "u"))

				r, err := feed.NewRelay(users, &feed.RelayOptions{Name: "r", Parallel: 1})
				e.OK("relay", err)
				var delivered []string
				for i := 0; i < 50 && len(fdMarks(ctx, e)) > 0; i++ {
					_, err := r.Pass(ctx, func(_ context.Context, rec feed.Record) error {
						delivered = append(delivered, fmt.Sprintf("%s %s v%d", rec.Entity, rec.Kind, rec.Version))
						return nil
					})
					if err != nil {
						e.Errorf("pass: %v", err)
					}
					time.Sleep(5 * time.Millisecond)
				}
				e.Observe("delivered", delivered)
				e.Observe("marks left", fdMarks(ctx, e))
				e.clearTable(ctx)
			},
		},
	}
}
