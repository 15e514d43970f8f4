package fidelity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// gateRow is the entity of the transition scenarios.
type gateRow struct {
	abstractions.Entity
	Status     string
	ResolvedBy string
}

// renamedRow declares the old column of its renamed field.
type renamedRow struct {
	abstractions.Entity
	Name string `table:",alias=FullName"`
}

// employeeRow has role-gated fields.
type employeeRow struct {
	abstractions.Entity
	Name   string
	Salary float64 `table:",protected=admin|accountant"`
	Badge  []byte  `table:",protected=admin"`
	Note   *string
}

// roles is an Authorizer that allows the roles it lists and records what it was asked.
type roles struct {
	allow []string
	mu    sync.Mutex
	asked [][]string
}

type callerKey struct{}

func (r *roles) IsAllowed(ctx context.Context, want []string) bool {
	r.mu.Lock()
	r.asked = append(r.asked, want)
	r.mu.Unlock()
	if ctx.Value(callerKey{}) == nil {
		return false
	}
	for _, w := range want {
		if slices.Contains(r.allow, w) {
			return true
		}
	}
	return false
}

func employee(e *employeeRow) string {
	if e == nil {
		return "nil"
	}
	note := "nil"
	if e.Note != nil {
		note = *e.Note
	}
	return fmt.Sprintf("%s name=%q salary=%v badge=%x note=%s", e.ID, e.Name, e.Salary, e.Badge, note)
}

// hammer runs n workers and reports the first error any returned.
func hammer(e *Env, n int, work func(i int) error) {
	e.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = work(i)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		e.Errorf("workers: %v", err)
	}
}

var mutateScenarios = []Scenario{
	{
		Name: "store/mutate/counter-16x50",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[counterRow](e, nil)
			e.OK("create", s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "c|1"}}))
			const workers, each = 16, 50
			var succeeded, exhausted atomic.Int64
			var mu sync.Mutex
			seen := map[int]int{}
			stop := make(chan struct{})
			var bad atomic.Value
			var watch sync.WaitGroup
			watch.Add(1)
			go func() {
				// At every moment the counter is the number of successful calls: at least those
				// that returned before the read, at most those plus the calls still running.
				defer watch.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					before := succeeded.Load()
					c, err := s.One(ctx, "c|1")
					after := succeeded.Load()
					if err != nil {
						bad.Store(err.Error())
						return
					}
					if int64(c.N) < before || int64(c.N) > after+workers {
						bad.Store(fmt.Sprintf("counter %d while %d..%d calls had succeeded", c.N, before, after))
					}
				}
			}()
			hammer(e, workers, func(int) error {
				for range each {
					for {
						c, err := abstractions.Mutate(ctx, s, "c|1", func(c *counterRow) error { c.N++; return nil }, nil)
						if errors.Is(err, abstractions.ErrConcurrencyConflict) {
							exhausted.Add(1)
							continue
						}
						if err != nil {
							return err
						}
						succeeded.Add(1)
						mu.Lock()
						seen[c.N]++
						mu.Unlock()
						break
					}
				}
				return nil
			})
			close(stop)
			watch.Wait()
			if b := bad.Load(); b != nil {
				e.Errorf("observer: %v", b)
			}
			c, err := s.One(ctx, "c|1")
			e.OK("read", err)
			e.Equal("counter", c.N, workers*each)
			distinct := len(seen) == workers*each
			for n, k := range seen {
				distinct = distinct && k == 1 && n >= 1 && n <= workers*each
			}
			e.Equal("every success returned its own value 1..800", distinct, true)
			e.t.Logf("[%s] 16x50 Mutate: the attempt budget ran out %d times for 800 successful calls", e.Backend, exhausted.Load())
		},
	},
	{
		Name: "store/mutate/transition-16",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[gateRow](e, nil)
			e.OK("create", s.Create(ctx, &gateRow{Entity: abstractions.Entity{ID: "g|1"}, Status: "open"}))
			outs := make([]abstractions.Outcome[gateRow], 16)
			hammer(e, 16, func(i int) error {
				var err error
				outs[i], err = abstractions.TryTransition(ctx, s, "g|1",
					func(g *gateRow) bool { return g.Status == "open" },
					func(g *gateRow) error { g.Status, g.ResolvedBy = "resolved", fmt.Sprint("user", i); return nil }, nil)
				return err
			})
			updated, winner := 0, ""
			for _, o := range outs {
				if o.Status == abstractions.OutcomeUpdated {
					updated++
					winner = o.Value.ResolvedBy
				}
			}
			e.Equal("exactly one Updated", updated, 1)
			losersSeeWinner := true
			for _, o := range outs {
				if o.Status != abstractions.OutcomeUpdated {
					losersSeeWinner = losersSeeWinner && o.Status == abstractions.OutcomePreconditionFailed && o.Value != nil &&
						o.Value.ResolvedBy == winner && o.Value.Status == "resolved"
				}
			}
			e.Equal("every loser: PreconditionFailed with the winner's row", losersSeeWinner, true)
			g, err := s.One(ctx, "g|1")
			e.OK("read", err)
			e.Equal("stored winner", g.ResolvedBy == winner, true)
			out, err := abstractions.TryTransition(ctx, s, "g|none", func(*gateRow) bool { return true }, func(*gateRow) error { return nil }, nil)
			e.OK("missing", err)
			e.Equal("missing", out.Status, abstractions.OutcomeNotFound)
			out, err = abstractions.TryMutate(ctx, s, "g|none", func(*gateRow) error { return nil }, nil)
			e.OK("try mutate missing", err)
			e.Equal("try mutate missing", out.Status, abstractions.OutcomeNotFound)
			_, err = abstractions.Mutate(ctx, s, "g|none", func(*gateRow) error { return nil }, nil)
			e.Is("mutate missing", err, abstractions.ErrNotFound)
			// Normalise the winner, which differs from run to run, before the rows are compared.
			e.OK("normalise", s.Update(ctx, &gateRow{Entity: abstractions.Entity{ID: "g|1"}, Status: "resolved"}, abstractions.LastWriterWins))
		},
	},
	{
		Name: "store/mutate/get-or-create-16",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			got := make([]*customerRow, 16)
			var created atomic.Int64
			hammer(e, 16, func(i int) error {
				v, c, err := abstractions.GetOrCreate(ctx, s, "eu|Member", func() *customerRow { return &customerRow{Name: fmt.Sprint("caller", i)} })
				if c {
					created.Add(1)
				}
				got[i] = v
				return err
			})
			e.Equal("one caller created", created.Load(), int64(1))
			same := true
			for _, v := range got {
				same = same && v != nil && got[0] != nil && v.Name == got[0].Name && v.ID == "eu|member"
			}
			e.Equal("every caller got the winner's row", same, true)
			n, err := s.CountAll(ctx)
			e.OK("count", err)
			e.Equal("one row", n, 1)
			v, c, err := abstractions.GetOrCreate(ctx, s, "eu|member", func() *customerRow { panic("not called for an existing row") })
			e.OK("existing", err)
			e.Equal("existing", !c && v.Name == got[0].Name, true)
			e.OK("normalise", s.Update(ctx, &customerRow{Entity: abstractions.Entity{ID: "eu|member"}, Name: "member"}, abstractions.LastWriterWins))
		},
	},
	{
		Name: "store/mutate/mutate-or-create-16",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[counterRow](e, nil)
			var exhausted atomic.Int64
			hammer(e, 16, func(int) error {
				for {
					_, err := abstractions.MutateOrCreate(ctx, s, "f|1", func() *counterRow { return &counterRow{} },
						func(c *counterRow) error { c.N++; return nil }, nil)
					if errors.Is(err, abstractions.ErrConcurrencyConflict) {
						exhausted.Add(1)
						continue
					}
					return err
				}
			})
			c, err := s.One(ctx, "f|1")
			e.OK("read", err)
			e.Equal("count", c.N, 16)
			e.t.Logf("[%s] 16-way MutateOrCreate: the attempt budget ran out %d times", e.Backend, exhausted.Load())
		},
	},
	{
		Name: "store/mutate/patch-disjoint",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			c := alice()
			e.OK("create", s.Create(ctx, c))
			sets := []func(p *abstractions.Patch[customerRow], i int){
				func(p *abstractions.Patch[customerRow], i int) {
					abstractions.Set(p, abstractions.Field(func(c *customerRow) *string { return &c.Name }), fmt.Sprint("name", i))
				},
				func(p *abstractions.Patch[customerRow], i int) {
					abstractions.Set(p, abstractions.Field(func(c *customerRow) *string { return &c.Email }), fmt.Sprint("mail", i))
				},
				func(p *abstractions.Patch[customerRow], i int) {
					abstractions.Set(p, abstractions.Field(func(c *customerRow) *float64 { return &c.Balance }), float64(i))
				},
				func(p *abstractions.Patch[customerRow], i int) {
					abstractions.Set(p, abstractions.Field(func(c *customerRow) *[]string { return &c.Tags }), []string{fmt.Sprint("t", i)})
				},
				func(p *abstractions.Patch[customerRow], i int) {
					abstractions.Set(p, abstractions.Field(func(c *customerRow) *string { return &c.Address.City }), fmt.Sprint("city", i))
				},
			}
			hammer(e, len(sets), func(w int) error {
				for i := range 5 {
					p := abstractions.NewPatch[customerRow]()
					sets[w](p, i)
					if _, err := s.Patch(ctx, "eu|alice-smith", p); err != nil {
						return err
					}
				}
				return nil
			})
			got, err := s.One(ctx, "eu|alice-smith")
			e.OK("read", err)
			e.Observe("every writer's last value landed", customer(got))
			e.Equal("sibling column kept", got.Address.Country, "UA")
			e.Equal("all five", got.Name == "name4" && got.Email == "mail4" && got.Balance == 4 &&
				slices.Equal(got.Tags, []string{"t4"}) && got.Address.City == "city4", true)
		},
	},
	{
		Name: "store/mutate/patch-conditions",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[customerRow](e, nil)
			c := alice()
			e.OK("create", s.Create(ctx, c))
			name := func(v string) *abstractions.Patch[customerRow] {
				return abstractions.Set(abstractions.NewPatch[customerRow](), abstractions.Field(func(c *customerRow) *string { return &c.Name }), v)
			}
			etag, err := s.Patch(ctx, c.ID, name("A1").WithETag(c.ETag))
			e.OK("with the current etag", err)
			got, err := s.One(ctx, c.ID)
			e.OK("read", err)
			e.Equal("the returned etag is the row's", etag == got.ETag && etag != c.ETag, true)
			_, err = s.Patch(ctx, c.ID, name("stale").WithETag(c.ETag))
			e.Is("with a stale etag", err, abstractions.ErrConcurrencyConflict)
			_, err = s.Patch(ctx, "eu|nobody", name("x"))
			e.Is("missing row", err, abstractions.ErrNotFound)
			_, err = s.Patch(ctx, "eu|nobody", name("x").WithETag(c.ETag))
			e.Is("missing row with an etag", err, abstractions.ErrNotFound)
			ok, err := s.Exists(ctx, "eu|nobody")
			e.OK("exists", err)
			e.Equal("a patch creates nothing", ok, false)
			got, err = s.One(ctx, c.ID)
			e.OK("read", err)
			e.Observe("after", customer(got))
		},
	},
	{
		Name: "store/mutate/patch-refusals",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[employeeRow](e, nil)
			note := "n"
			emp := &employeeRow{Entity: abstractions.Entity{ID: "hr|bob"}, Name: "Bob", Salary: 100, Note: &note}
			e.OK("create", s.Create(ctx, emp))
			p := func() *abstractions.Patch[employeeRow] { return abstractions.NewPatch[employeeRow]() }
			_, err := s.Patch(ctx, emp.ID, p())
			e.Is("empty", err, abstractions.ErrInvalidArgument)
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *string { return new(string) }), "x"))
			e.Is("selector outside the entity", err, abstractions.ErrNotSupported) // as in a filter: one resolver
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *string { return &x.ID }), "hr|eve"))
			e.Is("the id", err, abstractions.ErrNotSupported)
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *string { return &x.ETag }), "x"))
			e.Is("the etag", err, abstractions.ErrNotSupported)
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *abstractions.Entity { return &x.Entity }), abstractions.Entity{}))
			e.Is("a struct without a column", err, abstractions.ErrNotSupported)
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) **string { return &x.Note }), nil))
			e.Is("a value with no cell", err, abstractions.ErrNotSupported)
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *float64 { return &x.Salary }), 1e6))
			e.Is("protected without AllowProtected", err, abstractions.ErrProtectedProperty)
			e.Equal("the refusal names the field", err != nil && strings.Contains(err.Error(), "Salary"), true)
			big := strings.Repeat("x", 40000)
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *string { return &x.Name }), big))
			e.Is("too large for a cell", err, abstractions.ErrOversizedCell)
			compress := storeOf[employeeRow](e, &tables.Options{Oversized: tables.OversizedCompress})
			_, err = compress.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *string { return &x.Name }), big))
			e.Is("fits only compressed", err, abstractions.ErrNotSupported)
			got, err := s.One(ctx, emp.ID)
			e.OK("read", err)
			e.Equal("nothing was sent", got.ETag == emp.ETag, true)
			_, err = s.Patch(ctx, emp.ID, abstractions.Set(p(), abstractions.Field(func(x *employeeRow) *float64 { return &x.Salary }), 200).AllowProtected())
			e.OK("protected with AllowProtected", err)
			got, err = s.One(ctx, emp.ID)
			e.OK("read", err)
			e.Observe("after", employee(got))
		},
	},
	{
		Name: "store/mutate/aliases",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[renamedRow](e, nil)
			_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "old", "FullName", service.String("Old Only"))))
			e.OK("a row with the old column only", err)
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", "both", "FullName", service.String("old"), "Name", service.String("canonical"))))
			e.OK("a row with both", err)
			v, err := s.One(ctx, "p|old")
			e.OK("read old", err)
			e.Equal("the old column is read", v.Name, "Old Only")
			b, err := s.One(ctx, "p|both")
			e.OK("read both", err)
			e.Equal("the canonical column wins", b.Name, "canonical")
			v, err = abstractions.Mutate(ctx, s, "p|old", func(r *renamedRow) error { r.Name += "!"; return nil }, nil)
			e.OK("mutate rewrites the row", err)
			e.Equal("mutate saw the old column's value", v.Name, "Old Only!")
			raw, err := e.Tables.GetRow(ctx, e.Table, "p", "old", nil)
			e.OK("raw", err)
			e.Observe("a whole-entity write converges to the canonical column", raw)
			_, err = s.Patch(ctx, "p|both", abstractions.Set(abstractions.NewPatch[renamedRow](), abstractions.Field(func(r *renamedRow) *string { return &r.Name }), "patched"))
			e.OK("patch", err)
			b, err = s.One(ctx, "p|both")
			e.OK("read patched", err)
			e.Equal("a patch writes the canonical column", b.Name, "patched")
		},
	},
	{
		Name: "store/mutate/protected-no-authorizer",
		Run: func(ctx context.Context, e *Env) {
			s := storeOf[employeeRow](e, nil)
			emp := &employeeRow{Entity: abstractions.Entity{ID: "hr|bob"}, Name: "Bob", Salary: 100, Badge: []byte{1, 2}}
			e.OK("create is not checked", s.Create(ctx, emp))
			read, err := s.One(ctx, emp.ID)
			e.OK("read", err)
			read.Name = "Robert"
			read.Badge = []byte{1, 2}
			e.OK("other fields change; the same bytes in a new slice", s.Update(ctx, read, abstractions.Strict))
			read.Salary = 5000
			err = s.Update(ctx, read, abstractions.Strict)
			e.Is("salary changes", err, abstractions.ErrProtectedProperty)
			e.Equal("the refusal names the field and both values", err != nil && strings.Contains(err.Error(), "Salary") &&
				strings.Contains(err.Error(), "from 100 to 5000"), true)
			read.Salary = 100
			read.Badge = []byte{9}
			err = s.Update(ctx, read, abstractions.LastWriterWins)
			e.Is("bytes change", err, abstractions.ErrProtectedProperty)
			e.Equal("the refusal names the bytes", err != nil && strings.Contains(err.Error(), "Badge") && strings.Contains(err.Error(), "0102"), true)
			read.Badge = []byte{1, 2}
			read.Salary = 1
			e.Is("upsert changes salary", s.Upsert(ctx, read), abstractions.ErrProtectedProperty)
			read.Salary = 100
			read.Name = "Bobby"
			e.OK("upsert unchanged", s.Upsert(ctx, read))
			e.OK("upsert of a new row is not a change", s.Upsert(ctx, &employeeRow{Entity: abstractions.Entity{ID: "hr|eve"}, Salary: 7}))
			stale := *read
			read.Name = "B"
			e.OK("update", s.Update(ctx, read, abstractions.Strict))
			stale.Salary = 9
			e.Is("a stale strict update is a conflict first", s.Update(ctx, &stale, abstractions.Strict), abstractions.ErrConcurrencyConflict)
			e.Is("update of a missing row", s.Update(ctx, &employeeRow{Entity: abstractions.Entity{ID: "hr|nobody"}}, abstractions.LastWriterWins), abstractions.ErrNotFound)
			n, err := s.UpsertBatch(ctx, []*employeeRow{{Entity: abstractions.Entity{ID: "hr|eve"}, Salary: 8}})
			e.OK("batch writes are trusted", err)
			e.Equal("written", n, 1)
			for _, id := range []string{"hr|bob", "hr|eve"} {
				v, err := s.One(ctx, id)
				e.OK("read "+id, err)
				e.Observe(id, employee(v))
			}
		},
	},
	{
		Name: "store/mutate/protected-authorizer",
		Run: func(ctx context.Context, e *Env) {
			auth := &roles{allow: []string{"accountant"}}
			s := storeOf[employeeRow](e, &tables.Options{Authorizer: auth})
			emp := &employeeRow{Entity: abstractions.Entity{ID: "hr|bob"}, Name: "Bob", Salary: 100, Badge: []byte{1}}
			e.OK("create", s.Create(ctx, emp))
			caller := context.WithValue(ctx, callerKey{}, "carol")
			emp.Salary = 200
			e.OK("an accountant changes the salary", s.Update(caller, emp, abstractions.Strict))
			emp.Salary = 300
			err := s.Update(ctx, emp, abstractions.Strict)
			e.Is("without the caller in the context", err, abstractions.ErrProtectedProperty)
			emp.Salary = 200
			emp.Badge = []byte{2}
			e.Is("the badge needs admin", s.Upsert(caller, emp), abstractions.ErrProtectedProperty)
			emp.Badge = []byte{1}
			emp.Name = "Bobby"
			e.OK("nothing protected changes: the authorizer is not asked", s.Upsert(ctx, emp))
			auth.mu.Lock()
			e.Observe("roles asked", fmt.Sprint(auth.asked))
			auth.mu.Unlock()
			v, err := s.One(ctx, emp.ID)
			e.OK("read", err)
			e.Observe("stored", employee(v))
		},
	},
}
