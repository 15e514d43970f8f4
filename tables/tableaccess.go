package tables

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/unified-data/gotables/tables/internal/telemetry"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// storeTables is the account's table service as its stores use it. It adds two rules to
// the service it wraps, so that every store path (single writes, batches, split entities,
// polymorphic stores) follows them:
//
//   - Reads never create tables. A point read of a missing table answers 404
//     ResourceNotFound (no row has the key), a query an empty last page; both log at
//     Debug. A write that can create a row (an insert or an upsert, alone or in a
//     transaction) that meets 404 TableNotFound creates the table and is sent once more,
//     unless Options.NeverCreateTables is set. A delete, merge or replace (or a transaction
//     holding one) meets a missing row instead: the table is not created, the answer is
//     404 ResourceNotFound, so a delete succeeds and the others fail with ErrNotFound.
//   - Writes tell their own echo (echo.go): a refusal or a lost answer that an applied
//     earlier try may explain is checked against the stored row.
type storeTables struct {
	service.Tables
	acct *Account
	// seen holds the names, as the stores give them, of the tables a write succeeded on
	// since the account last found them missing: the lock-free fast path of knowTable.
	seen sync.Map
}

// GetRow reads one row; a missing table is a missing row.
func (t *storeTables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	row, err := t.Tables.GetRow(ctx, table, pk, rk, sel)
	if isTableNotFound(err) {
		t.acct.missingTable(table)
		return service.Row{}, rowOfMissingTable(err)
	}
	return row, err
}

// Query returns one page; a missing table has no rows.
func (t *storeTables) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	page, err := t.Tables.Query(ctx, table, q)
	if isTableNotFound(err) {
		t.acct.missingTable(table)
		return service.Page{}, nil
	}
	return page, err
}

// Write performs one row write, creating a missing table first when allowed, and reports
// success for a write an earlier try applied.
func (t *storeTables) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	gen := t.acct.tableGen.Load()
	w, err := t.write(ctx, table, &a)
	if isTableNotFound(err) && !createsRow(a.Op) {
		// A delete, merge or replace needs the row to be there: a missing table has no
		// rows, so this is a missing row, and no table is created for it.
		return service.Written{}, t.noRowInMissingTable(table, err)
	}
	if isTableNotFound(err) {
		t.seen.Delete(table)
		if err := t.acct.recreateTable(ctx, table, err, gen); err != nil {
			return service.Written{}, err
		}
		w, err = t.write(ctx, table, &a)
	}
	if err == nil {
		t.knowTable(table)
	}
	return w, err
}

func (t *storeTables) write(ctx context.Context, table string, a *service.Action) (service.Written, error) {
	tctx, tries := attempt.WithAttempts(ctx)
	w, err := t.Tables.Write(tctx, table, *a)
	if refusesETag(err, a) {
		return w, &refusedETag{etag: a.IfMatch, err: err}
	}
	if err == nil || !mayBeEcho(err, a, tries.Retried()) {
		return w, err
	}
	row, ok := t.applied(ctx, table, a)
	if !ok {
		return w, err
	}
	t.acct.logEcho(table, a.Op.String(), err)
	t.acct.tel.Meters.OwnEcho(ctx, table, telemetry.ActionName(a.Op))
	return service.Written{ETag: row.ETag, Timestamp: row.Timestamp}, nil
}

// Transact performs a transaction, creating a missing table first when allowed, and
// reports success for a transaction an earlier try committed, with each action's version as
// the row read back holds it (the zero Written for a delete).
func (t *storeTables) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	gen := t.acct.tableGen.Load()
	ws, err := t.transact(ctx, table, actions)
	if i := firstNeedingRow(actions); isTableNotFound(err) && i >= 0 {
		// The transaction holds a delete, merge or replace, which fails on the missing
		// row it addresses whether or not the table is created first.
		return nil, &service.TransactionError{Index: i, Err: t.noRowInMissingTable(table, err)}
	}
	if isTableNotFound(err) {
		t.seen.Delete(table)
		if err := t.acct.recreateTable(ctx, table, err, gen); err != nil {
			return nil, err
		}
		ws, err = t.transact(ctx, table, actions)
	}
	if err == nil {
		t.knowTable(table)
	}
	return ws, err
}

func (t *storeTables) transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	tctx, tries := attempt.WithAttempts(ctx)
	ws, err := t.Tables.Transact(tctx, table, actions)
	if err == nil || !txMayBeEcho(err, actions, tries.Retried()) {
		return ws, err
	}
	ws = make([]service.Written, len(actions))
	for i := range actions {
		row, ok := t.applied(ctx, table, &actions[i])
		if !ok {
			return nil, err
		}
		ws[i] = service.Written{ETag: row.ETag, Timestamp: row.Timestamp}
	}
	t.acct.logEcho(table, "transaction", err)
	t.acct.tel.Meters.OwnEcho(ctx, table, "transaction")
	return ws, nil
}

// A refusedETag is a 400 answer to a single-row write conditioned on an ETag: the
// service did not take the If-Match value for one of its entity tags (it passed the
// library's shape check, but the service never issued it). translate matches it to
// abstractions.ErrInvalidArgument; the service's *abstractions.StatusError stays in the chain.
type refusedETag struct {
	etag string
	err  error
}

func (e *refusedETag) Error() string {
	return e.err.Error()
}

func (e *refusedETag) Unwrap() error { return e.err }

// refusesETag reports whether err is the service refusing the If-Match value of a: a 400
// InvalidInput, InvalidOperation or InvalidHeaderValue answer to a replace, merge or delete
// conditioned on an ETag (not "*").
func refusesETag(err error, a *service.Action) bool {
	if err == nil || a.IfMatch == "" || a.IfMatch == service.ETagAny || createsRow(a.Op) {
		return false
	}
	return abstractions.HasStatus(err, http.StatusBadRequest, "InvalidInput") ||
		abstractions.HasStatus(err, http.StatusBadRequest, "InvalidOperation") ||
		abstractions.HasStatus(err, http.StatusBadRequest, "InvalidHeaderValue")
}

// A notCreated is the TableNotFound answer to a write of an account with
// Options.NeverCreateTables, so that the error can say why the table was not created.
type notCreated struct{ err error }

func (e *notCreated) Error() string { return e.err.Error() }
func (e *notCreated) Unwrap() error { return e.err }

// createsRow reports whether a write of op can create a row that does not exist (an insert
// or an upsert): only those create a missing table and are sent again.
func createsRow(op service.Op) bool {
	return op == service.OpInsert || op == service.OpUpsertReplace || op == service.OpUpsertMerge
}

// firstNeedingRow returns the index of the first action that needs its row to exist (a
// delete, merge or replace), or -1 when every action can create its row.
func firstNeedingRow(actions []service.Action) int {
	for i := range actions {
		if !createsRow(actions[i].Op) {
			return i
		}
	}
	return -1
}

// rowOfMissingTable is the answer to a write that needs its row when the table is missing:
// the service's 404 ResourceNotFound for a missing row, so that a delete reaches its goal
// and a merge or replace fails with ErrNotFound, as on an existing table.
func rowOfMissingTable(notFound error) error {
	return &abstractions.StatusError{StatusCode: http.StatusNotFound, ErrorCode: "ResourceNotFound",
		Message: "the table does not exist, so no row has this key", Err: notFound}
}

// logEcho notes, at Debug, a failure that turned out to be the answer to a resend of a
// write the service had applied.
func (a *Account) logEcho(table, op string, err error) {
	a.logger().Debug("unified tables: a write's failure was the echo of its own earlier try, which the service applied; reporting success",
		"table", table, "op", op, "answer", err.Error())
}

// missingTable notes, at Debug, a read of a table that does not exist.
func (a *Account) missingTable(table string) {
	a.logger().Debug("unified tables: the table does not exist; the read finds nothing (reads never create tables)", "table", table)
}

// noRowInMissingTable is the answer to a delete, merge or replace that met the missing
// table's 404 TableNotFound: the table is forgotten as known, the case is noted at Debug, and
// the error is the missing row's (rowOfMissingTable). No table is created.
func (t *storeTables) noRowInMissingTable(table string, notFound error) error {
	t.seen.Delete(table)
	t.acct.logger().Debug("unified tables: the table does not exist; a delete, merge or replace finds no row and creates no table", "table", table)
	return rowOfMissingTable(notFound)
}

// knowTable records that a write succeeded on the table, without a lock once it is known.
func (t *storeTables) knowTable(table string) {
	if _, ok := t.seen.Load(table); ok {
		return
	}
	t.acct.knowTable(table)
	t.seen.Store(table, struct{}{})
}

// knowTable records that the table exists.
func (a *Account) knowTable(table string) {
	key := strings.ToLower(table)
	a.mu.Lock()
	if a.created[key] == 0 {
		a.created[key] = a.tableGen.Add(1)
	}
	a.mu.Unlock()
}

// recreateTable creates a table a write found missing, or, with Options.NeverCreateTables,
// returns the write's error. gen is the account's tableGen when the write was sent. A table
// this account knew before that (it had written to it, or created it) is gone with its rows
// (another process deleted it, or an emulator restarted empty): that is logged as a warning,
// the only sign a caller gets, since the write itself then succeeds. A table the account
// learnt of only after the write was sent was created meanwhile by a concurrent first write
// (the partitions of a parallel batch, say), which is no loss. Nor is a create answered
// TableAlreadyExists: the table is there (created meanwhile, or, on Azurite, under a name in
// another case), so nothing is known to be lost and only a Debug line is written.
func (a *Account) recreateTable(ctx context.Context, table string, notFound error, gen uint64) error {
	if a.opts.NeverCreateTables {
		return &notCreated{err: notFound}
	}
	key := strings.ToLower(table)
	a.mu.Lock()
	learnt := a.created[key]
	delete(a.created, key)
	a.mu.Unlock()
	err := a.tables.CreateTable(ctx, table)
	switch {
	case abstractions.HasStatus(err, http.StatusConflict, "TableAlreadyExists"):
		// The write was told the table is missing, its create that it exists: the table is
		// there under a name that differs in case (Azurite finds a table only under the
		// case it was created with), or another writer created it meanwhile. Nothing is
		// known to be lost.
		a.logger().Debug("unified tables: a write found the table missing but creating it answered TableAlreadyExists "+
			"(another writer created it, or it exists under a name in another case); sending the write again", "table", table)
	case err != nil:
		return fmt.Errorf("creating table %s for a write: %w", table, err)
	case learnt != 0 && learnt <= gen:
		a.logger().Warn("unified tables: a table this account had written to is gone (deleted by another process, or the emulator restarted empty); "+
			"creating it again: the rows it held are lost", "table", table)
	default:
		a.logger().Debug("unified tables: creating the table on its first write", "table", table)
	}
	a.knowTable(table)
	return nil
}
