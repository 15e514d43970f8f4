package fidelity

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
)

// missingTableScenarios cover which store writes create a missing table: only those that
// can create a row. A delete of a row there succeeds, an update or a patch fails with
// ErrNotFound, and neither creates the table, with or without NeverCreateTables.
var missingTableScenarios = []Scenario{
	{Name: "store/missing-table-writes", NoTable: true, Run: missingTableWrites},
	{Name: "store/table-name-case-loses-nothing", NoTable: true, Deviation: "table-name-case", Run: tableNameCaseLosesNothing},
}

func missingTableWrites(ctx context.Context, e *Env) {
	const etag = `W/"datetime'2026-01-01T00%3A00%3A00.0000001Z'"`
	for _, never := range []bool{false, true} {
		name, prefix := e.Name("absent"), "default: "
		if never {
			name, prefix = e.Name("locked"), "NeverCreateTables: "
		}
		acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock, NeverCreateTables: never})
		s, err := tables.For[customerRow](acct, &tables.StoreOptions{Table: name})
		if err != nil {
			e.Fatalf("store: %v", err)
		}
		e.Deleted(prefix+"delete", false)(s.Delete(ctx, "eu|x", ""))
		_, err = s.Patch(ctx, "eu|x", abstractions.Set(abstractions.NewPatch[customerRow](), abstractions.Field(func(v *customerRow) *string { return &v.Name }), "n"))
		e.Is(prefix+"patch", err, abstractions.ErrNotFound)
		e.Is(prefix+"update last writer wins", s.Update(ctx, &customerRow{Entity: abstractions.Entity{ID: "eu|x"}}, abstractions.LastWriterWins), abstractions.ErrNotFound)
		e.Is(prefix+"update strict", s.Update(ctx, &customerRow{Entity: abstractions.Entity{ID: "eu|x", ETag: etag}}, abstractions.Strict), abstractions.ErrNotFound)
		n, err := s.DeletePartition(ctx, "eu")
		e.OK(prefix+"delete partition", err)
		e.Equal(prefix+"deleted", n, 0)
		e.Equal(prefix+"no table after the writes that need a row", e.tableExists(ctx, prefix+"table after", name), false)
		err = s.Upsert(ctx, alice())
		if never {
			e.Is(prefix+"upsert", err, abstractions.ErrNotFound)
			e.Equal(prefix+"the error names the option", err != nil && strings.Contains(err.Error(), "NeverCreateTables"), true)
		} else {
			e.OK(prefix+"upsert", err)
		}
		e.Equal(prefix+"table after the upsert", e.tableExists(ctx, prefix+"table after the upsert", name), !never)
	}
}

// tableNameCaseLosesNothing: a store of one account writing through another case of a table
// the account created meets 404 TableNotFound on Azurite, then TableAlreadyExists for the
// create; that is no loss, and no Warn says rows were lost. On Azure and in memory the write
// succeeds on the shared table.
func tableNameCaseLosesNothing(ctx context.Context, e *Env) {
	var logs syncBuffer
	name := e.Name("CaseTab")
	acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	upper, err := tables.For[customerRow](acct, &tables.StoreOptions{Table: name})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	lower, err := tables.For[customerRow](acct, &tables.StoreOptions{Table: strings.ToLower(name)})
	if err != nil {
		e.Fatalf("store: %v", err)
	}
	e.OK("create through the name as given", upper.Create(ctx, alice()))
	c := alice()
	c.ID = "eu|bob"
	err = lower.Upsert(ctx, c)
	if e.OnAzurite() {
		e.Is("upsert through the lower-case name", err, abstractions.ErrNotFound)
		e.Equal("the error names no option", err != nil && strings.Contains(err.Error(), "NeverCreateTables"), false)
	} else {
		e.OK("upsert through the lower-case name", err)
	}
	e.Equal("no loss was logged", strings.Contains(logs.String(), "rows it held are lost"), false)
}

// syncBuffer is a bytes.Buffer a logger may write to from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
