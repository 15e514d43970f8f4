package tables

import (
	"context"
	"fmt"
	"reflect"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/cache"
	"github.com/unified-data/gotables/tables/internal/telemetry"
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
// Writes are added with the stores' methods that take the transaction: Store.CreateIn,
// UpsertIn, UpdateIn and DeleteIn for typed rows, PolyStore.InsertIn and UpsertIn for
// items and markers. Each checks its write as the store's own verb does and refuses, before
// anything is sent and with a *abstractions.StoreError naming the row, a write of another
// account, table or partition (ErrInvalidArgument), a key the transaction already names
// (ErrDuplicateKey), and a typed row the transaction cannot carry (ErrNotSupported: a
// split-aware type, whose values may need rows or blobs of their own, and a type with
// protected fields, which a whole-row write checks with a read first). A refused write is
// remembered: Commit then refuses the transaction with the same error, so a caller that
// checks only Commit's error still sends nothing.
//
// A Transaction is not safe for concurrent use, and is committed once.
type Transaction struct {
	// host carries the engine's per-table machinery (error translation, cache keys), as a
	// polymorphic store's host does; it never reads or writes rows itself.
	host *engine.Table
	pk   string
	acts []service.Action
	// typed holds, for each action, what a typed write does once the transaction
	// committed (copy the entity back, keep its version in the read cache); nil for a
	// polymorphic write.
	typed []*txTyped
	seen  map[string]bool // the row keys named so far
	err   error           // the first refusal
	done  bool
}

// txTyped is what a typed write of a transaction does after the commit.
type txTyped struct {
	commit func(service.Written)
	// keep, when the store caches, returns the cache entry of the row's new version.
	keep func(service.Written) *cache.Entry
}

// NewTransaction returns an empty transaction of the partition of the account's table.
// The partition key is used exactly as written (as a polymorphic store's keys are): a
// typed write joins it when its id's partition, normalised as the store normalises it,
// is that key. An invalid account, table name or partition key is not refused here but
// by Commit (and every write added), with ErrInvalidArgument or ErrInvalidKey.
func NewTransaction(a *Account, table, partition string) *Transaction {
	tx := &Transaction{pk: partition, seen: map[string]bool{}}
	host, err := For[polyHost](a, &StoreOptions{Table: table, Cache: Disabled})
	switch {
	case err != nil:
		tx.err = fmt.Errorf("transaction: %w", err)
	case engine.CheckKey(partition) != "":
		tx.err = engine.KeyError("transaction", table, partition, "", "partition key", engine.CheckKey(partition))
	}
	if host != nil {
		tx.host = host.core
	}
	return tx
}

// refuse records and returns the refusal of a write, or of the whole transaction.
func (tx *Transaction) refuse(kind error, rk, msg string) error {
	err := &abstractions.StoreError{Kind: kind, Op: "transaction", Table: tx.table(), PartitionKey: tx.pk, RowKey: rk,
		Message: msg + "; nothing was sent"}
	if tx.err == nil {
		tx.err = err
	}
	return err
}

func (tx *Transaction) table() string {
	if tx.host == nil {
		return ""
	}
	return tx.host.Name
}

// accept adds the action a of a store of acct and table to the transaction, after checking
// that it may join it; t is what a typed write does after the commit (nil for the others).
func (tx *Transaction) accept(acct *engine.Account, table string, a service.Action, t *txTyped) error {
	pk, rk := a.Row.PartitionKey, a.Row.RowKey
	switch {
	case tx.err != nil:
		return tx.err
	case tx.done:
		return tx.refuse(abstractions.ErrInvalidArgument, rk, "the transaction was committed already; start a new one")
	case acct != tx.host.Acct:
		return tx.refuse(abstractions.ErrInvalidArgument, rk, "the write's store belongs to another account than the transaction")
	case table != tx.host.Name:
		return tx.refuse(abstractions.ErrInvalidArgument, rk,
			fmt.Sprintf("the write's store is of the table %q; a transaction covers one table", table))
	case pk != tx.pk:
		return tx.refuse(abstractions.ErrInvalidArgument, rk,
			fmt.Sprintf("the write is in the partition %q; a transaction covers one partition", pk))
	case tx.seen[rk]:
		return tx.refuse(abstractions.ErrDuplicateKey, rk, "the transaction names this key already; a transaction writes each row once")
	case a.Op != service.OpInsert && a.Op != service.OpDelete && hasQuote(abstractions.TableKey{PartitionKey: pk, RowKey: rk}):
		// The Go SDK writes the keys of a batched replace or upsert into the action's URL
		// without doubling the quote, so the service would act on another row.
		return tx.refuse(abstractions.ErrNotSupported, rk,
			"a key containing ' cannot be replaced or upserted in a transaction (the Azure SDK does not escape it); write that row on its own")
	}
	tx.seen[rk] = true
	tx.acts = append(tx.acts, a)
	tx.typed = append(tx.typed, t)
	return nil
}

// Commit sends the transaction's writes as one entity-group transaction: every write is
// applied or none is. A transaction without writes commits nothing and returns nil.
//
// Refused before anything is sent: a transaction whose writes were refused (the first
// refusal is returned), one committed already, and one of more than 100 writes or whose
// request body exceeds the service's 4 MiB (ErrInvalidArgument, saying which limit and by
// how much).
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
	if tx.host != nil {
		var c telemetry.Call
		ctx, c = tx.host.Acct.Tel.Begin(ctx, tx.host.Name, "transaction")
		if c.Traced() {
			c.Keys(tx.pk, "")
		}
		defer c.Finish(&err)
	}
	switch {
	case tx.err != nil:
		return tx.err
	case tx.done:
		return tx.refuse(abstractions.ErrInvalidArgument, "", "the transaction was committed already; start a new one")
	}
	tx.done = true
	if len(tx.acts) == 0 {
		return nil
	}
	if n := len(tx.acts); n > service.MaxTransactionActions {
		return tx.refuse(abstractions.ErrInvalidArgument, "",
			fmt.Sprintf("the transaction holds %d writes; the service takes at most %d in one", n, service.MaxTransactionActions))
	}
	size := service.TransactionBodySize(nil)
	for i := range tx.acts {
		size += service.ActionBodySize(&tx.acts[i])
	}
	if size > service.MaxBodySize {
		return tx.refuse(abstractions.ErrInvalidArgument, "",
			fmt.Sprintf("the transaction's request body would be about %d bytes; the service takes at most %d (4 MiB) in one", size, service.MaxBodySize))
	}
	if err := ctx.Err(); err != nil {
		return tx.host.Translate("transaction", tx.pk, "", err)
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
func (s *Store[T]) typedWrite(tx *Transaction, op string, v *T, a service.Action) error {
	if tx == nil {
		return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: op, Table: s.core.Name, Message: "the transaction is nil; make it with NewTransaction"}
	}
	if tx.err != nil {
		return tx.err
	}
	if err := s.txSupported(tx, op); err != nil {
		return err
	}
	p, err := s.prepare(op, v, s.core.Acct.Now())
	if err != nil {
		if tx.err == nil {
			tx.err = err
		}
		return err
	}
	a.Row = p.Row
	t := &txTyped{commit: func(w service.Written) { p.commit(v, w) }}
	if s.core.Policy.Enabled() {
		t.keep = func(w service.Written) *cache.Entry {
			return &cache.Entry{Row: *cache.Written(p.Row, w), TTL: s.core.Policy.TTL, Sliding: s.core.Policy.Sliding}
		}
	}
	return tx.accept(s.core.Acct, s.core.Name, a, t)
}

// txSupported refuses the typed rows a transaction cannot carry.
func (s *Store[T]) txSupported(tx *Transaction, op string) error {
	var reason string
	switch {
	case s.core.Split:
		reason = fmt.Sprintf("%v is split-aware (a split or offload option): its values may need continuation rows or blobs beyond the one row a transaction writes; write it with the store's own verbs",
			reflect.TypeFor[T]())
	case (op == "upsert" || op == "update") && len(s.core.ProtectedFields()) > 0:
		reason = fmt.Sprintf("%v has protected fields, which a whole-row write checks against the stored row first; write it with the store's own %s",
			reflect.TypeFor[T](), op)
	default:
		return nil
	}
	err := &abstractions.StoreError{Kind: abstractions.ErrNotSupported, Op: "transaction", Table: s.core.Name, PartitionKey: tx.pk,
		Message: reason + "; nothing was sent"}
	if tx.err == nil {
		tx.err = err
	}
	return err
}

// CreateIn adds the insert of v to tx, as Create would write it (its id resolved, CreatedAt
// and UpdatedAt stamped); the transaction fails with ErrDuplicateKey when the row exists.
// v is updated (id, times, ETag, Timestamp) only when tx commits. See [Transaction] for
// what is refused.
func (s *Store[T]) CreateIn(tx *Transaction, v *T) error {
	return s.typedWrite(tx, "create", v, service.Action{Op: service.OpInsert})
}

// UpsertIn adds the insert-or-replace of v to tx, as Upsert would write it. v is updated
// only when tx commits.
func (s *Store[T]) UpsertIn(tx *Transaction, v *T) error {
	return s.typedWrite(tx, "upsert", v, service.Action{Op: service.OpUpsertReplace})
}

// UpdateIn adds the replace of the stored row by v to tx under mode, as Update resolves it
// (Auto, Strict with v's ETag, LastWriterWins): the transaction fails with ErrNotFound
// when the row is missing and, in Strict mode, with ErrConcurrencyConflict when it has
// moved on, and nothing is written. v is updated only when tx commits.
func (s *Store[T]) UpdateIn(tx *Transaction, v *T, mode abstractions.ConcurrencyMode) error {
	if v == nil {
		return s.typedWrite(tx, "update", v, service.Action{})
	}
	mode, etag, err := s.updateCondition(v, mode)
	if err != nil {
		if tx != nil && tx.err == nil {
			tx.err = err
		}
		return err
	}
	ifMatch := service.ETagAny
	if mode == abstractions.Strict {
		ifMatch = etag
	}
	return s.typedWrite(tx, "update", v, service.Action{Op: service.OpReplace, IfMatch: ifMatch})
}

// DeleteIn adds the delete of the row with the id to tx: with ifMatch "" whatever version
// is stored, otherwise only that version. Unlike Delete, a missing row is not success
// here: the service fails the whole transaction (ErrNotFound), and a row at another
// version fails it with ErrConcurrencyConflict.
func (s *Store[T]) DeleteIn(tx *Transaction, id, ifMatch string) error {
	if tx == nil {
		return &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "delete", Table: s.core.Name, Message: "the transaction is nil; make it with NewTransaction"}
	}
	if tx.err != nil {
		return tx.err
	}
	if err := s.txSupported(tx, "delete"); err != nil {
		return err
	}
	_, pk, rk, err := s.core.ResolveID("delete", id)
	if err == nil && ifMatch != "" && !wire.IsEntityTag(ifMatch) {
		err = &abstractions.StoreError{Kind: abstractions.ErrInvalidArgument, Op: "delete", Table: s.core.Name, PartitionKey: pk, RowKey: rk, Message: engine.BadETag(ifMatch)}
	}
	if err != nil {
		if tx.err == nil {
			tx.err = err
		}
		return err
	}
	cond := service.ETagAny
	if ifMatch != "" {
		cond = ifMatch
	}
	return tx.accept(s.core.Acct, s.core.Name, service.Action{Op: service.OpDelete, Row: service.Row{PartitionKey: pk, RowKey: rk}, IfMatch: cond}, nil)
}

// InsertIn adds w to tx as Insert writes it: a new row (the transaction fails with
// ErrDuplicateKey when one exists), or with w.IfMatch a replace of the row at that version
// (it fails with ErrConcurrencyConflict when the row moved on). A marker
// (abstractions.Marker) is written the same way. See [Transaction] for what is refused.
func (s *PolyStore[B]) InsertIn(tx *Transaction, w abstractions.PolyWrite[B]) error {
	return s.txWrite(tx, "insert", service.OpInsert, &w)
}

// UpsertIn adds w to tx as Upsert writes it: the row whether or not one exists, or with
// w.IfMatch a replace of the row at that version.
func (s *PolyStore[B]) UpsertIn(tx *Transaction, w abstractions.PolyWrite[B]) error {
	return s.txWrite(tx, "upsert", service.OpUpsertReplace, &w)
}

func (s *PolyStore[B]) txWrite(tx *Transaction, op string, kind service.Op, w *abstractions.PolyWrite[B]) error {
	if tx == nil {
		return s.refuse(op, w.Key.PartitionKey, w.Key.RowKey, abstractions.ErrInvalidArgument, "the transaction is nil; make it with NewTransaction")
	}
	if tx.err != nil {
		return tx.err
	}
	a, err := s.action(op, kind, w)
	if err != nil {
		if tx.err == nil {
			tx.err = err
		}
		return err
	}
	return tx.accept(s.host.Acct, s.host.Name, a, nil)
}
