package fidelity

import (
	"context"
	"encoding/base32"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

// The index scenarios write an indexed type through every write path and check, after each
// step, that the index rows agree with the entities (an oracle that recomputes them from
// the entities read back) and that lookups and index-order pages return what sorting the
// entities by value returns.

// ixOrder is the indexed type of the index scenarios.
type ixOrder struct {
	abstractions.Entity
	Number int64     `table:",index=number"`
	Status string    `table:",index=status"`
	Placed time.Time `table:",index=newest:desc"`
	Note   *string   `table:",index=note"`
}

func ixStore(e *Env) *tables.Store[ixOrder] { return storeOf[ixOrder](e, nil) }

// ixCheck checks the oracle on partition pk and records what the indexes return.
func ixCheck(ctx context.Context, e *Env, s *tables.Store[ixOrder], step, pk string) {
	e.t.Helper()
	ents, err := s.List(ctx, pk)
	e.OK(step+": list", err)
	// Every entity's main row lists its index rows, which exist and name it, one per
	// non-nil indexed field; no other index row exists.
	listedBy, ixRows, err := ixConsistent(ctx, e.Tables, e.Table, pk)
	if err != nil {
		e.Errorf("%s: %v", step, err)
	}
	for rk, n := range listedBy {
		want := 3 // Number, Status and Placed always hold a value; Note may not
		for _, en := range ents {
			if en.ID == pk+"|"+rk && en.Note != nil {
				want = 4
			}
		}
		if n != want {
			e.Errorf("%s: row %s lists %d index rows, want %d", step, rk, n, want)
		}
	}
	e.Observe(step+": rows", fmt.Sprintf("%d entities, %d index rows", len(listedBy), ixRows))

	// Index-order pages equal the entities sorted by value, the row key breaking ties.
	ids := func(os []*ixOrder) []string {
		out := make([]string, len(os))
		for i, o := range os {
			out[i] = o.ID
		}
		return out
	}
	walk := func(name string, r index.Range) []*ixOrder {
		ix, err := index.On(s, name)
		e.OK(step+": index "+name, err)
		var got []*ixOrder
		cursor := ""
		for {
			p, err := ix.Page(ctx, r, abstractions.Query[ixOrder]{Partition: pk, Take: 2, Cursor: cursor})
			e.OK(step+": page "+name, err)
			got = append(got, p.Items...)
			if !p.HasMore() {
				return got
			}
			cursor = p.Cursor
		}
	}
	sorted := func(less func(a, b *ixOrder) int) []*ixOrder {
		out := slices.Clone(ents)
		sort.SliceStable(out, func(i, j int) bool {
			if c := less(out[i], out[j]); c != 0 {
				return c < 0
			}
			return out[i].ID < out[j].ID
		})
		return out
	}
	byNumber := sorted(func(a, b *ixOrder) int { return int(a.Number - b.Number) })
	e.Equal(step+": pages by number", ids(walk("number", index.Range{})), ids(byNumber))
	e.Observe(step+": by number", ids(byNumber))
	byStatus := sorted(func(a, b *ixOrder) int { return strings.Compare(a.Status, b.Status) })
	e.Equal(step+": pages by status", ids(walk("status", index.Range{})), ids(byStatus))
	newest := sorted(func(a, b *ixOrder) int { return b.Placed.Compare(a.Placed) })
	e.Equal(step+": pages newest first", ids(walk("newest", index.Range{})), ids(newest))
	var withNote []*ixOrder
	for _, o := range sorted(func(a, b *ixOrder) int {
		if a.Note == nil || b.Note == nil {
			return 0
		}
		return strings.Compare(*a.Note, *b.Note)
	}) {
		if o.Note != nil {
			withNote = append(withNote, o)
		}
	}
	gotNotes := walk("note", index.Range{})
	e.Equal(step+": pages by note hold the entities with a note", len(gotNotes), len(withNote))
	// A range: numbers in [10, 30).
	var inRange []*ixOrder
	for _, o := range byNumber {
		if o.Number >= 10 && o.Number < 30 {
			inRange = append(inRange, o)
		}
	}
	e.Equal(step+": range [10, 30)", ids(walk("number", index.Range{From: 10, To: 30})), ids(inRange))

	// Find and Count by each status.
	ix, err := index.On(s, "status")
	e.OK(step+": index status", err)
	for _, st := range []string{"open", "paid", "shipped"} {
		var want []*ixOrder
		for _, o := range ents {
			if o.Status == st {
				want = append(want, o)
			}
		}
		got, err := ix.Find(ctx, pk, st)
		e.OK(step+": find "+st, err)
		e.Equal(step+": find "+st, ids(got), ids(want))
		n, err := ix.Count(ctx, pk, st)
		e.OK(step+": count "+st, err)
		e.Equal(step+": count "+st, n, len(want))
	}
}

func ixScenarios() []Scenario {
	at := func(min int) time.Time { return time.Date(2026, 12, 1, 10, min, 0, 0, time.UTC) }
	note := func(s string) *string { return &s }
	return []Scenario{
		{
			Name: "indexes/every-write-path",
			Run: func(ctx context.Context, e *Env) {
				s := ixStore(e)
				batch := []*ixOrder{
					{Entity: abstractions.Entity{ID: "t1|o1"}, Number: 30, Status: "open", Placed: at(1)},
					{Entity: abstractions.Entity{ID: "t1|o2"}, Number: 10, Status: "paid", Placed: at(3), Note: note("gift")},
					{Entity: abstractions.Entity{ID: "t1|o3"}, Number: 20, Status: "open", Placed: at(2)},
					{Entity: abstractions.Entity{ID: "t1|o4"}, Number: -5, Status: "open", Placed: at(2), Note: note("")},
				}
				e.OK("create batch", s.CreateBatch(ctx, batch))
				ixCheck(ctx, e, s, "after create batch", "t1")

				o5 := &ixOrder{Entity: abstractions.Entity{ID: "t1|o5"}, Number: 25, Status: "shipped", Placed: at(9)}
				e.OK("create", s.Create(ctx, o5))
				dup := &ixOrder{Entity: abstractions.Entity{ID: "t1|o5"}, Number: 99, Status: "open", Placed: at(0)}
				e.Is("create over an existing row", s.Create(ctx, dup), abstractions.ErrDuplicateKey)
				ixCheck(ctx, e, s, "after create", "t1")

				// Strict update changes two indexed values; a stale one changes nothing.
				stale := *o5
				o5.Status, o5.Number = "paid", 11
				e.OK("strict update", s.Update(ctx, o5, abstractions.Strict))
				stale.Status = "open"
				e.Is("stale strict update", s.Update(ctx, &stale, abstractions.Strict), abstractions.ErrConcurrencyConflict)
				ixCheck(ctx, e, s, "after strict update", "t1")

				// Last-writer-wins update, upsert over a row and of a new one.
				lww := &ixOrder{Entity: abstractions.Entity{ID: "t1|o1"}, Number: 31, Status: "shipped", Placed: at(1), Note: note("late")}
				e.OK("lww update", s.Update(ctx, lww, abstractions.LastWriterWins))
				e.OK("upsert over", s.Upsert(ctx, &ixOrder{Entity: abstractions.Entity{ID: "t1|o3"}, Number: 20, Status: "paid", Placed: at(4)}))
				e.OK("upsert new", s.Upsert(ctx, &ixOrder{Entity: abstractions.Entity{ID: "t1|o6"}, Number: 12, Status: "open", Placed: at(5)}))
				missing := &ixOrder{Entity: abstractions.Entity{ID: "t1|none"}, Number: 1, Status: "open"}
				e.Is("lww update of a missing row", s.Update(ctx, missing, abstractions.LastWriterWins), abstractions.ErrNotFound)
				ixCheck(ctx, e, s, "after updates and upserts", "t1")

				// The outcome verbs write through Update.
				_, err := abstractions.Mutate(ctx, s, "t1|o2", func(o *ixOrder) error { o.Status = "shipped"; o.Note = nil; return nil }, nil)
				e.OK("mutate", err)
				ixCheck(ctx, e, s, "after mutate", "t1")

				// Upsert batch: replaces and inserts; a repeated key writes its last occurrence.
				n, err := s.UpsertBatch(ctx, []*ixOrder{
					{Entity: abstractions.Entity{ID: "t1|o4"}, Number: 40, Status: "paid", Placed: at(7)},
					{Entity: abstractions.Entity{ID: "t1|o7"}, Number: 15, Status: "open", Placed: at(8), Note: note("b")},
					{Entity: abstractions.Entity{ID: "t1|o7"}, Number: 16, Status: "shipped", Placed: at(8), Note: note("c")},
				})
				e.OK("upsert batch", err)
				e.Observe("upsert batch count", n)
				ixCheck(ctx, e, s, "after upsert batch", "t1")

				// A patch of indexed fields rewrites their index rows in its transaction; one
				// at a stale version changes nothing.
				status := abstractions.Field(func(o *ixOrder) *string { return &o.Status })
				notes := abstractions.NullableField(func(o *ixOrder) **string { return &o.Note })
				_, err = s.Patch(ctx, "t1|o6", abstractions.Set(abstractions.Set(abstractions.NewPatch[ixOrder](), status, "paid"), notes, "patched"))
				e.OK("patch of indexed fields", err)
				_, err = s.Patch(ctx, "t1|o6", abstractions.Set(abstractions.NewPatch[ixOrder](), status, "open").WithETag(`W/"datetime'2020-01-01T00%3A00%3A00Z'"`))
				e.Is("patch at a stale version", err, abstractions.ErrConcurrencyConflict)
				_, err = s.Patch(ctx, "t1|none", abstractions.Set(abstractions.NewPatch[ixOrder](), status, "open"))
				e.Is("patch of a missing row", err, abstractions.ErrNotFound)
				ixCheck(ctx, e, s, "after patches", "t1")

				// Deletes: conditional on a stale version (refused), unconditional, missing.
				cur, err := s.One(ctx, "t1|o6")
				e.OK("read o6", err)
				e.OK("bump o6", s.Update(ctx, cur, abstractions.Strict))
				_, err = s.Delete(ctx, "t1|o6", `W/"datetime'2020-01-01T00%3A00%3A00Z'"`)
				e.Is("delete at a stale version", err, abstractions.ErrConcurrencyConflict)
				e.Deleted("delete", true)(s.Delete(ctx, "t1|o6", ""))
				e.Deleted("delete a missing row", false)(s.Delete(ctx, "t1|o6", ""))
				ixCheck(ctx, e, s, "after deletes", "t1")

				// Index rows are no entities: not read, counted or listed, and an id of their
				// shape is refused for writes.
				c, err := s.Count(ctx, "t1")
				e.OK("count", err)
				e.Observe("count", c)
				// The service returns no index row to a page of entities: a page with room
				// for one more than there are holds them all, and nothing follows.
				pg, err := s.Page(ctx, abstractions.Query[ixOrder]{Partition: "t1", Take: c + 1})
				e.OK("page of every entity", err)
				e.Equal("a page holds every entity", len(pg.Items), c)
				e.Equal("no page follows", pg.HasMore(), false)
				e.Is("create at an index key", s.Create(ctx, &ixOrder{Entity: abstractions.Entity{ID: "t1|~ix.x"}}), abstractions.ErrInvalidKey)

				// Another partition is not affected; DeletePartition removes entities and
				// index rows and counts the entities.
				e.OK("create in t2", s.Create(ctx, &ixOrder{Entity: abstractions.Entity{ID: "t2|o1"}, Number: 1, Status: "open", Placed: at(1)}))
				deleted, err := s.DeletePartition(ctx, "t1")
				e.OK("delete partition", err)
				e.Observe("delete partition count", deleted)
				left, err := storedRows(ctx, e.Tables, e.Table, service.Query{Select: []string{}})
				e.OK("rows left", err)
				var keys []string
				for _, r := range left {
					keys = append(keys, r.PartitionKey+"|"+strings.SplitN(r.RowKey, ".", 3)[0])
				}
				e.Observe("rows left", keys)
				ixCheck(ctx, e, s, "t2", "t2")
			},
		},
		{
			Name: "indexes/transactions",
			Run: func(ctx context.Context, e *Env) {
				s := ixStore(e)
				a := &ixOrder{Entity: abstractions.Entity{ID: "t1|a"}, Number: 1, Status: "open", Placed: at(1)}
				b := &ixOrder{Entity: abstractions.Entity{ID: "t1|b"}, Number: 2, Status: "open", Placed: at(2), Note: note("n")}
				tx := s.Transaction("t1")
				s.CreateIn(tx, a)
				s.CreateIn(tx, b)
				e.OK("commit creates", tx.Commit(ctx))
				ixCheck(ctx, e, s, "after creates", "t1")

				// A Strict update of the version written, a last-writer-wins update, an
				// upsert of a new row and a delete, in one transaction.
				a.Status, a.Number = "paid", 10
				tx = s.Transaction("t1")
				s.UpdateIn(tx, a, abstractions.Strict)
				s.UpdateIn(tx, &ixOrder{Entity: abstractions.Entity{ID: "t1|b"}, Number: 20, Status: "shipped", Placed: at(3)}, abstractions.LastWriterWins)
				s.UpsertIn(tx, &ixOrder{Entity: abstractions.Entity{ID: "t1|c"}, Number: 30, Status: "open", Placed: at(4)})
				e.OK("commit updates", tx.Commit(ctx))
				ixCheck(ctx, e, s, "after updates", "t1")
				tx = s.Transaction("t1")
				s.DeleteIn(tx, "t1|c", "")
				s.UpsertIn(tx, &ixOrder{Entity: abstractions.Entity{ID: "t1|b"}, Number: 21, Status: "open", Placed: at(3)})
				e.OK("commit delete and upsert", tx.Commit(ctx))
				ixCheck(ctx, e, s, "after delete and upsert", "t1")

				// A stale Strict update and a delete of a missing row refuse the whole
				// transaction, which writes nothing.
				stale := *a
				a.Status = "shipped"
				e.OK("update a", s.Update(ctx, a, abstractions.Strict))
				stale.Status = "open"
				tx = s.Transaction("t1")
				s.UpdateIn(tx, &stale, abstractions.Strict)
				s.CreateIn(tx, &ixOrder{Entity: abstractions.Entity{ID: "t1|d"}, Number: 4, Status: "open", Placed: at(5)})
				e.Is("stale update in a transaction", tx.Commit(ctx), abstractions.ErrConcurrencyConflict)
				tx = s.Transaction("t1")
				s.DeleteIn(tx, "t1|none", "")
				s.CreateIn(tx, &ixOrder{Entity: abstractions.Entity{ID: "t1|d"}, Number: 4, Status: "open", Placed: at(5)})
				e.Is("delete of a missing row in a transaction", tx.Commit(ctx), abstractions.ErrNotFound)
				ixCheck(ctx, e, s, "after refused transactions", "t1")
			},
		},
		{
			Name: "indexes/large-values",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[ixDoc](e, nil)
				consistent := func(step string) {
					ents, ix, err := ixConsistent(ctx, e.Tables, e.Table, "t")
					e.OK(step+": index rows agree", err)
					e.Observe(step, fmt.Sprintf("%d entities, %d index rows", len(ents), ix))
				}
				big := strings.Repeat("x", 40_000) // split over cells
				d := &ixDoc{Entity: abstractions.Entity{ID: "t|d1"}, Title: "alpha", Body: big}
				e.OK("create", s.Create(ctx, d))
				e.OK("create small", s.Create(ctx, &ixDoc{Entity: abstractions.Entity{ID: "t|d2"}, Title: "beta", Body: "b"}))
				consistent("after creates")
				d.Title, d.Body = "gamma", big+big
				e.OK("strict update", s.Update(ctx, d, abstractions.Strict))
				e.OK("upsert", s.Upsert(ctx, &ixDoc{Entity: abstractions.Entity{ID: "t|d2"}, Title: "alpha", Body: big}))
				consistent("after updates")
				ix, err := index.On(s, "title")
				e.OK("index", err)
				found, err := ix.Find(ctx, "t", "alpha")
				e.OK("find", err)
				e.Equal("find returns the whole value", len(found) == 1 && found[0].ID == "t|d2" && len(found[0].Body) == len(big), true)
				n, err := s.Count(ctx, "t")
				e.OK("count", err)
				e.Observe("count", n)
				e.Deleted("delete", true)(s.Delete(ctx, "t|d1", ""))
				consistent("after delete")
				deleted, err := s.DeletePartition(ctx, "t")
				e.OK("delete partition", err)
				e.Observe("delete partition count", deleted)
				rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
				e.OK("rows", err)
				e.Equal("no row is left", len(rows), 0)
			},
		},
		{
			Name: "indexes/unique",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[ixUser](e, nil)
				email, err := index.On(s, "email")
				e.OK("index", err)
				get := func(step, value, want string) {
					u, err := email.Get(ctx, value)
					if want == "" {
						e.Is(step, err, abstractions.ErrNotFound)
						return
					}
					e.OK(step, err)
					if err == nil {
						e.Equal(step, u.ID+" "+u.Email, want+" "+value)
					}
				}
				alice := &ixUser{Entity: abstractions.Entity{ID: "t1|alice"}, Email: "a@x", Name: "Alice"}
				e.OK("create alice", s.Create(ctx, alice))
				e.Is("create bob with alice's email, in another partition", s.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "t2|bob"}, Email: "a@x"}), abstractions.ErrDuplicateKey)
				ok, err := s.Exists(ctx, "t2|bob")
				e.OK("exists", err)
				e.Equal("the refused create left no row", ok, false)
				e.OK("create bob", s.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "t2|bob"}, Email: "b@x", Name: "Bob"}))
				get("get a@x", "a@x", "t1|alice")
				get("get b@x", "b@x", "t2|bob")

				// Changing a value moves its claim; a value another entity holds is refused
				// and the write undone.
				alice.Email = "c@x"
				e.OK("alice moves to c@x", s.Update(ctx, alice, abstractions.Strict))
				get("get a@x after the move", "a@x", "")
				get("get c@x", "c@x", "t1|alice")
				bob, err := s.One(ctx, "t2|bob")
				e.OK("read bob", err)
				bob.Email = "c@x"
				e.Is("bob to alice's c@x", s.Update(ctx, bob, abstractions.Strict), abstractions.ErrDuplicateKey)
				again, err := s.One(ctx, "t2|bob")
				e.OK("read bob again", err)
				e.Equal("bob's write was undone", again.Email, "b@x")
				get("b@x is still bob's", "b@x", "t2|bob")
				e.Is("upsert carol with b@x", s.Upsert(ctx, &ixUser{Entity: abstractions.Entity{ID: "t3|carol"}, Email: "b@x"}), abstractions.ErrDuplicateKey)
				ok, _ = s.Exists(ctx, "t3|carol")
				e.Equal("the refused upsert left no row", ok, false)
				// A value another entity holds is not a lost race for the row's keys: the
				// verbs that retry such a race return it at once, naming the index.
				gctx, gcancel := context.WithTimeout(ctx, 10*time.Second)
				_, _, err = abstractions.GetOrCreate(gctx, s, "t3|carol", func() *ixUser { return &ixUser{Email: "b@x"} })
				gcancel()
				e.Is("GetOrCreate with a taken value", err, abstractions.ErrDuplicateKey)
				var se *abstractions.StoreError
				e.Equal("the error names the unique index", errors.As(err, &se) && se.Index == "email", true)
				e.OK("upsert carol", s.Upsert(ctx, &ixUser{Entity: abstractions.Entity{ID: "t3|carol"}, Email: "d@x"}))
				_, err = abstractions.Mutate(ctx, s, "t3|carol", func(u *ixUser) error { u.Email = "e@x"; return nil }, nil)
				e.OK("mutate carol to e@x", err)
				get("d@x after the mutate", "d@x", "")
				get("e@x", "e@x", "t3|carol")

				// A stale claim (its owner gone) is taken over; the sweep deletes stale claims.
				e.Deleted("delete alice", true)(s.Delete(ctx, "t1|alice", ""))
				get("c@x after the delete", "c@x", "")
				claims := func(step string, want int) {
					rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey ge '~ux.' and PartitionKey lt '~ux/'"})
					e.OK(step, err)
					e.Equal(step, len(rows), want)
				}
				claims("claims after the delete: bob's and carol's", 2)
				stale := service.Row{PartitionKey: "~ux.email.CPG7G", RowKey: "claim", Properties: []service.Property{
					{Name: "_UxPK", Value: service.String("t9")}, {Name: "_UxRK", Value: service.String("ghost")}}}
				_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpUpsertReplace, Row: stale})
				e.OK("a stale claim, as a crash leaves it", err)
				n, err := email.SweepClaims(ctx)
				e.OK("sweep", err)
				e.Equal("stale claims swept", n, 1)
				claims("claims after the sweep", 2)

				// Claims are no entities; their partitions are not the store's.
				c, err := s.CountAll(ctx)
				e.OK("count all", err)
				e.Equal("count all: bob and carol", c, 2)
				_, err = s.List(ctx, "~ux.email.x")
				e.Is("a claim partition", err, abstractions.ErrInvalidKey)
				e.Is("a batch of a type with unique indexes", s.CreateBatch(ctx, []*ixUser{{Entity: abstractions.Entity{ID: "t1|z"}, Email: "z@x"}}), abstractions.ErrNotSupported)
			},
		},
		{
			// Typed filters on index pages: the service evaluates them on the entities the
			// index rows name; a page holds up to Take entities it selects, and its cursor
			// resumes after the last index row looked at, whatever was skipped.
			Name: "indexes/filtered-pages",
			Run: func(ctx context.Context, e *Env) {
				s := ixStore(e)
				status := abstractions.Field(func(o *ixOrder) *string { return &o.Status })
				number := abstractions.Field(func(o *ixOrder) *int64 { return &o.Number })
				var all []*ixOrder
				for i := range 12 {
					st := "paid"
					if i%4 == 0 || i == 5 {
						st = "open" // numbers 0, 4, 5 and 8 are open
					}
					all = append(all, &ixOrder{Entity: abstractions.Entity{ID: fmt.Sprintf("t1|o%02d", 11-i)}, Number: int64(i), Status: st, Placed: at(i)})
				}
				e.OK("create", s.CreateBatch(ctx, all))
				byNumber, err := index.On(s, "number")
				e.OK("index", err)
				type pageOf struct {
					IDs  []string
					More bool
				}
				walk := func(step string, ix *index.Index[ixOrder], r index.Range, where abstractions.Filter[ixOrder], take int) []pageOf {
					var out []pageOf
					cursor := ""
					for {
						p, err := ix.Page(ctx, r, abstractions.Query[ixOrder]{Partition: "t1", Take: take, Where: where, Cursor: cursor})
						e.OK(step, err)
						if err != nil {
							return out
						}
						var got []string
						for _, o := range p.Items {
							got = append(got, fmt.Sprintf("%s:%d", o.ID, o.Number))
						}
						out = append(out, pageOf{got, p.HasMore()})
						if !p.HasMore() || len(out) > 20 {
							return out
						}
						cursor = p.Cursor
					}
				}
				open := status.Eq("open")
				e.Equal("open orders by number, three a page", walk("pages of three", byNumber, index.Range{}, open, 3), []pageOf{
					{[]string{"t1|o11:0", "t1|o07:4", "t1|o06:5"}, true},
					{[]string{"t1|o03:8"}, false},
				})
				e.Equal("one a page", walk("pages of one", byNumber, index.Range{}, open, 1), []pageOf{
					{[]string{"t1|o11:0"}, true}, {[]string{"t1|o07:4"}, true}, {[]string{"t1|o06:5"}, true}, {[]string{"t1|o03:8"}, true}, {nil, false},
				})
				e.Equal("a range and a filter", walk("range [3, 9) of open", byNumber, index.Range{From: 3, To: 9}, abstractions.And(open, number.Ne(5)), 10), []pageOf{
					{[]string{"t1|o07:4", "t1|o03:8"}, false},
				})
				newest, err := index.On(s, "newest")
				e.OK("index newest", err)
				e.Observe("newest open first", walk("newest open", newest, index.Range{}, open, 2))
				e.Equal("a filter nothing matches", walk("none", byNumber, index.Range{}, status.Eq("lost"), 5), []pageOf{{nil, false}})

				// An entity changed by a writer that does not know the index keeps a stale
				// index row; the page skips it, filter or not.
				_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpMerge, IfMatch: "*", Row: service.Row{PartitionKey: "t1", RowKey: "o07",
					Properties: []service.Property{{Name: "Number", Value: service.Int64(40)}}}})
				e.OK("a write that does not know the index", err)
				e.Equal("the stale index row is skipped", walk("after the foreign write", byNumber, index.Range{}, open, 3), []pageOf{
					{[]string{"t1|o11:0", "t1|o06:5", "t1|o03:8"}, true}, {nil, false},
				})

				// The cursor is bound to the filter; what Page cannot do is refused before
				// anything is sent.
				p, err := byNumber.Page(ctx, index.Range{}, abstractions.Query[ixOrder]{Partition: "t1", Take: 1, Where: open})
				e.OK("first page", err)
				_, err = byNumber.Page(ctx, index.Range{}, abstractions.Query[ixOrder]{Partition: "t1", Take: 1, Where: status.Eq("paid"), Cursor: p.Cursor})
				e.Is("a cursor of another filter", err, abstractions.ErrInvalidArgument)
				_, err = byNumber.Page(ctx, index.Range{}, abstractions.Query[ixOrder]{Partition: "t1", RowKeyPrefix: "o"})
				e.Is("a row-key prefix", err, abstractions.ErrNotSupported)
				_, err = byNumber.Page(ctx, index.Range{}, abstractions.Query[ixOrder]{Partition: "t1", Select: []abstractions.Selector[ixOrder]{status}})
				e.Is("a projection", err, abstractions.ErrNotSupported)
				_, err = byNumber.Page(ctx, index.Range{}, abstractions.Query[ixOrder]{})
				e.Is("no partition", err, abstractions.ErrInvalidArgument)
				many := make([]abstractions.Filter[ixOrder], 14)
				for i := range many {
					many[i] = number.Eq(int64(i))
				}
				_, err = byNumber.Page(ctx, index.Range{}, abstractions.Query[ixOrder]{Partition: "t1", Where: abstractions.Or(many...)})
				e.Is("a filter of 14 comparisons, 16 with the keys", err, abstractions.ErrNotSupported)
			},
		},
		{
			// Prefix ranges hold exactly the values that start with the prefix, in the
			// index's order, whatever the prefix's encoding ends with.
			Name: "indexes/prefix-pages",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[ixWord](e, nil)
				words := []string{"", "a", "ab", "abc", "abd", "abcde", "abcdef", "ac", "b", "e", "é", "éa", "f", "中", "中文", "\uffff", "\U0010FFFF", "\U0010FFFFz", "~"}
				var all []*ixWord
				for i, w := range words {
					raw := []byte(w)
					if i%3 == 0 {
						raw = append([]byte{0xFF}, raw...)
					}
					all = append(all, &ixWord{Entity: abstractions.Entity{ID: fmt.Sprintf("t|w%02d", i)}, Word: w, Raw: raw})
				}
				e.OK("create", s.CreateBatch(ctx, all))
				walk := func(step, name string, r index.Range) []string {
					ix, err := index.On(s, name)
					e.OK(step, err)
					var got []string
					cursor := ""
					for range 50 {
						p, err := ix.Page(ctx, r, abstractions.Query[ixWord]{Partition: "t", Take: 3, Cursor: cursor})
						e.OK(step, err)
						for _, w := range p.Items {
							got = append(got, w.ID)
						}
						if err != nil || !p.HasMore() {
							break
						}
						cursor = p.Cursor
					}
					return got
				}
				want := func(prefix, from string, desc, raw bool) []string {
					var sel []*ixWord
					for _, w := range all {
						v := w.Word
						if raw {
							v = string(w.Raw)
						}
						if strings.HasPrefix(v, prefix) && (from == "" || !desc && v >= from || desc && v <= from) {
							sel = append(sel, w)
						}
					}
					sort.SliceStable(sel, func(i, j int) bool {
						a, b := sel[i].Word, sel[j].Word
						if raw {
							a, b = string(sel[i].Raw), string(sel[j].Raw)
						}
						if a != b {
							return a < b != desc
						}
						return sel[i].ID < sel[j].ID
					})
					var ids []string
					for _, w := range sel {
						ids = append(ids, w.ID)
					}
					return ids
				}
				for _, p := range []string{"", "a", "ab", "abc", "abcd", "é", "\xc3", "中", "\xe4\xb8", "\U0010FFFF", "\xf4\x8f\xbf\xbf", "z"} {
					e.Equal("word prefix "+p, walk("word "+p, "word", index.Range{Prefix: p}), want(p, "", false, false))
					e.Equal("descending word prefix "+p, walk("wordDesc "+p, "wordDesc", index.Range{Prefix: p}), want(p, "", true, false))
				}
				for _, p := range []string{"\xff", "\xffa", "a", ""} {
					e.Equal("raw prefix "+p, walk("raw "+p, "raw", index.Range{Prefix: p}), want(p, "", false, true))
				}
				e.Equal("a prefix and a start", walk("ab from abc", "word", index.Range{Prefix: "ab", From: "abc"}), want("ab", "abc", false, false))
				e.Equal("descending, a prefix and a start", walk("ab from abc desc", "wordDesc", index.Range{Prefix: "ab", From: "abc"}), want("ab", "abc", true, false))
				e.Observe("abc", walk("observe abc", "word", index.Range{Prefix: "abc"}))
				ix, err := index.On(s, "n")
				e.OK("index n", err)
				_, err = ix.Page(ctx, index.Range{Prefix: "1"}, abstractions.Query[ixWord]{Partition: "t"})
				e.Is("a prefix of an integer index", err, abstractions.ErrInvalidArgument)
			},
		},
		{
			// Adding unique= to a table that has rows: Verify reports the claims that are
			// missing, in the way or stale, and the values two entities hold; Rebuild claims
			// with the store's protocol, claims no duplicate for either holder, and deletes
			// the stale claims.
			Name: "indexes/unique-rebuild",
			Run: func(ctx context.Context, e *Env) {
				plain := storeOf[ixUserPlain](e, nil)
				s := storeOf[ixUser](e, nil)
				for _, u := range []*ixUserPlain{
					{Entity: abstractions.Entity{ID: "t1|a"}, Email: "a@x", Name: "A"},
					{Entity: abstractions.Entity{ID: "t1|b"}, Email: "b@x", Name: "B"},
					{Entity: abstractions.Entity{ID: "t2|c"}, Email: "c@x", Name: "C"},
					{Entity: abstractions.Entity{ID: "t2|d"}, Email: "a@x", Name: "D"},
				} {
					e.OK("create "+u.ID, plain.Create(ctx, u))
				}
				claim := func(step, value, owner string) {
					// The claim's layout (docs/indexes.md): the value's bytes in base32hex.
					cpk := "~ux.email." + base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(value))
					pk, rk, _ := strings.Cut(owner, "|")
					_, err := e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpUpsertReplace, Row: service.Row{PartitionKey: cpk, RowKey: "claim", Properties: []service.Property{
						{Name: "_UxPK", Value: service.String(pk)}, {Name: "_UxRK", Value: service.String(rk)}}}})
					e.OK(step, err)
				}
				claim("a claim whose owner is gone", "z@x", "t9|ghost")
				claim("a claim in the way of c's", "c@x", "t9|ghost")
				type claimsOf struct {
					Missing, Wrong, Stale, Repaired int
					Duplicates                      []index.Duplicate
				}
				of := func(r index.Report) claimsOf {
					return claimsOf{r.MissingClaims, r.WrongClaims, r.StaleClaims, r.Repaired, r.Duplicates}
				}
				dupA := []index.Duplicate{{Index: "email", Value: "a@x", IDs: []string{"t1|a", "t2|d"}}}
				rep, err := index.Verify(ctx, s, "", nil)
				e.OK("verify", err)
				e.Equal("verify: the claims", of(rep), claimsOf{1, 1, 1, 0, dupA})
				e.Equal("verify: the partition indexes", [3]int{rep.Entities, rep.Missing, rep.Unlisted}, [3]int{4, 4, 4})
				decls := []index.Declaration{{Name: "name", Column: "Name"}, {Name: "email", Column: "Email", Unique: true}}
				tv, err := index.VerifyTable(ctx, e.NewAccount(e.Tables, e.Blobs, nil), e.Table, decls, "", nil)
				e.OK("verify by columns", err)
				e.Equal("verify by columns reports what verify does", tv, rep)
				uv, err := index.VerifyTable(ctx, e.NewAccount(e.Tables, e.Blobs, nil), e.Table, decls[1:], "", nil)
				e.OK("verify of the unique index alone", err)
				e.Equal("the unique index alone leaves the index rows alone", [3]int{uv.Entities, uv.Missing, uv.MissingClaims}, [3]int{4, 0, 1})

				rep, err = index.Rebuild(ctx, s, "", nil)
				e.OK("rebuild", err)
				e.Equal("rebuild: the claims", of(rep), claimsOf{1, 1, 1, 4 + 3, dupA})
				rep, err = index.Verify(ctx, s, "", nil)
				e.OK("verify after the rebuild", err)
				e.Equal("after the rebuild only the duplicate is left", of(rep), claimsOf{0, 0, 0, 0, dupA})
				email, err := index.On(s, "email")
				e.OK("index", err)
				for _, vw := range [][2]string{{"b@x", "t1|b"}, {"c@x", "t2|c"}} { // in one order: the backends' logs are compared
					value, want := vw[0], vw[1]
					u, err := email.Get(ctx, value)
					e.OK("get "+value, err)
					if err == nil {
						e.Equal("get "+value, u.ID, want)
					}
				}
				_, err = email.Get(ctx, "a@x")
				e.Is("a duplicated value is claimed for neither", err, abstractions.ErrNotFound)
				e.Is("a new entity cannot take a value a claim holds", s.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "t3|f"}, Email: "b@x"}), abstractions.ErrDuplicateKey)

				// A run limited to a partition sees no holder in another: it claims a@x for
				// t2|d, and the whole table's verify reports t1|a as its duplicate.
				rep, err = index.Rebuild(ctx, s, "t2", nil)
				e.OK("rebuild of t2", err)
				e.Equal("rebuild of t2", of(rep), claimsOf{1, 0, 0, 1, nil})
				rep, err = index.Verify(ctx, s, "", nil)
				e.OK("verify after the rebuild of t2", err)
				e.Equal("the claim's owner is named first", of(rep), claimsOf{0, 0, 0, 0, []index.Duplicate{{Index: "email", Value: "a@x", IDs: []string{"t2|d", "t1|a"}}}})

				// Once the duplicate is resolved the index is consistent.
				e.Deleted("delete the duplicate", true)(plain.Delete(ctx, "t1|a", ""))
				rep, err = index.Rebuild(ctx, s, "", nil)
				e.OK("rebuild after the fix", err)
				rep, err = index.Verify(ctx, s, "", nil)
				e.OK("verify after the fix", err)
				e.Equal("consistent", rep.Consistent(), true)
			},
		},
		{
			// Batches plan their transactions with the index rows: each holds at most 100
			// actions and every row of an entity (main row, new index rows, deletes of the
			// old ones) is in the transaction of its main row.
			Name: "indexes/batch-planning",
			Run: func(ctx context.Context, e *Env) {
				rec := &txRecorder{Tables: e.Tables}
				acct := e.NewAccount(rec, e.Blobs, &tables.Options{Now: storeClock})
				s, err := tables.For[ixOrder](acct, &tables.StoreOptions{Table: e.Table})
				e.OK("store", err)
				var batch []*ixOrder
				for i := range 60 {
					batch = append(batch, &ixOrder{Entity: abstractions.Entity{ID: fmt.Sprintf("t1|o%02d", i)}, Number: int64(i), Status: "open", Placed: at(i % 60)})
				}
				e.OK("create batch of 60 entities, 240 rows", s.CreateBatch(ctx, batch))
				e.Observe("create batch transactions", rec.check(e, "create batch"))
				ixCheck(ctx, e, s, "after the create batch", "t1")
				for _, o := range batch {
					o.Number += 100
					o.Status = "paid"
					o.Placed = o.Placed.Add(time.Hour)
				}
				n, err := s.UpsertBatch(ctx, batch)
				e.OK("upsert batch of 60 entities, 420 actions", err)
				e.Equal("upsert batch count", n, 60)
				e.Observe("upsert batch transactions", rec.check(e, "upsert batch"))
				ixCheck(ctx, e, s, "after the upsert batch", "t1")

				// An entity whose rows fit no transaction is refused before anything is
				// sent, naming it.
				w, err := tables.For[ixWide](acct, &tables.StoreOptions{Table: e.Table})
				e.OK("wide store", err)
				wide := &ixWide{Entity: abstractions.Entity{ID: "t2|w"}}
				e.OK("create a wide entity: 52 actions", w.Create(ctx, wide))
				before, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey eq 't2'"})
				e.OK("rows before", err)
				changed := *wide
				setAll(&changed, 7)
				err = w.Upsert(ctx, &changed)
				e.Is("an upsert that changes 51 indexed values: 103 actions", err, abstractions.ErrOversizedValue)
				var se *abstractions.StoreError
				e.Equal("the refusal names the entity", errors.As(err, &se) && se.PartitionKey == "t2" && se.RowKey == "w", true)
				e.Equal("and the index rows", err != nil && strings.Contains(err.Error(), "declare fewer indexes"), true)
				after, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey eq 't2'"})
				e.OK("rows after", err)
				e.Equal("nothing was written", len(after) == len(before) && after[0].ETag == before[0].ETag, true)
			},
		},
		{
			// What a type with unique indexes cannot do is refused before anything is sent.
			Name: "indexes/unique-refusals",
			Run: func(ctx context.Context, e *Env) {
				s := storeOf[ixUser](e, nil)
				tx := s.Transaction("t1")
				s.CreateIn(tx, &ixUser{Entity: abstractions.Entity{ID: "t1|a"}, Email: "a@x"})
				e.Is("a unique-indexed type in a transaction", tx.Commit(ctx), abstractions.ErrNotSupported)
				e.Is("a value too long for its claim", s.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "t1|b"}, Email: strings.Repeat("x", 400)}), abstractions.ErrInvalidArgument)
				rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
				e.OK("rows", err)
				e.Equal("nothing was written", len(rows), 0)
				e.OK("create", s.Create(ctx, &ixUser{Entity: abstractions.Entity{ID: "t1|c"}, Email: "c@x"}))
				email := abstractions.Field(func(u *ixUser) *string { return &u.Email })
				_, err = s.Patch(ctx, "t1|c", abstractions.Set(abstractions.NewPatch[ixUser](), email, "d@x"))
				e.Is("a patch of a unique field", err, abstractions.ErrNotSupported)
				u, err := s.One(ctx, "t1|c")
				e.OK("read", err)
				e.Equal("the patch changed nothing", u.Email, "c@x")
				_, err = tables.For[ixUniqueDoc](e.NewAccount(e.Tables, e.Blobs, nil), &tables.StoreOptions{Table: e.Table})
				e.Is("a unique index on a split-aware type", err, abstractions.ErrNotSupported)
			},
		},
		{
			Name: "indexes/refusals",
			Run: func(ctx context.Context, e *Env) {
				s := ixStore(e)
				ix, err := index.On(s, "number")
				e.OK("index", err)
				_, err = index.On(s, "nope")
				e.Is("an index the type does not declare", err, abstractions.ErrInvalidArgument)
				_, err = ix.Find(ctx, "t1", "ten")
				e.Is("a value of another type", err, abstractions.ErrInvalidArgument)
				long := strings.Repeat("x", 400)
				e.Is("a value too long for a key", s.Create(ctx, &ixOrder{Entity: abstractions.Entity{ID: "t1|o1"}, Status: long}), abstractions.ErrInvalidArgument)
				_, err = tables.For[ixBadKind](e.NewAccount(e.Tables, e.Blobs, nil), &tables.StoreOptions{Table: e.Table})
				e.Is("an index on a JSON-stored field", err, abstractions.ErrInvalidArgument)
				_, err = tables.For[ixTwice](e.NewAccount(e.Tables, e.Blobs, nil), &tables.StoreOptions{Table: e.Table})
				e.Is("two indexes of one name", err, abstractions.ErrInvalidArgument)
				rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
				e.OK("rows", err)
				e.Equal("nothing was written", len(rows), 0)
			},
		},
	}
}

type ixBadKind struct {
	abstractions.Entity
	Tags []string `table:",index=tags"`
}

type ixTwice struct {
	abstractions.Entity
	A string `table:",index=same"`
	B string `table:",index=Same"`
}

// ixWord has string and binary indexes, for prefix ranges.
type ixWord struct {
	abstractions.Entity
	Word string `table:",index=word|wordDesc:desc"`
	Raw  []byte `table:",index=raw"`
	N    int    `table:",index=n"`
}

// ixDoc is an indexed type with a large value.
type ixDoc struct {
	abstractions.Entity
	Title string `table:",index=title"`
	Body  string `table:",split=text"`
}

// ixUser has a unique index across the table and a partition index.
type ixUser struct {
	abstractions.Entity
	Email string `table:",unique=email"`
	Name  string `table:",index=name"`
}

// ixUniqueDoc is a split-aware type with a unique index, which stores refuse.
type ixUniqueDoc struct {
	abstractions.Entity
	Code string `table:",unique=code"`
	Body string `table:",split=text"`
}

// ixWide has 51 indexes: a write that changes every value needs 103 actions.
type ixWide struct {
	abstractions.Entity
	F00 int32 `table:",index=f00"`
	F01 int32 `table:",index=f01"`
	F02 int32 `table:",index=f02"`
	F03 int32 `table:",index=f03"`
	F04 int32 `table:",index=f04"`
	F05 int32 `table:",index=f05"`
	F06 int32 `table:",index=f06"`
	F07 int32 `table:",index=f07"`
	F08 int32 `table:",index=f08"`
	F09 int32 `table:",index=f09"`
	F10 int32 `table:",index=f10"`
	F11 int32 `table:",index=f11"`
	F12 int32 `table:",index=f12"`
	F13 int32 `table:",index=f13"`
	F14 int32 `table:",index=f14"`
	F15 int32 `table:",index=f15"`
	F16 int32 `table:",index=f16"`
	F17 int32 `table:",index=f17"`
	F18 int32 `table:",index=f18"`
	F19 int32 `table:",index=f19"`
	F20 int32 `table:",index=f20"`
	F21 int32 `table:",index=f21"`
	F22 int32 `table:",index=f22"`
	F23 int32 `table:",index=f23"`
	F24 int32 `table:",index=f24"`
	F25 int32 `table:",index=f25"`
	F26 int32 `table:",index=f26"`
	F27 int32 `table:",index=f27"`
	F28 int32 `table:",index=f28"`
	F29 int32 `table:",index=f29"`
	F30 int32 `table:",index=f30"`
	F31 int32 `table:",index=f31"`
	F32 int32 `table:",index=f32"`
	F33 int32 `table:",index=f33"`
	F34 int32 `table:",index=f34"`
	F35 int32 `table:",index=f35"`
	F36 int32 `table:",index=f36"`
	F37 int32 `table:",index=f37"`
	F38 int32 `table:",index=f38"`
	F39 int32 `table:",index=f39"`
	F40 int32 `table:",index=f40"`
	F41 int32 `table:",index=f41"`
	F42 int32 `table:",index=f42"`
	F43 int32 `table:",index=f43"`
	F44 int32 `table:",index=f44"`
	F45 int32 `table:",index=f45"`
	F46 int32 `table:",index=f46"`
	F47 int32 `table:",index=f47"`
	F48 int32 `table:",index=f48"`
	F49 int32 `table:",index=f49"`
	F50 int32 `table:",index=f50"`
}

func setAll(w *ixWide, v int32) {
	w.F00 = v
	w.F01 = v
	w.F02 = v
	w.F03 = v
	w.F04 = v
	w.F05 = v
	w.F06 = v
	w.F07 = v
	w.F08 = v
	w.F09 = v
	w.F10 = v
	w.F11 = v
	w.F12 = v
	w.F13 = v
	w.F14 = v
	w.F15 = v
	w.F16 = v
	w.F17 = v
	w.F18 = v
	w.F19 = v
	w.F20 = v
	w.F21 = v
	w.F22 = v
	w.F23 = v
	w.F24 = v
	w.F25 = v
	w.F26 = v
	w.F27 = v
	w.F28 = v
	w.F29 = v
	w.F30 = v
	w.F31 = v
	w.F32 = v
	w.F33 = v
	w.F34 = v
	w.F35 = v
	w.F36 = v
	w.F37 = v
	w.F38 = v
	w.F39 = v
	w.F40 = v
	w.F41 = v
	w.F42 = v
	w.F43 = v
	w.F44 = v
	w.F45 = v
	w.F46 = v
	w.F47 = v
	w.F48 = v
	w.F49 = v
	w.F50 = v
}

// txRecorder records the transactions a store sends.
type txRecorder struct {
	service.Tables
	mu  sync.Mutex
	txs [][]service.Action
}

func (r *txRecorder) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	r.mu.Lock()
	r.txs = append(r.txs, slices.Clone(acts))
	r.mu.Unlock()
	return r.Tables.Transact(ctx, table, acts)
}

// check checks the transactions recorded since the last check: at most 100 actions each,
// and every index row in the transaction of the entity it belongs to. It returns their
// sizes.
func (r *txRecorder) check(e *Env, step string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sizes []int
	for _, acts := range r.txs {
		sizes = append(sizes, len(acts))
		if len(acts) > 100 {
			e.Errorf("%s: a transaction of %d actions", step, len(acts))
		}
		mains := map[string]bool{}
		for _, a := range acts {
			if !strings.HasPrefix(a.Row.RowKey, "~ix.") {
				mains[a.Row.RowKey] = true
			}
		}
		for _, a := range acts {
			if !strings.HasPrefix(a.Row.RowKey, "~ix.") {
				continue
			}
			ok := false
			for rk := range mains {
				// An index row key ends with the end of its value ("." or "Z") and the row key.
				ok = ok || strings.HasSuffix(a.Row.RowKey, "."+rk) || strings.HasSuffix(a.Row.RowKey, "Z"+rk)
			}
			if !ok {
				e.Errorf("%s: the index row %s is not in its entity's transaction", step, a.Row.RowKey)
			}
		}
	}
	r.txs = nil
	return sizes
}

// ixUserPlain is ixUser as written before its indexes were declared.
type ixUserPlain struct {
	abstractions.Entity
	Email string
	Name  string
}

// ixConsistent checks the index rows of partition pk against its entities: every entity's
// main row lists the index rows that exist for it, and every index row is listed by the
// entity it names.
func ixConsistent(ctx context.Context, ts service.Tables, table, pk string) (listedBy map[string]int, ixRows int, err error) {
	rows, err := storedRows(ctx, ts, table, service.Query{Filter: "PartitionKey eq " + service.QuoteString(pk)})
	if err != nil {
		return nil, 0, err
	}
	listedBy = map[string]int{}
	listed := map[string]string{}
	exists := map[string]string{}
	for _, r := range rows {
		if strings.HasPrefix(r.RowKey, "~ix.") {
			of, _ := r.Get("_IxOf")
			exists[r.RowKey] = of.Str()
			continue
		}
		listedBy[r.RowKey] = 0
		if v, ok := r.Get("_Ix"); ok && v.Str() != "" {
			for _, k := range strings.Split(v.Str(), "/") {
				listed[k] = r.RowKey
				listedBy[r.RowKey]++
			}
		}
	}
	for k, of := range exists {
		if listed[k] != of || !strings.HasSuffix(k, of) {
			return nil, 0, fmt.Errorf("index row %s names %q, which does not list it", k, of)
		}
	}
	for k, rk := range listed {
		if exists[k] != rk {
			return nil, 0, fmt.Errorf("entity %s lists the index row %s, which does not exist", rk, k)
		}
	}
	return listedBy, len(exists), nil
}
