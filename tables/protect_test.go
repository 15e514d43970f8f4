package tables

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

type payroll struct {
	abstractions.Entity
	Name   string
	Salary int64     `table:",protected=admin|hr"`
	Notes  []string  `table:",protected=admin"`
	Key    []byte    `table:",protected=admin"`
	Bio    string    `table:",protected=admin"`
	Since  time.Time `table:",protected=admin"`
	Boss   *string   `table:",protected=admin"`
}

var since = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

func storedPayroll() payroll {
	return payroll{Entity: abstractions.Entity{ID: "p|a"}, Name: "Ann", Salary: 100, Notes: []string{"a"}, Key: []byte{1}, Bio: "short", Since: since}
}

type roleKey struct{}

// roles is an Authorizer that allows the roles the context carries and records what it was
// asked.
type roles struct{ asked [][]string }

func (r *roles) IsAllowed(ctx context.Context, want []string) bool {
	r.asked = append(r.asked, want)
	have, _ := ctx.Value(roleKey{}).([]string)
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}

func TestProtectedFields(t *testing.T) {
	boss := "Bea"
	long := strings.Repeat("é", 100)
	const stale = `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`
	cases := []struct {
		name    string
		auth    bool     // an Authorizer is configured
		caller  []string // the caller's roles
		missing bool     // the row does not exist
		upsert  bool     // Upsert instead of a last-writer-wins Update
		etag    string   // Strict Update with this ETag ("current": the stored one)
		change  func(v *payroll)
		kind    error
		says    []string
		sent    service.Op // the write sent; 0: none
	}{
		{name: "unprotected change", change: func(v *payroll) { v.Name = "Bo" }, sent: service.OpReplace},
		{name: "no Authorizer", change: func(v *payroll) { v.Salary = 200 }, kind: abstractions.ErrProtectedProperty,
			says: []string{"Salary", "admin|hr", "from 100 to 200", "no Authorizer", "nothing was written"}},
		{name: "allowed role", auth: true, caller: []string{"hr"}, change: func(v *payroll) { v.Salary = 200 }, sent: service.OpReplace},
		{name: "denied", auth: true, caller: []string{"staff"}, change: func(v *payroll) { v.Salary = 200 }, kind: abstractions.ErrProtectedProperty,
			says: []string{"does not allow"}},
		{name: "JSON-stored field", change: func(v *payroll) { v.Notes = append(v.Notes, "b") }, kind: abstractions.ErrProtectedProperty,
			says: []string{"Notes", "[a] to [a b]"}},
		{name: "bytes", change: func(v *payroll) { v.Key = []byte{2, 3} }, kind: abstractions.ErrProtectedProperty,
			says: []string{"from 1 bytes 01 to 2 bytes 0203"}},
		{name: "long text is shortened", change: func(v *payroll) { v.Bio = long }, kind: abstractions.ErrProtectedProperty,
			says: []string{"(100 characters)"}},
		{name: "time", change: func(v *payroll) { v.Since = since.Add(time.Hour) }, kind: abstractions.ErrProtectedProperty,
			says: []string{"2020-01-02T03:04:05Z to 2020-01-02T04:04:05Z"}},
		{name: "nil pointer", change: func(v *payroll) { v.Boss = &boss }, kind: abstractions.ErrProtectedProperty,
			says: []string{`from nil to "Bea"`}},
		{name: "same values", change: func(v *payroll) { v.Notes = []string{"a"}; v.Key = []byte{1} }, sent: service.OpReplace},
		{name: "upsert of a new row", upsert: true, missing: true, change: func(v *payroll) { v.Salary = 1e6 }, sent: service.OpInsert},
		{name: "upsert changing a protected value", upsert: true, change: func(v *payroll) { v.Salary = 0 }, kind: abstractions.ErrProtectedProperty},
		{name: "upsert keeping them", upsert: true, change: func(v *payroll) { v.Name = "Bo" }, sent: service.OpReplace},
		{name: "strict on the current version", etag: "current", change: func(v *payroll) { v.Name = "Bo" }, sent: service.OpReplace},
		{name: "strict on a stale version is sent unchecked", etag: stale, change: func(v *payroll) { v.Salary = 5 },
			kind: abstractions.ErrConcurrencyConflict, sent: service.OpReplace},
		{name: "update of a missing row", missing: true, change: func(v *payroll) {}, kind: abstractions.ErrNotFound, sent: service.OpReplace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.WithValue(context.Background(), roleKey{}, tc.caller)
			auth := &roles{}
			o := &Options{}
			if tc.auth {
				o.Authorizer = auth
			}
			s, f := newStore[payroll](t, o)
			if !tc.missing {
				v := storedPayroll()
				if err := s.Create(ctx, &v); err != nil {
					t.Fatal(err)
				}
			}
			stored, _ := f.row("Items", "p", "a")
			f.resetCalls()
			v := storedPayroll()
			tc.change(&v)
			var err error
			switch {
			case tc.upsert:
				err = s.Upsert(ctx, &v)
			case tc.etag != "":
				v.ETag = tc.etag
				if tc.etag == "current" {
					v.ETag = stored.ETag
				}
				err = s.Update(ctx, &v, abstractions.Strict)
			default:
				err = s.Update(ctx, &v, abstractions.LastWriterWins)
			}
			wantKind(t, err, tc.kind)
			for _, w := range tc.says {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			switch {
			case tc.sent == 0 && len(f.actions) != 0:
				t.Errorf("sent %+v", f.actions)
			case tc.sent != 0 && (len(f.actions) != 1 || f.actions[0].Op != tc.sent):
				t.Errorf("sent %+v, want one %v", f.actions, tc.sent)
			case tc.sent == service.OpReplace && !tc.missing && tc.etag != stale && f.actions[0].IfMatch != stored.ETag:
				// The write is conditional on the version checked.
				t.Errorf("sent on condition %q, want the version read %q", f.actions[0].IfMatch, stored.ETag)
			case tc.etag == stale && f.actions[0].IfMatch != stale:
				t.Errorf("sent on condition %q, want the caller's %q", f.actions[0].IfMatch, stale)
			}
			after, _ := f.row("Items", "p", "a")
			if tc.kind != nil && after.ETag != stored.ETag {
				t.Error("a refused write changed the row")
			}
			if tc.auth && tc.etag == stale && len(auth.asked) != 0 {
				t.Errorf("a stale write asked the Authorizer %v", auth.asked)
			}
		})
	}
}

// A type without protected fields pays nothing: no read before the write.
func TestUnprotectedTypeIsNotRead(t *testing.T) {
	ctx := context.Background()
	s, f := newStore[item](t, nil)
	v := &item{Entity: abstractions.Entity{ID: "p|a"}}
	if err := s.Upsert(ctx, v); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, v, abstractions.Auto); err != nil {
		t.Fatal(err)
	}
	if n := f.count("GetRow"); n != 0 {
		t.Errorf("%d reads", n)
	}
}

// noGuardPause removes the pause between the attempts of the protected-field check for
// one test.
func noGuardPause(t *testing.T) {
	old := engine.GuardRetry
	engine.GuardRetry = abstractions.RetryOptions{Backoff: -1}
	t.Cleanup(func() { engine.GuardRetry = old })
}

// The check and the write cannot be separated by another write: a row that changes between
// them is read and checked again.
func TestProtectedCheckRaces(t *testing.T) {
	noGuardPause(t)
	cases := []struct {
		name    string
		upsert  bool
		missing bool
		// meddle is another writer's change, made before the write of attempts 1..n.
		meddle func(f *fakeTables)
		n      int
		kind   error
		reads  int
	}{
		{name: "changed once", n: 1, meddle: func(f *fakeTables) {
			r, _ := f.row("Items", "p", "a")
			f.put("Items", r)
		}, reads: 2},
		{name: "changed every time", n: engine.GuardAttempts, meddle: func(f *fakeTables) {
			r, _ := f.row("Items", "p", "a")
			f.put("Items", r)
		}, kind: abstractions.ErrConcurrencyConflict, reads: engine.GuardAttempts},
		{name: "deleted before an update", n: 1, meddle: func(f *fakeTables) { f.remove("Items", "p", "a") },
			kind: abstractions.ErrNotFound, reads: 2},
		{name: "deleted before an upsert", upsert: true, n: 1, meddle: func(f *fakeTables) { f.remove("Items", "p", "a") }, reads: 2},
		{name: "created before an upsert's insert", upsert: true, missing: true, n: 1, meddle: func(f *fakeTables) {
			v := storedPayroll()
			f.put("Items", service.Row{PartitionKey: "p", RowKey: "a", Properties: []service.Property{
				{Name: "Salary", Value: service.Int64(v.Salary + 1)}}})
		}, kind: abstractions.ErrProtectedProperty, reads: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, f := newStore[payroll](t, nil)
			if !tc.missing {
				v := storedPayroll()
				if err := s.Create(ctx, &v); err != nil {
					t.Fatal(err)
				}
			}
			f.resetCalls()
			meddled := 0
			f.before = func(call string) error {
				if call == "Write" && meddled < tc.n {
					meddled++
					tc.meddle(f)
				}
				return nil
			}
			v := storedPayroll()
			v.Name = "Bo"
			var err error
			if tc.upsert {
				err = s.Upsert(ctx, &v)
			} else {
				err = s.Update(ctx, &v, abstractions.LastWriterWins)
			}
			wantKind(t, err, tc.kind)
			if n := f.count("GetRow"); n != tc.reads {
				t.Errorf("%d reads, want %d", n, tc.reads)
			}
			if tc.kind == abstractions.ErrConcurrencyConflict && !strings.Contains(err.Error(), "5 times") {
				t.Errorf("%q does not say how often it tried", err)
			}
		})
	}
}

func TestProtectedCheckFailures(t *testing.T) {
	noGuardPause(t)
	busy := fakeStatus(http.StatusServiceUnavailable, "ServerBusy")
	cases := []struct {
		name  string
		setup func(f *fakeTables, cancel context.CancelFunc)
		kind  error
		says  string
	}{
		{"the read fails", func(f *fakeTables, _ context.CancelFunc) {
			f.before = func(call string) error {
				if call == "GetRow" {
					return busy
				}
				return nil
			}
		}, abstractions.ErrUnavailable, ""},
		{"the write fails", func(f *fakeTables, _ context.CancelFunc) {
			f.before = func(call string) error {
				if call == "Write" {
					return fakeStatus(http.StatusBadRequest, "InvalidInput")
				}
				return nil
			}
		}, nil, "refused"},
		{"the stored row does not decode", func(f *fakeTables, _ context.CancelFunc) {
			f.put("Items", service.Row{PartitionKey: "p", RowKey: "a", Properties: []service.Property{{Name: "Salary", Value: service.String("lots")}}})
		}, nil, "reading the stored row"},
		{"cancelled while retrying", func(f *fakeTables, cancel context.CancelFunc) {
			f.before = func(call string) error {
				if call == "Write" {
					r, _ := f.row("Items", "p", "a")
					f.put("Items", r)
					cancel()
				}
				return nil
			}
		}, context.Canceled, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, f := newStore[payroll](t, nil)
			v := storedPayroll()
			if err := s.Create(ctx, &v); err != nil {
				t.Fatal(err)
			}
			tc.setup(f, cancel)
			v.Name = "Bo"
			err := s.Update(ctx, &v, abstractions.LastWriterWins)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.kind != nil {
				wantKind(t, err, tc.kind)
			}
			if tc.kind == nil && errors.Is(err, abstractions.ErrProtectedProperty) {
				t.Errorf("%v blames a protected field", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%q does not say %q", err, tc.says)
			}
		})
	}
}

func TestProtectedCellsCompare(t *testing.T) {
	s := patchStore(t, nil)
	prot := s.core.ProtectedFields()
	if len(prot) != 2 || prot[0].Name != "Pay" || prot[1].Name != "Secret" {
		t.Fatalf("protected fields: %v", prot)
	}
	enc := func(v *patchee) []service.Property {
		props, err := codec.Encode(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		return props
	}
	a := enc(&patchee{Secret: []byte{1, 2}})
	b := enc(&patchee{Secret: append([]byte(nil), 1, 2)})
	c := enc(&patchee{Secret: []byte{1, 3}})
	secret := prot[1]
	if !engine.SameCells(engine.CellsOf(a, secret), engine.CellsOf(b, secret)) || engine.SameCells(engine.CellsOf(a, secret), engine.CellsOf(c, secret)) {
		t.Fatal("bytes compare by content")
	}
	long := &patchee{Name: strings.Repeat("é", 100), Secret: make([]byte, 100)}
	for _, f := range []string{"Name", "Secret"} {
		fld, _ := s.core.Plan.Field(f)
		d := engine.DescribeField(reflectValue(long), fld)
		if len(d) > 200 || !strings.Contains(d, "100") {
			t.Errorf("%s described as %q", f, d)
		}
	}
}

func reflectValue(v *patchee) reflect.Value { return reflect.ValueOf(v).Elem() }
