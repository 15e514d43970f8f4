package backup

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/unified-data/gotables/abstractions"
)

// Throttling: a request the service answers with 429 or 503 (throttled, busy), 500
// OperationTimedOut or InternalError, 408 or 504, or that cannot reach the service, is sent
// again after a pause that doubles from firstBackoff to maxBackoff, up to maxAttempts in
// all; each pause is logged.
const (
	firstBackoff = 200 * time.Millisecond
	maxBackoff   = 30 * time.Second
	maxAttempts  = 12
)

type retrier struct {
	log     *slog.Logger
	retries atomic.Int64
	// pause is the wait before a retry; tests shorten it.
	pause func(attempt int) time.Duration
}

func newRetrier(log *slog.Logger) *retrier {
	return &retrier{log: log, pause: backoffPause}
}

// backoffPause is the pause before retry attempt+1; tests shorten it.
var backoffPause = backoff

func backoff(attempt int) time.Duration {
	d := firstBackoff << (attempt - 1)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	return d
}

// transient reports a failure worth sending again after a pause: the service throttling
// or busy, or no answer at all. A request that may change something is sent again only
// when sending it twice does what sending it once does (every request of a backup or
// restore is, once a transaction's outcome is settled: see restorer.transact).
func transient(err error) bool {
	if unreachable(err) {
		return true
	}
	var se *abstractions.StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return true
	case http.StatusInternalServerError:
		return se.ErrorCode == "OperationTimedOut" || se.ErrorCode == "InternalError"
	}
	return false
}

// do runs f until it succeeds, fails for a reason other than throttling or no answer, runs
// out of attempts or ctx ends.
func (r *retrier) do(ctx context.Context, what string, f func() error) error {
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || !transient(err) || attempt == maxAttempts || ctx.Err() != nil {
			return err
		}
		if werr := r.wait(ctx, what, attempt, err); werr != nil {
			return werr
		}
	}
}

// wait pauses before attempt+1 of a request that failed with err, logging it; it returns
// ctx's error if ctx ends first.
func (r *retrier) wait(ctx context.Context, what string, attempt int, err error) error {
	d := r.pause(attempt)
	r.retries.Add(1)
	r.log.Warn("backup: the service is throttling, busy or unreachable; backing off and going on",
		"request", what, "attempt", attempt, "wait", d, "error", err)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
