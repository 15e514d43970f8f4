package engine

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/indexrow"
	"github.com/unified-data/gotables/tables/internal/odata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// BatchLarge writes the prepared entities of a split-aware batch: per partition, each
// entity's rows (main row, continuation rows, deletes of stale ones) are one unit, and units
// are packed in order into entity-group transactions, so an entity's rows never straddle
// two. An upsert reads each main row first and writes on condition of the version read; a
// transaction that loses a race is planned again and retried (see WriteUnits). Partitions
// go concurrently, as RunParts allows; a failure stops its partition, whose transactions
// before it stay committed. The blobs the batch released are deleted after it, when every
// transaction committed. It returns how many of the units were committed, and a
// *abstractions.BatchError when a partition failed. committed receives the entity indices
// of each transaction that committed, one call at a time.
func (s *Table) BatchLarge(ctx context.Context, op string, mode WriteMode, ps []*Write, order []int, committed func(indices []int)) (int, error) {
	var parts []string
	byPK := map[string][]int{}
	for _, i := range order {
		pk := ps[i].PK
		if _, ok := byPK[pk]; !ok {
			parts = append(parts, pk)
		}
		byPK[pk] = append(byPK[pk], i)
	}
	// Every file is hashed (taken for this write) before anything is sent, in the order of
	// the input; the blobs upload with their entity's transaction.
	fs := &FileSources{}
	defer fs.Release()
	for _, i := range order {
		if err := s.ResolveFiles(ctx, op, ps[i], fs); err != nil {
			return 0, err
		}
	}
	var mu sync.Mutex // serialises committed and released
	// The blobs the replaced rows no longer reference, deleted once every transaction has
	// committed (a batch that fails part way deletes none).
	var released []string
	runs := make([]*PartRun, 0, len(parts))
	for _, pk := range parts {
		r := &PartRun{PK: pk}
		idxs := byPK[pk]
		for _, i := range idxs {
			r.Add(i, ps[i].RK, i)
		}
		// carried is the unit that did not fit the previous transaction, with its actions.
		var carried *SplitUnit
		var carriedActs []service.Action
		r.Step = func(ctx context.Context) (bool, error) {
			var pack []*SplitUnit
			var packIdx []int
			budget := s.Acct.TxBudget()
			for len(idxs) > 0 {
				i := idxs[0]
				u, ua := carried, carriedActs
				carried, carriedActs = nil, nil
				if u == nil {
					u = &SplitUnit{P: ps[i], Mode: mode, Fs: fs}
					if ps[i].IfMatch != "" {
						u.Mode, u.ETag = ModeStrict, ps[i].IfMatch
					}
					if u.Mode != ModeCreate {
						st, err := s.ReadState(ctx, u.P.PK, u.P.RK)
						if err != nil && !errors.Is(err, abstractions.ErrIntegrity) {
							return false, s.Translate(op, u.P.PK, u.P.RK, err)
						}
						// A row whose part count cannot be read is reported by WriteUnits.
						u.St, u.Read = st, err == nil
					}
					ua = s.UnitActions(u.P, u.Mode, u.ETag, &u.St)
				}
				// A unit that does not fit with the pack starts the next transaction; one that
				// fits no transaction alone goes alone, and WriteUnits refuses it.
				if budget.Add(u.P.Layout, ua) != "" {
					if len(pack) > 0 {
						carried, carriedActs = u, ua
						break
					}
					pack, packIdx = append(pack, u), append(packIdx, i)
					idxs = idxs[1:]
					break
				}
				pack, packIdx = append(pack, u), append(packIdx, i)
				idxs = idxs[1:]
			}
			if _, err := s.WriteUnits(ctx, op, pack); err != nil {
				if abstractions.OutcomeUnknown(err) {
					r.Unknown(packIdx...)
				}
				return false, err
			}
			r.Commit(packIdx...)
			mu.Lock()
			for _, u := range pack {
				if u.St.Found {
					released = append(released, s.Released(u.P.PK, u.P.RK, u.St.Refs, u.P.Layout.Blobs)...)
				}
			}
			if committed != nil {
				committed(packIdx)
			}
			mu.Unlock()
			return len(idxs) > 0, nil
		}
		runs = append(runs, r)
	}
	s.RunParts(ctx, op, runs)
	err := s.BatchError(op, runs)
	if err == nil {
		s.Cleanup(ctx, time.Time{}, released)
	}
	return CountCommitted(runs), err
}

// LastOccurrences returns the indices of ps in order, keeping only the last entity of each
// key: an upsert batch writes the last occurrence of a repeated key.
func LastOccurrences(ps []*Write) []int {
	last := map[[2]string]int{}
	for i, p := range ps {
		last[[2]string{p.PK, p.RK}] = i
	}
	var out []int
	for i, p := range ps {
		if last[[2]string{p.PK, p.RK}] == i {
			out = append(out, i)
		}
	}
	return out
}

// DeletePartitionLarge deletes a split-aware type's partition. Each main row is deleted with
// the continuation rows listed with it, in transactions of at most 100 actions that never
// divide an entity, on condition of the version listed; a transaction that meets a row
// changed meanwhile deletes its entities one by one as they are then. Continuation rows
// listed without their main row are deleted last, only when no main row exists for them and
// each is still the version listed. It returns the number of entities deleted.
func (s *Table) DeletePartitionLarge(ctx context.Context, pk string) (int, error) {
	const op = "delete partition"
	var mains []service.Row
	conts := map[string][]service.Row{}
	var ofOrder []string
	var ixRows []service.Row // the partition indexes' rows, deleted after the entities
	err := s.Scan(ctx, service.Query{Filter: odata.Partition(pk), Select: OfOnly}, func(r *service.Row) error {
		if indexrow.IsKey(r.RowKey) {
			ixRows = append(ixRows, r.Clone())
			return nil
		}
		of, ok := r.Get(largevalue.OfColumn)
		if !ok {
			mains = append(mains, r.Clone())
			return nil
		}
		key := of.Str()
		if _, seen := conts[key]; !seen {
			ofOrder = append(ofOrder, key)
		}
		conts[key] = append(conts[key], r.Clone())
		return nil
	})
	if err != nil {
		return 0, s.Translate(op, pk, "", err)
	}
	deleted := 0
	var pack [][]service.Action
	var packRows []string
	var packActs []service.Action
	flush := func() error {
		if len(pack) == 0 {
			return nil
		}
		keys := make([][2]string, 0, len(packActs))
		for _, a := range packActs {
			keys = append(keys, [2]string{pk, a.Row.RowKey})
		}
		tracked := s.WriteKeys(keys...)
		s.BeginWrite(tracked)
		err := s.Send(ctx, packActs)
		s.EndWrite(tracked, err, nil, service.Written{})
		switch {
		case err == nil:
			deleted += len(pack)
		case abstractions.HasStatus(err, http.StatusPreconditionFailed, "") || abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound"):
			// A writer changed an entity since it was listed: delete them one by one.
			for _, rk := range packRows {
				ok, err := s.DeleteLarge(ctx, pk, rk, "")
				if err != nil {
					return err
				}
				if ok {
					deleted++ // not a row another writer deleted meanwhile
				}
			}
		default:
			return s.TranslateTx(op, packActs, err)
		}
		pack, packRows, packActs = nil, nil, nil
		return nil
	}
	for _, m := range mains {
		unit := []service.Action{{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: m.RowKey}, IfMatch: m.ETag}}
		for _, c := range conts[m.RowKey] {
			if _, ok := largevalue.BelongsTo(&c, m.RowKey); ok && len(unit) < service.MaxTransactionActions {
				unit = append(unit, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: c.RowKey}, IfMatch: c.ETag})
			}
		}
		delete(conts, m.RowKey)
		if len(packActs)+len(unit) > service.MaxTransactionActions {
			if err := flush(); err != nil {
				return deleted, err
			}
		}
		pack, packRows, packActs = append(pack, unit), append(packRows, m.RowKey), append(packActs, unit...)
	}
	if err := flush(); err != nil {
		return deleted, err
	}
	// The index rows, which count for nothing (a stop before them leaves index rows without
	// an entity, which lookups skip).
	for len(ixRows) > 0 && len(s.Indexes) > 0 {
		n := min(len(ixRows), service.MaxTransactionActions)
		acts := make([]service.Action, n)
		for i, r := range ixRows[:n] {
			acts[i] = service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: r.RowKey}, IfMatch: service.ETagAny}
		}
		ixRows = ixRows[n:]
		if err := s.Send(ctx, acts); err != nil && !abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			return deleted, s.TranslateTx(op, acts, err)
		}
	}
	// Continuation rows listed without their main row: leftovers, or the rows of an entity
	// written meanwhile.
	for _, rk := range ofOrder {
		rows := conts[rk]
		if len(rows) == 0 {
			continue
		}
		st, err := s.ReadState(ctx, pk, rk)
		if err != nil && !errors.Is(err, abstractions.ErrIntegrity) {
			return deleted, s.Translate(op, pk, rk, err)
		}
		if st.Found {
			continue
		}
		var acts []service.Action
		for _, c := range rows {
			if len(acts) == service.MaxTransactionActions {
				break
			}
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: c.RowKey}, IfMatch: c.ETag})
		}
		err = s.Send(ctx, acts)
		if err != nil && !abstractions.HasStatus(err, http.StatusPreconditionFailed, "") &&
			!abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			return deleted, s.TranslateTx(op, acts, err)
		}
	}
	s.CleanupPartition(ctx, pk)
	return deleted, nil
}

// CleanupPartition deletes, after a partition delete, the blobs under the partition that are
// older than the cleanup grace and that no row of the partition references now (a row
// another writer created meanwhile keeps its blobs). Like the cleanup after a write, it runs
// on for at most CleanupOvertime after ctx ends and reports nothing.
func (s *Table) CleanupPartition(ctx context.Context, pk string) {
	off := s.Acct.Off
	if off == nil || !off.Cleanup {
		return
	}
	cctx, cancel := Overtime(ctx, CleanupOvertime)
	defer cancel()
	if _, err := s.SweepPartition(cctx, pk, Cutoff(s.Acct.ServiceNow(cctx), off.Grace)); err != nil {
		s.Acct.Logger().Debug("unified tables: some blobs of a deleted partition were not deleted; the orphan sweep will", "table", s.Name, "error", callerr.KindName(err))
	}
}
