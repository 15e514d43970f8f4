// Package attempt counts the tries of one service call, so the engine can tell a refusal its
// own earlier try caused (a 409 for an insert that was applied) from a real one.
package attempt

import (
	"context"
	"sync/atomic"
)

// Attempts counts the tries one service call made. A client that retries inside one call
// (the Azure SDK resends a request whose response was lost, or that met a 500 or 503) makes
// the service's answer to the last try the call's result, and that answer may be a refusal
// the first try caused: a 409 for an insert that was applied, a 412 for a conditional write
// whose own first try changed the ETag. The engine puts an Attempts in the context of each
// write (WithAttempts), every Tables implementation that retries calls CountAttempt once per
// try it sends, and the engine asks Retried before it believes such a refusal.
//
// An implementation that never retries need not count: a call with no counted try reads as
// "not retried".
//
// A layer that cannot count every try, but knows when it resends (a retrying wrapper
// around another service.Tables), calls NoteRetry before each resend instead.
type Attempts struct {
	n       atomic.Int32
	resends atomic.Int32
}

type attemptsKey struct{}

// attemptsCtx is a context carrying an Attempts: one allocation per write, where
// context.WithValue and a separate counter would take two.
type attemptsCtx struct {
	context.Context
	a Attempts
}

func (c *attemptsCtx) Value(key any) any {
	if key == (attemptsKey{}) {
		return &c.a
	}
	return c.Context.Value(key)
}

// WithAttempts returns a context that carries a new, zero Attempts, and the Attempts.
func WithAttempts(ctx context.Context) (context.Context, *Attempts) {
	c := &attemptsCtx{Context: ctx}
	return c, &c.a
}

// CountAttempt records one try of the call whose context is ctx. It does nothing when ctx
// carries no Attempts.
func CountAttempt(ctx context.Context) {
	if a, ok := ctx.Value(attemptsKey{}).(*Attempts); ok {
		a.n.Add(1)
	}
}

// NoteRetry records that the call whose context is ctx is about to be sent again. It does
// nothing when ctx carries no Attempts.
func NoteRetry(ctx context.Context) {
	if a, ok := ctx.Value(attemptsKey{}).(*Attempts); ok {
		a.resends.Add(1)
	}
}

// Count returns the tries counted so far.
func (a *Attempts) Count() int {
	if a == nil {
		return 0
	}
	return int(a.n.Load())
}

// Retried reports whether the call sent more than one try, so that its answer may be the
// service's answer to a resend of a request it had already applied.
func (a *Attempts) Retried() bool {
	return a != nil && (a.n.Load() > 1 || a.resends.Load() > 0)
}

// SDKRetrier is implemented by a Tables that already retries its calls as the Azure SDK's
// retry policy does (a fault injector that resends after a 500, a 503 or a lost response,
// counting each try). An account that would add retries of its own over its service
// (tables.NewAccountOver, applying Options.ClientOptions.Retry) adds none over a service whose RetriesLikeSDK reports
// true, so that a call meets one layer of retries, with the SDK's number of tries, as on
// Azure. A wrapper around such a service hides the method unless it forwards it.
type SDKRetrier interface {
	RetriesLikeSDK() bool
}
