// Package echo owns how a write tells its own echo: whether a failed write may have been
// applied by an earlier try of the same call ([MayBe], [TxMayBe], [Unanswered]), and whether
// the stored row proves it was ([Applied]). It sends nothing but that verifying read, and it
// refuses nothing: a write it cannot prove applied keeps its error.
//
// A client that resends a request inside one call (the Azure SDK does when a response is
// lost, or after a 500 or 503) takes the service's answer to the last try as the call's
// result. When the first try was applied, that answer can be a refusal the write caused
// itself: 409 EntityAlreadyExists for an insert, 412 for a write conditional on the ETag the
// first try replaced (or deleted), 404 for a delete. A call whose answer is lost altogether
// (a reset mid-response that the SDK does not retry, as for a POST) fails with a transport
// error although the service may have applied it.
//
// Applied tells these apart by reading the row back and comparing it with the cells the
// write sent: every cell, for an insert, a replace or an upsert; every sent cell, for a
// merge; the row's absence, for a delete. The cells include UpdatedAt, stamped by the
// account's clock at 100 ns, so a row that carries them all is the one this write stored.
// A write token (a hidden column holding a random id per write) would also tell two writes
// of identical cells apart, but it costs a column on every row, changes what other clients
// read, and a merge could not prove it wrote the other cells; the comparison costs a read
// only on the rare failure path and stores nothing.
//
// What stays ambiguous is documented in docs/production.md ("Reliability"): another
// writer storing the very same cells (including the same UpdatedAt) between two tries; a
// delete whose row another writer removed between the tries, or that was missing already
// when a try went unanswered (either reports deleted=true); a write the service applies
// after the call gave up (a request stalled past the deadline); and a write whose
// verifying read fails too, which keeps its original error.
package echo

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

// MayBe reports whether a failed write may have been applied: the client retried and
// the refusal is one an applied earlier try causes, or no answer came back at all.
func MayBe(err error, a *service.Action, retried bool) bool {
	if Unanswered(err) {
		return true
	}
	if !retried {
		return false
	}
	var se *abstractions.StatusError
	if !errors.As(err, &se) {
		return false
	}
	conditional := a.IfMatch != "" && a.IfMatch != service.ETagAny
	switch {
	case se.StatusCode == http.StatusConflict && se.ErrorCode == "EntityAlreadyExists":
		return a.Op == service.OpInsert
	case se.StatusCode == http.StatusPreconditionFailed:
		return conditional && (a.Op == service.OpReplace || a.Op == service.OpMerge || a.Op == service.OpDelete)
	case se.StatusCode == http.StatusNotFound && se.ErrorCode == "ResourceNotFound":
		return a.Op == service.OpDelete
	}
	return false
}

// Unanswered reports an error that leaves the outcome unknown: a transport failure, a 5xx
// answer, or a deadline (a try's own TryTimeout, say), but not an error of the library's own
// (it sent nothing). When the call's own context has ended, applied does not read.
func Unanswered(err error) bool {
	if err == nil || callerr.Own(err) {
		return false
	}
	var te *service.TransactionError
	if errors.As(err, &te) {
		return false // the service answered, blaming one action: nothing was applied
	}
	var se *abstractions.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500
	}
	return true
}

// TxMayBe is MayBe for a transaction: the blamed action's refusal is one an applied
// earlier try causes, or no answer came back.
func TxMayBe(err error, actions []service.Action, retried bool) bool {
	if Unanswered(err) {
		return true
	}
	var te *service.TransactionError
	if !retried || !errors.As(err, &te) || te.Index < 0 || te.Index >= len(actions) {
		return false
	}
	return MayBe(te.Err, &actions[te.Index], true)
}

// Applied reads the row a wrote, from svc (which must not check echoes itself), and reports
// whether the table holds what a wrote, with the stored row (the zero Row for a delete).
// It reads nothing when ctx has ended.
func Applied(ctx context.Context, svc service.Tables, table string, a *service.Action) (service.Row, bool) {
	if ctx.Err() != nil {
		return service.Row{}, false
	}
	if a.Op == service.OpDelete {
		_, err := svc.GetRow(ctx, table, a.Row.PartitionKey, a.Row.RowKey, []string{})
		return service.Row{}, abstractions.HasStatus(err, http.StatusNotFound, "")
	}
	stored, err := svc.GetRow(ctx, table, a.Row.PartitionKey, a.Row.RowKey, nil)
	if err != nil {
		return service.Row{}, false
	}
	whole := a.Op == service.OpInsert || a.Op == service.OpReplace || a.Op == service.OpUpsertReplace
	return stored, Holds(&stored, a.Row.Properties, whole)
}

// Holds reports whether stored carries every sent cell with its value and, when whole, no
// other cell.
func Holds(stored *service.Row, sent []service.Property, whole bool) bool {
	n := 0
	for _, p := range sent {
		if !p.Value.IsValid() {
			continue // a null is not sent
		}
		n++
		v, ok := stored.Get(p.Name)
		if !ok || !sameCell(v, p.Value) {
			return false
		}
	}
	return !whole || n == len(stored.Properties)
}

// sameCell is Value.Equal, with times compared at the service's 100 ns precision.
func sameCell(stored, sent service.Value) bool {
	if sent.Kind() == service.KindDateTime && stored.Kind() == service.KindDateTime {
		return stored.Time().Truncate(100 * time.Nanosecond).Equal(sent.Time().Truncate(100 * time.Nanosecond))
	}
	return stored.Equal(sent)
}
