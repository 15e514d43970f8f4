// Rows that expire: a type declares the field that holds its entities' expiry time (the tag
// option expires), and every read of its stores treats a row whose time has come as absent.

package engine

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

// Expiry is a type's expiry declaration: the column of its expiry field and its default time
// to live (0: none; an entity whose field is zero then never expires).
type Expiry struct {
	Field  *codec.Field // nil for a table swept without its Go type (TableExpiry)
	Path   string       // the field's Go path, or the column, for messages
	Column string       // the cell the expiry time is stored in
	TTL    time.Duration
	marks  marks // the marks this store wrote (expiry_sweep.go)
}

// ExpiryOf returns the expiry declaration of the type pl maps (nil when it declares none),
// or why the declaration cannot stand.
func ExpiryOf(pl *codec.Plan) (*Expiry, error) {
	var e *Expiry
	fields := pl.Fields()
	for i := range fields {
		f := &fields[i]
		if !f.Expires {
			continue
		}
		if e != nil {
			return nil, fmt.Errorf("the fields %s and %s both carry the tag option expires; an entity has one expiry time", e.Field.Path, f.Path)
		}
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != reflect.TypeFor[time.Time]() || f.Kind != service.KindDateTime || f.JSON || len(f.Cells) != 1 {
			return nil, fmt.Errorf("the field %s carries the tag option expires but is a %v; the expiry time is an absolute time, a time.Time (or *time.Time) field", f.Path, f.Type)
		}
		e = &Expiry{Field: f, Path: f.Path, Column: f.Cells[0]}
		if f.ExpiresTTL != "" {
			d, err := time.ParseDuration(f.ExpiresTTL)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("the field %s declares expires=%s; a default time to live is a positive duration such as expires=30m or expires=24h (or leave the value out: the entity then sets its own expiry time)", f.Path, f.ExpiresTTL)
			}
			e.TTL = d
		}
	}
	return e, nil
}

// expiryClock holds the latest time an expiry decision was taken at, so that the decisions
// taken on it never go back in time (see ExpiryNow).
type expiryClock struct{ last atomic.Int64 }

// processExpiry is the expiry clock of every account on the real clock (no Options.Now):
// one per process, so that two accounts of a process never disagree backwards.
var processExpiry expiryClock

// at returns t, or the latest time decided on when t is earlier, and remembers the result.
func (c *expiryClock) at(t time.Time) time.Time {
	n := t.UnixNano()
	for {
		last := c.last.Load()
		if n <= last {
			return time.Unix(0, last).UTC()
		}
		if c.last.CompareAndSwap(last, n) {
			return time.Unix(0, n).UTC()
		}
	}
}

// ExpiryNow is the time the account decides expiry on: its clock, but never earlier than a
// time already decided on. Accounts on the real clock share one floor per process, an
// account with its own clock (Options.Now) keeps its own; so a row that one reader of the
// process saw as expired is never seen as present by a later read, even when the system
// clock is set back.
func (a *Account) ExpiryNow() time.Time {
	if a.Cfg.NowFunc == nil {
		return processExpiry.at(time.Now())
	}
	return a.expiry.at(a.Cfg.NowFunc())
}

// ExpiresAt returns the expiry time the row holds (ok false: none, the row never expires).
func (s *Table) ExpiresAt(r *service.Row) (time.Time, bool) {
	if s.Expiry == nil {
		return time.Time{}, false
	}
	v, ok := r.Get(s.Expiry.Column)
	if !ok || v.Kind() != service.KindDateTime {
		return time.Time{}, false
	}
	return v.Time(), true
}

// Expired reports a row whose expiry time has come on the account's expiry clock: it is
// absent to every read of the store.
func (s *Table) Expired(r *service.Row) bool {
	at, ok := s.ExpiresAt(r)
	return ok && !at.After(s.Acct.ExpiryNow())
}

// Hidden reports a row a read of the store does not return: a row it does not own
// (Foreign) or one that expired.
func (s *Table) Hidden(r *service.Row) bool { return s.Foreign(r) || s.Expired(r) }

// WithExpiry is the projection sel with the expiry column, so that a read can tell an
// expired row. A nil projection reads every column already.
func (s *Table) WithExpiry(sel []string) []string {
	if s.Expiry == nil || sel == nil {
		return sel
	}
	return append(sel[:len(sel):len(sel)], s.Expiry.Column)
}

// StampExpiry gives the entity v (a *T of the store's type) the default expiry time now+TTL
// when its expiry field is zero and the type declares a default time to live.
func (s *Table) StampExpiry(v any, now time.Time) {
	if s.Expiry == nil || s.Expiry.TTL == 0 || s.Expiry.Field == nil {
		return
	}
	fv, err := reflect.ValueOf(v).Elem().FieldByIndexErr(s.Expiry.Field.Index)
	if err != nil || !fv.CanSet() {
		return // below a nil pointer: the field is not stored either
	}
	at := now.Add(s.Expiry.TTL)
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			fv.Set(reflect.ValueOf(&at))
		}
		return
	}
	if fv.Interface().(time.Time).IsZero() {
		fv.Set(reflect.ValueOf(at))
	}
}

// expiredError is the error of a write that needs a stored row and finds it expired.
func (s *Table) expiredError(op, pk, rk string) error {
	return &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk,
		Message: "no row has this key (the row there expired); Create or Upsert it"}
}

// createOver is the step of a create whose insert met a row: it reads the row's state and
// reports whether it expired, in which case the next attempt replaces it on condition of the
// version read (so a sweep or another creator that got there first makes it fail and start
// again), and its continuation rows, index rows and blobs are released as a delete's are.
func (s *Table) createOver(ctx context.Context, u *SplitUnit) (bool, error) {
	st, err := s.ReadState(ctx, u.P.PK, u.P.RK)
	if err != nil {
		return false, s.Translate("create", u.P.PK, u.P.RK, err)
	}
	if st.Found && !st.Expired {
		return false, nil
	}
	u.St, u.Read = st, true // not found: gone meanwhile, insert again
	return true, nil
}
