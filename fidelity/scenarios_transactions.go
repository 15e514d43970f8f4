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
			err = txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "insert", "N", service.Int32(1))),
				{Op: service.OpReplace, Row: row("p", "replace", "N", service.Int32(2))},
				{Op: service.OpMerge, Row: row("p", "merge", "N", service.Int32(3)), IfMatch: service.ETagAny},
				{Op: service.OpUpsertReplace, Row: row("p", "upsert-replace", "N", service.Int32(4))},
				{Op: service.OpUpsertMerge, Row: row("p", "upsert-merge", "N", service.Int32(5))},
				{Op: service.OpDelete, Row: row("p", "delete"), IfMatch: del.ETag},
			}))
			e.OK("transaction", err)
		},
	},
	{
		// A transaction reports each row's new version, the one a read then returns; a
		// delete reports none. (The versions themselves are normalised in the logs.)
		Name: "tx/reports-versions",
		Run: func(ctx context.Context, e *Env) {
			for _, rk := range []string{"replace", "merge", "delete"} {
				_, err := e.Tables.Write(ctx, e.Table, insert(row("p", rk, "Old", service.Int32(1))))
				e.OK("seed "+rk, err)
			}
			acts := []service.Action{
				insert(row("p", "insert", "N", service.Int32(1))),
				{Op: service.OpReplace, Row: row("p", "replace", "N", service.Int32(2))},
				{Op: service.OpMerge, Row: row("p", "merge", "N", service.Int32(3))},
				{Op: service.OpUpsertReplace, Row: row("p", "upsert-replace", "N", service.Int32(4))},
				{Op: service.OpUpsertMerge, Row: row("p", "upsert-merge", "N", service.Int32(5))},
				{Op: service.OpDelete, Row: row("p", "delete")},
			}
			written, err := e.Tables.Transact(ctx, e.Table, acts)
			e.OK("transaction", err)
			e.Equal("versions reported", len(written), len(acts))
			for i, a := range acts {
				if i >= len(written) {
					break
				}
				w := written[i]
				if a.Op == service.OpDelete {
					e.Equal("a delete reports no version", w == service.Written{}, true)
					continue
				}
				r, err := e.Tables.GetRow(ctx, e.Table, "p", a.Row.RowKey, nil)
				e.OK("read "+a.Row.RowKey, err)
				e.Equal(a.Op.String()+" reports the stored ETag", w.ETag != "" && w.ETag == r.ETag, true)
				e.Equal(a.Op.String()+" reports the stored Timestamp", w.Timestamp.Equal(r.Timestamp), true)
			}
		},
	},
	{
		Name: "tx/all-or-nothing",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "exists", "V", service.Int32(1))))
			e.OK("seed", err)
			err = txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "new", "V", service.Int32(1))),
				{Op: service.OpUpsertMerge, Row: row("p", "other", "V", service.Int32(2))},
				insert(row("p", "exists", "V", service.Int32(3))),
			}))
			e.TxStatus("transaction", err, 2, 409, "EntityAlreadyExists")
		},
	},
	{
		Name: "tx/duplicate-row",
		Run: func(ctx context.Context, e *Env) {
			err := txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "a")),
				insert(row("p", "b")),
				{Op: service.OpUpsertMerge, Row: row("p", "a")},
			}))
			e.TxStatus("transaction", err, 2, 400, "InvalidDuplicateRow")
		},
	},
	{
		Name:      "tx/cross-partition",
		Deviation: "cross-partition-transaction",
		Run: func(ctx context.Context, e *Env) {
			err := txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p1", "a")),
				insert(row("p2", "a")),
			}))
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
			err = txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "other")),
				{Op: service.OpReplace, Row: row("p", "r", "V", service.Int32(3)), IfMatch: w.ETag},
			}))
			e.TxStatus("replace with the stale etag", err, 1, 412, "UpdateConditionNotSatisfied")
			err = txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
				{Op: service.OpDelete, Row: row("p", "r"), IfMatch: w.ETag},
			}))
			e.TxStatus("delete with the stale etag", err, 0, 412, "UpdateConditionNotSatisfied")
		},
	},
	{
		Name: "tx/update-missing-is-not-an-upsert",
		Run: func(ctx context.Context, e *Env) {
			for _, op := range []service.Op{service.OpReplace, service.OpMerge, service.OpDelete} {
				err := txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
					insert(row("p", "x"+op.String())),
					{Op: op, Row: row("p", "missing", "V", service.Int32(1))},
				}))
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
			e.OK("100 inserts", txErr(e.Tables.Transact(ctx, e.Table, actions)))
			rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
			e.OK("list", err)
			e.Equal("rows", len(rows), 100)
		},
	},
	{
		Name: "tx/invalid-action-inside",
		Run: func(ctx context.Context, e *Env) {
			err := txErr(e.Tables.Transact(ctx, e.Table, []service.Action{
				insert(row("p", "a")),
				insert(row("p", "b", "S", service.String(strings.Repeat("a", 32769)))),
			}))
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
			err := txErr(e.Tables.Transact(ctx, e.Table, actions))
			e.Status("4.5 MB transaction", err, 413, "RequestBodyTooLarge")
		},
	},
	{
		Name: "tx/empty",
		Run: func(ctx context.Context, e *Env) {
			e.Status("no actions", txErr(e.Tables.Transact(ctx, e.Table, nil)), 400, "InvalidInput")
		},
	},
	{
		// The adapter writes a transaction's body itself, as compact JSON without the HTML
		// escapes of encoding/json (which the SDK's own encoding would add, writing '<' as
		// \u003c): the 960,000 characters below make a body of about 1 MB, not 5.8 MB, and
		// the transaction is well within the 4 MiB limit.
		Name: "tx/html-characters-are-sent-as-they-are",
		Run: func(ctx context.Context, e *Env) {
			v := service.String(strings.Repeat("<", 30000))
			actions := make([]service.Action, 8)
			for i := range actions {
				actions[i] = insert(row("p", fmt.Sprintf("r%d", i), "A", v, "B", v, "C", v, "D", v))
			}
			e.OK("8 inserts of 120,000 '<'", txErr(e.Tables.Transact(ctx, e.Table, actions)))
			r, err := e.Tables.GetRow(ctx, e.Table, "p", "r7", []string{"D"})
			e.OK("read", err)
			d, _ := r.Get("D")
			e.Equal("the text is stored as it was", d.Equal(v), true)
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
		err := txErr(e.Tables.Transact(ctx, e.Table, actions))
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

// txErr is the error of a Transact call, for the checks that look at nothing else.
func txErr(_ []service.Written, err error) error { return err }
