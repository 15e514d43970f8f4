// Package expiry renews and sweeps the rows of stores whose type declares an expiry time.
//
// A time.Time (or *time.Time) field tagged `table:",expires"` holds the absolute time an
// entity expires; `table:",expires=24h"` also gives it a default time to live, which a write
// applies when the field is zero:
//
//	type Session struct {
//		abstractions.Entity
//		User    string
//		Expires time.Time `table:",expires=30m"`
//	}
//
// The declaration is on the type, as indexes are, so every store and every process that
// writes the type agrees on it. An entity whose field is zero (and whose type has no
// default) never expires.
//
// From its expiry time on, a row is absent to every read of the type's stores (One, Exists,
// List, Query, Stream, Page, Count, the stream helpers, index lookups), decided on the
// account's clock (tables.Options.Now), never let go back: the accounts of a process on the
// real clock share that floor, so none of them reads a row another has seen expired. A write
// treats it as missing: Create replaces it on condition of its version, Update and Patch
// fail with [abstractions.ErrNotFound], Delete reports it absent. Rows stay stored until
// [Sweep] deletes them, at the cost of what expired rather than of the table.
//
// [Touch] renews a row (sliding expiry), at the cost of one read and one write.
//
// This package refuses, before anything is sent: a store whose type declares no expiry
// field, and a renewal with a negative time to live, or none for a type without a default.
// See docs/expiry.md for the clock rule, the costs and the limits.
package expiry

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/service"
)

// Margin (one minute) is how long ago a row must have expired, on the sweeping account's clock, for
// [Sweep] to delete it: it covers the difference between the clocks of two processes, so a
// process whose clock is behind does not see a row vanish under it before its own clock
// says it expired.
const Margin = engine.SweepMargin

// core returns the engine table of s, refusing a store without an expiry declaration.
func core[T any](op string, s *tables.Store[T]) (*engine.Table, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: %s of a nil store", abstractions.ErrInvalidArgument, op)
	}
	t := engine.Of(s)
	if t.Expiry == nil {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: t.Name,
			Message: fmt.Sprintf("%v declares no expiry time; tag a time.Time field `table:\",expires\"` (or `table:\",expires=24h\"` for a default time to live); nothing was sent", reflect.TypeFor[T]())}
	}
	return t, nil
}

// Touch renews the row with the id: its expiry time becomes now plus ttl, or plus the
// type's default time to live when ttl is 0, and it returns the new expiry time. It reads
// the row's version and merges the new time on condition of it, with the row's expiry
// index row, in one transaction. A row that is missing or already expired fails with
// [abstractions.ErrNotFound]: a renewal does not bring a row back.
func Touch[T any](ctx context.Context, s *tables.Store[T], id string, ttl time.Duration) (time.Time, error) {
	const op = "touch"
	t, err := core(op, s)
	if err != nil {
		return time.Time{}, err
	}
	_, pk, rk, err := t.ResolveID(op, id)
	if err != nil {
		return time.Time{}, err
	}
	if ttl == 0 {
		ttl = t.Expiry.TTL
	}
	if ttl <= 0 {
		return time.Time{}, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: t.Name, PartitionKey: pk, RowKey: rk,
			Message: fmt.Sprintf("the time to live is %v; a renewal needs a positive one (0 takes the type's default, which %v does not declare); nothing was sent",
				ttl, reflect.TypeFor[T]())}
	}
	at := t.Acct.ExpiryNow().Add(ttl).Truncate(100 * time.Nanosecond)
	row := service.Row{PartitionKey: pk, RowKey: rk, Properties: []service.Property{
		{Name: t.Expiry.Column, Value: service.DateTime(at)},
		{Name: "UpdatedAt", Value: service.DateTime(t.Acct.Now())},
	}}
	if _, err := t.PatchIndexed(ctx, op, row, ""); err != nil {
		return time.Time{}, err
	}
	return at, nil
}

// SweepOptions bound a sweep. nil means no bound.
type SweepOptions struct {
	// Rate is the most rows deleted per second (0: no bound).
	Rate float64
	// Max stops the sweep after that many deletes (0: no bound). A later sweep continues:
	// what it has to do is kept in the table, not in the process.
	Max int
	// Progress, when set, sees the report after each partition.
	Progress func(Report)
}

// Report is what a sweep did.
type Report struct {
	Partitions int // partitions visited
	Expired    int // expired rows found
	Swept      int // expired rows deleted
	// Renewed counts rows the sweep left because they were renewed, replaced or deleted by
	// another writer between its read and its delete.
	Renewed int
	// OldestUnswept is how long ago the oldest expired row the sweep left expired: of the
	// partitions it did not finish because it stopped at Max, or of the one an error or
	// its context stopped it in (partitions it did not reach are not measured); 0 when it
	// left none. Rows that expired less than Margin ago are not due, so not counted as
	// left. The account's meters record it too, as udtables.expiry.oldest_unswept_age,
	// when the sweep ends.
	OldestUnswept time.Duration
}

// Sweep deletes the store's rows that expired at least [Margin] ago, each with its
// continuation rows, index rows and offloaded blobs (and, on a store with a change feed, its
// deleted record), on condition of the version it read
// and only while that version is still expired: a row renewed in the meantime is never
// deleted. It does not scan the table: it reads the marks of the hours whose rows may have
// expired, and in each partition they name, the range of the expiry index below the cutoff,
// so its requests grow with the rows that expired, not with the table. A sweep stopped part
// way (an error, ctx, Max) is resumed by running it again.
func Sweep[T any](ctx context.Context, s *tables.Store[T], opts *SweepOptions) (Report, error) {
	t, err := core("sweep expired", s)
	if err != nil {
		return Report{}, err
	}
	o := SweepOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Rate < 0 || o.Max < 0 {
		return Report{}, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "sweep expired", Table: t.Name,
			Message: fmt.Sprintf("Rate (%v) and Max (%d) are bounds: 0 for none, else positive; nothing was sent", o.Rate, o.Max)}
	}
	lim := engine.SweepLimits{Max: o.Max}
	if o.Rate > 0 {
		lim.Wait = pace(o.Rate)
	}
	if o.Progress != nil {
		lim.Progress = func(st engine.SweepStats) { o.Progress(report(st)) }
	}
	st, err := t.SweepExpired(ctx, lim)
	return report(st), err
}

func report(st engine.SweepStats) Report {
	return Report{Partitions: st.Partitions, Expired: st.Expired, Swept: st.Swept, Renewed: st.Renewed, OldestUnswept: st.Oldest}
}

// pace returns a wait that lets at most rate calls through per second, evenly spaced.
func pace(rate float64) func(context.Context) error {
	interval := time.Duration(float64(time.Second) / rate)
	var next time.Time
	return func(ctx context.Context) error {
		now := time.Now()
		if next.IsZero() || now.After(next) {
			next = now
		}
		wait := next.Sub(now)
		next = next.Add(interval)
		if wait <= 0 {
			return ctx.Err()
		}
		tm := time.NewTimer(wait)
		defer tm.Stop()
		select {
		case <-tm.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// anyRow is the type of the store SweepTable makes: rows of any columns, never decoded.
type anyRow struct{ abstractions.Entity }

// SweepTable is Sweep for a table named by the account and name, for a program without the
// entity's Go type (udtables sweep-expired): column is the one the type's expiry field is
// stored in (the field's name; Outer_Inner for a field of a nested struct). It reads each
// expired row whole before its delete, since it cannot tell a split-aware type's rows. It
// writes no change records (package tables/feed), whose settings are the stores' and not
// the table's; sweep a table with a feed with Sweep, on a store that has it.
func SweepTable(ctx context.Context, acct *tables.Account, table, column string, opts *SweepOptions) (Report, error) {
	s, err := tables.For[anyRow](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		return Report{}, err
	}
	if err := engine.Of(s).SweepAnyType(column); err != nil {
		return Report{}, fmt.Errorf("%w: sweep expired %s: %w", abstractions.ErrInvalidArgument, table, err)
	}
	return Sweep(ctx, s, opts)
}
