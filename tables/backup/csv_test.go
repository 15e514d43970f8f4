package backup

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// The golden file parses into the rows it means, and the writer writes its records again
// byte for byte.
func TestCSVGoldenParses(t *testing.T) {
	golden, err := os.ReadFile("testdata/storage-explorer.typed.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseCSV(bytes.NewReader(golden), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	kinds := map[service.Kind]bool{}
	for _, r := range rows {
		for _, p := range r.Properties {
			kinds[p.Value.Kind()] = true
		}
	}
	if len(kinds) != 8 {
		t.Errorf("the golden file covers %d EDM types, want all 8", len(kinds))
	}
	cr := newCSVReader(bytes.NewReader(golden))
	var out bytes.Buffer
	cw := &csvWriter{w: bufio.NewWriter(&out)}
	for {
		rec, _, err := cr.next()
		if err != nil {
			break
		}
		if err := cw.record(rec); err != nil {
			t.Fatal(err)
		}
	}
	cw.w.Flush()
	if out.String() != string(golden) {
		t.Errorf("records written again differ:\n%q\n%q", out.String(), golden)
	}
}

func TestCSVRefusals(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"empty", "", "the file is empty"},
		{"no keys", "Name,Name@type\r\nx,Edm.String\r\n", "PartitionKey and a RowKey"},
		{"bad type", "PartitionKey,RowKey,N,N@type\r\np,r,1,Edm.Decimal\r\n", `line 2: N: "Edm.Decimal" is not an EDM type`},
		{"bad int", "PartitionKey,RowKey,N,N@type\r\np,r,1,Edm.Int32\r\np,s,x,Edm.Int32\r\n", "line 3: N: an Edm.Int32"},
		{"int32 overflow", "PartitionKey,RowKey,N,N@type\r\np,r,2147483648,Int32\r\n", "line 2: N: an Edm.Int32"},
		{"empty int", "PartitionKey,RowKey,N,N@type\r\np,r,,Edm.Int32\r\n", "leave the type empty too"},
		{"value without type", "PartitionKey,RowKey,N,N@type\r\np,r,5,\r\n", "has no type"},
		{"bad key", "PartitionKey,RowKey\r\np/q,r\r\n", `line 2: the PartitionKey "p/q" contains '/'`},
		{"empty key", "PartitionKey,RowKey\r\n,r\r\n", "line 2: the PartitionKey"},
		{"duplicate", "PartitionKey,RowKey\r\np,r\r\np,s\r\np,r\r\n", "line 4: the keys (\"p\", \"r\") are those of line 2"},
		{"field count", "PartitionKey,RowKey,N\r\np,r,a,b\r\n", "line 2: 4 fields, the header has 3"},
		{"bad name", "PartitionKey,RowKey,9lives\r\n", `"9lives" is not a property name`},
		{"orphan type", "PartitionKey,RowKey,N@type\r\n", `types a property "N"`},
		{"open quote", "PartitionKey,RowKey,N\r\np,r,\"abc\r\n", "not closed"},
		{"stray quote", "PartitionKey,RowKey,N\r\np,r,ab\"c\r\n", "a quote inside an unquoted field"},
		{"bad date", "PartitionKey,RowKey,D,D@type\r\np,r,yesterday,Edm.DateTime\r\n", "an Edm.DateTime"},
		{"too long", "PartitionKey,RowKey,S,S@type\r\np,r," + strings.Repeat("x", 40_000) + ",Edm.String\r\n", "more than one cell holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCSV(strings.NewReader(tc.file), false)
			if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was written") {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}

func TestCSVUntypedAndLenient(t *testing.T) {
	file := "\xEF\xBB\xBFPartitionKey,RowKey,Timestamp,B,I,L,F,D,G,S,T,T@type\n" +
		"p,r,2020-01-01T00:00:00Z,true,12,5000000000,1.5,2024-01-02T03:04:05Z,0F8FAD5B-D9CB-469F-A165-70867728950E,hello,7,Int64\n" +
		"p,s,,,,,,,,,,\n"
	rows, err := parseCSV(strings.NewReader(file), true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range rows[0].Properties {
		got[p.Name] = p.Value.String()
	}
	want := map[string]string{"B": "Edm.Boolean(true)", "I": "Edm.Int32(12)", "L": "Edm.Int64(5000000000)", "F": "Edm.Double(1.5)",
		"D": "Edm.DateTime(2024-01-02T03:04:05.0000000Z)", "G": "Edm.Guid(0f8fad5b-d9cb-469f-a165-70867728950e)", "S": `Edm.String("hello")`, "T": "Edm.Int64(7)"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	if len(got) != len(want) || len(rows[1].Properties) != 0 {
		t.Errorf("properties %v; second row %v", got, rows[1].Properties)
	}
	// Without inference an untyped column holds strings.
	rows, err = parseCSV(strings.NewReader(file), false)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := rows[0].Get("I"); v.Kind() != service.KindString {
		t.Errorf("typed import of an untyped column: %v", v)
	}
}

// TestCSVRefusesLargeValueCells imports raw exports of the library's large values (what a
// tool that lists a table's cells writes): a value split over cells of its row, one with
// continuation rows, one in a blob. Restore checks such cells against archive records a
// CSV does not have, so the file is refused while it is read, naming the line, before
// anything is written (it once wrote the rows sorted before the large value first).
func TestCSVRefusesLargeValueCells(t *testing.T) {
	bin := func(n int) service.Value { return service.Binary(bytes.Repeat([]byte{7, 1, 2}, n/3)) }
	for _, tc := range []struct {
		name string
		size int
		off  *largevalue.Offload
	}{
		{"split over cells", 100_000, nil},
		{"continuation rows", 1_500_000, nil},
		{"in a blob", 100_000, &largevalue.Offload{Table: "t", Threshold: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := []largevalue.Value{{Column: "Data", Cell: "Data", Value: bin(tc.size), Encoding: "binary", Offload: true}}
			layout, err := largevalue.Plan("p", "z", nil, values, tc.off, largevalue.Budget{})
			if err != nil {
				t.Fatal(err)
			}
			rows := append([]service.Row{{PartitionKey: "p", RowKey: "a", Properties: []service.Property{{Name: "Data", Value: service.String("small")}}}}, layout.Rows...)
			var names []string
			seen := map[string]bool{}
			for _, r := range rows {
				for _, p := range r.Properties {
					if !seen[p.Name] {
						seen[p.Name] = true
						names = append(names, p.Name)
					}
				}
			}
			var b strings.Builder
			cw := &csvWriter{w: bufio.NewWriter(&b)}
			header := []string{"PartitionKey", "RowKey"}
			for _, n := range names {
				header = append(header, n, n+"@type")
			}
			if err := cw.record(header); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				fields := []string{r.PartitionKey, r.RowKey}
				for _, n := range names {
					if v, ok := r.Get(n); ok {
						fields = append(fields, formatCSV(v), v.Kind().String())
					} else {
						fields = append(fields, "", "")
					}
				}
				if err := cw.record(fields); err != nil {
					t.Fatal(err)
				}
			}
			if err := cw.w.Flush(); err != nil {
				t.Fatal(err)
			}
			_, err = parseCSV(strings.NewReader(b.String()), false)
			if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(err.Error(), "line 3: the row (\"p\", \"z\") holds the cells of a large value") ||
				!strings.Contains(err.Error(), "nothing was written") {
				t.Errorf("%v, want a refusal of line 3", err)
			}
		})
	}
}
