package fidelity

import (
	"context"
	"fmt"
	"strings"

	"github.com/unified-data/gotables/tables/service"
)

var transactionScenarios = []Scenario{
	{
		Name: "tx/commits-every-operation",
		Run: func(ctx context.Context, e *Env) {
			for _, rk := range []string{"replace", "merge", "delete"} {
				_, err := e.Tables.Write(ctx, e.Table, insert(row("p", rk, "Old", service.Int32(1))))
				e.OK("seed "+rk, err)
			}
			del, err := e.Tables.GetRow(ctx, e.Table, "p", "delete", nil)
			e.OK("read delete's etag", err)
			err = e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "insert", "N", service.Int32(1))),
				{Op: service.OpReplace, Row: row("p", "replace", "N", service.Int32(2))},
				{Op: service.OpMerge, Row: row("p", "merge", "N", service.Int32(3)), IfMatch: service.ETagAny},
				{Op: service.OpUpsertReplace, Row: row("p", "upsert-replace", "N", service.Int32(4))},
				{Op: service.OpUpsertMerge, Row: row("p", "upsert-merge", "N", service.Int32(5))},
				{Op: service.OpDelete, Row: row("p", "delete"), IfMatch: del.ETag},
			})
			e.OK("transaction", err)
		},
	},
	{
		Name: "tx/all-or-nothing",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "exists", "V", service.Int32(1))))
			e.OK("seed", err)
			err = e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "new", "V", service.Int32(1))),
				{Op: service.OpUpsertMerge, Row: row("p", "other", "V", service.Int32(2))},
				insert(row("p", "exists", "V", service.Int32(3))),
			})
			e.TxStatus("transaction", err, 2, 409, "EntityAlreadyExists")
		},
	},
	{
		Name: "tx/duplicate-row",
		Run: func(ctx context.Context, e *Env) {
			err := e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "a")),
				insert(row("p", "b")),
				{Op: service.OpUpsertMerge, Row: row("p", "a")},
			})
			e.TxStatus("transaction", err, 2, 400, "InvalidDuplicateRow")
		},
	},
	{
		Name:      "tx/cross-partition",
		Deviation: "cross-partition-transaction",
		Run: func(ctx context.Context, e *Env) {
			err := e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p1", "a")),
				insert(row("p2", "a")),
			})
			if e.OnAzurite() {
				e.OK("transaction", err)
			} else {
				e.TxStatus("transaction", err, 1, 400, "CommandsInBatchActOnDifferentPartitions")
			}
		},
	},
	{
		Name: "tx/stale-etag",
		Run: func(ctx context.Context, e *Env) {
			w, err := e.Tables.Write(ctx, e.Table, insert(row("p", "r", "V", service.Int32(1))))
			e.OK("insert", err)
			_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpUpsertMerge, Row: row("p", "r", "V", service.Int32(2))})
			e.OK("touch", err)
			err = e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "other")),
				{Op: service.OpReplace, Row: row("p", "r", "V", service.Int32(3)), IfMatch: w.ETag},
			})
			e.TxStatus("replace with the stale etag", err, 1, 412, "UpdateConditionNotSatisfied")
			err = e.Tables.Transact(ctx, e.Table, []service.Action{
				{Op: service.OpDelete, Row: row("p", "r"), IfMatch: w.ETag},
			})
			e.TxStatus("delete with the stale etag", err, 0, 412, "UpdateConditionNotSatisfied")
		},
	},
	{
		Name: "tx/update-missing-is-not-an-upsert",
		Run: func(ctx context.Context, e *Env) {
			for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpDelete} {
				err := e.Tables.Transact(ctx, e.Table, []service.Action{
					insert(row("p", "x"+op.String())),
					{Op: op, Row: row("p", "missing", "V", service.Int32(1))},
				})
				e.TxStatus(op.String()+" of a missing row", err, 1, 404, "ResourceNotFound")
			}
		},
	},
	{
		Name: "tx/hundred-actions",
		Run: func(ctx context.Context, e *Env) {
			actions := make([]service.Action, 100)
			for i := range actions {
				actions[i] = insert(row("p", fmt.Sprintf("%03d", i), "I", service.Int32(int32(i))))
			}
			e.OK("100 inserts", e.Tables.Transact(ctx, e.Table, actions))
			rows, err := AllRows(ctx, e.Tables, e.Table, service.Query{})
			e.OK("list", err)
			e.Equal("rows", len(rows), 100)
		},
	},
	{
		Name: "tx/invalid-action-inside",
		Run: func(ctx context.Context, e *Env) {
			err := e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "a")),
				insert(row("p", "b", "S", service.String(strings.Repeat("a", 32769)))),
			})
			e.TxStatus("oversized value in action 1", err, 1, 400, "PropertyValueTooLarge")
		},
	},
	{
		Name: "tx/request-body",
		Run: func(ctx context.Context, e *Env) {
			actions := make([]service.Action, 70)
			for i := range actions {
				actions[i] = insert(wide("p", fmt.Sprint(i), 2, 32000))
			}
			err := e.Tables.Transact(ctx, e.Table, actions)
			e.Status("4.5 MB transaction", err, 413, "RequestBodyTooLarge")
		},
	},
	{
		Name: "tx/empty",
		Run: func(ctx context.Context, e *Env) {
			e.Status("no actions", e.Tables.Transact(ctx, e.Table, nil), 400, "InvalidInput")
		},
	},
	{
		// The SDK re-encodes each entity with json.Marshal, which writes '<' as \u003c: the
		// 960,000 characters below become a body of about 5.8 MB, over the 4 MiB limit,
		// although the JSON the adapter writes is under 1 MB.
		Name: "tx/html-escapes-count-toward-the-body",
		Run: func(ctx context.Context, e *Env) {
			v := service.String(strings.Repeat("<", 30000))
			actions := make([]service.Action, 8)
			for i := range actions {
				actions[i] = insert(row("p", fmt.Sprintf("r%d", i), "A", v, "B", v, "C", v, "D", v))
			}
			e.Status("8 inserts of 120,000 '<'", e.Tables.Transact(ctx, e.Table, actions), 413, "RequestBodyTooLarge")
		},
	},
	overHundredScenario,
}

var overHundredScenario = Scenario{
	Name:      "tx/over-hundred-actions",
	Deviation: "transaction-over-100",
	Run: func(ctx context.Context, e *Env) {
		actions := make([]service.Action, 101)
		for i := range actions {
			actions[i] = insert(row("p", fmt.Sprintf("%03d", i)))
		}
		err := e.Tables.Transact(ctx, e.Table, actions)
		if e.OnAzurite() {
			e.ObserveErr("101 inserts", err)
			if err == nil {
				e.Errorf("101 inserts: want an error")
			}
		} else {
			e.TxStatus("101 inserts", err, 0, 400, "InvalidInput")
		}
	},
}
