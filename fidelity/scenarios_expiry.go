package fidelity

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/expiry"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

// The expiry scenarios drive a store whose rows expire with a clock they move: every read
// path must hide a row whose time has come, writes must treat it as missing, and the rows
// left behind must be the same on both backends.

// expSession is a row with a default time to live; Expires may also be set by the caller.
type expSession struct {
	abstractions.Entity
	User    string    `table:",index=user"`
	Expires time.Time `table:",expires=1h"`
}

// expLarge is a split-aware row that expires: its continuation rows go with it.
type expLarge struct {
	abstractions.Entity
	Body    string    `table:",split=text"`
	Expires time.Time `table:",expires"`
}

// expClock is a clock a scenario moves.
type expClock struct{ at atomic.Int64 }

func newExpClock() *expClock {
	c := &expClock{}
	c.set(expT0)
	return c
}

var expT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func (c *expClock) now() time.Time      { return time.Unix(0, c.at.Load()).UTC() }
func (c *expClock) set(t time.Time)     { c.at.Store(t.UnixNano()) }
func (c *expClock) at0(d time.Duration) { c.set(expT0.Add(d)) }

// expStores returns the session store over the scenario's services with clock c, caching
// reads when cache is set.
func expStores(e *Env, c *expClock, cache bool) *tables.Store[expSession] {
	o := &tables.Options{Now: c.now}
	if cache {
		o.Cache = tables.Absolute(time.Hour)
	}
	return storeOf[expSession](e, o)
}

// expReads records what every read path of s returns for partition pk.
func expReads(ctx context.Context, e *Env, s *tables.Store[expSession], step, pk string, want ...string) {
	e.t.Helper()
	ids := func(xs []*expSession) []string {
		out := make([]string, 0, len(xs))
		for _, x := range xs {
			out = append(out, x.ID)
		}
		sort.Strings(out)
		return out
	}
	list, err := s.List(ctx, pk)
	e.OK(step+": list", err)
	for i := range want {
		want[i] = pk + "|" + want[i]
	}
	if want == nil {
		want = []string{}
	}
	e.Equal(step+": list ids", ids(list), want)
	all, err := s.ListAll(ctx)
	e.OK(step+": list all", err)
	e.Observe(step+": list all ids", ids(all))
	n, err := s.Count(ctx, pk)
	e.OK(step+": count", err)
	e.Equal(step+": count equals list", n, len(list))
	na, err := s.CountAll(ctx)
	e.OK(step+": count all", err)
	e.Equal(step+": count all equals list all", na, len(all))
	q, err := s.Query(ctx, abstractions.Query[expSession]{Partition: pk})
	e.OK(step+": query", err)
	e.Equal(step+": query ids", ids(q), ids(list))
	// A projection that leaves the expiry field out still hides an expired row.
	user := abstractions.Field(func(x *expSession) *string { return &x.User })
	qs, err := s.Query(ctx, abstractions.Query[expSession]{Partition: pk, Select: []abstractions.Selector[expSession]{user}})
	e.OK(step+": query with a projection", err)
	e.Equal(step+": projected ids", ids(qs), ids(list))
	var streamed []*expSession
	for v, err := range s.Stream(ctx, abstractions.Query[expSession]{Partition: pk}) {
		e.OK(step+": stream", err)
		streamed = append(streamed, v)
	}
	e.Equal(step+": stream ids", ids(streamed), ids(list))
	var paged []*expSession
	cursor := ""
	for {
		p, err := s.Page(ctx, abstractions.Query[expSession]{Partition: pk, Take: 2, Cursor: cursor})
		e.OK(step+": page", err)
		paged = append(paged, p.Items...)
		if !p.HasMore() {
			break
		}
		cursor = p.Cursor
	}
	e.Equal(step+": page ids", ids(paged), ids(list))
	recent, err := abstractions.Recent(ctx, s, pk, 10, "")
	e.OK(step+": recent", err)
	e.Equal(step+": recent ids", ids(recent), ids(list))
	any, err := s.Any(ctx, abstractions.Query[expSession]{Partition: pk})
	e.OK(step+": any", err)
	e.Equal(step+": any", any, len(list) > 0)
	ix, err := index.On(s, "user")
	e.OK(step+": index", err)
	found, err := ix.Find(ctx, pk, "ann")
	e.OK(step+": index find", err)
	e.Observe(step+": index find ids", ids(found))
	nf, err := ix.Count(ctx, pk, "ann")
	e.OK(step+": index count", err)
	e.Equal(step+": index count equals find", nf, len(found))
	ip, err := ix.Page(ctx, index.Range{}, abstractions.Query[expSession]{Partition: pk, Take: 10})
	e.OK(step+": index page", err)
	e.Equal(step+": index page ids", ids(ip.Items), ids(list))
	for _, id := range []string{pk + "|a", pk + "|b", pk + "|c"} {
		v, err := s.One(ctx, id)
		if err != nil {
			e.Is(step+": one "+id, err, abstractions.ErrNotFound)
		} else {
			e.Observe(step+": one "+id, v.User+" "+v.Expires.Format(time.RFC3339))
		}
		ok, err := s.Exists(ctx, id)
		e.OK(step+": exists "+id, err)
		e.Equal(step+": exists "+id+" agrees with one", ok, v != nil)
	}
}

// expLive checks the ids and users partition pk of s lists, sorted, against want.
func expLive(ctx context.Context, e *Env, s *tables.Store[expSession], pk string, want ...string) {
	e.t.Helper()
	ents, err := s.List(ctx, pk)
	e.OK("list", err)
	live := []string{}
	for _, x := range ents {
		live = append(live, x.ID+" "+x.User)
	}
	sort.Strings(live)
	e.Equal("live rows", live, want)
}

// expRaw returns the row keys of partition pk as the service holds them.
func expRaw(ctx context.Context, e *Env, pk string) []string {
	e.t.Helper()
	rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey eq " + service.QuoteString(pk), Select: []string{}})
	e.OK("raw scan", err)
	return keysOf(rows)
}

func expiryScenarios() []Scenario {
	return []Scenario{
		{
			Name: "expiry/declaration-and-bad-input",
			Run: func(ctx context.Context, e *Env) {
				type notTime struct {
					abstractions.Entity
					Expires int64 `table:",expires"`
				}
				type zeroTTL struct {
					abstractions.Entity
					Expires time.Time `table:",expires=0s"`
				}
				type negTTL struct {
					abstractions.Entity
					Expires time.Time `table:",expires=-5m"`
				}
				type twoFields struct {
					abstractions.Entity
					A time.Time `table:",expires"`
					B time.Time `table:",expires"`
				}
				acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock})
				_, err := tables.For[notTime](acct, &tables.StoreOptions{Table: e.Table})
				e.Is("an expiry field that is not a time", err, abstractions.ErrInvalidArgument)
				_, err = tables.For[zeroTTL](acct, &tables.StoreOptions{Table: e.Table})
				e.Is("a zero time to live", err, abstractions.ErrInvalidArgument)
				_, err = tables.For[negTTL](acct, &tables.StoreOptions{Table: e.Table})
				e.Is("a negative time to live", err, abstractions.ErrInvalidArgument)
				_, err = tables.For[twoFields](acct, &tables.StoreOptions{Table: e.Table})
				e.Is("two expiry fields", err, abstractions.ErrInvalidArgument)

				s := storeOf[expSession](e, nil)
				far := &expSession{Entity: abstractions.Entity{ID: "p|far"}, Expires: time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC)}
				e.Is("an expiry beyond the service's dates", s.Create(ctx, far), abstractions.ErrInvalidArgument)
				early := &expSession{Entity: abstractions.Entity{ID: "p|early"}, Expires: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}
				e.Is("an expiry before the service's dates", s.Create(ctx, early), abstractions.ErrInvalidArgument)
				e.Observe("nothing was written", expRaw(ctx, e, "p"))
			},
		},
		{
			Name: "expiry/every-read-hides-an-expired-row",
			Run: func(ctx context.Context, e *Env) {
				for _, cache := range []bool{false, true} {
					c := newExpClock()
					s := expStores(e, c, cache)
					pk := fmt.Sprintf("cache%v", cache)
					// a: the default time to live (1h); b: its own time (2h); c: 30m.
					e.OK("create a", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: pk + "|a"}, User: "ann"}))
					e.OK("create b", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: pk + "|b"}, User: "ann", Expires: expT0.Add(2 * time.Hour)}))
					e.OK("create c", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: pk + "|c"}, User: "bob", Expires: expT0.Add(30 * time.Minute)}))
					expReads(ctx, e, s, pk+": at t0", pk, "a", "b", "c")
					c.at0(30*time.Minute - time.Nanosecond)
					expReads(ctx, e, s, pk+": just before 30m", pk, "a", "b", "c")
					c.at0(59 * time.Minute)
					expReads(ctx, e, s, pk+": at 59m", pk, "a", "b")
					c.at0(time.Hour) // a row is expired from its expiry time on
					expReads(ctx, e, s, pk+": at 1h", pk, "b")
					// The account's expiry clock never goes back: set back, a is still gone.
					c.at0(10 * time.Minute)
					expReads(ctx, e, s, pk+": clock set back", pk, "b")
					c.at0(3 * time.Hour)
					expReads(ctx, e, s, pk+": at 3h", pk)
					// Every row is still stored: reads hide them, a sweep deletes them.
					e.Observe(pk+": raw rows", len(expRaw(ctx, e, pk)))
				}
			},
		},
		{
			Name: "expiry/writes-over-an-expired-row",
			Run: func(ctx context.Context, e *Env) {
				c := newExpClock()
				s := expStores(e, c, true)
				id := func(k string) string { return "w|" + k }
				for _, k := range []string{"create", "lww", "strict", "mutate", "getorcreate", "upsert", "patch", "delete"} {
					e.OK("create "+k, s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: id(k)}, User: "old"}))
				}
				strict, err := s.One(ctx, id("strict"))
				e.OK("read strict", err)
				c.at0(time.Hour + time.Second)
				// A patch that would renew an expired row finds it missing.
				expires := abstractions.Field(func(x *expSession) *time.Time { return &x.Expires })
				_, err = s.Patch(ctx, id("patch"), abstractions.Set(abstractions.NewPatch[expSession](), expires, expT0.Add(5*time.Hour)))
				e.Is("patch of an expired row", err, abstractions.ErrNotFound)

				fresh := &expSession{Entity: abstractions.Entity{ID: id("create")}, User: "new"}
				e.OK("create over an expired row", s.Create(ctx, fresh))
				e.Equal("the new row's expiry", fresh.Expires, expT0.Add(2*time.Hour+time.Second))
				got, err := s.One(ctx, id("create"))
				e.OK("read the new row", err)
				e.Equal("the new row", got.User, "new")
				e.Is("create over the new row", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: id("create")}}), abstractions.ErrDuplicateKey)

				e.Is("lww update of an expired row", s.Update(ctx, &expSession{Entity: abstractions.Entity{ID: id("lww")}, User: "x"}, abstractions.LastWriterWins), abstractions.ErrNotFound)
				strict.User = "x"
				e.Is("strict update of an expired row", s.Update(ctx, strict, abstractions.Strict), abstractions.ErrNotFound)
				_, err = abstractions.Mutate(ctx, s, id("mutate"), func(x *expSession) error { x.User = "x"; return nil }, nil)
				e.Is("mutate of an expired row", err, abstractions.ErrNotFound)
				v, created, err := abstractions.GetOrCreate(ctx, s, id("getorcreate"), func() *expSession { return &expSession{User: "made"} })
				e.OK("get or create over an expired row", err)
				e.Equal("get or create created", created, true)
				e.Equal("get or create's row", v.User, "made")
				e.OK("upsert over an expired row", s.Upsert(ctx, &expSession{Entity: abstractions.Entity{ID: id("upsert")}, User: "up"}))
				e.OK("create batch over expired rows", s.CreateBatch(ctx, []*expSession{
					{Entity: abstractions.Entity{ID: id("lww")}, User: "batch"}, {Entity: abstractions.Entity{ID: id("new")}, User: "batch"}}))
				e.Deleted("delete of an expired row", false)(s.Delete(ctx, id("delete"), ""))

				expLive(ctx, e, s, "w", "w|create new", "w|getorcreate made", "w|lww batch", "w|new batch", "w|upsert up")
				// The index rows of the replaced rows went with them.
				listedBy, ixRows, err := ixConsistent(ctx, e.Tables, e.Table, "w")
				if err != nil {
					e.Errorf("index rows: %v", err)
				}
				e.Observe("index rows", fmt.Sprint(len(listedBy), " ", ixRows))
				e.Observe("raw rows", expRaw(ctx, e, "w"))

				// A split-aware row that expired: a create over it replaces it and releases
				// its continuation rows.
				ls := storeOf[expLarge](e, &tables.Options{Now: c.now})
				big := strings.Repeat("x", 100_000)
				e.OK("create large", ls.Create(ctx, &expLarge{Entity: abstractions.Entity{ID: "l|a"}, Body: big, Expires: c.now().Add(time.Minute)}))
				e.Observe("large rows", len(expRaw(ctx, e, "l")))
				c.set(c.now().Add(2 * time.Minute))
				_, err = ls.One(ctx, "l|a")
				e.Is("read an expired large row", err, abstractions.ErrNotFound)
				e.OK("create small over it", ls.Create(ctx, &expLarge{Entity: abstractions.Entity{ID: "l|a"}, Body: "small"}))
				e.Equal("large rows after", expRaw(ctx, e, "l"), []string{"l|a"})
				lv, err := ls.One(ctx, "l|a")
				e.OK("read it", err)
				e.Equal("its body", lv.Body, "small")
			},
		},
		{
			Name: "expiry/transactions",
			Run: func(ctx context.Context, e *Env) {
				c := newExpClock()
				s := expStores(e, c, true)
				for _, k := range []string{"a", "b", "c"} {
					e.OK("create "+k, s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "t|" + k}, User: "old"}))
				}
				e.OK("create live", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "t|live"}, User: "old", Expires: expT0.Add(5 * time.Hour)}))
				strict, err := s.One(ctx, "t|b")
				e.OK("read b", err)
				c.at0(time.Hour + time.Second) // a, b and c expired
				before := expRaw(ctx, e, "t")

				// Update of an expired row in a transaction: missing, nothing sent.
				tx := s.Transaction("t")
				s.UpdateIn(tx, &expSession{Entity: abstractions.Entity{ID: "t|b"}, User: "x"}, abstractions.LastWriterWins)
				e.Is("lww update of an expired row in a transaction", tx.Commit(ctx), abstractions.ErrNotFound)
				strict.User = "x"
				tx = s.Transaction("t")
				s.UpdateIn(tx, strict, abstractions.Strict)
				e.Is("strict update of an expired row in a transaction", tx.Commit(ctx), abstractions.ErrNotFound)
				// A create over a live row fails as the service refuses it.
				tx = s.Transaction("t")
				s.CreateIn(tx, &expSession{Entity: abstractions.Entity{ID: "t|live"}, User: "x"})
				s.CreateIn(tx, &expSession{Entity: abstractions.Entity{ID: "t|c"}, User: "x"})
				e.Is("create over a live row in a transaction", tx.Commit(ctx), abstractions.ErrDuplicateKey)
				e.Equal("nothing was written", expRaw(ctx, e, "t"), before)

				// A create over an expired row replaces it, with its index rows; an upsert
				// writes over one.
				a := &expSession{Entity: abstractions.Entity{ID: "t|a"}, User: "new"}
				tx = s.Transaction("t")
				s.CreateIn(tx, a)
				s.CreateIn(tx, &expSession{Entity: abstractions.Entity{ID: "t|fresh"}, User: "fresh"})
				s.UpsertIn(tx, &expSession{Entity: abstractions.Entity{ID: "t|b"}, User: "up"})
				e.OK("create over an expired row in a transaction", tx.Commit(ctx))
				e.Equal("the new row's expiry", a.Expires, expT0.Add(2*time.Hour+time.Second))
				expLive(ctx, e, s, "t", "t|a new", "t|b up", "t|fresh fresh", "t|live old")
				tx = s.Transaction("t")
				s.CreateIn(tx, &expSession{Entity: abstractions.Entity{ID: "t|a"}, User: "again"})
				e.Is("create over the new row in a transaction", tx.Commit(ctx), abstractions.ErrDuplicateKey)
				listedBy, ixRows, err := ixConsistent(ctx, e.Tables, e.Table, "t")
				if err != nil {
					e.Errorf("index rows: %v", err)
				}
				e.Observe("index rows", fmt.Sprint(len(listedBy), " ", ixRows))
				e.Observe("raw rows", expRaw(ctx, e, "t"))
			},
		},
		{
			Name: "expiry/sweep-and-touch",
			Run: func(ctx context.Context, e *Env) {
				c := newExpClock()
				s := expStores(e, c, false)
				// Rows expiring over three hours in three partitions; one that never expires.
				for i := range 9 {
					pk := fmt.Sprintf("s%d", i%3)
					at := expT0.Add(time.Duration(10+i*20) * time.Minute)
					e.OK("create", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: fmt.Sprintf("%s|r%d", pk, i)}, User: "u", Expires: at}))
				}
				type forever struct {
					abstractions.Entity
					Expires *time.Time `table:",expires"`
				}
				fs := storeOf[forever](e, &tables.Options{Now: c.now})
				e.OK("create a row that never expires", fs.Create(ctx, &forever{Entity: abstractions.Entity{ID: "s0|forever"}}))
				raw := func(step string) []string {
					var keys []string
					for _, pk := range []string{"s0", "s1", "s2", "~ux._expires"} {
						keys = append(keys, expRaw(ctx, e, pk)...)
					}
					e.Observe(step, keys)
					return keys
				}
				e.Equal("rows before", len(raw("rows before")), 9*3+1+3*3) // entity, user and expiry index rows; a mark per partition and hour

				e.Is("sweep of a store without expiry", func() error { _, err := expiry.Sweep(ctx, storeOf[customerRow](e, nil), nil); return err }(), abstractions.ErrInvalidArgument)
				_, err := expiry.Touch(ctx, s, "s0|r0", -time.Minute)
				e.Is("touch with a negative time to live", err, abstractions.ErrInvalidArgument)

				// At 1h05m: r0 (10m), r1 (30m) and r2 (50m) expired more than the margin ago.
				c.at0(65 * time.Minute)
				// r3 (70m) is renewed before it expires; r1 cannot be: it expired.
				at, err := expiry.Touch(ctx, s, "s0|r3", 0)
				e.OK("touch r3", err)
				e.Equal("r3's new expiry", at, expT0.Add(125*time.Minute))
				_, err = expiry.Touch(ctx, s, "s1|r1", time.Hour)
				e.Is("touch of an expired row", err, abstractions.ErrNotFound)
				rep, err := expiry.Sweep(ctx, s, nil)
				e.OK("sweep at 1h05m", err)
				e.Equal("report at 1h05m", fmt.Sprintf("%+v", rep), "{Partitions:3 Expired:3 Swept:3 Renewed:0 OldestUnswept:0s}")
				raw("rows after the first sweep")

				// At 2h25m: r3 (renewed to 2h05m), r4..r6 (1h30m–2h10m) expired; r7 (2h30m), r8 not.
				c.at0(145 * time.Minute)
				var seen []expiry.Report
				rep, err = expiry.Sweep(ctx, s, &expiry.SweepOptions{Max: 2, Progress: func(r expiry.Report) { seen = append(seen, r) }})
				e.OK("sweep with a bound", err)
				e.Equal("bounded sweep swept", rep.Swept, 2)
				e.Equal("bounded sweep left an expired row", rep.OldestUnswept > 0, true)
				e.Equal("progress calls", len(seen), rep.Partitions)
				rep, err = expiry.Sweep(ctx, s, &expiry.SweepOptions{Rate: 1000})
				e.OK("sweep resumed", err)
				e.Equal("resumed sweep swept", rep.Swept, 2)
				raw("rows after the second sweep")
				left, err := s.ListAll(ctx)
				e.OK("list all", err)
				var ids []string
				for _, x := range left {
					ids = append(ids, x.ID)
				}
				sort.Strings(ids)
				e.Equal("live rows", ids, []string{"s0|forever", "s1|r7", "s2|r8"}) // the other type's row reads as one
				_, err = fs.One(ctx, "s0|forever")
				e.OK("the row without an expiry time is still there", err)
				c.at0(10 * time.Hour)
				rep, err = expiry.Sweep(ctx, s, nil)
				e.OK("last sweep", err)
				e.Equal("last sweep swept", rep.Swept, 2)
				// Every expired row went with its index rows, and every mark of a past hour.
				e.Equal("rows at the end", raw("rows at the end"), []string{"s0|forever"})
			},
		},
	}
}
