package fidelity

import (
	"bytes"
	"context"
	"os"

	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/service"
)

// storageExplorerCSV is the typed CSV file, in Azure Storage Explorer's format, that the
// CSV scenario imports and exports again: every EDM type, absent and empty values, quotes,
// commas, LF and CRLF inside values, leading spaces and text beyond ASCII.
const storageExplorerCSV = "../tables/backup/testdata/storage-explorer.typed.csv"

var csvScenarios = []Scenario{
	{
		Name: "tools/csv-round-trip",
		Run: func(ctx context.Context, e *Env) {
			golden, err := os.ReadFile(storageExplorerCSV)
			if err != nil {
				e.Fatalf("golden file: %v", err)
			}
			acct := e.NewAccount(e.Tables, e.Blobs, &tables.Options{Now: storeClock})
			st, err := backup.ImportCSV(ctx, acct, e.Table, bytes.NewReader(golden), nil)
			e.OK("import", err)
			e.Equal("rows imported", st.Rows, int64(6))
			rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
			e.OK("read back", err)
			kinds := map[string]string{}
			for _, r := range rows {
				for _, p := range r.Properties {
					kinds[r.PartitionKey+"/"+r.RowKey+"/"+p.Name] = p.Value.String()
				}
			}
			e.Observe("cells", kinds)
			for _, c := range [][2]string{
				{"p1/a/Big", "Edm.Int64(9007199254740993)"},
				{"p2/c/Count", "Edm.Int32(-2147483648)"},
				{"p1/a/Ref", "Edm.Guid(0f8fad5b-d9cb-469f-a165-70867728950e)"},
				{"p1/b/Ratio", "Edm.Double(1e+21)"},
			} {
				e.Equal(c[0], kinds[c[0]], c[1])
			}
			for _, r := range rows {
				if r.PartitionKey == "p3" {
					note, _ := r.Get("Note")
					e.Equal("CRLF, commas and quotes inside a value", note.Str(), "windows\r\nline, \"quoted\"\r\n")
				}
				if r.PartitionKey == "p2" && r.RowKey == "c" {
					note, ok := r.Get("Note")
					e.Equal("an empty string is a property", ok && note.Kind() == service.KindString && note.Str() == "", true)
					_, ok = r.Get("Active")
					e.Equal("an empty cell without a type is no property", ok, false)
				}
			}
			var out bytes.Buffer
			_, err = backup.ExportCSV(ctx, acct, e.Table, &out, nil)
			e.OK("export", err)
			e.Equal("exported again, the file is the same", out.String(), string(golden))
			e.clearTable(ctx)
		},
	},
}
