package fidelity

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/expiry"
	"github.com/unified-data/gotables/tables/feed"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

// More expiry scenarios: what a sweep writes beside its deletes (change records, released
// blobs), a write that lands between a sweep's read and its delete, the sweep's rate bound,
// the verbs and lookups over expired rows, and the refusals' messages.

// expDoc is an expiring type whose large values go to blobs.
type expDoc struct {
	abstractions.Entity
	Body       string `table:",split=text"`
	Attachment *abstractions.File
	Expires    time.Time `table:",expires"`
}

// expOwner holds a unique value and expires.
type expOwner struct {
	abstractions.Entity
	Email   string    `table:",unique=email"`
	Expires time.Time `table:",expires=1h"`
}

// expHook is a table service that runs a write of another process just before the first
// delete of a chosen row reaches the service: the moment between a sweep's read of the row
// and its conditional delete.
type expHook struct {
	service.Tables
	mu     sync.Mutex
	before map[string]func() // row key → the write to run first, once
}

func (h *expHook) fire(acts []service.Action) {
	for _, a := range acts {
		if a.Op != service.OpDelete {
			continue
		}
		h.mu.Lock()
		f := h.before[a.Row.RowKey]
		delete(h.before, a.Row.RowKey)
		h.mu.Unlock()
		if f != nil {
			f()
		}
	}
}

func (h *expHook) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	h.fire([]service.Action{a})
	return h.Tables.Write(ctx, table, a)
}

func (h *expHook) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	h.fire(acts)
	return h.Tables.Transact(ctx, table, acts)
}

func expirySweepScenarios() []Scenario {
	return []Scenario{
		{
			Name: "expiry/sweep-with-a-feed",
			Run: func(ctx context.Context, e *Env) {
				c := newExpClock()
				s := expStores(e, c, false)
				e.OK("enable the feed", feed.Enable(s, nil))
				e.OK("create a", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "f|a"}, User: "ann"}))
				e.OK("create b", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "f|b"}, User: "bob", Expires: expT0.Add(5 * time.Hour)}))
				e.OK("create c", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "f|c"}, User: "cy", Expires: expT0.Add(30 * time.Minute)}))
				r, err := feed.NewRelay(s, &feed.RelayOptions{Name: "r", Parallel: 1})
				e.OK("relay", err)
				var got []string
				h := func(_ context.Context, rec feed.Record) error {
					got = append(got, fmt.Sprintf("%s %s v%d", rec.Entity, rec.Kind, rec.Version))
					return nil
				}
				_, err = r.Pass(ctx, h)
				e.OK("first pass", err)
				sort.Strings(got)
				e.Equal("the creates' records", got, []string{"f|a created v1", "f|b created v1", "f|c created v1"})

				// At 2h, a (1h) and c (30m) expired; the typed sweep deletes them through the
				// delete path, which writes each one's record in its transaction.
				c.at0(2 * time.Hour)
				got = nil
				rep, err := expiry.Sweep(ctx, s, nil)
				e.OK("sweep", err)
				e.Equal("swept", rep.Swept, 2)
				_, err = r.Pass(ctx, h)
				e.OK("second pass", err)
				sort.Strings(got)
				e.Equal("one deleted record per swept row", got, []string{"f|a deleted v2", "f|c deleted v2"})
				got = nil
				_, err = r.Pass(ctx, h)
				e.OK("third pass", err)
				e.Equal("nothing delivered twice", len(got), 0)

				// SweepTable, without the type, writes no record: the feed is a setting of
				// each process's stores, not of the table.
				c.at0(6 * time.Hour)
				rep, err = expiry.SweepTable(ctx, s.Account(), e.Table, "Expires", nil)
				e.OK("sweep by column", err)
				e.Equal("swept by column", rep.Swept, 1)
				_, err = r.Pass(ctx, h)
				e.OK("last pass", err)
				e.Equal("no record of a row swept by column", len(got), 0)
				e.Equal("rows left", expRaw(ctx, e, "f"), []string{})
			},
		},
		{
			Name: "expiry/offloaded-values",
			Run: func(ctx context.Context, e *Env) {
				c := newExpClock()
				container := e.Name("expoff")
				s := storeOf[expDoc](e, &tables.Options{Now: c.now, BlobOffload: &tables.BlobOffloadOptions{
					Container: container, ThresholdBytes: offThreshold, CleanupGrace: noGrace}})
				doc := func(id string, v byte, at time.Time) *expDoc {
					return &expDoc{Entity: abstractions.Entity{ID: id}, Body: strings.Repeat(string('a'+rune(v)), 150_000),
						Attachment: abstractions.FileFromBytes([]byte{v}, ""), Expires: at}
				}
				e.OK("create a", s.Create(ctx, doc("o|a", 1, expT0.Add(time.Hour))))
				e.OK("create b", s.Create(ctx, doc("o|b", 2, expT0.Add(time.Hour))))
				e.Equal("two blobs per row", len(e.blobNames(ctx, container)), 4)
				e.nextSecond(ctx) // the released blobs are older than the grace
				c.at0(2 * time.Hour)
				_, err := s.One(ctx, "o|a")
				e.Is("read an expired offloaded row", err, abstractions.ErrNotFound)
				// A create over the expired row releases its blobs as a delete does.
				e.OK("create small over a", s.Create(ctx, &expDoc{Entity: abstractions.Entity{ID: "o|a"}, Body: "small", Expires: expT0.Add(10 * time.Hour)}))
				e.observeBlobs(ctx, container, "blobs after the create over a")
				e.Equal("b's blobs stay", len(e.blobNames(ctx, container)), 2)
				rep, err := expiry.Sweep(ctx, s, nil)
				e.OK("sweep", err)
				e.Equal("swept", rep.Swept, 1)
				e.Equal("the sweep released b's blobs", e.blobNames(ctx, container), []string(nil))
				e.Equal("rows left: a and its expiry index row", len(expRaw(ctx, e, "o")), 2)
				got, err := s.One(ctx, "o|a")
				e.OK("read the new a", err)
				e.Equal("its body", got.Body, "small")
			},
		},
		{
			Name: "expiry/writes-during-a-sweep",
			Run: func(ctx context.Context, e *Env) {
				// Three rows expire at 1h. The sweeping process's clock says 2h; another
				// process's clock lags at 59m (beyond the margin, which the sweep cannot
				// then protect) and renews a; a third process, on the sweeper's time,
				// creates b anew over its expired row. Both writes land between the sweep's
				// read of the row and its delete.
				sweeper, lagging := newExpClock(), newExpClock()
				s := expStores(e, sweeper, false)
				for _, k := range []string{"a", "b", "c"} {
					e.OK("create "+k, s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "r|" + k}, User: "old"}))
				}
				sweeper.at0(2 * time.Hour)
				lagging.at0(59 * time.Minute)
				renewer := expStores(e, lagging, false)
				creator := expStores(e, sweeper, false)
				hook := &expHook{Tables: e.Tables, before: map[string]func(){
					"a": func() {
						at, err := expiry.Touch(ctx, renewer, "r|a", 5*time.Hour)
						e.OK("renew a during the sweep", err)
						e.Equal("a's new expiry", at, expT0.Add(5*time.Hour+59*time.Minute))
					},
					"b": func() {
						e.OK("create b over its expired row during the sweep", creator.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "r|b"}, User: "new", Expires: expT0.Add(10 * time.Hour)}))
					},
				}}
				acct := e.NewAccount(hook, e.Blobs, &tables.Options{Now: sweeper.now})
				hooked, err := tables.For[expSession](acct, &tables.StoreOptions{Table: e.Table})
				e.OK("the sweeping store", err)
				rep, err := expiry.Sweep(ctx, hooked, nil)
				e.OK("sweep", err)
				e.Equal("report", fmt.Sprintf("%+v", rep), "{Partitions:1 Expired:1 Swept:1 Renewed:2 OldestUnswept:0s}")
				e.Equal("both writes fired", len(hook.before), 0)
				expLive(ctx, e, renewer, "r", "r|a old", "r|b new")

				// The rate bound: five expired rows at 20 deletes a second take at least
				// the four intervals between the deletes (an upper bound would only measure
				// the machine).
				for i := range 5 {
					e.OK("create", s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: fmt.Sprintf("q|%d", i)}, Expires: expT0.Add(3 * time.Hour)}))
				}
				sweeper.at0(4 * time.Hour)
				start := time.Now()
				rep, err = expiry.Sweep(ctx, s, &expiry.SweepOptions{Rate: 20})
				took := time.Since(start)
				e.OK("sweep at a rate", err)
				e.Equal("swept at a rate", rep.Swept, 5)
				if took < 4*time.Second/20 {
					e.Errorf("5 deletes at 20 a second took %v, less than the 200ms the rate implies", took)
				}
			},
		},
		{
			Name: "expiry/verbs-lookups-and-messages",
			Run: func(ctx context.Context, e *Env) {
				c := newExpClock()
				s := expStores(e, c, true)
				for _, k := range []string{"try", "moc"} {
					e.OK("create "+k, s.Create(ctx, &expSession{Entity: abstractions.Entity{ID: "v|" + k}, User: "old"}))
				}
				owners := storeOf[expOwner](e, &tables.Options{Now: c.now})
				e.OK("create the owner", owners.Create(ctx, &expOwner{Entity: abstractions.Entity{ID: "v|owner"}, Email: "a@example.com"}))
				email, err := index.On(owners, "email")
				e.OK("the unique index", err)
				got, err := email.Get(ctx, "a@example.com")
				e.OK("get the live owner", err)
				e.Equal("the owner", got.ID, "v|owner")
				c.at0(time.Hour + time.Second)

				out, err := abstractions.TryMutate(ctx, s, "v|try", func(x *expSession) error { x.User = "x"; return nil }, nil)
				e.OK("try mutate of an expired row", err)
				e.Equal("try mutate's outcome", out.Status, abstractions.OutcomeNotFound)
				v, err := abstractions.MutateOrCreate(ctx, s, "v|moc", func() *expSession { return &expSession{User: "made"} },
					func(x *expSession) error { x.User += "+1"; return nil }, nil)
				e.OK("mutate or create over an expired row", err)
				e.Equal("it created anew", v.User, "made+1")
				e.Equal("the new row's expiry", v.Expires, expT0.Add(2*time.Hour+time.Second))
				expLive(ctx, e, s, "v", "v|moc made+1")
				_, err = email.Get(ctx, "a@example.com")
				e.Is("get a value whose only owner expired", err, abstractions.ErrNotFound)

				// The refusals carry their rule.
				_, err = expiry.Touch(ctx, s, "v|moc", -time.Minute)
				e.Is("touch with a negative time to live", err, abstractions.ErrInvalidArgument)
				e.Equal("its message says a positive one", strings.Contains(fmt.Sprint(err), "needs a positive one"), true)
				far := &expSession{Entity: abstractions.Entity{ID: "v|far"}, Expires: time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC)}
				err = s.Create(ctx, far)
				e.Is("an expiry beyond the service's dates", err, abstractions.ErrInvalidArgument)
				e.Observe("its message", e.normalize(fmt.Sprint(err)))
				e.Equal("its message says the range", strings.Contains(fmt.Sprint(err), "after 1601-01-01T00:00:00Z and before year 10000"), true)
				type negTTL struct {
					abstractions.Entity
					Expires time.Time `table:",expires=-5m"`
				}
				_, err = tables.For[negTTL](s.Account(), &tables.StoreOptions{Table: e.Table})
				e.Is("a negative default", err, abstractions.ErrInvalidArgument)
				e.Equal("its message says a positive duration", strings.Contains(fmt.Sprint(err), "a positive duration"), true)
			},
		},
	}
}
