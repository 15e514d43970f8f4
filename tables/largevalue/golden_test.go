package largevalue

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func hexSHA(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// dotnetRows are the rows of an entity whose Body "hello, wide world" the .NET 0.9.0 layout
// stores split in two text chunks, the second on a continuation row, written by hand from
// the layout's description (not by this package).
func dotnetRows() (service.Row, []service.Row) {
	main := service.Row{PartitionKey: "p", RowKey: "doc", ETag: `W/"1"`, Properties: []service.Property{
		{Name: "Id", Value: service.String("p|doc")},
		{Name: "Title", Value: service.String("greeting")},
		{Name: "Body__c0", Value: service.String("hello, ")},
		{Name: "Body__chunks", Value: service.Int32(2)},
		{Name: "Body__sha256", Value: service.String(strings.ToUpper(hexSHA([]byte("hello, wide world"))))},
		{Name: "Body__enc", Value: service.String("text")},
		{Name: "Body__len", Value: service.Int64(17)},
		{Name: "_SplitParts", Value: service.Int32(2)},
	}}
	cont := service.Row{PartitionKey: "p", RowKey: "doc~0001", Properties: []service.Property{
		{Name: "_SplitOf", Value: service.String("doc")},
		{Name: "_SplitIndex", Value: service.Int32(1)},
		{Name: "Body__c1", Value: service.String("wide world")},
	}}
	return main, []service.Row{cont}
}

var bodyCol = []Column{{Name: "Body", Cell: "Body"}}

func TestAssembleDotnetRows(t *testing.T) {
	main, conts := dotnetRows()
	got, err := Assemble(main, conts, bodyCol)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Id": `Edm.String("p|doc")`, "Title": `Edm.String("greeting")`, "Body": `Edm.String("hello, wide world")`}
	if len(got.Properties) != len(want) {
		t.Fatalf("got %v", got.Properties)
	}
	for _, p := range got.Properties {
		if want[p.Name] != p.Value.String() {
			t.Errorf("%s = %v, want %s", p.Name, p.Value, want[p.Name])
		}
	}
}

func TestAssembleRefusesDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(main *service.Row, conts *[]service.Row)
	}{
		{"missing continuation row", func(_ *service.Row, conts *[]service.Row) { *conts = nil }},
		{"continuation row of another entity", func(_ *service.Row, conts *[]service.Row) {
			(*conts)[0].Properties[0].Value = service.String("other")
		}},
		{"changed chunk", func(_ *service.Row, conts *[]service.Row) {
			(*conts)[0].Properties[2].Value = service.String("wide World")
		}},
		{"missing chunk", func(main *service.Row, _ *[]service.Row) { main.Properties[2].Name = "Body__c7" }},
		{"bad count", func(main *service.Row, _ *[]service.Row) { main.Properties[3].Value = service.Int32(0) }},
		{"bad encoding", func(main *service.Row, _ *[]service.Row) { main.Properties[5].Value = service.String("rot13") }},
		{"bad length", func(main *service.Row, _ *[]service.Row) { main.Properties[6].Value = service.Int64(18) }},
		{"bad part count", func(main *service.Row, _ *[]service.Row) { main.Properties[7].Value = service.String("2") }},
		{"manifest without count", func(main *service.Row, _ *[]service.Row) {
			main.Properties = append(main.Properties[:3:3], main.Properties[4:]...)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			main, conts := dotnetRows()
			tc.damage(&main, &conts)
			_, err := Assemble(main, conts, bodyCol)
			var ie *IntegrityError
			if !errors.Is(err, abstractions.ErrIntegrity) || !errors.As(err, &ie) {
				t.Fatalf("got %v, want an integrity error", err)
			}
		})
	}
}

// render renders rows cell for cell: small values as they are, large ones by kind, size and
// SHA-256.
func render(rows []service.Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "row %s|%s\n", r.PartitionKey, r.RowKey)
		props := append([]service.Property(nil), r.Properties...)
		sort.Slice(props, func(i, j int) bool { return props[i].Name < props[j].Name })
		for _, p := range props {
			v := p.Value
			switch {
			case v.Size() <= 160:
				fmt.Fprintf(&b, "  %s = %v\n", p.Name, v)
			case v.Kind() == service.KindString:
				fmt.Fprintf(&b, "  %s = %v units=%d sha256=%s\n", p.Name, v.Kind(), service.UTF16Len(v.Str()), hexSHA([]byte(v.Str())))
			default:
				fmt.Fprintf(&b, "  %s = %v len=%d sha256=%s\n", p.Name, v.Kind(), len(v.Bytes()), hexSHA(v.Bytes()))
			}
		}
	}
	return b.String()
}

// TestGoldenLayouts pins the rows this package writes for a few entities to golden files
// (go test -update rewrites them), checks facts of the layout independently of the files,
// and reads the rows back.
func TestGoldenLayouts(t *testing.T) {
	text := strings.Repeat("Съешь же ещё этих мягких французских булок 😀 ", 13000)
	bin := make([]byte, 1_300_000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	cases := []struct {
		name  string
		vals  []Value
		check func(t *testing.T, rows []service.Row)
	}{
		{"text", []Value{{Column: "Body", Cell: "Body", Value: service.String(text), Encoding: EncText}}, func(t *testing.T, rows []service.Row) {
			for _, r := range rows {
				for _, p := range r.Properties {
					if strings.HasPrefix(p.Name, "Body__c") && p.Name != "Body__chunks" {
						if n := service.UTF16Len(p.Value.Str()); n > MaxTextChunkUnits {
							t.Errorf("%s holds %d units", p.Name, n)
						}
					}
				}
			}
		}},
		{"binary", []Value{{Column: "Data", Cell: "Data", Value: service.Binary(bin), Encoding: EncBinary}}, nil},
		{"gzip-json", []Value{{Column: "Tags", Cell: "Tags__Json", Value: service.String(`["` + strings.Repeat("tag", 20000) + `"]`), Encoding: EncGzip}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fixed := []service.Property{{Name: "Id", Value: service.String("p|doc")}, {Name: "Title", Value: service.String("t")}}
			lay, err := Plan("p", "doc", fixed, tc.vals, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, lay.Rows)
			}
			for i, r := range lay.Rows[1:] {
				if r.RowKey != ContinuationKey("doc", i+1) {
					t.Errorf("continuation row %d is %q", i+1, r.RowKey)
				}
				if idx, ok := BelongsTo(&r, "doc"); !ok || idx != i+1 {
					t.Errorf("continuation row %q does not name its main row", r.RowKey)
				}
			}
			got := render(lay.Rows)
			path := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("rows differ from %s (go test -update rewrites it):\n%s", path, got)
			}
			cols := []Column{{Name: tc.vals[0].Column, Cell: tc.vals[0].Cell, Binary: tc.vals[0].Value.Kind() == service.KindBinary}}
			back, err := Assemble(lay.Rows[0], lay.Rows[1:], cols)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := back.Get(tc.vals[0].Cell)
			if !ok || !v.Equal(tc.vals[0].Value) {
				t.Fatal("the value does not read back")
			}
		})
	}
}
