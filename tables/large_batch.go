package tables

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/odata"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// batchLarge writes the prepared entities of a split-aware batch: per partition, each
// entity's rows (main row, continuation rows, deletes of stale ones) are one unit, and units
// are packed in order into entity-group transactions, so an entity's rows never straddle
// two. An upsert reads each main row first and writes on condition of the version read; a
// transaction that loses a race is planned again and retried (see writeUnits). Partitions
// go concurrently, as runParts allows; a failure stops its partition, whose transactions
// before it stay committed. The blobs the batch released are deleted after it, when every
// transaction committed. It returns how many of the units were committed, and a
// *abstractions.BatchError when a partition failed. committed receives the entity indices
// of each transaction that committed, one call at a time.
func (s *core) batchLarge(ctx context.Context, op string, mode writeMode, ps []*write, order []int, committed func(indices []int)) (int, error) {
	var parts []string
	byPK := map[string][]int{}
	for _, i := range order {
		pk := ps[i].pk
		if _, ok := byPK[pk]; !ok {
			parts = append(parts, pk)
		}
		byPK[pk] = append(byPK[pk], i)
	}
	// Every file is hashed (taken for this write) before anything is sent, in the order of
	// the input; the blobs upload with their entity's transaction.
	fs := &fileSources{}
	defer fs.release()
	for _, i := range order {
		if err := s.resolveFiles(ctx, op, ps[i], fs); err != nil {
			return 0, err
		}
	}
	var mu sync.Mutex // serialises committed and released
	// The blobs the replaced rows no longer reference, deleted once every transaction has
	// committed (a batch that fails part way deletes none).
	var released []string
	runs := make([]*partRun, 0, len(parts))
	for _, pk := range parts {
		r := &partRun{pk: pk}
		idxs := byPK[pk]
		for _, i := range idxs {
			r.add(i, ps[i].rk, i)
		}
		// carried is the unit that did not fit the previous transaction, with its actions.
		var carried *splitUnit
		var carriedActs []service.Action
		r.step = func(ctx context.Context) (bool, error) {
			var pack []*splitUnit
			var packIdx []int
			var budget largevalue.Budget
			for len(idxs) > 0 {
				i := idxs[0]
				u, ua := carried, carriedActs
				carried, carriedActs = nil, nil
				if u == nil {
					u = &splitUnit{p: ps[i], mode: mode, fs: fs}
					if mode != modeCreate {
						st, err := s.readState(ctx, u.p.pk, u.p.rk)
						if err != nil && !errors.Is(err, abstractions.ErrIntegrity) {
							return false, s.translate(op, u.p.pk, u.p.rk, err)
						}
						// A row whose part count cannot be read is reported by writeUnits.
						u.st, u.read = st, err == nil
					}
					ua = s.unitActions(u.p, mode, "", &u.st)
				}
				// A unit that does not fit with the pack starts the next transaction; one that
				// fits no transaction alone goes alone, and writeUnits refuses it.
				if budget.Add(u.p.layout, ua) != "" {
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
			if _, err := s.writeUnits(ctx, op, pack); err != nil {
				if abstractions.OutcomeUnknown(err) {
					r.unknown(packIdx...)
				}
				return false, err
			}
			r.commit(packIdx...)
			mu.Lock()
			for _, u := range pack {
				if u.st.found {
					released = append(released, s.released(u.p.pk, u.p.rk, u.st.refs, u.p.layout.Blobs)...)
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
	s.runParts(ctx, op, runs)
	err := s.batchError(op, runs)
	if err == nil {
		s.cleanup(ctx, time.Time{}, released)
	}
	return countCommitted(runs), err
}

// lastOccurrences returns the indices of ps in order, keeping only the last entity of each
// key: an upsert batch writes the last occurrence of a repeated key.
func lastOccurrences(ps []*write) []int {
	last := map[[2]string]int{}
	for i, p := range ps {
		last[[2]string{p.pk, p.rk}] = i
	}
	var out []int
	for i, p := range ps {
		if last[[2]string{p.pk, p.rk}] == i {
			out = append(out, i)
		}
	}
	return out
}

// deletePartitionLarge deletes a split-aware type's partition. Each main row is deleted with
// the continuation rows listed with it, in transactions of at most 100 actions that never
// divide an entity, on condition of the version listed; a transaction that meets a row
// changed meanwhile deletes its entities one by one as they are then. Continuation rows
// listed without their main row are deleted last, only when no main row exists for them and
// each is still the version listed. It returns the number of entities deleted.
func (s *core) deletePartitionLarge(ctx context.Context, pk string) (int, error) {
	const op = "delete partition"
	var mains []service.Row
	conts := map[string][]service.Row{}
	var ofOrder []string
	err := s.scan(ctx, service.Query{Filter: odata.Partition(pk), Select: ofOnly}, func(r *service.Row) error {
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
		return 0, s.translate(op, pk, "", err)
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
		tracked := s.writeKeys(keys...)
		s.beginWrite(tracked)
		err := s.send(ctx, packActs)
		s.endWrite(tracked, err, nil, service.Written{})
		switch {
		case err == nil:
			deleted += len(pack)
		case abstractions.HasStatus(err, http.StatusPreconditionFailed, "") || abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound"):
			// A writer changed an entity since it was listed: delete them one by one.
			for _, rk := range packRows {
				ok, err := s.deleteLarge(ctx, pk, rk, "")
				if err != nil {
					return err
				}
				if ok {
					deleted++ // not a row another writer deleted meanwhile
				}
			}
		default:
			return s.translateTx(op, packActs, err)
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
	// Continuation rows listed without their main row: leftovers, or the rows of an entity
	// written meanwhile.
	for _, rk := range ofOrder {
		rows := conts[rk]
		if len(rows) == 0 {
			continue
		}
		st, err := s.readState(ctx, pk, rk)
		if err != nil && !errors.Is(err, abstractions.ErrIntegrity) {
			return deleted, s.translate(op, pk, rk, err)
		}
		if st.found {
			continue
		}
		var acts []service.Action
		for _, c := range rows {
			if len(acts) == service.MaxTransactionActions {
				break
			}
			acts = append(acts, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: c.RowKey}, IfMatch: c.ETag})
		}
		err = s.send(ctx, acts)
		if err != nil && !abstractions.HasStatus(err, http.StatusPreconditionFailed, "") &&
			!abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			return deleted, s.translateTx(op, acts, err)
		}
	}
	s.cleanupPartition(ctx, pk)
	return deleted, nil
}

// cleanupPartition deletes, after a partition delete, the blobs under the partition that are
// older than the cleanup grace and that no row of the partition references now (a row
// another writer created meanwhile keeps its blobs). Like the cleanup after a write, it runs
// on for at most cleanupOvertime after ctx ends and reports nothing.
func (s *core) cleanupPartition(ctx context.Context, pk string) {
	off := s.acct.off
	if off == nil || !off.cleanup {
		return
	}
	cctx, cancel := overtime(ctx, cleanupOvertime)
	defer cancel()
	if _, err := s.sweepPartition(cctx, pk, cutoff(s.acct.serviceNow(cctx), off.grace)); err != nil {
		s.acct.logger().Debug("unified tables: some blobs of a deleted partition were not deleted; the orphan sweep will", "table", s.table, "error", callerr.KindName(err))
	}
}
