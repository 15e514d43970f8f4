// Deletes of split-aware entities: the main row, its continuation rows and, after the
// transaction commits, its blobs.

package tables

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// readFullState is readState for a type with protected fields: it reads the whole main row,
// which the protected-field check compares.
func (s *core) readFullState(ctx context.Context, pk, rk string) (service.Row, stored, error) {
	row, err := s.acct.tables.GetRow(ctx, s.table, pk, rk, nil)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return service.Row{}, stored{}, nil
	}
	if err != nil {
		return service.Row{}, stored{}, err
	}
	st, err := s.storedState(&row)
	return row, st, err
}

// deleteLarge deletes a split-aware entity with its continuation rows, on condition of the
// version read, which must be ifMatch unless that is "". It reports whether it deleted the
// main row. An id of a continuation row's shape deletes nothing; an id with no main row
// removes the leftover continuation rows that name it.
func (s *core) deleteLarge(ctx context.Context, pk, rk, ifMatch string) (bool, error) {
	const op = "delete"
	if _, _, ok := largevalue.IsContinuationKey(rk); ok {
		return false, nil
	}
	var lastErr error
	for attempt := 1; attempt <= splitAttempts; attempt++ {
		if err := splitRetry.Wait(ctx, attempt); err != nil {
			return false, err
		}
		st, err := s.readState(ctx, pk, rk)
		unreadable := errors.Is(err, abstractions.ErrIntegrity)
		if err != nil && !unreadable {
			return false, s.translate(op, pk, rk, err)
		}
		if ifMatch != "" && st.found && st.etag != ifMatch {
			return false, s.deleteConflict(pk, rk, nil)
		}
		acts := []service.Action{}
		if st.found {
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: st.etag})
		}
		if !st.found || unreadable {
			// No main row, or one whose part count cannot be read: delete what is there.
			own, _, err := s.continuationRows(ctx, pk, rk, 0, contSelect)
			if err != nil {
				return false, s.translate(op, pk, rk, err)
			}
			for _, r := range own {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: r.RowKey}, IfMatch: r.ETag})
			}
		} else {
			for i := 1; i < st.parts; i++ {
				acts = append(acts, service.Action{Op: service.OpDelete,
					Row: service.Row{PartitionKey: pk, RowKey: largevalue.ContinuationKey(rk, i)}, IfMatch: service.ETagAny})
			}
		}
		if len(acts) == 0 {
			return false, nil
		}
		tracked := s.writeKeys([2]string{pk, rk})
		s.beginWrite(tracked)
		for len(acts) > 0 {
			if len(acts) == 1 {
				_, err = s.acct.tables.Write(ctx, s.table, acts[0])
			} else {
				_, err = s.acct.tables.Transact(ctx, s.table, acts)
			}
			if err == nil {
				break
			}
			var te *service.TransactionError
			idx := 0
			if errors.As(err, &te) {
				idx = te.Index
			}
			gone := abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound")
			changed := abstractions.HasStatus(err, http.StatusPreconditionFailed, "")
			removable := idx >= 0 && idx < len(acts) &&
				(!st.found && (gone || changed) || st.found && idx > 0 && (gone || unreadable && changed))
			if !removable {
				break
			}
			// A continuation row is gone already (or, without a main row, any row
			// that changed): leave it and delete the rest.
			acts = append(acts[:idx:idx], acts[idx+1:]...)
			err = nil
		}
		s.endWrite(tracked, err, nil, service.Written{})
		switch {
		case err == nil:
			if st.found {
				s.cleanup(ctx, time.Time{}, s.released(pk, rk, st.refs, nil))
			}
			s.releasedBlobs(op, pk, rk, st.blobs)
			return st.found, nil
		case st.found && (abstractions.HasStatus(err, http.StatusPreconditionFailed, "") ||
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound")):
			// Another writer changed or deleted the row since it was read: read it again
			// (with ifMatch, the next read finds the conflict or the missing row).
			lastErr = s.translate(op, pk, rk, err)
			s.lostAttempt(ctx, op, pk, rk, attempt, "the row changed since it was read", lastErr)
		default:
			return false, s.translate(op, pk, rk, err)
		}
	}
	return false, s.lostRace(op, pk, rk, lastErr)
}
