package tables

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// writeGuarded is write for the whole-entity paths that enforce protected fields (Update's
// OpReplace and Upsert's OpUpsertReplace).
func (s *Store[T]) writeGuarded(ctx context.Context, op string, p *prepared[T], a service.Action) (service.Written, error) {
	prot := s.core.ProtectedFields()
	if len(prot) == 0 {
		return s.write(ctx, op, p, a)
	}
	pinned := a.Op == service.OpReplace && a.IfMatch != "" && a.IfMatch != service.ETagAny
	var lastErr error
	for attempt := 0; attempt < engine.GuardAttempts; attempt++ {
		if attempt > 0 {
			if err := engine.GuardRetry.Wait(ctx, attempt+1); err != nil {
				return service.Written{}, err
			}
		}
		stored, err := s.core.Acct.Tables.GetRow(ctx, s.core.Name, p.PK, p.RK, nil)
		found := true
		if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			found = false
		} else if err != nil {
			return service.Written{}, s.core.Translate(op, p.PK, p.RK, err)
		}
		act := a
		switch {
		case !found && a.Op == service.OpReplace:
			// An update of a missing row: the service answers 404.
			return s.write(ctx, op, p, a)
		case !found:
			act = service.Action{Op: service.OpInsert}
		case pinned && stored.ETag != a.IfMatch:
			return s.write(ctx, op, p, a)
		default:
			if err := s.core.CheckProtected(ctx, op, &p.Write, &stored, prot); err != nil {
				return service.Written{}, err
			}
			if !pinned {
				act = service.Action{Op: service.OpReplace, IfMatch: stored.ETag}
			}
		}
		w, err := s.write(ctx, op, p, act)
		if err == nil || pinned {
			return w, err
		}
		if !errors.Is(err, abstractions.ErrConcurrencyConflict) && !errors.Is(err, abstractions.ErrDuplicateKey) &&
			!errors.Is(err, abstractions.ErrNotFound) {
			return w, err
		}
		lastErr = err
	}
	return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.core.Name,
		PartitionKey: p.PK, RowKey: p.RK, Err: lastErr,
		Message: fmt.Sprintf("the row changed between the protected-field check and the write %d times in a row; retry, or serialize the writes of this row", engine.GuardAttempts)}
}
