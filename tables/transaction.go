package tables

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/wire"
	"github.com/unified-data/gotables/tables/service"
)

// Transaction is one entity-group transaction of one partition of one table, put together
// from the writes of several stores (typed stores of For and polymorphic stores of PolyFor
// alike) and committed once: every write or none. It is how a change and the event that
// records it are written together (the transactional outbox): the order is a typed row, its
// event a polymorphic one, both in the same partition of a table the stores share (see
// StoreOptions.SharedTable).
//
// A store starts it, naming the partition once ([Store.Transaction],
// [PolyStore.Transaction]); any store of the same account and table joins it with its methods
// that take the transaction: Store.CreateIn, UpsertIn, UpdateIn and DeleteIn for typed rows,
// which join when their id's partition, as their store normalises it, is the transaction's;
// PolyStore.InsertIn and UpsertIn for items and markers, whose keys are used as written and
// may leave the partition empty when the transaction's partition was named as it is stored (a
// typed store's Transaction normalises the name it is given). Each checks its write as the
// store's own verb does, and a write it refuses is kept: Commit then reports every refused
// write at once, each a *abstractions.StoreError naming its row, joined (errors.Is and
// errors.As find each), and sends nothing. Refused: a write of another account, table or
// partition (ErrInvalidArgument), a key the transaction already names (ErrDuplicateKey), a
// value the store's own verb refuses, and a typed row the transaction cannot carry
// (ErrNotSupported: a split-aware type, whose values may need rows or blobs of their own, and
// a type with protected fields, which a whole-row write checks with a read first).
//
// A write of a store with partition indexes (package tables/index) carries its index rows:
// Commit adds them to the transaction. A create needs nothing more (but see below for a type
// that expires), nor does a Strict update of a version the store read or wrote; for the other
// writes Commit first reads the row's
// index keys, makes the write conditional on the version it read, and refuses, sending
// nothing, a row found missing (ErrNotFound; an upsert inserts it) or at another version than
// a Strict update or a conditional delete names (ErrConcurrencyConflict). A writer that
// changes the row between that read and the commit makes the transaction fail with
// ErrConcurrencyConflict: read again and retry.
//
// A write of a type that expires (docs/expiry.md) treats an expired row as missing. Commit
// reads the row of each of its creates: a create over an expired row replaces it, on
// condition of the version read, with its index rows; when a sweep or another writer
// changes that row before the commit, the transaction (which wrote nothing) is put together
// again from a fresh read, up to three times, and then fails with ErrConcurrencyConflict. An
// update of an expired row is refused as missing (ErrNotFound), sending nothing; an upsert
// writes over it.
//
// A Transaction is not safe for concurrent use, and is committed once.
type Transaction struct {
	// txHandle lets package tables/feed add events to the transaction; it has no exported
	// member.
	txHandle
	// host carries the engine's per-table machinery (error translation, cache keys), as a
	// polymorphic store's host does; it never reads or writes rows itself.
	host *engine.Table
	pk   string
	// asWritten is the partition as the caller named it, which a polymorphic write with an
	// empty partition key is put in only when it is pk: polymorphic keys are used as
	// written, never normalised.
	asWritten string
	acts      []service.Action
	// typed holds, for each action, what a typed write does once the transaction
	// committed (copy the entity back, keep its version in the read cache); nil for a
	// polymorphic write.
	typed []*txTyped
	seen  map[string]bool // the row keys named so far
	errs  []error         // the refusals, in the order the writes were added
	done  bool
	// op is the store operation of every accepted write ("create", "insert", …), "" when
	// they differ: Commit's telemetry names the batch after it.
	op string
	// indexed are the writes of indexed stores, whose index rows Commit adds (ixWrite).
	indexed []*ixWrite
	// fed are the stores with a feed whose records the transaction carries (a shared
	// table's transaction may hold writes of several): Commit marks the partition in the
	// table's registry first, once for them all.
	fed []*engine.Table
}

// txTyped is what a typed write of a transaction does after the commit.
type txTyped struct {
	commit func(service.Written)
	// keep, when the store caches, returns the cache entry of the row's new version.
	keep func(service.Written) *cache.Entry
}

// Transaction returns an empty transaction of the partition of the store's table. The
// partition is normalised as the store normalises a partition given on its own (as List
// does); a typed write joins when its id's partition is that partition. An invalid
// partition is refused by Commit, with ErrInvalidKey.
func (s *Store[T]) Transaction(partition string) *Transaction {
	pk, err := s.core.CheckPartition("transaction", partition)
	if err != nil {
		pk = partition
	}
	tx := newTransaction(s.core, pk, err)
	tx.asWritten = partition
	return tx
}

// Transaction returns an empty transaction of the partition of the store's table. The
// partition key is used exactly as written, as the store's keys are. An invalid partition
// key is refused by Commit, with ErrInvalidKey.
func (s *PolyStore[B]) Transaction(partition string) *Transaction {
	var err error
	if reason := engine.CheckKey(partition); reason != "" {
		err = engine.KeyError("transaction", s.host.Name, partition, "", "partition key", reason)
	}
	tx := newTransaction(s.host, partition, err)
	tx.asWritten = partition
	return tx
}

// txHandle names engine.TxHandle unexported, as handle does engine.Handle.
type txHandle = engine.TxHandle

func newTransaction(host *engine.Table, pk string, err error) *Transaction {
	tx := &Transaction{host: host, pk: pk, seen: map[string]bool{}}
	tx.txHandle = engine.NewTxHandle(tx.publish)
	if err != nil {
		tx.errs = append(tx.errs, err)
	}
	return tx
}

// refused keeps the refusal of a write.
func (tx *Transaction) refused(err error) { tx.errs = append(tx.errs, err) }

// refuse keeps and returns the refusal of a write, or of the whole transaction.
func (tx *Transaction) refuse(kind error, rk, msg string) error {
	err := &abstractions.StoreError{Kind: kind, Op: "transaction", Table: tx.host.Name, PartitionKey: tx.pk, RowKey: rk,
		Message: msg + "; nothing was sent"}
	tx.refused(err)
	return err
}

// accept adds the action a of a store of acct and table, the store's operation op, to the
// transaction, after checking that it may join it; t is what a typed write does after the
// commit (nil for the others).
func (tx *Transaction) accept(acct *engine.Account, table, op string, a service.Action, t *txTyped) {
	pk, rk := a.Row.PartitionKey, a.Row.RowKey
	switch {
	case tx.done:
		tx.refuse(abstractions.ErrInvalidArgument, rk, "the transaction was committed already; start a new one")
	case acct != tx.host.Acct:
		tx.refuse(abstractions.ErrInvalidArgument, rk, "the write's store belongs to another account than the transaction")
	case table != tx.host.Name:
		tx.refuse(abstractions.ErrInvalidArgument, rk,
			fmt.Sprintf("the write's store is of the table %q; a transaction covers one table", table))
	case pk != tx.pk:
		tx.refuse(abstractions.ErrInvalidArgument, rk,
			fmt.Sprintf("the write is in the partition %q; a transaction covers one partition", pk))
	case tx.seen[rk]:
		tx.refuse(abstractions.ErrDuplicateKey, rk, "the transaction names this key already; a transaction writes each row once")
	default:
		tx.seen[rk] = true
		if len(tx.acts) == 0 {
			tx.op = op
		} else if tx.op != op {
			tx.op = ""
		}
		tx.acts = append(tx.acts, a)
		tx.typed = append(tx.typed, t)
	}
}

// Commit sends the transaction's writes as one entity-group transaction: every write is
// applied or none is. A transaction without writes commits nothing and returns nil.
//
// Refused before anything is sent: a transaction whose writes were refused (every refusal
// is returned, joined), a nil one and one committed already, and one of more than 100
// writes or whose request body exceeds the service's 4 MiB (ErrInvalidArgument, saying
// which limit and by how much).
//
// A failure names the write the service blamed and matches what that write's own call
// would match: ErrConcurrencyConflict for a lost ETag condition (an Update in Strict
// mode, a delete or a polymorphic write with IfMatch), ErrDuplicateKey for an insert of an
// existing row, ErrNotFound for an update or delete of a missing row (in a transaction a
// delete of a missing row fails the whole transaction). Nothing was written then.
//
// After success the typed entities carry the versions written (ETag and Timestamp), as
// their single writes leave them, and the account's read cache keeps them as a single
// write keeps its row; polymorphic rows, deletes and every row of a failed transaction are
// dropped from the cache. When the answer is lost (a transport failure, a retry answered
// with the refusal its own earlier try causes), the rows are read back: a transaction the
// service applied reports success, with the versions read, and one that cannot be told
// applied fails with an error whose message says it may have been (abstractions.OutcomeUnknown
// reports it).
func (tx *Transaction) Commit(ctx context.Context) (err error) {
	if tx == nil {
		return fmt.Errorf("%w: the transaction is nil; start one with Store.Transaction or PolyStore.Transaction", abstractions.ErrInvalidArgument)
	}
	ctx, c := tx.host.Acct.Tel.BeginBatch(ctx, tx.host.Name, tx.op, len(tx.acts))
	if c.Traced() {
		c.Keys(tx.pk, "")
	}
	defer c.Finish(&err)
	switch {
	case len(tx.errs) > 0:
		return errors.Join(tx.errs...)
	case tx.done:
		return tx.refuse(abstractions.ErrInvalidArgument, "", "the transaction was committed already; start a new one")
	}
	tx.done = true
	if len(tx.acts) == 0 {
		return nil
	}
	// A create over an expired row replaces it on condition of the version read; when a
	// sweep or another writer changed that row before the commit, nothing was written and
	// the transaction is put together again from a fresh read (see ixWrite.over).
	base := len(tx.acts)
	for attempt := 1; ; attempt++ {
		tx.acts, tx.typed = tx.acts[:base], tx.typed[:base]
		if err := tx.resolveIndexed(ctx); err != nil {
			return err
		}
		err := tx.send(ctx, base)
		if err == nil || attempt == maxOverAttempts || !tx.overChanged(err) {
			return err
		}
	}
}

// send checks the resolved transaction against the service's limits, sends it and, once
// it committed, hands each typed write its version.
func (tx *Transaction) send(ctx context.Context, writes int) error {
	if n := len(tx.acts); n > service.MaxTransactionActions {
		msg := fmt.Sprintf("the transaction holds %d writes; the service takes at most %d in one", n, service.MaxTransactionActions)
		if n > writes {
			msg = fmt.Sprintf("the transaction holds %d writes, %d rows with the index rows and change records they carry; the service takes at most %d in one",
				writes, n, service.MaxTransactionActions)
		}
		return tx.refuse(abstractions.ErrInvalidArgument, "", msg)
	}
	size := service.TransactionBodySize(nil)
	for i := range tx.acts {
		size += service.ActionBodySize(&tx.acts[i])
	}
	if maxBody := tx.host.Acct.MaxBody(); size > maxBody {
		limit := "4 MiB"
		if maxBody != service.MaxBodySize {
			limit = "Azure Cosmos DB for Table's 2 MB"
		}
		return tx.refuse(abstractions.ErrInvalidArgument, "",
			fmt.Sprintf("the transaction's request body would be about %d bytes; the service takes at most %d (%s) in one", size, maxBody, limit))
	}
	if err := ctx.Err(); err != nil {
		return tx.host.Unsent("transaction", tx.pk, "", err)
	}
	if err := engine.MarkFeeds(ctx, "transaction", tx.pk, tx.fed...); err != nil {
		return err
	}
	rows := make([][2]string, len(tx.acts))
	for i, a := range tx.acts {
		rows[i] = [2]string{a.Row.PartitionKey, a.Row.RowKey}
	}
	keys := tx.host.WriteKeys(rows...)
	tx.host.BeginWrite(keys)
	ws, err := tx.host.Acct.Tables.Transact(ctx, tx.host.Name, tx.acts)
	var put func(string, *cache.Entry) *cache.Entry
	if err == nil && len(ws) == len(tx.acts) {
		own := map[string]int{}
		for i, t := range tx.typed {
			if t != nil && t.keep != nil && ws[i].ETag != "" {
				own[tx.host.EntityKey(rows[i][0], rows[i][1])] = i
			}
		}
		put = func(k string, _ *cache.Entry) *cache.Entry {
			if i, ok := own[k]; ok {
				return tx.typed[i].keep(ws[i])
			}
			return nil
		}
	}
	tx.host.Acct.Cache.EndWrite(keys, put)
	if err != nil {
		return withConflictAdvice(tx.host.TranslateTx("transaction", tx.acts, err),
			"the row is no longer at the version the write's condition names (another writer changed it), so the transaction wrote nothing; read again and decide whether to retry")
	}
	for _, x := range tx.indexed {
		if x.w != nil && x.at < len(ws) {
			x.core.Seen.Remember(x.w.PK, x.w.RK, ws[x.at].ETag, x.w.Ix)
		}
	}
	for i, t := range tx.typed {
		if t != nil {
			var w service.Written
			if i < len(ws) {
				w = ws[i]
			}
			t.commit(w)
		}
	}
	return nil
}

// typedWrite is the shared part of the typed stores' transaction methods: prepare v, check
// it may join, and add it.
func (s *Store[T]) typedWrite(tx *Transaction, op string, v *T, a service.Action) {
	if tx == nil {
		return
	}
	if err := s.txSupported(tx, op); err != nil {
		tx.refused(err)
		return
	}
	p, err := s.prepare(op, v, s.core.Acct.Now())
	if err != nil {
		tx.refused(err)
		return
	}
	a.Row = p.Row
	t := &txTyped{commit: func(w service.Written) { p.commit(v, w) }}
	if s.core.Policy.Enabled() {
		t.keep = func(w service.Written) *cache.Entry {
			return &cache.Entry{Row: *cache.Written(p.Row, w), TTL: s.core.Policy.TTL, Sliding: s.core.Policy.Sliding}
		}
	}
	if len(s.core.Indexes) > 0 || s.core.Feed != nil {
		x := &ixWrite{core: s.core, w: &p.Write, mode: engine.ModeUpsert}
		switch {
		case a.Op == service.OpInsert:
			x.mode = engine.ModeCreate
		case a.Op == service.OpReplace && a.IfMatch != service.ETagAny:
			x.mode, x.etag = engine.ModeStrict, a.IfMatch
		case a.Op == service.OpReplace:
			x.mode = engine.ModeReplace
		}
		tx.acceptIndexed(s.core.Acct, s.core.Name, op, a, t, x)
		return
	}
	tx.accept(s.core.Acct, s.core.Name, op, a, t)
}

// txSupported refuses the typed rows a transaction cannot carry.
func (s *Store[T]) txSupported(tx *Transaction, op string) error {
	var reason string
	switch {
	case s.core.Split:
		reason = fmt.Sprintf("%v is split-aware (a split or offload option): its values may need continuation rows or blobs beyond the one row a transaction writes; write it with the store's own verbs",
			reflect.TypeFor[T]())
	case len(s.core.Uniques) > 0:
		reason = fmt.Sprintf("%v has unique indexes, whose claims are rows of other partitions, which one transaction cannot write; write it with the store's own verbs",
			reflect.TypeFor[T]())
	case (op == "upsert" || op == "update") && len(s.core.ProtectedFields()) > 0:
		reason = fmt.Sprintf("%v has protected fields, which a whole-row write checks against the stored row first; write it with the store's own %s",
			reflect.TypeFor[T](), op)
	default:
		return nil
	}
	return &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: "transaction", Table: s.core.Name, PartitionKey: tx.pk,
		Message: reason + "; nothing was sent"}
}

// CreateIn adds the insert of v to tx, as Create would write it (its id resolved, CreatedAt
// and UpdatedAt stamped); the transaction fails with ErrDuplicateKey when the row exists
// (an expired row of a type that expires is replaced, see [Transaction]).
// v is updated (id, times, ETag, Timestamp) only when tx commits. A write the store refuses
// is reported by Commit (see [Transaction]); a nil tx takes nothing.
func (s *Store[T]) CreateIn(tx *Transaction, v *T) {
	s.typedWrite(tx, "create", v, service.Action{Op: service.OpInsert})
}

// UpsertIn adds the insert-or-replace of v to tx, as Upsert would write it. v is updated
// only when tx commits. A refused write is reported by Commit; a nil tx takes nothing.
func (s *Store[T]) UpsertIn(tx *Transaction, v *T) {
	s.typedWrite(tx, "upsert", v, service.Action{Op: service.OpUpsertReplace})
}

// UpdateIn adds the replace of the stored row by v to tx under mode, as Update resolves it
// (Auto, Strict with v's ETag, LastWriterWins): the transaction fails with ErrNotFound
// when the row is missing and, in Strict mode, with ErrConcurrencyConflict when it has
// moved on, and nothing is written. v is updated only when tx commits. A refused write is
// reported by Commit; a nil tx takes nothing.
func (s *Store[T]) UpdateIn(tx *Transaction, v *T, mode abstractions.ConcurrencyMode) {
	if tx == nil {
		return
	}
	if v == nil {
		s.typedWrite(tx, "update", v, service.Action{})
		return
	}
	mode, etag, err := s.updateCondition(v, mode)
	if err != nil {
		tx.refused(err)
		return
	}
	ifMatch := service.ETagAny
	if mode == abstractions.Strict {
		ifMatch = etag
	}
	s.typedWrite(tx, "update", v, service.Action{Op: service.OpReplace, IfMatch: ifMatch})
}

// DeleteIn adds the delete of the row with the id to tx: with ifMatch "" whatever version
// is stored, otherwise only that version. Unlike Delete, a missing row is not success
// here: the service fails the whole transaction (ErrNotFound), and a row at another
// version fails it with ErrConcurrencyConflict. A refused write is reported by Commit; a nil
// tx takes nothing.
func (s *Store[T]) DeleteIn(tx *Transaction, id, ifMatch string) {
	if tx == nil {
		return
	}
	if err := s.txSupported(tx, "delete"); err != nil {
		tx.refused(err)
		return
	}
	_, pk, rk, err := s.core.ResolveID("delete", id)
	if err == nil && ifMatch != "" && !wire.IsEntityTag(ifMatch) {
		err = &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "delete", Table: s.core.Name, PartitionKey: pk, RowKey: rk, Message: engine.BadETag(ifMatch)}
	}
	if err != nil {
		tx.refused(err)
		return
	}
	cond := service.ETagAny
	if ifMatch != "" {
		cond = ifMatch
	}
	a := service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: cond}
	if len(s.core.Indexes) > 0 || s.core.Feed != nil {
		tx.acceptIndexed(s.core.Acct, s.core.Name, "delete", a, nil, &ixWrite{core: s.core, del: true, mode: engine.ModeReplace, etag: ifMatch})
		return
	}
	tx.accept(s.core.Acct, s.core.Name, "delete", a, nil)
}

// InsertIn adds w to tx as Insert writes it: a new row (the transaction fails with
// ErrDuplicateKey when one exists), or with w.IfMatch a replace of the row at that version
// (it fails with ErrConcurrencyConflict when the row moved on). A marker
// (abstractions.Marker) is written the same way. An empty w.Key.PartitionKey is the
// transaction's partition, when that was named as it is stored (otherwise the write is
// refused: name its partition). A write the store refuses is reported by Commit (see
// [Transaction]); a nil tx takes nothing.
func (s *PolyStore[B]) InsertIn(tx *Transaction, w abstractions.PolyWrite[B]) {
	s.txWrite(tx, "insert", service.OpInsert, &w)
}

// UpsertIn adds w to tx as Upsert writes it: the row whether or not one exists, or with
// w.IfMatch a replace of the row at that version. An empty w.Key.PartitionKey is the
// transaction's partition, as InsertIn says.
func (s *PolyStore[B]) UpsertIn(tx *Transaction, w abstractions.PolyWrite[B]) {
	s.txWrite(tx, "upsert", service.OpUpsertReplace, &w)
}

func (s *PolyStore[B]) txWrite(tx *Transaction, op string, kind service.Op, w *abstractions.PolyWrite[B]) {
	if tx == nil {
		return
	}
	if w.Key.PartitionKey == "" {
		if tx.asWritten != tx.pk {
			tx.refused(s.refuse(op, "", w.Key.RowKey, abstractions.ErrInvalidArgument,
				fmt.Sprintf("the write leaves its partition empty, but the transaction's partition %q was normalised to %q and polymorphic keys are used as written: name the partition of the write", tx.asWritten, tx.pk)))
			return
		}
		w.Key.PartitionKey = tx.pk
	}
	a, err := s.action(op, kind, w)
	if err != nil {
		tx.refused(err)
		return
	}
	if s.host.Feed != nil {
		// Its record joins the transaction as a typed store's does (resolveIndexed).
		p, mode := s.unit(op, a)
		tx.acceptIndexed(s.host.Acct, s.host.Name, op, a, nil, &ixWrite{core: s.host, w: p, mode: mode, etag: p.IfMatch})
		return
	}
	tx.accept(s.host.Acct, s.host.Name, op, a, nil)
}
