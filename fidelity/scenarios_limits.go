package fidelity

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// wide returns a row of n string properties of size characters each (ASCII, so the UTF-8
// body is half the UTF-16 size the service counts).
func wide(pk, rk string, n, size int) service.Row {
	r := row(pk, rk)
	v := service.String(strings.Repeat("x", size))
	for i := 0; i < n; i++ {
		r.Properties = append(r.Properties, service.Property{Name: fmt.Sprintf("P%03d", i), Value: v})
	}
	return r
}

var limitScenarios = []Scenario{
	{
		Name: "limit/string-value",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "ascii", "S", service.String(strings.Repeat("a", 32768)))))
			e.OK("32768 units", err)
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", "over", "S", service.String(strings.Repeat("a", 32769)))))
			e.Status("32769 units", err, 400, "PropertyValueTooLarge")
			// An emoji is two UTF-16 units: 16,384 of them are the limit, 16,385 are over it.
			// (Through the Azure adapter the text reaches Azurite as ASCII escapes, so none
			// of its characters can be split between two chunks of the body: see the
			// "utf8-split-across-chunks" deviation.)
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", "emoji", "S", service.String(strings.Repeat("😀", 16384)))))
			e.OK("16384 emoji", err)
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", "emoji-over", "S", service.String(strings.Repeat("😀", 16385)))))
			e.Status("16385 emoji", err, 400, "PropertyValueTooLarge")
			_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpUpsertMerge, Row: row("p", "ascii", "S", service.String(strings.Repeat("a", 32769)))})
			e.Status("upsert 32769 units", err, 400, "PropertyValueTooLarge")
		},
	},
	{
		Name: "limit/binary-value",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "ok", "B", service.Binary(make([]byte, 65536)))))
			e.OK("65536 bytes", err)
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", "over", "B", service.Binary(make([]byte, 65537)))))
			e.Status("65537 bytes", err, 400, "PropertyValueTooLarge")
		},
	},
	{
		Name:      "limit/property-count",
		Deviation: "too-many-properties",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(wide("p", "ok", 252, 1)))
			e.OK("252 properties", err)
			_, err = e.Tables.Write(ctx, e.Table, insert(wide("p", "over", 253, 1)))
			e.AcceptedByAzurite("253 properties", err, 400, "TooManyProperties")
		},
	},
	{
		Name:      "limit/property-names",
		Deviation: "property-name-rules",
		Run: func(ctx context.Context, e *Env) {
			for i, c := range []struct{ name, code string }{
				{"a-b", "PropertyNameInvalid"},
				{"1abc", "PropertyNameInvalid"},
				{"a b", "PropertyNameInvalid"},
				{strings.Repeat("n", 256), "PropertyNameTooLong"},
			} {
				_, err := e.Tables.Write(ctx, e.Table, insert(row("p", fmt.Sprint(i), c.name, service.Int32(1))))
				e.AcceptedByAzurite("name "+c.name, err, 400, c.code)
			}
			_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "ok", strings.Repeat("n", 255), service.Int32(1), "_under_score", service.Int32(2))))
			e.OK("255-character name and underscores", err)
		},
	},
	{
		Name: "limit/entity-size-on-update",
		Run: func(ctx context.Context, e *Env) {
			// 40 × 30,000 ASCII characters: 1.2 MB of UTF-8 JSON, 2.4 MB as the service counts.
			_, err := e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpUpsertReplace, Row: wide("p", "big", 40, 30000)})
			e.Status("upsert", err, 400, "EntityTooLarge")
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", "r")))
			e.OK("insert small", err)
			_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpReplace, Row: wide("p", "r", 40, 30000)})
			e.Status("replace", err, 400, "EntityTooLarge")
			_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpMerge, Row: wide("p", "r", 40, 30000)})
			e.Status("merge", err, 400, "EntityTooLarge")
			// 15 × 32,000 ASCII characters: 960,000 bytes as counted, under the limit.
			_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpUpsertReplace, Row: wide("p", "fits", 15, 32000)})
			e.OK("upsert just under 1 MiB", err)
		},
	},
	{
		Name:      "limit/entity-size-on-insert",
		Deviation: "insert-entity-size",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(wide("p", "big", 40, 30000)))
			e.AcceptedByAzurite("insert", err, 400, "EntityTooLarge")
		},
	},
	{
		Name: "limit/request-body",
		Run: func(ctx context.Context, e *Env) {
			// 140 × 32,000 ASCII characters: a 4.5 MB request body.
			_, err := e.Tables.Write(ctx, e.Table, insert(wide("p", "huge", 140, 32000)))
			e.Status("insert", err, 413, "RequestBodyTooLarge")
		},
	},
	{
		Name:      "limit/key-length",
		Deviation: "key-length",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(row(strings.Repeat("p", 512), strings.Repeat("😀", 256))))
			e.OK("512-unit keys", err)
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", strings.Repeat("r", 513))))
			if e.OnAzurite() {
				e.Status("513-unit row key", err, 400, "InvalidInput")
			} else {
				e.OK("513-unit row key", err)
			}
			_, err = e.Tables.Write(ctx, e.Table, insert(row("p", strings.Repeat("r", 1025))))
			if e.OnAzurite() {
				e.Status("1025-unit row key", err, 400, "InvalidInput")
			} else {
				e.Status("1025-unit row key", err, 400, "PropertyValueTooLarge")
			}
		},
	},
	{
		Name:      "limit/datetime-range",
		Deviation: "datetime-before-1601",
		Run: func(ctx context.Context, e *Env) {
			_, err := e.Tables.Write(ctx, e.Table, insert(row("p", "r", "D", service.DateTime(time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)))))
			e.AcceptedByAzurite("insert 1600-12-31", err, 400, "OutOfRangeInput")
		},
	},
}
