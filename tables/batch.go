package tables

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/odata"
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

// A planPart is the transactions of one partition: lists of plan indices, in order.
type planPart struct {
	pk     string
	chunks [][]int
}

// parts cuts the plan into transactions the service accepts: actions of one partition, at
// most 100 of them and at most 4 MiB of request body. Partitions come in the order they
// first appear, and actions keep their order within a partition.
func (p *plan) parts() []planPart {
	order := []string{}
	byPK := map[string][]int{}
	for i, a := range p.actions {
		pk := a.Row.PartitionKey
		if _, ok := byPK[pk]; !ok {
			order = append(order, pk)
		}
		byPK[pk] = append(byPK[pk], i)
	}
	out := make([]planPart, 0, len(order))
	for _, pk := range order {
		part := planPart{pk: pk}
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
			part.chunks = append(part.chunks, idx[:n:n])
			idx = idx[n:]
		}
		out = append(out, part)
	}
	return out
}

// chunks is every transaction of the plan, partition after partition.
func (p *plan) chunks() [][]int {
	var out [][]int
	for _, part := range p.parts() {
		out = append(out, part.chunks...)
	}
	return out
}

// runBatch sends the plan's transactions, those of different partitions concurrently (see
// runParts), and returns how many actions committed. A failure stops its partition: the
// partition's transactions before it stay committed and none after it is sent. committed,
// when not nil, receives the plan indices of each transaction that committed, one call at a
// time. A skipGone plan goes on past a row the service will not delete and fails at the
// end, naming it. The error of a failed call is a *abstractions.BatchError.
func (s *core) runBatch(ctx context.Context, op string, p *plan, committed func(indices []int)) (int, error) {
	var mu sync.Mutex // serialises committed
	var runs []*partRun
	for _, pp := range p.parts() {
		r := &partRun{pk: pp.pk}
		for _, c := range pp.chunks {
			for _, j := range c {
				r.add(j, p.actions[j].Row.RowKey, j)
			}
		}
		chunks := pp.chunks
		var stuck error // the first row a skipGone plan could not delete
		r.step = func(ctx context.Context) (bool, error) {
			idx := chunks[0]
			chunks = chunks[1:]
			ok := func(indices ...int) {
				r.commit(indices...)
				if committed != nil {
					mu.Lock()
					committed(indices)
					mu.Unlock()
				}
			}
			if err := s.sendChunk(ctx, op, p, r, idx, ok, &stuck); err != nil {
				return false, err
			}
			if len(chunks) > 0 {
				return true, nil
			}
			return false, stuck
		}
		runs = append(runs, r)
	}
	s.runParts(ctx, op, runs)
	return countCommitted(runs), s.batchError(op, runs)
}

// sendChunk sends one transaction of a plan and reports its committed actions to ok. For a
// skipGone plan it settles deletes the service answers 404 to (see settleDelete), records
// the first row that stays in *stuck, and sends the rest again.
func (s *core) sendChunk(ctx context.Context, op string, p *plan, r *partRun, idx []int, ok func(...int), stuck *error) error {
	chunk := make([]service.Action, len(idx))
	keys := make([][2]string, len(idx))
	for i, j := range idx {
		chunk[i] = p.actions[j]
		keys[i] = [2]string{chunk[i].Row.PartitionKey, chunk[i].Row.RowKey}
	}
	send := func() error {
		// A batch reports no versions (see abstractions.Storage.CreateBatch), so the cache
		// drops what it touches.
		tracked := s.writeKeys(keys...)
		s.beginWrite(tracked)
		_, err := s.acct.tables.Transact(ctx, s.table, chunk)
		s.endWrite(tracked, err, nil, service.Written{})
		return err
	}
	err := send()
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
		row := chunk[te.Index].Row
		outcome, serr := s.settleDelete(ctx, op, row.PartitionKey, row.RowKey)
		switch {
		case outcome == stillThere:
			if *stuck == nil {
				*stuck = serr
			}
		case serr != nil:
			return serr
		case outcome == deletedAlone:
			ok(idx[te.Index])
		default: // gone already: the goal is reached, but nothing is counted
			r.gone(idx[te.Index])
		}
		chunk = append(chunk[:te.Index:te.Index], chunk[te.Index+1:]...)
		idx = append(idx[:te.Index:te.Index], idx[te.Index+1:]...)
		if len(chunk) == 0 {
			return nil
		}
		err = send()
	}
	if err != nil {
		err = s.translateTx(op, chunk, err)
		if abstractions.OutcomeUnknown(err) {
			r.unknown(idx...)
		}
		return err
	}
	ok(idx...)
	return nil
}

// rowState is what became of one row of a batch call.
type rowState uint8

const (
	rowPending   rowState = iota // not sent, or refused: not written
	rowCommitted                 // its transaction committed
	rowGone                      // a delete found it gone: reported committed, not counted
	rowUnknown                   // its transaction's answer was lost
)

// A partRun is one partition of a batch call: its rows and the step that sends its next
// transaction. runParts calls step again while it reports more, one call at a time.
type partRun struct {
	pk   string
	rows []abstractions.BatchRow
	at   map[int]int // a plan index (or entity index) to its position in rows
	mu   sync.Mutex
	st   []rowState
	step func(ctx context.Context) (more bool, err error)
	err  error
}

func (r *partRun) add(key int, rk string, index int) {
	if r.at == nil {
		r.at = map[int]int{}
	}
	r.at[key] = len(r.rows)
	r.rows = append(r.rows, abstractions.BatchRow{RowKey: rk, Index: index})
	r.st = append(r.st, rowPending)
}

func (r *partRun) set(s rowState, keys ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		if i, ok := r.at[k]; ok {
			r.st[i] = s
		}
	}
}

func (r *partRun) commit(keys ...int)  { r.set(rowCommitted, keys...) }
func (r *partRun) gone(keys ...int)    { r.set(rowGone, keys...) }
func (r *partRun) unknown(keys ...int) { r.set(rowUnknown, keys...) }

// countCommitted counts the rows that committed (not those found gone).
func countCommitted(runs []*partRun) int {
	n := 0
	for _, r := range runs {
		r.mu.Lock()
		for _, st := range r.st {
			if st == rowCommitted {
				n++
			}
		}
		r.mu.Unlock()
	}
	return n
}

// runParts runs the partitions' steps: each partition's one after another, and those of
// different partitions concurrently, at most the account's window at once (its
// BatchParallelism, less after busy answers). Partitions start in order, and a partition
// that has more to send goes first in the queue again, so with a window of 1 the
// transactions go in the order of the input, one partition after another. A step's failure
// stops its partition; a failure that concerns the whole service, or the end of ctx, stops
// every partition (steps already out finish). Every step has returned when it returns: no
// goroutine is left behind.
func (s *core) runParts(ctx context.Context, op string, runs []*partRun) {
	type result struct {
		r    *partRun
		more bool
		err  error
	}
	queue := append([]*partRun(nil), runs...)
	// With a degree of 1 the steps run on the caller's goroutine, exactly as before
	// batches went parallel.
	inline := s.acct.pressure.Max() == 1
	results := make(chan result)
	var done []result // the inline results not yet handled
	out := 0
	var halt error // why no more steps start
	for {
		for halt == nil && len(queue) > 0 && out < s.acct.pressure.Limit() {
			if err := ctx.Err(); err != nil {
				halt = err
				break
			}
			r := queue[0]
			queue = queue[1:]
			out++
			s.acct.tel.Meters.BatchInFlight(ctx, s.table, 1)
			if inline {
				more, err := r.step(ctx)
				done = append(done, result{r, more, err})
				break
			}
			go func() {
				more, err := r.step(ctx)
				results <- result{r, more, err}
			}()
		}
		if out == 0 {
			break
		}
		var res result
		if inline {
			res, done = done[0], done[1:]
		} else {
			res = <-results
		}
		out--
		s.acct.tel.Meters.BatchInFlight(ctx, s.table, -1)
		switch {
		case res.err != nil:
			res.r.err = res.err
			if stopsBatch(res.err) && halt == nil {
				halt = res.err
			}
		case res.more:
			s.acct.pressure.Committed()
			queue = append([]*partRun{res.r}, queue...)
		default:
			s.acct.pressure.Committed()
		}
	}
	for _, r := range queue {
		r.err = s.notSent(op, r.pk, halt)
	}
}

// notSent is the error of a partition whose next transaction was never sent because of
// cause (the failure of another partition, or the end of the context).
func (s *core) notSent(op, pk string, cause error) error {
	e := &abstractions.StoreError{Op: op, Table: s.table, PartitionKey: pk, Err: cause,
		Message: "this partition's remaining transactions were not sent, because the call stopped"}
	switch {
	case errors.Is(cause, context.Canceled):
		e.Kind = context.Canceled
	case errors.Is(cause, abstractions.ErrUnavailable), errors.Is(cause, context.DeadlineExceeded):
		e.Kind = abstractions.ErrUnavailable
	}
	return e
}

// stopsBatch reports a failure that says the service cannot be used as a whole (it is
// unavailable, it refuses the credential, the table is gone) or that the call's context
// ended, rather than something about the partition's own rows: the batch then sends
// nothing more.
func stopsBatch(err error) bool {
	var te *service.TransactionError
	switch {
	case abstractions.OutcomeUnknown(err):
		return true
	case errors.As(err, &te):
		return false
	case abstractions.HasStatus(err, http.StatusUnauthorized, ""), abstractions.HasStatus(err, http.StatusForbidden, ""),
		abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound"):
		return true
	}
	return false
}

// batchError reports a batch call in which some partition failed; it is nil when none did.
func (s *core) batchError(op string, runs []*partRun) error {
	failed := false
	for _, r := range runs {
		failed = failed || r.err != nil
	}
	if !failed {
		return nil
	}
	be := &abstractions.BatchError{Op: op, Table: s.table, Partitions: make([]abstractions.BatchPartition, len(runs))}
	for i, r := range runs {
		bp := abstractions.BatchPartition{PartitionKey: r.pk, Err: r.err}
		r.mu.Lock()
		for j, row := range r.rows {
			switch r.st[j] {
			case rowCommitted, rowGone:
				bp.Committed = append(bp.Committed, row)
			case rowUnknown:
				bp.Unknown = append(bp.Unknown, row)
			default:
				bp.NotCommitted = append(bp.NotCommitted, row)
			}
		}
		r.mu.Unlock()
		be.Partitions[i] = bp
	}
	return be
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
func (s *core) settleDelete(ctx context.Context, op, pk, rk string) (settled, error) {
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
	keys := s.writeKeys([2]string{pk, rk})
	s.beginWrite(keys)
	_, err := s.acct.tables.Write(ctx, s.table, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: service.ETagAny})
	s.endWrite(keys, err, nil, service.Written{})
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
func (s *core) translateTx(op string, chunk []service.Action, err error) error {
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
	defer c.Finish(&err)
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
		ws := writes(ps)
		_, err = s.batchLarge(ctx, "create batch", modeCreate, ws, lastOccurrences(ws), commitTo(vs, ps))
		return err
	}
	_, err = s.batch(ctx, "create batch", service.OpInsert, vs, ps)
	return err
}

// UpsertBatch inserts or replaces the entities in per-partition transactions; see
// [abstractions.Storage.UpsertBatch].
func (s *Store[T]) UpsertBatch(ctx context.Context, vs []*T) (_ int, err error) {
	ctx, c := s.begin(ctx, "upsert batch")
	defer c.Finish(&err)
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
		ws := writes(ps)
		order := lastOccurrences(ws)
		n, err := s.batchLarge(ctx, "upsert batch", modeUpsert, ws, order, commitTo(vs, ps))
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
	return s.runBatch(ctx, op, p, commitTo(vs, ps))
}

// writes returns the row parts of prepared entities.
func writes[T any](ps []*prepared[T]) []*write {
	ws := make([]*write, len(ps))
	for i, p := range ps {
		ws[i] = &p.write
	}
	return ws
}

// commitTo copies committed entities back to the caller's. A batch reports no versions (see
// abstractions.Storage.CreateBatch), so ETag and Timestamp are cleared.
func commitTo[T any](vs []*T, ps []*prepared[T]) func(indices []int) {
	return func(indices []int) {
		for _, i := range indices {
			ps[i].commit(vs[i], service.Written{})
		}
	}
}

// DeletePartition deletes every row of a partition; see [abstractions.Storage.DeletePartition].
func (s *Store[T]) DeletePartition(ctx context.Context, partition string) (_ int, err error) {
	ctx, c := s.beginPartition(ctx, "delete partition", partition)
	defer c.Finish(&err)
	pk, err := s.checkPartition("delete partition", partition)
	if err != nil {
		return 0, err
	}
	if s.split {
		return s.deletePartitionLarge(ctx, pk)
	}
	p := &plan{skipGone: true}
	err = s.scan(ctx, service.Query{Filter: odata.Partition(pk), Select: s.sharedSel(keysOnly)}, func(r *service.Row) error {
		if s.foreign(r) {
			return nil // a polymorphic row of a shared table is not this store's
		}
		p.actions = append(p.actions, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: r.PartitionKey, RowKey: r.RowKey}, IfMatch: service.ETagAny})
		return nil
	})
	if err != nil {
		return 0, s.translate("delete partition", pk, "", err)
	}
	n, err := s.runBatch(ctx, "delete partition", p, nil)
	// One partition: its own error says it all (the count says what was deleted).
	var be *abstractions.BatchError
	if errors.As(err, &be) && len(be.Partitions) == 1 {
		err = be.Partitions[0].Err
	}
	if err != nil {
		// Rows in the transactions that were never sent are still there, but the caller
		// asked for them gone: drop them all so the next read asks the table.
		keys := make([][2]string, len(p.actions))
		for i, a := range p.actions {
			keys[i] = [2]string{a.Row.PartitionKey, a.Row.RowKey}
		}
		s.acct.cache.Drop(s.writeKeys(keys...))
	}
	return n, err
}
