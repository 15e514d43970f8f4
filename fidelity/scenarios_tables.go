package fidelity

import (
	"context"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

var tableScenarios = []Scenario{
	{
		// Ping is the health check's one request: it changes nothing and succeeds on an
		// account whose credential the service accepts.
		Name: "table/ping",
		Run: func(ctx context.Context, e *Env) {
			e.OK("ping", e.Tables.Ping(ctx))
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			e.Is("ping, cancelled", e.Tables.Ping(cancelled), context.Canceled)
		},
	},
	{
		Name:    "table/create-exists-delete",
		NoTable: true,
		Run: func(ctx context.Context, e *Env) {
			name := e.Name("tbl")
			ok, err := e.Tables.TableExists(ctx, name)
			e.OK("exists before create", err)
			e.Equal("exists before create", ok, false)
			e.OK("create", e.Tables.CreateTable(ctx, name))
			e.Status("create again", e.Tables.CreateTable(ctx, name), 409, "TableAlreadyExists")
			ok, err = e.Tables.TableExists(ctx, name)
			e.OK("exists after create", err)
			e.Equal("exists after create", ok, true)
			e.OK("delete", e.Tables.DeleteTable(ctx, name))
			ok, err = e.Tables.TableExists(ctx, name)
			e.OK("exists after delete", err)
			e.Equal("exists after delete", ok, false)
			e.Status("delete again", e.Tables.DeleteTable(ctx, name), 404, "ResourceNotFound")
		},
	},
	{
		Name:    "table/names-ignore-case",
		NoTable: true,
		Run: func(ctx context.Context, e *Env) {
			// Created in lower case; Azurite only resolves upper-case-created names in their
			// exact case (a known bug), so the scenario stays on the common ground.
			name := e.Name("lower")
			e.OK("create", e.Tables.CreateTable(ctx, name))
			e.Status("create in upper case", e.Tables.CreateTable(ctx, strings.ToUpper(name)), 409, "TableAlreadyExists")
			_, err := e.Tables.Write(ctx, strings.ToUpper(name), service.Action{Op: service.OpInsert, Row: row("p", "r", "A", service.Int32(1))})
			e.OK("insert through the upper-case name", err)
			r, err := e.Tables.GetRow(ctx, name, "p", "r", nil)
			e.OK("read through the lower-case name", err)
			e.Observe("row", r)
		},
	},
	{
		Name:      "table/invalid-names",
		NoTable:   true,
		Deviation: "table-name-code",
		Run: func(ctx context.Context, e *Env) {
			for _, c := range []struct{ name, code string }{
				{"t1", "OutOfRangeInput"},
				{"1abc", "InvalidResourceName"},
				{"ab-cd", "InvalidResourceName"},
				{strings.Repeat("a", 64), "OutOfRangeInput"},
			} {
				code := c.code
				if e.OnAzurite() {
					code = ""
				}
				e.Status("create "+c.name, e.Tables.CreateTable(ctx, c.name), 400, code)
			}
		},
	},
	{
		Name:    "table/missing-table",
		NoTable: true,
		Run: func(ctx context.Context, e *Env) {
			name := "missing" + e.Suffix
			_, err := e.Tables.GetRow(ctx, name, "p", "r", nil)
			e.Status("get", err, 404, "TableNotFound")
			_, err = e.Tables.Write(ctx, name, insert(row("p", "r")))
			e.Status("insert", err, 404, "TableNotFound")
			_, err = e.Tables.Write(ctx, name, service.Action{Op: service.OpUpsertMerge, Row: row("p", "r")})
			e.Status("upsert", err, 404, "TableNotFound")
			_, err = e.Tables.Query(ctx, name, service.Query{})
			e.Status("query", err, 404, "TableNotFound")
			e.TxStatus("transaction", txErr(e.Tables.Transact(ctx, name, []service.Action{insert(row("p", "r"))})), 0, 404, "TableNotFound")
		},
	},
}
