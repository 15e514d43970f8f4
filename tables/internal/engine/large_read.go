// Reads of split-aware entities: the main row and its continuation rows reassembled, every
// value verified.

package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// ReadLarge reads a split-aware entity whole: the main row, its continuation rows, every
// value verified. first, when not nil, is a main row already read (by a query). A missing
// row (or a continuation row's key) is ErrNotFound.
func (s *Table) ReadLarge(ctx context.Context, op, pk, rk string, first *service.Row) (service.Row, error) {
	var lastErr error
	for attempt := 1; attempt <= SplitAttempts; attempt++ {
		if err := SplitRetry.Wait(ctx, attempt); err != nil {
			return service.Row{}, err
		}
		var main service.Row
		if first != nil {
			main, first = *first, nil
		} else {
			var err error
			if main, err = s.Acct.Tables.GetRow(ctx, s.Name, pk, rk, nil); err != nil {
				return service.Row{}, s.Translate(op, pk, rk, err)
			}
		}
		if largevalue.IsContinuation(&main) {
			return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk,
				Message: "no row has this key (the row there is a continuation row of another entity)"}
		}
		parts, err := largevalue.Parts(&main)
		var conts []service.Row
		if err == nil && parts > 1 {
			conts, _, err = s.ContinuationRows(ctx, pk, rk, parts-1, nil)
			if err != nil && !errors.Is(err, abstractions.ErrIntegrity) {
				return service.Row{}, s.Translate(op, pk, rk, err)
			}
		}
		if err == nil {
			var logical service.Row
			if logical, err = largevalue.Assemble(main, conts, s.Large); err == nil {
				if logical, err = s.FetchBlobs(ctx, op, logical); err == nil {
					return logical, nil
				}
				if !errors.Is(err, abstractions.ErrIntegrity) {
					return service.Row{}, s.Translate(op, pk, rk, err)
				}
			}
			if errors.Is(err, abstractions.ErrBlobOffloadNotConfigured) {
				return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrBlobOffloadNotConfigured, Op: op, Table: s.Name,
					PartitionKey: pk, RowKey: rk, Err: err, Message: "nothing was returned"}
			}
		}
		// The value does not reassemble: damaged, or replaced while it was read?
		now, rerr := s.Acct.Tables.GetRow(ctx, s.Name, pk, rk, KeysOnly)
		switch {
		case abstractions.HasStatus(rerr, http.StatusNotFound, "ResourceNotFound"):
			return service.Row{}, s.Translate(op, pk, rk, rerr)
		case rerr != nil:
			return service.Row{}, s.Translate(op, pk, rk, rerr)
		case now.ETag == main.ETag:
			return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Err: err,
				Message: "the stored entity does not reassemble (a chunk or continuation row is missing or does not match its checksum); nothing was returned; Delete removes it"}
		}
		lastErr = err
		s.LostAttempt(ctx, op, pk, rk, attempt, "the row was replaced while it was read", lastErr)
	}
	return service.Row{}, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Err: lastErr,
		Message: fmt.Sprintf("the read did not complete: the row changed during each of its %d attempts. Nothing stored is damaged; the read can be repeated", SplitAttempts)}
}

// Materialize turns a row a query or list returned into the row to decode. skip reports a
// row that is not an entity of its own (a continuation row) or that vanished meanwhile.
func (s *Table) Materialize(ctx context.Context, op string, r *service.Row) (row service.Row, skip bool, err error) {
	if largevalue.IsContinuation(r) || s.Hidden(r) {
		return service.Row{}, true, nil
	}
	if !s.Split {
		return *r, false, nil
	}
	logical, err := s.ReadLarge(ctx, op, r.PartitionKey, r.RowKey, r)
	if errors.Is(err, abstractions.ErrNotFound) {
		return service.Row{}, true, nil
	}
	return logical, false, err
}
