package faults

import (
	"context"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/unified-data/gotables/tables/service"
)

// DefaultRetries is how many times Tables resends a failed try, as the Azure SDK does by
// default.
const DefaultRetries = 3

// Tables is a service.Tables that injects its Plan's faults into the calls of the service
// it wraps, and retries like the Azure SDK: after a lost response, a reset mid-request, a
// 500 or a 503, and after a reset mid-body of an idempotent request (reads, replaces,
// upserts that replace, deletes: the SDK's GET, PUT and DELETE), at most Retries times,
// without waiting. Each try is counted in the call's attempt.Attempts. A lost response or a
// reset mid-body is injected after the wrapped service applied the call, a reset
// mid-request instead of calling it. An in-memory account over a Tables
// (inmemory.NewAccountOver) adds no retries of its own (see RetriesLikeSDK), so the
// outcomes are those of the Azure backend behind Transport.
type Tables struct {
	service.Tables
	Plan
	// Retries is how many times a failed try is resent; 0 means DefaultRetries, a
	// negative value none.
	Retries int
}

// NewTables returns a Tables over inner.
func NewTables(inner service.Tables) *Tables { return &Tables{Tables: inner} }

var (
	_ service.Tables     = (*Tables)(nil)
	_ attempt.SDKRetrier = (*Tables)(nil)
)

// RetriesLikeSDK reports true: Tables is the SDK's layer of retries (attempt.SDKRetrier),
// so an in-memory account over it adds no retries of its own, and a call meets the same
// number of tries as through the SDK. It reports true even when Retries is negative: the
// account then retries nothing either.
func (t *Tables) RetriesLikeSDK() bool { return true }

func (t *Tables) retries() int {
	switch {
	case t.Retries == 0:
		return DefaultRetries
	case t.Retries < 0:
		return 0
	}
	return t.Retries
}

// run is one call with the SDK's retry loop. idempotent says whether a reset mid-body is
// resent.
func (t *Tables) run(ctx context.Context, kind Calls, idempotent bool, call func() error) error {
	return runWith(ctx, &t.Plan, t.retries(), kind, idempotent, call)
}

// runWith runs call under plan's faults, resending a failed try at most retries times as
// the SDK does. Each try is counted in the context's attempt.Attempts.
func runWith(ctx context.Context, plan *Plan, retries int, kind Calls, idempotent bool, call func() error) error {
	var err error
	for try := 0; ; try++ {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		attempt.CountAttempt(ctx)
		retry := true
		switch f := plan.take(kind); f {
		case 0:
			return call()
		case InternalError, ServerBusy:
			err = statusFault(f)
		case Stall:
			<-ctx.Done()
			return ctx.Err()
		case StallAfterSend:
			_ = call()
			<-ctx.Done()
			return ctx.Err()
		case LoseResponse:
			_ = call()
			err = &Error{Fault: LoseResponse}
		case ResetMidBody:
			_ = call()
			err, retry = &Error{Fault: ResetMidBody}, idempotent
		case ResetMidRequest:
			err = &Error{Fault: ResetMidRequest}
		}
		if !retry || try >= retries {
			return err
		}
	}
}

// CreateTable implements service.Tables.
func (t *Tables) CreateTable(ctx context.Context, table string) error {
	return t.run(ctx, TableCalls, false, func() error { return t.Tables.CreateTable(ctx, table) })
}

// DeleteTable implements service.Tables.
func (t *Tables) DeleteTable(ctx context.Context, table string) error {
	return t.run(ctx, TableCalls, true, func() error { return t.Tables.DeleteTable(ctx, table) })
}

// TableExists implements service.Tables.
func (t *Tables) TableExists(ctx context.Context, table string) (ok bool, err error) {
	err = t.run(ctx, TableCalls, true, func() (err error) { ok, err = t.Tables.TableExists(ctx, table); return err })
	return ok, err
}

// Ping implements service.Tables.
func (t *Tables) Ping(ctx context.Context) error {
	return t.run(ctx, TableCalls, true, func() error { return t.Tables.Ping(ctx) })
}

// GetRow implements service.Tables.
func (t *Tables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (row service.Row, err error) {
	err = t.run(ctx, Reads, true, func() (err error) { row, err = t.Tables.GetRow(ctx, table, pk, rk, sel); return err })
	return row, err
}

// Query implements service.Tables.
func (t *Tables) Query(ctx context.Context, table string, q service.Query) (page service.Page, err error) {
	err = t.run(ctx, Reads, true, func() (err error) { page, err = t.Tables.Query(ctx, table, q); return err })
	return page, err
}

// Write implements service.Tables.
func (t *Tables) Write(ctx context.Context, table string, a service.Action) (w service.Written, err error) {
	// The SDK sends an insert as POST and a merge as PATCH, which it does not resend after
	// a reset mid-body.
	idempotent := a.Op != service.OpInsert && a.Op != service.OpMerge && a.Op != service.OpUpsertMerge
	err = t.run(ctx, Writes, idempotent, func() (err error) { w, err = t.Tables.Write(ctx, table, a); return err })
	return w, err
}

// Transact implements service.Tables.
func (t *Tables) Transact(ctx context.Context, table string, actions []service.Action) (ws []service.Written, err error) {
	err = t.run(ctx, Transactions, false, func() (err error) { ws, err = t.Tables.Transact(ctx, table, actions); return err })
	return ws, err
}
