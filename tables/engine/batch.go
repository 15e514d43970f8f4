package engine

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// A plan is the row actions that carry out one store call, in the order they must run. The
// engine sends a plan of one action as a single write and a longer one as entity-group
// transactions (chunks); large values will add their blob actions here.
type plan struct {
	actions []service.Action
	// skipGone resends a transaction without a delete whose row another writer removed.
	skipGone bool
}

// chunks cuts the plan into transactions the service accepts: actions of one partition,
// at most 100 of them and at most 4 MiB of request body. Actions are grouped by partition in
// the order the partitions first appear, keeping their order within a partition. Each chunk
// lists the indices of its actions in the plan.
func (p *plan) chunks() [][]int {
	order := []string{}
	byPK := map[string][]int{}
	for i, a := range p.actions {
		pk := a.Row.PartitionKey
		if _, ok := byPK[pk]; !ok {
			order = append(order, pk)
		}
		byPK[pk] = append(byPK[pk], i)
	}
	var out [][]int
	for _, pk := range order {
		idx := byPK[pk]
		for len(idx) > 0 {
			n, size := 0, service.TransactionBodySize(nil)
			for n < len(idx) && n < service.MaxTransactionActions {
				add := service.ActionBodySize(&p.actions[idx[n]])
				if n > 0 && size+add > service.MaxBodySize {
					break
				}
				size += add
				n++
			}
			out = append(out, idx[:n:n])
			idx = idx[n:]
		}
	}
	return out
}

// runBatch sends the plan's transactions in order and returns how many actions committed.
// It stops at the first failure; the transactions before it stay committed. committed, when
// not nil, receives the plan indices of each transaction that committed. A skipGone plan
// goes on past a row the service will not delete and fails at the end, naming it.
func (s *Store[T]) runBatch(ctx context.Context, op string, p *plan, committed func(indices []int)) (int, error) {
	done := 0
	var stuck error // the first row a skipGone plan could not delete
	for _, idx := range p.chunks() {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		chunk := make([]service.Action, len(idx))
		keys := make([][2]string, len(idx))
		for i, j := range idx {
			chunk[i] = p.actions[j]
			keys[i] = [2]string{chunk[i].Row.PartitionKey, chunk[i].Row.RowKey}
		}
		// A batch reports no versions (see abstractions.Storage.CreateBatch), so the cache
		// drops what it touches.
		err := s.tracked(s.writeKeys(keys...), func() (*service.Row, error) {
			return nil, s.do(ctx, func() error {
				_, err := s.acct.tables.Transact(ctx, s.table, chunk)
				return err
			})
		})
		for err != nil && p.skipGone {
			// A delete answered 404 and the transaction failed whole because of it. Either
			// another writer removed the row, which reached the delete's goal, or the
			// service misread the action's key (Azurite does with U+2028 and U+2029 in a
			// transaction) and the row is still there; settleDelete tells them apart.
			var te *service.TransactionError
			if !errors.As(err, &te) || te.Index < 0 || te.Index >= len(chunk) || chunk[te.Index].Op != service.OpDelete ||
				!abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
				break
			}
			r := chunk[te.Index].Row
			outcome, serr := s.settleDelete(ctx, op, r.PartitionKey, r.RowKey)
			switch {
			case outcome == stillThere:
				if stuck == nil {
					stuck = serr
				}
			case serr != nil:
				return done, serr
			case outcome == deletedAlone:
				done++
				if committed != nil {
					committed(idx[te.Index : te.Index+1])
				}
			}
			chunk = append(chunk[:te.Index:te.Index], chunk[te.Index+1:]...)
			idx = append(idx[:te.Index:te.Index], idx[te.Index+1:]...)
			if len(chunk) == 0 {
				err = nil
				break
			}
			err = s.tracked(s.writeKeys(keys...), func() (*service.Row, error) {
				return nil, s.do(ctx, func() error {
					_, err := s.acct.tables.Transact(ctx, s.table, chunk)
					return err
				})
			})
		}
		if err != nil {
			return done, s.translateTx(op, chunk, err)
		}
		done += len(chunk)
		if committed != nil {
			committed(idx)
		}
	}
	return done, stuck
}

// A settled is what a delete that answered 404 inside a transaction turned out to mean.
type settled int

const (
	goneAlready  settled = iota // another writer removed the row: nothing to do, nothing to count
	deletedAlone                // the service misread the key in the transaction; a delete of its own worked
	stillThere                  // the service answers 404 to every delete of a row it still reads
)

// settleDelete finds out, with a point read, what a delete that answered 404 inside a
// transaction means, and deletes the row alone when it is still there. For stillThere the
// error says so, naming the row; the caller goes on with the other rows and reports it. Any
// other error ends the call.
func (s *Store[T]) settleDelete(ctx context.Context, op, pk, rk string) (settled, error) {
	exists := func() (bool, error) {
		_, err := s.acct.tables.GetRow(ctx, s.table, pk, rk, keysOnly)
		if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			return false, nil
		}
		return err == nil, s.translate(op, pk, rk, err)
	}
	if there, err := exists(); err != nil || !there {
		return goneAlready, err
	}
	err := s.tracked(s.writeKeys([2]string{pk, rk}), func() (*service.Row, error) {
		_, err := s.acct.tables.Write(ctx, s.table, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: service.ETagAny})
		return nil, err
	})
	if err == nil {
		return deletedAlone, nil
	}
	if !abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return goneAlready, s.translate(op, pk, rk, err)
	}
	// Gone now (another writer was quicker), unless the service cannot address the row.
	if there, rerr := exists(); rerr != nil || !there {
		return goneAlready, rerr
	}
	return stillThere, &abstractions.StoreError{Op: op, Table: s.table, PartitionKey: pk, RowKey: rk, Err: err,
		Message: "the service answers 404 to every delete of this row, yet a read still finds it, so it is still there " +
			"(the count returned leaves it out); delete it with another client"}
}

// translateTx names the row a failed transaction blamed.
func (s *Store[T]) translateTx(op string, chunk []service.Action, err error) error {
	var te *service.TransactionError
	if errors.As(err, &te) && te.Index >= 0 && te.Index < len(chunk) {
		r := chunk[te.Index].Row
		return s.translate(op, r.PartitionKey, r.RowKey, err)
	}
	pk := ""
	if len(chunk) > 0 {
		pk = chunk[0].Row.PartitionKey
	}
	return s.translate(op, pk, "", err)
}

// prepareAll prepares every entity before anything is sent, so a batch with one entity that
// cannot be written sends nothing.
func (s *Store[T]) prepareAll(op string, vs []*T) ([]*prepared[T], error) {
	now := s.acct.now()
	ps := make([]*prepared[T], len(vs))
	for i, v := range vs {
		p, err := s.prepare(op, v, now)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

// CreateBatch inserts the entities in per-partition transactions; see
// [abstractions.Storage.CreateBatch].
func (s *Store[T]) CreateBatch(ctx context.Context, vs []*T) (err error) {
	ctx, c := s.begin(ctx, "create batch")
	defer c.finish(&err)
	ps, err := s.prepareAll("create batch", vs)
	if err != nil {
		return err
	}
	seen := make(map[[2]string]bool, len(ps))
	for _, p := range ps {
		k := [2]string{p.pk, p.rk}
		if seen[k] {
			return &abstractions.StoreError{Kind: abstractions.ErrDuplicateKey, Op: "create batch", Table: s.table, PartitionKey: p.pk, RowKey: p.rk,
				Message: "the batch names this key more than once; nothing was sent"}
		}
		seen[k] = true
	}
	if s.split {
		_, err = s.batchLarge(ctx, "create batch", modeCreate, vs, ps, lastOccurrences(ps))
		return err
	}
	_, err = s.batch(ctx, "create batch", service.OpInsert, vs, ps)
	return err
}

// UpsertBatch inserts or replaces the entities in per-partition transactions; see
// [abstractions.Storage.UpsertBatch].
func (s *Store[T]) UpsertBatch(ctx context.Context, vs []*T) (_ int, err error) {
	ctx, c := s.begin(ctx, "upsert batch")
	defer c.finish(&err)
	ps, err := s.prepareAll("upsert batch", vs)
	if err != nil {
		return 0, err
	}
	for _, p := range ps {
		if strings.ContainsRune(p.pk, '\'') || strings.ContainsRune(p.rk, '\'') {
			// The Go SDK writes the keys of a batched update into the request URL without
			// doubling the quote, so the service would act on another row or refuse it.
			return 0, &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: "upsert batch", Table: s.table, PartitionKey: p.pk, RowKey: p.rk,
				Message: "a key containing ' cannot be written in a batched upsert (the Azure SDK does not escape it); upsert that entity on its own; nothing was sent"}
		}
	}
	if s.split {
		// A repeated key is written once, as its last occurrence, and counts as passed.
		order := lastOccurrences(ps)
		n, err := s.batchLarge(ctx, "upsert batch", modeUpsert, vs, ps, order)
		if err != nil {
			return n, err
		}
		for i := range ps {
			ps[i].commit(vs[i], service.Written{})
		}
		return len(vs), nil
	}
	return s.batch(ctx, "upsert batch", service.OpUpsertReplace, vs, ps)
}

// batch writes prepared entities with one operation and copies each committed one back to
// the caller's entity. A batch reports no versions, so ETag and Timestamp are cleared.
func (s *Store[T]) batch(ctx context.Context, op string, kind service.Op, vs []*T, ps []*prepared[T]) (int, error) {
	p := &plan{actions: make([]service.Action, len(ps))}
	for i, pp := range ps {
		p.actions[i] = service.Action{Op: kind, Row: pp.row}
	}
	return s.runBatch(ctx, op, p, func(indices []int) {
		for _, i := range indices {
			ps[i].commit(vs[i], service.Written{})
		}
	})
}

// DeletePartition deletes every row of a partition; see [abstractions.Storage.DeletePartition].
func (s *Store[T]) DeletePartition(ctx context.Context, partition string) (_ int, err error) {
	ctx, c := s.beginPartition(ctx, "delete partition", partition)
	defer c.finish(&err)
	pk, err := s.checkPartition("delete partition", partition)
	if err != nil {
		return 0, err
	}
	if s.split {
		return s.deletePartitionLarge(ctx, pk)
	}
	p := &plan{skipGone: true}
	err = s.scan(ctx, service.Query{Filter: partitionFilter(pk), Select: keysOnly}, func(r *service.Row) error {
		p.actions = append(p.actions, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: r.PartitionKey, RowKey: r.RowKey}, IfMatch: service.ETagAny})
		return nil
	})
	if err != nil {
		return 0, s.translate("delete partition", pk, "", err)
	}
	n, err := s.runBatch(ctx, "delete partition", p, nil)
	if err != nil {
		// Rows in the transactions that were never sent are still there, but the caller
		// asked for them gone: drop them all so the next read asks the table.
		keys := make([][2]string, len(p.actions))
		for i, a := range p.actions {
			keys[i] = [2]string{a.Row.PartitionKey, a.Row.RowKey}
		}
		s.acct.cache.drop(s.writeKeys(keys...))
	}
	return n, err
}
