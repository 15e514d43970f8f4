package engine

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/service"
)

// TouchesIndex reports whether a merge row sets a cell an index of the store reads.
func (s *Table) TouchesIndex(row *service.Row) bool {
	for i := range s.Indexes {
		if _, ok := row.Get(s.Indexes[i].Column); ok {
			return true
		}
	}
	return false
}

// PatchIndexed merges row (the cells of a patch) into a stored entity of an indexed store
// (or one with a feed, whose record goes in the same transaction),
// with the index rows of the indexes it changes, in one transaction: the new index rows
// written, the replaced ones deleted, and the main row's list of index keys updated. It
// learns the stored index keys as Strict updates do (the version the store saw, else one
// read), and merges on condition of that version: ifMatch when given, whose mismatch is a
// conflict; otherwise the version read, retried as the unit path retries a lost race. A
// store whose rows expire patches through it too, indexed or not: the read tells an
// expired row, which a patch finds missing.
func (s *Table) PatchIndexed(ctx context.Context, op string, row service.Row, ifMatch string) (service.Written, error) {
	pk, rk := row.PartitionKey, row.RowKey
	// The index keys of the indexes the patch sets, and the name prefixes of those indexes.
	var fresh, touched []string
	for i := range s.Indexes {
		sp := &s.Indexes[i]
		v, ok := row.Get(sp.Column)
		if !ok {
			continue
		}
		touched = append(touched, indexrow.Prefix+sp.Name+".")
		k, err := sp.Key(v, rk)
		if err != nil {
			return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk,
				Message: err.Error() + "; nothing was sent"}
		}
		fresh = append(fresh, k)
	}
	if err := s.MarkExpiry(ctx, op, &Write{PK: pk, RK: rk, Row: row}); err != nil {
		return service.Written{}, err
	}
	var gone map[string]bool
	var lastErr error
	for attempt := 1; attempt <= SplitAttempts; attempt++ {
		if err := SplitRetry.Wait(ctx, attempt); err != nil {
			return service.Written{}, err
		}
		st := Stored{Found: true, ETag: ifMatch}
		if keys, ok := s.Seen.Known(pk, rk, ifMatch); ok && ifMatch != "" && s.Expiry == nil && s.Feed == nil {
			st.Ix = keys
		} else {
			var err error
			if st, err = s.ReadState(ctx, pk, rk); err != nil {
				return service.Written{}, s.Translate(op, pk, rk, err)
			}
			switch {
			case st.Found && st.Expired:
				return service.Written{}, s.expiredError(op, pk, rk)
			case !st.Found:
				return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrNotFound, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk,
					Message: "no row has this key; a patch changes an existing row (Create or Upsert it)"}
			case ifMatch != "" && st.ETag != ifMatch:
				return service.Written{}, &abstractions.StoreError{Kind: abstractions.ErrConcurrencyConflict, Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk,
					Message: "the row changed since the version this patch was based on; read it again and retry"}
			}
		}
		st.Gone = gone
		keys := append([]string(nil), fresh...)
		for _, k := range st.Ix {
			if !hasAnyPrefix(k, touched) {
				keys = append(keys, k)
			}
		}
		main := row
		if len(s.Indexes) > 0 {
			main.Properties = append(row.Properties[:len(row.Properties):len(row.Properties)],
				service.Property{Name: indexrow.Column, Value: service.String(indexrow.Join(keys))})
		}
		p := &Write{PK: pk, RK: rk, Ix: keys}
		acts := append([]service.Action{{Op: service.OpMerge, Row: main, IfMatch: st.ETag}}, IndexActions(p, &st)...)
		if s.Feed != nil {
			acts = append(acts, s.FeedRecord(pk, rk, feedrow.Patched, &st, &acts[0]))
			if err := s.FeedFit(op, pk, rk, acts); err != nil {
				return service.Written{}, err
			}
			if err := s.MarkFeed(ctx, op, pk); err != nil {
				return service.Written{}, err
			}
		}
		tracked := s.WriteKeys([2]string{pk, rk})
		s.BeginWrite(tracked)
		var w service.Written
		var err error
		if len(acts) == 1 {
			w, err = s.Acct.Tables.Write(ctx, s.Name, acts[0])
		} else {
			var ws []service.Written
			if ws, err = s.Acct.Tables.Transact(ctx, s.Name, acts); err == nil && len(ws) > 0 {
				w = ws[0]
			}
		}
		s.EndWrite(tracked, err, nil, service.Written{})
		if err == nil {
			s.Seen.Remember(pk, rk, w.ETag, keys)
			return w, nil
		}
		idx := 0
		var te *service.TransactionError
		if errors.As(err, &te) && te.Index >= 0 && te.Index < len(acts) {
			idx = te.Index
		}
		lastErr = s.Translate(op, pk, rk, err)
		a := acts[idx]
		switch {
		case idx > 0 && a.Op == service.OpDelete && abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound"):
			// An index row is gone already.
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[a.Row.RowKey] = true
			attempt--
		case idx == 0 && ifMatch == "" && (abstractions.HasStatus(err, http.StatusPreconditionFailed, "") ||
			abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound")):
			s.LostAttempt(ctx, op, pk, rk, attempt, "the row changed since it was read", lastErr)
		default:
			return service.Written{}, lastErr
		}
	}
	return service.Written{}, s.LostRace(op, pk, rk, lastErr)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
