// Package retry owns how the library meets a busy or failing table service: which failures
// are transient and which answers mean "busy" (one rule for both), the retries an account
// over a service other than the Azure SDK's adds (Tables, with the SDK's policy and
// defaults), the congestion window of batch calls (Pressure), and the pipeline policies
// that tell the window and the metrics about the SDK's own busy answers and retries
// (Signal, CountTries). It refuses nothing; a failure it does not retry is returned as the
// service gave it.
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/unified-data/gotables/tables/internal/telemetry"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Policy is how an account retries a table-service request that failed with a
// transient status (408, 429, 500, 502, 503, 504): the Azure SDK's retry policy
// (azcore/policy.RetryOptions), with the same fields, defaults and delays, so that a backend
// whose service does not go through the SDK (the memory service) backs off as the Azure
// backend does. The zero value means the defaults. Only the status decides: a request
// retried after a busy answer was not applied, since the service refuses it before acting.
type Policy struct {
	// MaxRetries is the number of retries after the first try: 0 means 3, a negative value
	// none.
	MaxRetries int
	// RetryDelay is the base delay: the n-th retry waits (2^n − 1) × RetryDelay, times a
	// random factor in [0.8, 1.3), at most MaxRetryDelay. 0 means 800 ms; a negative value
	// retries at once.
	RetryDelay time.Duration
	// MaxRetryDelay caps one wait: 0 means 60 s, a negative value no cap.
	MaxRetryDelay time.Duration
}

// WithDefaults fills in the SDK's defaults.
func (p Policy) WithDefaults() Policy {
	switch {
	case p.MaxRetries == 0:
		p.MaxRetries = 3
	case p.MaxRetries < 0:
		p.MaxRetries = 0
	}
	switch {
	case p.RetryDelay == 0:
		p.RetryDelay = 800 * time.Millisecond
	case p.RetryDelay < 0:
		p.RetryDelay = 0
	}
	switch {
	case p.MaxRetryDelay == 0:
		p.MaxRetryDelay = 60 * time.Second
	case p.MaxRetryDelay < 0:
		p.MaxRetryDelay = time.Duration(1<<63 - 1)
	}
	return p
}

// delay is the wait before retry n (1-based), computed as the SDK computes it.
func (p Policy) delay(n int) time.Duration {
	factor := float64(int64(1)<<min(n, 62) - 1)
	d := factor * float64(p.RetryDelay) * (rand.Float64()/2 + 0.8)
	if d >= float64(p.MaxRetryDelay) {
		return p.MaxRetryDelay
	}
	return time.Duration(d)
}

// transientStatuses are the statuses the SDK's retry policy retries.
var transientStatuses = []int{
	http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}

// Transient reports a failure worth retrying. A failed transaction's inner action status
// is not (the service acted on the request and refused it); only a status of the request
// itself is.
func Transient(err error) bool {
	var se *abstractions.StatusError
	var te *service.TransactionError
	if !errors.As(err, &se) || errors.As(err, &te) {
		return false
	}
	for _, s := range transientStatuses {
		if se.StatusCode == s {
			return true
		}
	}
	return false
}

// IsBusy reports whether err is the service's answer to overload: 503 (ServerBusy, or any
// other code), 500 OperationTimedOut, or 429.
func IsBusy(err error) bool {
	return abstractions.HasStatus(err, http.StatusServiceUnavailable, "") ||
		abstractions.HasStatus(err, http.StatusInternalServerError, "OperationTimedOut") ||
		abstractions.HasStatus(err, http.StatusTooManyRequests, "")
}

// Tables is a table service whose requests are retried under a Policy: what an account over
// a service other than the Azure SDK's adds (the SDK's pipeline retries itself). Busy
// answers are reported to Busy, retried or not.
type Tables struct {
	service.Tables
	Policy Policy // with its defaults filled in
	Busy   func()
	Meters *telemetry.Meters
}

// do runs fn, retrying it as the policy says. A wait ends early, with the context's error,
// when ctx ends.
func (r *Tables) do(ctx context.Context, fn func() error) error {
	for try := 0; ; try++ {
		err := fn()
		if err == nil || !Transient(err) {
			return err
		}
		if IsBusy(err) {
			r.Busy()
			r.Meters.BusyAnswer(ctx, telemetry.BusyStatus(err))
		}
		if try >= r.Policy.MaxRetries {
			return err
		}
		attempt.NoteRetry(ctx) // the resend's answer may be the echo of this try (package echo)
		t := time.NewTimer(r.Policy.delay(try + 1))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		r.Meters.Retried(ctx)
	}
}

func (r *Tables) CreateTable(ctx context.Context, table string) error {
	return r.do(ctx, func() error { return r.Tables.CreateTable(ctx, table) })
}

func (r *Tables) DeleteTable(ctx context.Context, table string) error {
	return r.do(ctx, func() error { return r.Tables.DeleteTable(ctx, table) })
}

func (r *Tables) TableExists(ctx context.Context, table string) (ok bool, err error) {
	err = r.do(ctx, func() (err error) { ok, err = r.Tables.TableExists(ctx, table); return err })
	return ok, err
}

func (r *Tables) Ping(ctx context.Context) error {
	return r.do(ctx, func() error { return r.Tables.Ping(ctx) })
}

func (r *Tables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (row service.Row, err error) {
	err = r.do(ctx, func() (err error) { row, err = r.Tables.GetRow(ctx, table, pk, rk, sel); return err })
	return row, err
}

func (r *Tables) Write(ctx context.Context, table string, a service.Action) (w service.Written, err error) {
	err = r.do(ctx, func() (err error) { w, err = r.Tables.Write(ctx, table, a); return err })
	return w, err
}

func (r *Tables) Transact(ctx context.Context, table string, actions []service.Action) (ws []service.Written, err error) {
	err = r.do(ctx, func() (err error) { ws, err = r.Tables.Transact(ctx, table, actions); return err })
	return ws, err
}

func (r *Tables) Query(ctx context.Context, table string, q service.Query) (p service.Page, err error) {
	err = r.do(ctx, func() (err error) { p, err = r.Tables.Query(ctx, table, q); return err })
	return p, err
}
