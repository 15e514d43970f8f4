package expiry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/expiry"
	"github.com/unified-data/gotables/tables/index"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type session struct {
	abstractions.Entity
	User    string    `table:",index=user"`
	Expires time.Time `table:",expires=1h"`
}

// counting counts the requests a store sends.
type counting struct {
	service.Tables
	calls atomic.Int64
}

func (c *counting) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	c.calls.Add(1)
	return c.Tables.GetRow(ctx, table, pk, rk, sel)
}

func (c *counting) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	c.calls.Add(1)
	return c.Tables.Write(ctx, table, a)
}

func (c *counting) Transact(ctx context.Context, table string, acts []service.Action) ([]service.Written, error) {
	c.calls.Add(1)
	return c.Tables.Transact(ctx, table, acts)
}

func (c *counting) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	c.calls.Add(1)
	return c.Tables.Query(ctx, table, q)
}

// clock is a clock a test moves.
type clock struct{ at atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.at.Load()).UTC() }
func (c *clock) set(t time.Time)     { c.at.Store(t.UnixNano()) }
func (c *clock) add(d time.Duration) { c.set(c.now().Add(d)) }

var t0 = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

// fixture returns a store of session over Azurite in a table of its own, the request
// counter under it, and its clock.
func fixture(t testing.TB, prefix string) (*tables.Store[session], *counting, *clock) {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	svc, err := azservice.NewFromConnectionString(conn, &azservice.Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{Tables: svc}
	clk := &clock{}
	clk.set(t0)
	acct := tables.NewAccountOver("azurite", c, nil, &tables.Options{Now: clk.now})
	name := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	s, err := tables.For[session](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureCreated(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.DeleteTable(context.Background(), name) })
	return s, c, clk
}

// fill writes n sessions over partitions partitions in batches, the first expired of them
// expiring at t0+10m and the others at t0+10h.
func fill(t testing.TB, s *tables.Store[session], n, partitions, expired int) {
	t.Helper()
	ctx := context.Background()
	byPK := map[int][]*session{}
	for i := range n {
		at := t0.Add(10 * time.Hour)
		if i < expired {
			at = t0.Add(10 * time.Minute)
		}
		pk := i % partitions
		byPK[pk] = append(byPK[pk], &session{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|s%06d", pk, i)}, User: "u", Expires: at})
	}
	for _, batch := range byPK {
		if err := s.CreateBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSweepCost: a sweep's requests grow with the rows that expired, not with the table: a
// table of 2,000 rows of which 20 expired costs what a table of those 20 alone costs.
func TestSweepCost(t *testing.T) {
	ctx := context.Background()
	cost := func(n int) (int64, expiry.Report) {
		s, c, clk := fixture(t, "expcost")
		fill(t, s, n, 4, 20)
		clk.add(time.Hour)
		before := c.calls.Load()
		rep, err := expiry.Sweep(ctx, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.calls.Load() - before, rep
	}
	small, srep := cost(20)
	big, brep := cost(2000)
	if srep.Swept != 20 || brep.Swept != 20 {
		t.Fatalf("swept %d and %d rows, want 20 each", srep.Swept, brep.Swept)
	}
	if big != small {
		t.Errorf("the sweep of 20 expired rows among 2,000 sent %d requests, of those 20 alone %d", big, small)
	}
	t.Logf("%d requests for 20 expired rows in 4 partitions (%+v)", small, srep)
}

// TestRoundTrips: what expiry costs a store's writes and reads.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	s, c, clk := fixture(t, "exprt")
	step := func(what string, want int64, f func() error) {
		t.Helper()
		before := c.calls.Load()
		err := f()
		if err != nil && !errors.Is(err, abstractions.ErrNotFound) {
			t.Fatalf("%s: %v", what, err)
		}
		if got := c.calls.Load() - before; got != want {
			t.Errorf("%s: %d requests, want %d", what, got, want)
		}
	}
	v := &session{Entity: abstractions.Entity{ID: "p|a"}, User: "u"}
	step("the first create of an hour and partition writes its mark", 2, func() error { return s.Create(ctx, v) })
	step("a create in the same hour and partition", 1, func() error { return s.Create(ctx, &session{Entity: abstractions.Entity{ID: "p|b"}}) })
	step("a read", 1, func() error { _, err := s.One(ctx, "p|a"); return err })
	step("a strict update reads the row's expiry first", 2, func() error { return s.Update(ctx, v, abstractions.Strict) })
	step("a renewal: a read and a merge", 2, func() error { _, err := expiry.Touch(ctx, s, "p|a", 0); return err })
	clk.add(2 * time.Hour)
	step("a create over an expired row: insert, read, replace, and the new hour's mark", 4, func() error {
		return s.Create(ctx, &session{Entity: abstractions.Entity{ID: "p|b"}})
	})
}

// TestVerifyKeepsTheExpiryIndex: index verification and rebuild, by type or by declared
// columns, leave the expiry index rows alone.
func TestVerifyKeepsTheExpiryIndex(t *testing.T) {
	ctx := context.Background()
	s, _, _ := fixture(t, "expix")
	fill(t, s, 6, 2, 2)
	rep, err := index.Verify(ctx, s, "", nil)
	if err != nil || !rep.Consistent() {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	rep, err = index.RebuildTable(ctx, s.Account(), s.Table(), []index.Declaration{{Name: "user", Column: "User"}}, "", nil)
	if err != nil || !rep.Consistent() || rep.Repaired != 0 {
		t.Fatalf("RebuildTable by columns = %+v, %v", rep, err)
	}
	rep, err = index.Verify(ctx, s, "", nil)
	if err != nil || !rep.Consistent() {
		t.Fatalf("Verify after the rebuild = %+v, %v", rep, err)
	}
}

// TestDeclarationRefusals: a bad declaration is refused by For, with the rule in the message.
func TestDeclarationRefusals(t *testing.T) {
	type notTime struct {
		abstractions.Entity
		Expires string `table:",expires"`
	}
	type zeroTTL struct {
		abstractions.Entity
		Expires time.Time `table:",expires=0s"`
	}
	type badTTL struct {
		abstractions.Entity
		Expires time.Time `table:",expires=soon"`
	}
	type two struct {
		abstractions.Entity
		A, B time.Time `table:",expires"`
	}
	acct, err := tables.NewAccount("UseDevelopmentStorage=true", nil) // nothing is sent
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not a time", func() error { _, err := tables.For[notTime](acct, nil); return err }(), "a time.Time (or *time.Time) field"},
		{"zero", func() error { _, err := tables.For[zeroTTL](acct, nil); return err }(), "a positive duration"},
		{"not a duration", func() error { _, err := tables.For[badTTL](acct, nil); return err }(), "a positive duration"},
		{"two", func() error { _, err := tables.For[two](acct, nil); return err }(), "one expiry time"},
	} {
		if !errors.Is(tc.err, abstractions.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(tc.err), tc.want) {
			t.Errorf("%s: %v, want ErrInvalidArgument saying %q", tc.name, tc.err, tc.want)
		}
	}
	type plain struct{ abstractions.Entity }
	s, err := tables.For[plain](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := expiry.Touch(context.Background(), s, "p|a", time.Hour); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("Touch of a type without expiry: %v", err)
	}
}

// TestUniqueValueOfAnExpiredRow: a unique value an expired row holds is free: another entity
// claims it (the expired owner's claim is stale), and the expired row cannot take it back.
func TestUniqueValueOfAnExpiredRow(t *testing.T) {
	type account struct {
		abstractions.Entity
		Email   string    `table:",unique=email"`
		Expires time.Time `table:",expires=1h"`
	}
	ctx := context.Background()
	_, c, clk := fixture(t, "expuq")
	acct := tables.NewAccountOver("azurite", c, nil, &tables.Options{Now: clk.now})
	s, err := tables.For[account](acct, &tables.StoreOptions{Table: fmt.Sprintf("expuq%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteTable(context.Background(), s.Table()) })
	if err := s.Create(ctx, &account{Entity: abstractions.Entity{ID: "p|old"}, Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	err = s.Create(ctx, &account{Entity: abstractions.Entity{ID: "p|new"}, Email: "a@example.com"})
	if !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Fatalf("a live owner's value: %v, want ErrDuplicateKey", err)
	}
	clk.add(2 * time.Hour)
	if err := s.Create(ctx, &account{Entity: abstractions.Entity{ID: "p|new"}, Email: "a@example.com"}); err != nil {
		t.Fatalf("the value of an expired owner: %v", err)
	}
	email, err := index.On(s, "email")
	if err != nil {
		t.Fatal(err)
	}
	got, err := email.Get(ctx, "a@example.com")
	if err != nil || got.ID != "p|new" {
		t.Fatalf("Get = %v, %v", got, err)
	}
	err = s.Create(ctx, &account{Entity: abstractions.Entity{ID: "p|old"}, Email: "a@example.com"})
	if !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Fatalf("a create over the expired owner with its old value: %v, want ErrDuplicateKey", err)
	}
}
