// Package access owns how the stores reach the table service, by two rules every store path
// follows (single writes, batches, split entities, polymorphic stores, transactions):
//
//   - The missing-table rule. Reads never create tables: a point read of a missing table
//     answers 404 ResourceNotFound (no row has the key), a query an empty last page; both
//     log at Debug. A write that can create a row (an insert or an upsert, alone or in a
//     transaction) that meets 404 TableNotFound creates the table and is sent once more,
//     unless the account never creates tables. A delete, merge or replace (or a
//     transaction holding one) meets a missing row instead: the table is not created, the
//     answer is 404 ResourceNotFound, so a delete succeeds and the others fail with
//     ErrNotFound.
//   - Own echoes. A refusal or a lost answer that an applied earlier try of the same call
//     may explain is checked against the stored row (package echo), and a write the row
//     proves applied succeeds.
//
// It also keeps which tables the account knows to exist, so that a table created once is not
// created again, and a table that vanished (another process deleted it, an emulator
// restarted empty) is told apart from one never written: the first is a warning, since its
// rows are lost. It refuses nothing itself: a write it does not create a table for gets the
// service's answer (or, with NeverCreate, a callerr.NotCreated saying why).
package access

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/attempt"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/echo"
	"github.com/unified-data/gotables/tables/internal/telemetry"
	"github.com/unified-data/gotables/tables/service"
)

// Config is what the rules need of the account.
type Config struct {
	// NeverCreate leaves missing tables missing (Options.NeverCreateTables).
	NeverCreate bool
	// Logger receives the Debug and Warn lines; nil means slog.Default().
	Logger *slog.Logger
	// Meters count own echoes; nil counts nothing.
	Meters *telemetry.Meters
	// CaseSensitive tells tables apart by case, as Azure Cosmos DB for Table does (Table
	// Storage does not).
	CaseSensitive bool
}

// key is how the account tells tables apart.
func (t *Tables) key(table string) string {
	if t.cfg.CaseSensitive {
		return table
	}
	return strings.ToLower(table)
}

// Tables is the account's table service as its stores use it: the service it was given
// (Tables, without these rules) and the rules above. It is safe for concurrent use.
type Tables struct {
	service.Tables
	cfg Config

	// seen holds the names, as the stores give them, of the tables a write succeeded on
	// since the account last found them missing: the lock-free fast path of know.
	seen sync.Map

	mu      sync.Mutex
	created map[string]uint64 // tables known to exist, by lower-case name: the gen that made them known
	// gen counts what the account learnt of tables (a creation, a write that found one), so
	// that a write can tell a table learnt of after it was sent (recreate).
	gen atomic.Uint64
}

// New returns the rules over svc.
func New(svc service.Tables, cfg Config) *Tables {
	return &Tables{Tables: svc, cfg: cfg, created: map[string]uint64{}}
}

func (t *Tables) logger() *slog.Logger {
	if t.cfg.Logger != nil {
		return t.cfg.Logger
	}
	return slog.Default()
}

// GetRow reads one row; a missing table is a missing row.
func (t *Tables) GetRow(ctx context.Context, table, pk, rk string, sel []string) (service.Row, error) {
	row, err := t.Tables.GetRow(ctx, table, pk, rk, sel)
	if IsTableNotFound(err) {
		t.missingTable(table)
		return service.Row{}, rowOfMissingTable(err)
	}
	return row, err
}

// Query returns one page; a missing table has no rows.
func (t *Tables) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	page, err := t.Tables.Query(ctx, table, q)
	if IsTableNotFound(err) {
		t.missingTable(table)
		return service.Page{}, nil
	}
	return page, err
}

// Write performs one row write, creating a missing table first when allowed, and reports
// success for a write an earlier try applied.
func (t *Tables) Write(ctx context.Context, table string, a service.Action) (service.Written, error) {
	gen := t.gen.Load()
	w, err := t.write(ctx, table, &a)
	if IsTableNotFound(err) && !CreatesRow(a.Op) {
		// A delete, merge or replace needs the row to be there: a missing table has no
		// rows, so this is a missing row, and no table is created for it.
		return service.Written{}, t.noRowInMissingTable(table, err)
	}
	if IsTableNotFound(err) {
		t.seen.Delete(table)
		if err := t.recreate(ctx, table, err, gen); err != nil {
			return service.Written{}, err
		}
		w, err = t.write(ctx, table, &a)
	}
	if err == nil {
		t.know(table)
	}
	return w, err
}

func (t *Tables) write(ctx context.Context, table string, a *service.Action) (service.Written, error) {
	tctx, tries := attempt.WithAttempts(ctx)
	w, err := t.Tables.Write(tctx, table, *a)
	if refusesETag(err, a) {
		return w, &callerr.RefusedETag{ETag: a.IfMatch, Err: err}
	}
	if err == nil || !echo.MayBe(err, a, tries.Retried()) {
		return w, err
	}
	row, ok := echo.Applied(ctx, t.Tables, table, a)
	if !ok {
		return w, err
	}
	t.logEcho(table, a.Op.String(), err)
	t.cfg.Meters.OwnEcho(ctx, table, telemetry.ActionName(a.Op))
	return service.Written{ETag: row.ETag, Timestamp: row.Timestamp}, nil
}

// Transact performs a transaction, creating a missing table first when allowed, and
// reports success for a transaction an earlier try committed, with each action's version as
// the row read back holds it (the zero Written for a delete).
func (t *Tables) Transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	gen := t.gen.Load()
	ws, err := t.transact(ctx, table, actions)
	if i := firstNeedingRow(actions); IsTableNotFound(err) && i >= 0 {
		// The transaction holds a delete, merge or replace, which fails on the missing
		// row it addresses whether or not the table is created first.
		return nil, &service.TransactionError{Index: i, Err: t.noRowInMissingTable(table, err)}
	}
	if IsTableNotFound(err) {
		t.seen.Delete(table)
		if err := t.recreate(ctx, table, err, gen); err != nil {
			return nil, err
		}
		ws, err = t.transact(ctx, table, actions)
	}
	if err == nil {
		t.know(table)
	}
	return ws, err
}

func (t *Tables) transact(ctx context.Context, table string, actions []service.Action) ([]service.Written, error) {
	tctx, tries := attempt.WithAttempts(ctx)
	ws, err := t.Tables.Transact(tctx, table, actions)
	if err == nil || !echo.TxMayBe(err, actions, tries.Retried()) {
		return ws, err
	}
	ws = make([]service.Written, len(actions))
	for i := range actions {
		row, ok := echo.Applied(ctx, t.Tables, table, &actions[i])
		if !ok {
			return nil, err
		}
		ws[i] = service.Written{ETag: row.ETag, Timestamp: row.Timestamp}
	}
	t.logEcho(table, "transaction", err)
	t.cfg.Meters.OwnEcho(ctx, table, "transaction")
	return ws, nil
}

// refusesETag reports whether err is the service refusing the If-Match value of a: a 400
// InvalidInput, InvalidOperation or InvalidHeaderValue answer to a replace, merge or delete
// conditioned on an ETag (not "*").
func refusesETag(err error, a *service.Action) bool {
	if err == nil || a.IfMatch == "" || a.IfMatch == service.ETagAny || CreatesRow(a.Op) {
		return false
	}
	return abstractions.HasStatus(err, http.StatusBadRequest, "InvalidInput") ||
		abstractions.HasStatus(err, http.StatusBadRequest, "InvalidOperation") ||
		abstractions.HasStatus(err, http.StatusBadRequest, "InvalidHeaderValue")
}

// CreatesRow reports whether a write of op can create a row that does not exist (an insert
// or an upsert): only those create a missing table and are sent again.
func CreatesRow(op service.Op) bool {
	return op == service.OpInsert || op == service.OpUpsertReplace || op == service.OpUpsertMerge
}

// firstNeedingRow returns the index of the first action that needs its row to exist (a
// delete, merge or replace), or -1 when every action can create its row.
func firstNeedingRow(actions []service.Action) int {
	for i := range actions {
		if !CreatesRow(actions[i].Op) {
			return i
		}
	}
	return -1
}

// IsTableNotFound reports a 404 TableNotFound.
func IsTableNotFound(err error) bool {
	return abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound")
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
func (t *Tables) logEcho(table, op string, err error) {
	t.logger().Debug("unified tables: a write's failure was the echo of its own earlier try, which the service applied; reporting success",
		"table", table, "op", op, "answer", err.Error())
}

// missingTable notes, at Debug, a read of a table that does not exist.
func (t *Tables) missingTable(table string) {
	t.logger().Debug("unified tables: the table does not exist; the read finds nothing (reads never create tables)", "table", table)
}

// noRowInMissingTable is the answer to a delete, merge or replace that met the missing
// table's 404 TableNotFound: the table is forgotten as known, the case is noted at Debug, and
// the error is the missing row's (rowOfMissingTable). No table is created.
func (t *Tables) noRowInMissingTable(table string, notFound error) error {
	t.seen.Delete(table)
	t.logger().Debug("unified tables: the table does not exist; a delete, merge or replace finds no row and creates no table", "table", table)
	return rowOfMissingTable(notFound)
}

// know records that a write succeeded on the table, without a lock once it is known.
func (t *Tables) know(table string) {
	if _, ok := t.seen.Load(table); ok {
		return
	}
	t.Know(table)
	t.seen.Store(table, struct{}{})
}

// Know records that the table exists.
func (t *Tables) Know(table string) {
	key := t.key(table)
	t.mu.Lock()
	if t.created[key] == 0 {
		t.created[key] = t.gen.Add(1)
	}
	t.mu.Unlock()
}

// Ensure creates the table unless the account already knows it exists. Concurrent first
// uses of one table may both send the create; the loser's 409 TableAlreadyExists is
// success. A failure is not remembered, so the next call tries again.
func (t *Tables) Ensure(ctx context.Context, table string) error {
	key := t.key(table)
	t.mu.Lock()
	known := t.created[key] != 0
	t.mu.Unlock()
	if known {
		return nil
	}
	err := t.Tables.CreateTable(ctx, table)
	if err != nil && !abstractions.HasStatus(err, http.StatusConflict, "TableAlreadyExists") {
		return err
	}
	t.Know(table)
	return nil
}

// recreate creates a table a write found missing, or, when the account never creates
// tables, returns the write's error. gen is the generation when the write was sent. A table
// the account knew before that (it had written to it, or created it) is gone with its rows
// (another process deleted it, or an emulator restarted empty): that is logged as a warning,
// the only sign a caller gets, since the write itself then succeeds. A table the account
// learnt of only after the write was sent was created meanwhile by a concurrent first write
// (the partitions of a parallel batch, say), which is no loss. Nor is a create answered
// TableAlreadyExists: the table is there (created meanwhile, or, on Azurite, under a name in
// another case), so nothing is known to be lost and only a Debug line is written.
func (t *Tables) recreate(ctx context.Context, table string, notFound error, gen uint64) error {
	if t.cfg.NeverCreate {
		return &callerr.NotCreated{Err: notFound}
	}
	key := t.key(table)
	t.mu.Lock()
	learnt := t.created[key]
	delete(t.created, key)
	t.mu.Unlock()
	err := t.Tables.CreateTable(ctx, table)
	switch {
	case abstractions.HasStatus(err, http.StatusConflict, "TableAlreadyExists"):
		// The write was told the table is missing, its create that it exists: the table is
		// there under a name that differs in case (Azurite finds a table only under the
		// case it was created with), or another writer created it meanwhile. Nothing is
		// known to be lost.
		t.logger().Debug("unified tables: a write found the table missing but creating it answered TableAlreadyExists "+
			"(another writer created it, or it exists under a name in another case); sending the write again", "table", table)
	case err != nil:
		return fmt.Errorf("creating table %s for a write: %w", table, err)
	case learnt != 0 && learnt <= gen:
		t.logger().Warn("unified tables: a table this account had written to is gone (deleted by another process, or the emulator restarted empty); "+
			"creating it again: the rows it held are lost", "table", table)
	default:
		t.logger().Debug("unified tables: creating the table on its first write", "table", table)
	}
	t.Know(table)
	return nil
}
