// The sweep of expired rows, at the cost of what expired. Two kinds of rows make it so:
//
//   - an expiry index: a partition index (package indexrow) of the expiry column, named
//     ExpiryIndex, whose rows the unit path writes in each entity's transaction like any
//     index row; the rows of a partition that expired before a time are one key range;
//   - marks: one row per (hour of an expiry time, partition) in the reserved partition
//     MarkPartition, written before the first write of a process that stores an expiry time
//     in that hour and partition. The sweep reads the marks of the hours that began before
//     its cutoff, and visits only their partitions.

package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/service"
)

const (
	// ExpiryIndex names the expiry index. An index name an application declares holds
	// only letters and digits, so it cannot take this one.
	ExpiryIndex = "_expires"
	// MarkPartition is the partition of the marks: a claim partition's prefix, which
	// entity partition keys may not take and every typed read skips (Foreign).
	MarkPartition = indexrow.ClaimPrefix + "_expires"
	// MarkPKColumn is a mark's cell naming its partition.
	MarkPKColumn = "_ExpPK"
	// Bucket is the span of expiry times one mark stands for.
	Bucket = time.Hour
	// SweepMargin is how long ago a row must have expired, on the sweeping account's clock,
	// for a sweep to delete it, and how far ahead of its clock a writer keeps a bucket's
	// mark as written: it covers the difference between the clocks of two processes.
	SweepMargin = time.Minute
	markLayout  = "2006010215" // a bucket's start, sortable as text
)

// marks is what a store remembers of the marks it wrote: bucket key → bucket end.
type marks struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// ExpirySpec returns the spec of the expiry index of a type whose expiry time is stored in
// column (field names the Go field for messages).
func ExpirySpec(column, field string) indexrow.Spec {
	return indexrow.Spec{Name: ExpiryIndex, Column: column, Field: field, Kind: service.KindDateTime}
}

// MarkKey returns the row key of the mark of partition pk for the bucket holding at.
func MarkKey(at time.Time, pk string) string {
	return at.UTC().Truncate(Bucket).Format(markLayout) + "." + pk
}

// ParseMark returns the bucket start and partition of a mark row.
func ParseMark(r *service.Row) (time.Time, string, bool) {
	b, _, ok := strings.Cut(r.RowKey, ".")
	v, has := r.Get(MarkPKColumn)
	if !ok || !has || v.Kind() != service.KindString {
		return time.Time{}, "", false
	}
	t, err := time.ParseInLocation(markLayout, b, time.UTC)
	return t, v.Str(), err == nil
}

// MarkExpiry writes the mark of the bucket of p's expiry time in p's partition, unless this
// store wrote it already and its bucket ends well after now (a sweep removes a bucket's
// marks only once it is past, so a remembered mark of a future bucket is still there).
func (s *Table) MarkExpiry(ctx context.Context, op string, p *Write) error {
	if s.Expiry == nil {
		return nil
	}
	row := p.Row
	if p.Layout != nil && len(p.Layout.Rows) > 0 {
		row = p.Layout.Rows[0]
	}
	at, ok := s.ExpiresAt(&row)
	if !ok {
		return nil
	}
	key := MarkKey(at, p.PK)
	end := at.UTC().Truncate(Bucket).Add(Bucket)
	now := s.Acct.ExpiryNow()
	m := &s.Expiry.marks
	m.mu.Lock()
	_, known := m.m[key]
	m.mu.Unlock()
	if known && end.After(now.Add(SweepMargin)) {
		return nil
	}
	mark := service.Row{PartitionKey: MarkPartition, RowKey: key, Properties: []service.Property{{Name: MarkPKColumn, Value: service.String(p.PK)}}}
	if _, err := s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpUpsertReplace, Row: mark}); err != nil {
		return s.Translate(op, p.PK, p.RK, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]time.Time{}
	}
	m.m[key] = end
	if len(m.m) > 4096 {
		for k, e := range m.m {
			if !e.After(now) {
				delete(m.m, k)
			}
		}
	}
	return nil
}

// SweepStats are a sweep's counts so far.
type SweepStats struct {
	Partitions int           // partitions visited
	Expired    int           // expired rows found
	Swept      int           // expired rows deleted
	Renewed    int           // rows found renewed (or deleted by another writer) before their delete
	Oldest     time.Duration // how long ago the oldest expired row the sweep left had expired (0: none)
}

// SweepLimits bound a sweep: Wait is called before each delete (a rate limiter), Max stops
// it after that many deletes (0: none), Progress sees the counts after each partition.
type SweepLimits struct {
	Wait     func(context.Context) error
	Max      int
	Progress func(SweepStats)
}

// SweepExpired deletes the rows of the store that expired before its cutoff (the expiry
// clock less SweepMargin), each on condition of the version read and only while it is still
// expired, so a row renewed or replaced since is left alone. It visits the partitions the
// marks of past buckets name, reads each one's expired index rows (one key range), and
// removes a bucket's marks when the bucket is past and its partition swept.
//
// It records the age of the oldest expired row it left on the account's meters when it
// ends, as far as it knows it: rows left at Max, or in the partition an error or ctx
// stopped it in (measured for at most CleanupOvertime after ctx ends); 0 after a full sweep.
func (s *Table) SweepExpired(ctx context.Context, lim SweepLimits) (st SweepStats, err error) {
	if s.Expiry == nil {
		return st, nil
	}
	now := s.Acct.ExpiryNow()
	cutoff := now.Add(-SweepMargin)
	spec := ExpirySpec(s.Expiry.Column, s.Expiry.Path)
	// Marks of the buckets that began by the cutoff, in bucket order.
	filter := "PartitionKey eq " + service.QuoteString(MarkPartition) +
		" and RowKey lt " + service.QuoteString(cutoff.UTC().Truncate(Bucket).Add(Bucket).Format(markLayout))
	type mark struct {
		key, etag string
		end       time.Time
	}
	byPK := map[string][]mark{}
	var order []string
	err = s.Scan(ctx, service.Query{Filter: filter}, func(r *service.Row) error {
		start, pk, ok := ParseMark(r)
		if !ok {
			return nil
		}
		if _, seen := byPK[pk]; !seen {
			order = append(order, pk)
		}
		byPK[pk] = append(byPK[pk], mark{r.RowKey, r.ETag, start.Add(Bucket)})
		return nil
	})
	if err != nil {
		return st, s.Translate("sweep expired", MarkPartition, "", err)
	}
	rg, err := spec.Between(service.Value{}, service.DateTime(cutoff.Add(100*time.Nanosecond)))
	if err != nil {
		return st, err
	}
	in := "" // the partition the sweep is in
	defer func() {
		if err != nil && in != "" {
			mctx, cancel := Overtime(ctx, CleanupOvertime)
			st.Oldest = max(st.Oldest, s.oldestLeft(mctx, in, rg, now))
			cancel()
		}
		s.Acct.Tel.Meters.ExpiryBacklog(context.WithoutCancel(ctx), s.Name, st.Oldest)
	}()
	stopped := false
	for _, pk := range order {
		in = pk
		if err := ctx.Err(); err != nil {
			return st, err
		}
		st.Partitions++
		var rks []string
		q := service.Query{Filter: "PartitionKey eq " + service.QuoteString(pk) + " and RowKey ge " + service.QuoteString(rg.From) +
			" and RowKey lt " + service.QuoteString(rg.To), Select: []string{indexrow.OfColumn}}
		if err := s.Scan(ctx, q, func(r *service.Row) error {
			if rk, ok := indexrow.Of(r); ok {
				rks = append(rks, rk)
			}
			return nil
		}); err != nil {
			return st, s.Translate("sweep expired", pk, "", err)
		}
		left := false
		expired0, swept0 := st.Expired, st.Swept
		for _, rk := range rks {
			if stopped || lim.Max > 0 && st.Swept >= lim.Max {
				stopped, left = true, true
				break
			}
			if lim.Wait != nil {
				if err := lim.Wait(ctx); err != nil {
					return st, err
				}
			}
			deleted, at, err := s.deleteExpired(ctx, pk, rk, cutoff)
			if err != nil {
				return st, err
			}
			if !at.IsZero() {
				st.Expired++
			}
			if deleted {
				st.Swept++
			} else {
				st.Renewed++
			}
		}
		if left {
			// The oldest row left: the partition's first expired index row.
			if age := s.oldestLeft(ctx, pk, rg, now); age > st.Oldest {
				st.Oldest = age
			}
		} else {
			for _, m := range byPK[pk] {
				if m.end.After(cutoff) {
					continue // the bucket is not past: rows may still expire in it
				}
				_, err := s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: MarkPartition, RowKey: m.key}, IfMatch: m.etag})
				if err != nil && !abstractions.HasStatus(err, http.StatusNotFound, "") && !abstractions.HasStatus(err, http.StatusPreconditionFailed, "") {
					return st, s.Translate("sweep expired", MarkPartition, m.key, err)
				}
			}
		}
		s.Acct.Tel.Meters.Swept(ctx, s.Name, int64(st.Expired-expired0), int64(st.Swept-swept0))
		if lim.Progress != nil {
			lim.Progress(st)
		}
	}
	return st, nil
}

// deleteExpired deletes the entity rk of partition pk with its continuation and index rows
// when it is stored and expired by cutoff, on condition of the version read. at is the
// expiry time it found expired (zero: renewed, or gone).
func (s *Table) deleteExpired(ctx context.Context, pk, rk string, cutoff time.Time) (bool, time.Time, error) {
	for attempt := 1; attempt <= SplitAttempts; attempt++ {
		st, err := s.ReadState(ctx, pk, rk)
		if err != nil {
			return false, time.Time{}, s.Translate("sweep expired", pk, rk, err)
		}
		if !st.Found || st.ExpiresAt.IsZero() || st.ExpiresAt.After(cutoff) {
			return false, time.Time{}, nil
		}
		del, err := s.deleteUnit(ctx, pk, rk, st.ETag, &st)
		switch {
		case err == nil:
			return del.Found, st.ExpiresAt, nil // not found: another sweep deleted it
		case errors.Is(err, abstractions.ErrConcurrencyConflict):
			continue // changed since read: look again
		default:
			return false, st.ExpiresAt, err
		}
	}
	return false, time.Time{}, nil
}

// oldestLeft returns how long ago the first expired row left in partition pk expired.
func (s *Table) oldestLeft(ctx context.Context, pk string, rg indexrow.Range, now time.Time) time.Duration {
	q := service.Query{Filter: "PartitionKey eq " + service.QuoteString(pk) + " and RowKey ge " + service.QuoteString(rg.From) +
		" and RowKey lt " + service.QuoteString(rg.To), Select: []string{indexrow.OfColumn}, Top: 1}
	var page service.Page
	var err error
	if s.Acct.Unordered() {
		page.Rows, err = s.SortedRange(ctx, "sweep", pk, q, true)
	} else {
		page, err = s.Acct.Tables.Query(ctx, s.Name, q)
	}
	if err != nil || len(page.Rows) == 0 {
		return 0
	}
	rk, ok := indexrow.Of(&page.Rows[0])
	if !ok {
		return 0
	}
	st, err := s.ReadState(ctx, pk, rk)
	if err != nil || st.ExpiresAt.IsZero() {
		return 0
	}
	return now.Sub(st.ExpiresAt)
}

// SweepAnyType makes t, a store of a table whose rows it does not decode, sweep the
// expired rows of a type that stores its expiry time in column: it reads whole rows before a
// delete and deletes continuation rows as for a split-aware type, since it cannot tell
// whether the type is one.
func (s *Table) SweepAnyType(column string) error {
	if column == "" || strings.HasPrefix(column, "_") || strings.Contains(column, "__") {
		return fmt.Errorf("the column %q is not one an entity's field is stored in", column)
	}
	s.Expiry = &Expiry{Path: column, Column: column}
	s.Split, s.StateSel = true, nil
	s.Indexes = append(s.Indexes, ExpirySpec(column, column))
	return nil
}
