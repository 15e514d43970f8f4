package engine

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// A Plan is the row actions that carry out one store call, in the order they must run. The
// engine sends a plan of one action as a single write and a longer one as entity-group
// transactions (chunks); large values will add their blob actions here.
type Plan struct {
	Actions []service.Action
	// SkipGone resends a transaction without a delete whose row another writer removed.
	SkipGone bool
	// MaxBody bounds each transaction's request body: 0 means service.MaxBodySize. RunBatch
	// sets it to the account's (Account.MaxBody) when it is 0.
	MaxBody int
}

// A PlanPart is the transactions of one partition: lists of plan indices, in order.
type PlanPart struct {
	PK     string
	Chunks [][]int
}

// Parts cuts the plan into transactions the service accepts: actions of one partition, at
// most 100 of them and at most MaxBody bytes of request body (4 MiB on Table Storage, 2 MB
// on Cosmos DB for Table). Partitions come in the order they
// first appear, and actions keep their order within a partition.
func (p *Plan) Parts() []PlanPart {
	order := []string{}
	byPK := map[string][]int{}
	for i, a := range p.Actions {
		pk := a.Row.PartitionKey
		if _, ok := byPK[pk]; !ok {
			order = append(order, pk)
		}
		byPK[pk] = append(byPK[pk], i)
	}
	maxBody := p.MaxBody
	if maxBody <= 0 {
		maxBody = service.MaxBodySize
	}
	out := make([]PlanPart, 0, len(order))
	for _, pk := range order {
		part := PlanPart{PK: pk}
		idx := byPK[pk]
		for len(idx) > 0 {
			n, size := 0, service.TransactionBodySize(nil)
			for n < len(idx) && n < service.MaxTransactionActions {
				add := service.ActionBodySize(&p.Actions[idx[n]])
				if n > 0 && size+add > maxBody {
					break
				}
				size += add
				n++
			}
			part.Chunks = append(part.Chunks, idx[:n:n])
			idx = idx[n:]
		}
		out = append(out, part)
	}
	return out
}

// Chunks is every transaction of the plan, partition after partition.
func (p *Plan) Chunks() [][]int {
	var out [][]int
	for _, part := range p.Parts() {
		out = append(out, part.Chunks...)
	}
	return out
}

// RunBatch sends the plan's transactions, those of different partitions concurrently (see
// RunParts), and returns how many actions committed. A failure stops its partition: the
// partition's transactions before it stay committed and none after it is sent. committed,
// when not nil, receives the plan indices of each transaction that committed, one call at a
// time. A SkipGone plan goes on past a row the service will not delete and fails at the
// end, naming it. The error of a failed call is a *abstractions.BatchError.
func (s *Table) RunBatch(ctx context.Context, op string, p *Plan, committed func(indices []int)) (int, error) {
	var mu sync.Mutex // serialises committed
	var runs []*PartRun
	if p.MaxBody <= 0 {
		p.MaxBody = s.Acct.MaxBody()
	}
	for _, pp := range p.Parts() {
		r := &PartRun{PK: pp.PK}
		for _, c := range pp.Chunks {
			for _, j := range c {
				r.Add(j, p.Actions[j].Row.RowKey, j)
			}
		}
		chunks := pp.Chunks
		var stuck error // the first row a skipGone plan could not delete
		r.Step = func(ctx context.Context) (bool, error) {
			idx := chunks[0]
			chunks = chunks[1:]
			ok := func(indices ...int) {
				r.Commit(indices...)
				if committed != nil {
					mu.Lock()
					committed(indices)
					mu.Unlock()
				}
			}
			if err := s.SendChunk(ctx, op, p, r, idx, ok, &stuck); err != nil {
				return false, err
			}
			if len(chunks) > 0 {
				return true, nil
			}
			return false, stuck
		}
		runs = append(runs, r)
	}
	s.RunParts(ctx, op, runs)
	return CountCommitted(runs), s.BatchError(op, runs)
}

// SendChunk sends one transaction of a plan and reports its committed actions to ok. For a
// SkipGone plan it settles deletes the service answers 404 to (see SettleDelete), records
// the first row that stays in *stuck, and sends the rest again.
func (s *Table) SendChunk(ctx context.Context, op string, p *Plan, r *PartRun, idx []int, ok func(...int), stuck *error) error {
	chunk := make([]service.Action, len(idx))
	keys := make([][2]string, len(idx))
	for i, j := range idx {
		chunk[i] = p.Actions[j]
		keys[i] = [2]string{chunk[i].Row.PartitionKey, chunk[i].Row.RowKey}
	}
	send := func() error {
		// A batch reports no versions (see abstractions.Storage.CreateBatch), so the cache
		// drops what it touches.
		tracked := s.WriteKeys(keys...)
		s.BeginWrite(tracked)
		_, err := s.Acct.Tables.Transact(ctx, s.Name, chunk)
		s.EndWrite(tracked, err, nil, service.Written{})
		return err
	}
	err := send()
	for err != nil && p.SkipGone {
		// A delete answered 404 and the transaction failed whole because of it. Either
		// another writer removed the row, which reached the delete's goal, or the
		// service misread the action's key (Azurite does with U+2028 and U+2029 in a
		// transaction) and the row is still there; SettleDelete tells them apart.
		var te *service.TransactionError
		if !errors.As(err, &te) || te.Index < 0 || te.Index >= len(chunk) || chunk[te.Index].Op != service.OpDelete ||
			!abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			break
		}
		row := chunk[te.Index].Row
		outcome, serr := s.SettleDelete(ctx, op, row.PartitionKey, row.RowKey)
		switch {
		case outcome == StillThere:
			if *stuck == nil {
				*stuck = serr
			}
		case serr != nil:
			return serr
		case outcome == DeletedAlone:
			ok(idx[te.Index])
		default: // gone already: the goal is reached, but nothing is counted
			r.Gone(idx[te.Index])
		}
		chunk = append(chunk[:te.Index:te.Index], chunk[te.Index+1:]...)
		idx = append(idx[:te.Index:te.Index], idx[te.Index+1:]...)
		if len(chunk) == 0 {
			return nil
		}
		err = send()
	}
	if err != nil {
		err = s.TranslateTx(op, chunk, err)
		if abstractions.OutcomeUnknown(err) {
			r.Unknown(idx...)
		}
		return err
	}
	ok(idx...)
	return nil
}

// RowState is what became of one row of a batch call.
type RowState uint8

const (
	RowPending   RowState = iota // not sent, or refused: not written
	RowCommitted                 // its transaction committed
	RowGone                      // a delete found it gone: reported committed, not counted
	RowUnknown                   // its transaction's answer was lost
)

// A PartRun is one partition of a batch call: its rows and the step that sends its next
// transaction. RunParts calls step again while it reports more, one call at a time.
type PartRun struct {
	PK   string
	Rows []abstractions.BatchRow
	At   map[int]int // a plan index (or entity index) to its position in rows
	Mu   sync.Mutex
	St   []RowState
	Step func(ctx context.Context) (more bool, err error)
	Err  error
}

// Add adds the row of the partition at the plan index key, with its row key and its
// position in the caller's slice.
func (r *PartRun) Add(key int, rk string, index int) {
	if r.At == nil {
		r.At = map[int]int{}
	}
	r.At[key] = len(r.Rows)
	r.Rows = append(r.Rows, abstractions.BatchRow{RowKey: rk, Index: index})
	r.St = append(r.St, RowPending)
}

// Set records the state of the rows at the plan indices keys.
func (r *PartRun) Set(s RowState, keys ...int) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	for _, k := range keys {
		if i, ok := r.At[k]; ok {
			r.St[i] = s
		}
	}
}

// Commit, Gone and Unknown record the rows at the plan indices keys as committed, deleted
// already, or of unknown outcome.
func (r *PartRun) Commit(keys ...int) { r.Set(RowCommitted, keys...) }

func (r *PartRun) Gone(keys ...int) { r.Set(RowGone, keys...) }

func (r *PartRun) Unknown(keys ...int) { r.Set(RowUnknown, keys...) }

// CountCommitted counts the rows that committed (not those found gone).
func CountCommitted(runs []*PartRun) int {
	n := 0
	for _, r := range runs {
		r.Mu.Lock()
		for _, st := range r.St {
			if st == RowCommitted {
				n++
			}
		}
		r.Mu.Unlock()
	}
	return n
}

// RunParts runs the partitions' steps: each partition's one after another, and those of
// different partitions concurrently, at most the account's window at once (its
// BatchParallelism, less after busy answers). Partitions start in order, and a partition
// that has more to send goes first in the queue again, so with a window of 1 the
// transactions go in the order of the input, one partition after another. A step's failure
// stops its partition; a failure that concerns the whole service, or the end of ctx, stops
// every partition (steps already out finish). Every step has returned when it returns: no
// goroutine is left behind.
func (s *Table) RunParts(ctx context.Context, op string, runs []*PartRun) {
	type result struct {
		r    *PartRun
		more bool
		err  error
	}
	queue := append([]*PartRun(nil), runs...)
	// With a degree of 1 the steps run on the caller's goroutine, exactly as before
	// batches went parallel.
	inline := s.Acct.Pressure.Max() == 1
	results := make(chan result)
	var done []result // the inline results not yet handled
	out := 0
	var halt error // why no more steps start
	for {
		for halt == nil && len(queue) > 0 && out < s.Acct.Pressure.Limit() {
			if err := ctx.Err(); err != nil {
				halt = err
				break
			}
			r := queue[0]
			queue = queue[1:]
			out++
			s.Acct.Tel.Meters.BatchInFlight(ctx, s.Name, 1)
			if inline {
				more, err := r.Step(ctx)
				done = append(done, result{r, more, err})
				break
			}
			go func() {
				more, err := r.Step(ctx)
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
		s.Acct.Tel.Meters.BatchInFlight(ctx, s.Name, -1)
		switch {
		case res.err != nil:
			res.r.Err = res.err
			if StopsBatch(res.err) && halt == nil {
				halt = res.err
			}
		case res.more:
			s.Acct.Pressure.Committed()
			queue = append([]*PartRun{res.r}, queue...)
		default:
			s.Acct.Pressure.Committed()
		}
	}
	for _, r := range queue {
		r.Err = s.NotSent(op, r.PK, halt)
	}
}

// NotSent is the error of a partition whose next transaction was never sent because of
// cause (the failure of another partition, or the end of the context).
func (s *Table) NotSent(op, pk string, cause error) error {
	e := &abstractions.StoreError{Op: op, Table: s.Name, PartitionKey: pk, Err: cause,
		Message: "this partition's remaining transactions were not sent, because the call stopped"}
	switch {
	case errors.Is(cause, context.Canceled):
		e.Kind = context.Canceled
	case errors.Is(cause, abstractions.ErrUnavailable), errors.Is(cause, context.DeadlineExceeded):
		e.Kind = abstractions.ErrUnavailable
	}
	return e
}

// StopsBatch reports a failure that says the service cannot be used as a whole (it is
// unavailable, it refuses the credential, the table is gone) or that the call's context
// ended, rather than something about the partition's own rows: the batch then sends
// nothing more.
func StopsBatch(err error) bool {
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

// BatchError reports a batch call in which some partition failed; it is nil when none did.
func (s *Table) BatchError(op string, runs []*PartRun) error {
	failed := false
	for _, r := range runs {
		failed = failed || r.Err != nil
	}
	if !failed {
		return nil
	}
	be := &abstractions.BatchError{Op: op, Table: s.Name, Partitions: make([]abstractions.BatchPartition, len(runs))}
	for i, r := range runs {
		bp := abstractions.BatchPartition{PartitionKey: r.PK, Err: r.Err}
		r.Mu.Lock()
		for j, row := range r.Rows {
			switch r.St[j] {
			case RowCommitted, RowGone:
				bp.Committed = append(bp.Committed, row)
			case RowUnknown:
				bp.Unknown = append(bp.Unknown, row)
			default:
				bp.NotCommitted = append(bp.NotCommitted, row)
			}
		}
		r.Mu.Unlock()
		be.Partitions[i] = bp
	}
	return be
}

// A Settled is what a delete that answered 404 inside a transaction turned out to mean.
type Settled int

const (
	GoneAlready  Settled = iota // another writer removed the row: nothing to do, nothing to count
	DeletedAlone                // the service misread the key in the transaction; a delete of its own worked
	StillThere                  // the service answers 404 to every delete of a row it still reads
)

// SettleDelete finds out, with a point read, what a delete that answered 404 inside a
// transaction means, and deletes the row alone when it is still there. For StillThere the
// error says so, naming the row; the caller goes on with the other rows and reports it. Any
// other error ends the call.
func (s *Table) SettleDelete(ctx context.Context, op, pk, rk string) (Settled, error) {
	exists := func() (bool, error) {
		_, err := s.Acct.Tables.GetRow(ctx, s.Name, pk, rk, KeysOnly)
		if abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
			return false, nil
		}
		return err == nil, s.Translate(op, pk, rk, err)
	}
	if there, err := exists(); err != nil || !there {
		return GoneAlready, err
	}
	keys := s.WriteKeys([2]string{pk, rk})
	s.BeginWrite(keys)
	_, err := s.Acct.Tables.Write(ctx, s.Name, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: service.ETagAny})
	s.EndWrite(keys, err, nil, service.Written{})
	if err == nil {
		return DeletedAlone, nil
	}
	if !abstractions.HasStatus(err, http.StatusNotFound, "ResourceNotFound") {
		return GoneAlready, s.Translate(op, pk, rk, err)
	}
	// Gone now (another writer was quicker), unless the service cannot address the row.
	if there, rerr := exists(); rerr != nil || !there {
		return GoneAlready, rerr
	}
	return StillThere, &abstractions.StoreError{Op: op, Table: s.Name, PartitionKey: pk, RowKey: rk, Err: err,
		Message: "the service answers 404 to every delete of this row, yet a read still finds it, so it is still there " +
			"(the count returned leaves it out); delete it with another client"}
}

// TranslateTx names the row a failed transaction blamed.
func (s *Table) TranslateTx(op string, chunk []service.Action, err error) error {
	var te *service.TransactionError
	if errors.As(err, &te) && te.Index >= 0 && te.Index < len(chunk) {
		r := chunk[te.Index].Row
		return s.Translate(op, r.PartitionKey, r.RowKey, err)
	}
	pk := ""
	if len(chunk) > 0 {
		pk = chunk[0].Row.PartitionKey
	}
	return s.Translate(op, pk, "", err)
}
