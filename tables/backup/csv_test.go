package backup

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
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
