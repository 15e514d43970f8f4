package engine

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// storeTables is the account's table service as its stores use it. It adds two rules to
// the service it wraps, so that every store path (single writes, batches, split entities,
// polymorphic stores) follows them:
//
//   - Reads never create tables. A point read of a missing table answers 404
//     ResourceNotFound (no row has the key), a query an empty last page; both log at
//     Debug. A write that meets 404 TableNotFound creates the table and is sent once more,
//     unless Options.NeverCreateTables is set; a table this account had written to before
//     is logged as lost (Warn), since its rows are gone.
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
		return service.Row{}, &abstractions.StatusError{StatusCode: http.StatusNotFound, ErrorCode: "ResourceNotFound",
			Message: "the table does not exist, so no row has this key", Err: err}
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
	tctx, tries := service.WithAttempts(ctx)
	w, err := t.Tables.Write(tctx, table, *a)
	if err == nil || !mayBeEcho(err, a, tries.Retried()) {
		return w, err
	}
	row, ok := t.applied(ctx, table, a)
	if !ok {
		return w, err
	}
	t.acct.logEcho(table, a.Op.String(), err)
	return service.Written{ETag: row.ETag, Timestamp: row.Timestamp}, nil
}

// Transact performs a transaction, creating a missing table first when allowed, and
// reports success for a transaction an earlier try committed, with each action's version as
// the row read back holds it (the zero Written for a delete).
func (t *storeTables) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	gen := t.acct.tableGen.Load()
	ws, err := t.transact(ctx, table, actions)
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
	tctx, tries := service.WithAttempts(ctx)
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
	return ws, nil
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
// (the partitions of a parallel batch, say), which is no loss.
func (a *Account) recreateTable(ctx context.Context, table string, notFound error, gen uint64) error {
	if a.opts.NeverCreateTables {
		return notFound
	}
	key := strings.ToLower(table)
	a.mu.Lock()
	learnt := a.created[key]
	delete(a.created, key)
	a.mu.Unlock()
	if learnt != 0 && learnt <= gen {
		a.logger().Warn("unified tables: a table this account had written to is gone (deleted by another process, or the emulator restarted empty); "+
			"creating it again: the rows it held are lost", "table", table)
	} else {
		a.logger().Debug("unified tables: creating the table on its first write", "table", table)
	}
	if err := a.ensureTable(ctx, table); err != nil {
		return fmt.Errorf("creating table %s for a write: %w", table, err)
	}
	return nil
}

// Logger returns the logger the account writes its warnings to: Options.Logger, or
// slog.Default().
func (a *Account) Logger() *slog.Logger { return a.logger() }
