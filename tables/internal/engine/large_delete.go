// Deletes of split-aware entities: the main row, its continuation rows and, after the
// transaction commits, its blobs.

package engine

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// ReadFullState is ReadState for a type with protected fields: it reads the whole main row,
// which the protected-field check compares.
func (s *Table) ReadFullState(ctx context.Context, pk, rk string) (service.Row, Stored, error) {
	row, err := s.Acct.Tables.GetRow(ctx, s.Name, pk, rk, nil)
	if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return service.Row{}, Stored{}, nil
	}
	if err != nil {
		return service.Row{}, Stored{}, err
	}
	st, err := s.StoredState(&row)
	return row, st, err
}

// DeleteLarge deletes a split-aware entity with its continuation rows, on condition of the
// version read, which must be ifMatch unless that is "". It reports whether it deleted the
// main row. An id of a continuation row's shape deletes nothing; an id with no main row
// removes the leftover continuation rows that name it.
func (s *Table) DeleteLarge(ctx context.Context, pk, rk, ifMatch string) (bool, error) {
	st, err := s.deleteUnit(ctx, pk, rk, ifMatch, nil)
	return st.Found && !st.Expired, err // an expired row is deleted, but was absent already
}

// deleteUnit is DeleteLarge, returning the state of the row it deleted (Found false: it
// deleted no main row). read, when not nil, is the state the caller has just read, which
// its first attempt uses instead of reading again.
func (s *Table) deleteUnit(ctx context.Context, pk, rk, ifMatch string, read *Stored) (Stored, error) {
	const op = "delete"
	if _, _, ok := largevalue.IsContinuationKey(rk); ok && s.Split {
		return Stored{}, nil
	}
	var lastErr error
	for attempt := 1; attempt <= SplitAttempts; attempt++ {
		if err := SplitRetry.Wait(ctx, attempt); err != nil {
			return Stored{}, err
		}
		var st Stored
		var err error
		if attempt == 1 && read != nil {
			st = *read
		} else {
			st, err = s.ReadState(ctx, pk, rk)
		}
		unreadable := errors.Is(err, abstractions.ErrIntegrity)
		if err != nil && !unreadable {
			return Stored{}, s.Translate(op, pk, rk, err)
		}
		if ifMatch != "" && st.Found && st.ETag != ifMatch {
			return Stored{}, s.DeleteConflict(pk, rk, nil)
		}
		acts := []service.Action{}
		if st.Found {
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: st.ETag})
		}
		if !s.Split {
			// An indexed type: the main row and its index rows.
			for _, k := range st.Ix {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: k}, IfMatch: service.ETagAny})
			}
		} else if !st.Found || unreadable {
			// No main row, or one whose part count cannot be read: delete what is there.
			own, _, err := s.ContinuationRows(ctx, pk, rk, 0, ContSelect)
			if err != nil {
				return Stored{}, s.Translate(op, pk, rk, err)
			}
			for _, r := range own {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: r.RowKey}, IfMatch: r.ETag})
			}
		} else {
			for i := 1; i < st.Parts; i++ {
				acts = append(acts, service.Action{Op: service.OpDelete,
					Row: service.Row{PartitionKey: pk, RowKey: largevalue.ContinuationKey(rk, i)}, IfMatch: service.ETagAny})
			}
			for _, k := range st.Ix {
				acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: k}, IfMatch: service.ETagAny})
			}
		}
		if len(acts) == 0 {
			return Stored{}, nil
		}
		if st.Found && s.Feed != nil {
			acts = append(acts, s.FeedRecord(pk, rk, feedrow.Deleted, &st, nil))
		}
		if err := s.MarkFeed(ctx, op, pk); err != nil {
			return Stored{}, err
		}
		tracked := s.WriteKeys([2]string{pk, rk})
		s.BeginWrite(tracked)
		for len(acts) > 0 {
			if len(acts) == 1 {
				_, err = s.Acct.Tables.Write(ctx, s.Name, acts[0])
			} else {
				_, err = s.Acct.Tables.Transact(ctx, s.Name, acts)
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
				(!st.Found && (gone || changed) || st.Found && idx > 0 && (gone || unreadable && changed))
			if !removable {
				break
			}
			// A continuation row is gone already (or, without a main row, any row
			// that changed): leave it and delete the rest.
			acts = append(acts[:idx:idx], acts[idx+1:]...)
			err = nil
		}
		s.EndWrite(tracked, err, nil, service.Written{})
		switch {
		case err == nil:
			if st.Found {
				s.Cleanup(ctx, time.Time{}, s.Released(pk, rk, st.Refs, nil))
			}
			s.ReleasedBlobs(op, pk, rk, st.Blobs)
			return st, nil
		case st.Found && (abstractions.HasStatus(err, http.StatusPreconditionFailed, "") ||
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound")):
			// Another writer changed or deleted the row since it was read: read it again
			// (with ifMatch, the next read finds the conflict or the missing row).
			lastErr = s.Translate(op, pk, rk, err)
			s.LostAttempt(ctx, op, pk, rk, attempt, "the row changed since it was read", lastErr)
		default:
			return Stored{}, s.Translate(op, pk, rk, err)
		}
	}
	return Stored{}, s.LostRace(op, pk, rk, lastErr)
}
