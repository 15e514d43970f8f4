package fidelity

import (
	"context"
	"fmt"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

// seed writes rows with transactions of up to 100 actions per partition run.
func seed(ctx context.Context, e *Env, rows []service.Row) {
	e.t.Helper()
	for len(rows) > 0 {
		n := 1
		for n < len(rows) && n < 100 && rows[n].PartitionKey == rows[0].PartitionKey {
			n++
		}
		actions := make([]service.Action, n)
		for i := range actions {
			actions[i] = insert(rows[i])
		}
		if err := txErr(e.Tables.Transact(ctx, e.Table, actions)); err != nil {
			e.Fatalf("seed: %v", err)
		}
		rows = rows[n:]
	}
}

// typed is the fixture of the filter scenarios: one row per value, every kind.
func typed(ctx context.Context, e *Env) {
	g1, _ := service.ParseGuid("00000000-0000-0000-0000-000000000001")
	g2, _ := service.ParseGuid("ffffffff-0000-0000-0000-000000000002")
	base := time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	var rows []service.Row
	for i := 0; i < 6; i++ {
		r := row("p", fmt.Sprintf("r%d", i),
			"S", service.String(fmt.Sprintf("s%d", i)),
			"I", service.Int32(int32(i*10)),
			"L", service.Int64(int64(i)*1e12),
			"D", service.Double(float64(i)/2),
			"B", service.Bool(i%2 == 0),
			"T", service.DateTime(base.Add(time.Duration(i)*time.Hour)),
			"Bin", service.Binary([]byte{byte(i), 0xff}),
		)
		if i%3 == 0 {
			r.Properties = append(r.Properties, service.Property{Name: "G", Value: g1})
		} else {
			r.Properties = append(r.Properties, service.Property{Name: "G", Value: g2})
		}
		if i < 3 {
			r.Properties = append(r.Properties, service.Property{Name: "Opt", Value: service.String("x")})
		}
		rows = append(rows, r)
	}
	seed(ctx, e, rows)
}

func filterScenario(name string, filters ...string) Scenario {
	return Scenario{
		Name: "query/" + name,
		Run: func(ctx context.Context, e *Env) {
			typed(ctx, e)
			for _, f := range filters {
				rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: f, Select: []string{"S"}})
				e.ObserveErr(f, err)
				e.Observe(f, keysOf(rows))
			}
		},
	}
}

var queryScenarios = []Scenario{
	{
		Name: "query/utf16-order",
		Run: func(ctx context.Context, e *Env) {
			keys := []string{"｡", "😀", "é", "e", "b", "a0", "a ", "a", "B", ""}
			for _, k := range keys {
				_, err := e.Tables.Write(ctx, e.Table, insert(row("p", k)))
				e.OK("insert "+k, err)
				_, err = e.Tables.Write(ctx, e.Table, insert(row(k, "r")))
				e.OK("insert partition "+k, err)
			}
			rows, err := allRows(ctx, e.Tables, e.Table, service.Query{})
			e.OK("list", err)
			e.Observe("order", keysOf(rows))
			rows, err = allRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey eq 'p' and RowKey gt 'é'"})
			e.OK("after é", err)
			e.Observe("after é", keysOf(rows))
		},
	},
	{
		Name: "query/pages",
		Run: func(ctx context.Context, e *Env) {
			var rows []service.Row
			for i := 0; i < 25; i++ {
				rows = append(rows, row("p", fmt.Sprintf("%02d", i), "N", service.Int32(int32(i))))
			}
			seed(ctx, e, rows)
			q := service.Query{Top: 10}
			var sizes []int
			for {
				page, err := e.Tables.Query(ctx, e.Table, q)
				if err != nil {
					e.Fatalf("page: %v", err)
				}
				sizes = append(sizes, len(page.Rows))
				if page.Next == nil {
					break
				}
				q.Continuation = page.Next
			}
			e.Equal("page sizes", sizes, []int{10, 10, 5})
			page, err := e.Tables.Query(ctx, e.Table, service.Query{Top: 25})
			e.OK("top 25", err)
			e.Equal("top 25 has no continuation", page.Next == nil, true)
		},
	},
	{
		Name: "query/thousand-rows-a-page",
		Run: func(ctx context.Context, e *Env) {
			var rows []service.Row
			for i := 0; i < 1050; i++ {
				rows = append(rows, row(fmt.Sprintf("p%d", i/100), fmt.Sprintf("%04d", i)))
			}
			seed(ctx, e, rows)
			page, err := e.Tables.Query(ctx, e.Table, service.Query{})
			e.OK("first page", err)
			e.Equal("first page size", len(page.Rows), 1000)
			e.Equal("first page continues", page.Next != nil, true)
			all, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "PartitionKey ge 'p5'", Top: 1000})
			e.OK("from p5", err)
			// "p10" sorts before "p5": five partitions of 100 rows match.
			e.Equal("rows from p5", len(all), 500)
		},
	},
	{
		Name: "query/select",
		Run: func(ctx context.Context, e *Env) {
			typed(ctx, e)
			rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Select: []string{"Opt", "I", "Nope", "s"}})
			e.OK("select", err)
			e.Observe("rows", rows)
		},
	},
	filterScenario("filter-strings", "S eq 's1'", "S ne 's1'", "S gt 's3'", "S le 's2'", "'s2' eq S", "S eq 'S1'", "S lt 's'"),
	filterScenario("filter-numbers", "I eq 20", "I gt 20", "I le 20", "I ne 0", "L eq 2000000000000L", "L gt 3000000000000L",
		"D eq 1.5", "D ge 1.5", "D lt 1.0", "I ge 10 and I lt 40", "I eq 0 or I eq 50"),
	filterScenario("filter-bool", "B", "not B", "B eq true", "B eq false", "B ne true", "B and I gt 0", "not (B or I eq 10)"),
	filterScenario("filter-datetime-guid-binary", "T ge datetime'2024-05-06T09:08:09.1234567Z'", "T lt datetime'2024-05-06T09:00:00Z'",
		"G eq guid'00000000-0000-0000-0000-000000000001'", "G ne guid'00000000-0000-0000-0000-000000000001'",
		"Bin eq X'02ff'", "Bin eq binary'03ff'"),
	filterScenario("filter-keys", "PartitionKey eq 'p' and RowKey ge 'r2' and RowKey lt 'r4'", "RowKey ne 'r0'", "PartitionKey eq 'q'"),
	filterScenario("filter-absent-property", "Opt eq 'x'", "Opt ne 'x'", "Nope ne 'x'", "Nope lt 5", "not (Opt eq 'x')", "not (Nope eq 'x')"),
	filterScenario("filter-precedence", "I eq 0 or I eq 10 and B", "(I eq 0 or I eq 10) and B", "not B and I gt 20 or S eq 's0'"),
	{
		Name: "query/filter-invalid",
		Run: func(ctx context.Context, e *Env) {
			typed(ctx, e)
			for _, f := range []string{"startswith(S, 's')", "S eq", "S eq 's1' or", "(S eq 's1'", "S eq s1 eq 2"} {
				_, err := e.Tables.Query(ctx, e.Table, service.Query{Filter: f})
				e.Status(f, err, 400, "InvalidInput")
			}
		},
	},
	{
		Name:      "query/filter-keyword-case",
		Deviation: "filter-case",
		Run: func(ctx context.Context, e *Env) {
			typed(ctx, e)
			for _, f := range []string{"S EQ 's1'", "I eq 0 OR I eq 10", "B eq True"} {
				_, err := e.Tables.Query(ctx, e.Table, service.Query{Filter: f})
				e.AcceptedByAzurite(f, err, 400, "InvalidInput")
			}
		},
	},
	{
		Name:      "query/filter-null",
		Deviation: "filter-null",
		Run: func(ctx context.Context, e *Env) {
			typed(ctx, e)
			_, err := e.Tables.Query(ctx, e.Table, service.Query{Filter: "Opt eq null"})
			e.AcceptedByAzurite("Opt eq null", err, 400, "InvalidInput")
		},
	},
	{
		Name:      "query/filter-comparison-limit",
		Deviation: "filter-comparison-limit",
		Run: func(ctx context.Context, e *Env) {
			typed(ctx, e)
			build := func(n int) string {
				f := "I eq 0"
				for i := 1; i < n; i++ {
					f += fmt.Sprintf(" or I eq %d", i*10)
				}
				return f
			}
			rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: build(15)})
			e.OK("15 comparisons", err)
			e.Equal("15 comparisons match", len(rows), 6)
			_, err = e.Tables.Query(ctx, e.Table, service.Query{Filter: build(16)})
			e.AcceptedByAzurite("16 comparisons", err, 400, "InvalidInput")
		},
	},
	{
		Name:      "query/filter-datetime-precision",
		Deviation: "datetime-filter-precision",
		Run: func(ctx context.Context, e *Env) {
			typed(ctx, e)
			rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{Filter: "T eq datetime'2024-05-06T07:08:09.123Z'"})
			e.OK("eq at ms", err)
			want := 0
			if e.OnAzurite() {
				want = 1
			}
			e.Equal("eq at ms matches", len(rows), want)
		},
	},
}
