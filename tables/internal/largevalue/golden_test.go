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

// The .NET rows below are written from the package page of Unified.Data.Tables 0.9.0 (the
// seed the project is built from), not from what this package writes. What the page fixes,
// and where:
//
//   - "Tiers", item 2 (split): the chunk cells {Prop}__c0..cN, text chunks of at most 32,000
//     characters, the four manifest cells {Prop}__chunks, __sha256, __enc and __len, and
//     continuation rows keyed {RowKey}~0001, ~0002, ... in the same partition.
//   - "Limitations", first bullet: a continuation key is the RowKey, "~" and exactly four
//     digits.
//   - "Tiers", the 252-property paragraph: a row with split values keeps its part count in
//     _SplitParts on the main row.
//   - "Tiers", the __enc paragraph: "text" stores UTF-8, and the SHA-256 is over the stored
//     bytes, so a split value and the same value offloaded have the same hash.
//   - "Sweeping orphans", last paragraph: blob names end in the 64 lower-case hexadecimal
//     digits of that hash. Since the hash of a split value is the offloaded value's hash, the
//     __sha256 cell is written in lower case too. (The page states the case only for blob
//     names; a reader must accept "64 hexadecimal digits", "Ordering and integrity", last
//     bullet, and this package's readers accept either case.)
//   - "Limitations", the bullet on leftover rows, and the projection bullet: continuation
//     rows carry _SplitOf (naming their entity) and _SplitIndex.
//   - "Id convention": Id is also stored as a data column.
//   - "Sizing your own transactions" and "Limits of one split-aware entity": a row holds
//     1,000,000 estimated bytes, and split cells are placed so that each row stays within
//     one entity; cells that do not fit the main row go to continuation rows.
//
// The page is silent on the EDM types of the manifest and split cells and on what _SplitOf
// holds. These rows use the types of the .NET declarations such counts have (an int count
// is Edm.Int32, a long length Edm.Int64) and the main row's RowKey in _SplitOf (the
// continuation row is in the same partition); this package's readers accept Edm.Int32 and
// Edm.Int64 for every count and length.
//
// The entity: PartitionKey "p", RowKey "doc", a Title, and a Body of sixteen runs of 32,000
// ASCII letters (a run of "a", one of "b", ...) followed by "tail!". Split, that is sixteen
// full chunks and a seventeenth of five characters. The service counts a string cell as two
// bytes a UTF-16 unit plus its name and a few bytes of framing, so a full chunk cell is a
// little over 64,000 bytes: fifteen of them and the small cells fit the main row's
// 1,000,000 (about 961,000), a sixteenth would not (about 1,025,000). The main row holds
// chunks 0 to 14; continuation row doc~0001 holds chunks 15 and 16.

const (
	dotnetChunks     = 17
	dotnetMainChunks = 15
)

// dotnetBody returns the Body of the entity the .NET rows describe.
func dotnetBody() string {
	var b strings.Builder
	for i := 0; i < dotnetChunks-1; i++ {
		b.WriteString(strings.Repeat(string(rune('a'+i)), MaxTextChunkUnits))
	}
	b.WriteString("tail!")
	return b.String()
}

// dotnetChunk returns chunk i of dotnetBody, as the .NET layout cuts it.
func dotnetChunk(i int) string {
	if i == dotnetChunks-1 {
		return "tail!"
	}
	return strings.Repeat(string(rune('a'+i)), 32000)
}

// dotnetRows returns the main row and the continuation row of the entity described above.
// The sha256 value is computed here from the UTF-8 bytes of the body, as the page says.
func dotnetRows() (service.Row, []service.Row) {
	body := dotnetBody()
	sum := sha256.Sum256([]byte(body))
	main := service.Row{PartitionKey: "p", RowKey: "doc", ETag: `W/"1"`, Properties: []service.Property{
		{Name: "Id", Value: service.String("p|doc")},
		{Name: "Title", Value: service.String("greeting")},
	}}
	for i := 0; i < dotnetMainChunks; i++ {
		main.Properties = append(main.Properties, service.Property{Name: fmt.Sprintf("Body__c%d", i), Value: service.String(dotnetChunk(i))})
	}
	main.Properties = append(main.Properties,
		service.Property{Name: "Body__chunks", Value: service.Int32(dotnetChunks)},
		service.Property{Name: "Body__sha256", Value: service.String(fmt.Sprintf("%x", sum))},
		service.Property{Name: "Body__enc", Value: service.String("text")},
		service.Property{Name: "Body__len", Value: service.Int64(int64(len(body)))},
		service.Property{Name: "_SplitParts", Value: service.Int32(2)},
	)
	cont := service.Row{PartitionKey: "p", RowKey: "doc~0001", Properties: []service.Property{
		{Name: "_SplitOf", Value: service.String("doc")},
		{Name: "_SplitIndex", Value: service.Int32(1)},
	}}
	for i := dotnetMainChunks; i < dotnetChunks; i++ {
		cont.Properties = append(cont.Properties, service.Property{Name: fmt.Sprintf("Body__c%d", i), Value: service.String(dotnetChunk(i))})
	}
	return main, []service.Row{cont}
}

// setCell sets (or, with an invalid value, removes) the cell name of r.
func setCell(r *service.Row, name string, v service.Value) {
	for i, p := range r.Properties {
		if p.Name == name {
			if !v.IsValid() {
				r.Properties = append(r.Properties[:i:i], r.Properties[i+1:]...)
			} else {
				r.Properties[i].Value = v
			}
			return
		}
	}
	if v.IsValid() {
		r.Properties = append(r.Properties, service.Property{Name: name, Value: v})
	}
}

func cellOf(r *service.Row, name string) service.Value {
	v, _ := r.Get(name)
	return v
}

var bodyCol = []Column{{Name: "Body", Cell: "Body"}}

func TestAssembleDotnetRows(t *testing.T) {
	main, conts := dotnetRows()
	got, err := Assemble(main, conts, bodyCol)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]service.Value{"Id": service.String("p|doc"), "Title": service.String("greeting"), "Body": service.String(dotnetBody())}
	if len(got.Properties) != len(want) {
		t.Fatalf("got %d cells, want %d", len(got.Properties), len(want))
	}
	for _, p := range got.Properties {
		if w, ok := want[p.Name]; !ok || !w.Equal(p.Value) {
			t.Errorf("%s does not read back as the .NET rows hold it", p.Name)
		}
	}
}

// diffCells describes, cell for cell, how the rows got differ from want: row keys, cell
// names, EDM types and values ("" when they do not differ).
func diffCells(want, got []service.Row) string {
	var out []string
	if len(got) != len(want) {
		out = append(out, fmt.Sprintf("%d rows, want %d", len(got), len(want)))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		w, g := want[i], got[i]
		if w.PartitionKey != g.PartitionKey || w.RowKey != g.RowKey {
			out = append(out, fmt.Sprintf("row %d is %s|%s, want %s|%s", i, g.PartitionKey, g.RowKey, w.PartitionKey, w.RowKey))
			continue
		}
		for _, p := range w.Properties {
			gv, ok := g.Get(p.Name)
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("row %s: no %s", w.RowKey, p.Name))
			case gv.Kind() != p.Value.Kind():
				out = append(out, fmt.Sprintf("row %s: %s is %v, want %v", w.RowKey, p.Name, gv.Kind(), p.Value.Kind()))
			case !gv.Equal(p.Value):
				out = append(out, fmt.Sprintf("row %s: %s differs (%.60v, want %.60v)", w.RowKey, p.Name, gv, p.Value))
			}
		}
		for _, p := range g.Properties {
			if _, ok := w.Get(p.Name); !ok {
				out = append(out, fmt.Sprintf("row %s: extra %s = %.60v", w.RowKey, p.Name, p.Value))
			}
		}
		if len(g.Properties) != len(w.Properties) {
			out = append(out, fmt.Sprintf("row %s: %d cells, want %d", w.RowKey, len(g.Properties), len(w.Properties)))
		}
	}
	return strings.Join(out, "\n")
}

// TestPlanWritesTheDotnetRows writes the entity the .NET rows describe through the planner
// and compares what it produces with them, cell for cell.
func TestPlanWritesTheDotnetRows(t *testing.T) {
	fixed := []service.Property{{Name: "Id", Value: service.String("p|doc")}, {Name: "Title", Value: service.String("greeting")}}
	lay, err := Plan("p", "doc", fixed, []Value{{Column: "Body", Cell: "Body", Value: service.String(dotnetBody()), Encoding: EncText}}, nil, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	main, conts := dotnetRows()
	main.ETag = ""
	if d := diffCells(append([]service.Row{main}, conts...), lay.Rows); d != "" {
		t.Errorf("the planner writes other rows than the .NET layout:\n%s", d)
	}
}

// TestReadersAcceptEitherHexCase: the page asks a reader for 64 hexadecimal digits of
// SHA-256 without naming a case, so both readers take upper-case digits as well.
func TestReadersAcceptEitherHexCase(t *testing.T) {
	for _, upper := range []bool{false, true} {
		t.Run(fmt.Sprintf("upper=%v", upper), func(t *testing.T) {
			main, conts := dotnetRows()
			sha := cellOf(&main, "Body__sha256").Str()
			if upper {
				sha = strings.ToUpper(sha)
			}
			setCell(&main, "Body__sha256", service.String(sha))
			got, err := Assemble(main, conts, bodyCol)
			if err != nil {
				t.Fatalf("Assemble: %v", err)
			}
			if v, _ := got.Get("Body"); !v.Equal(service.String(dotnetBody())) {
				t.Error("Assemble: the body does not read back")
			}

			// A value whose chunks are all on the main row, for the plain reader.
			small := "hello, wide world"
			h := sha256.Sum256([]byte(small))
			hs := fmt.Sprintf("%x", h)
			if upper {
				hs = strings.ToUpper(hs)
			}
			one := service.Row{PartitionKey: "p", RowKey: "note", Properties: []service.Property{
				{Name: "Body__c0", Value: service.String("hello, ")},
				{Name: "Body__c1", Value: service.String("wide world")},
				{Name: "Body__chunks", Value: service.Int32(2)},
				{Name: "Body__sha256", Value: service.String(hs)},
				{Name: "Body__enc", Value: service.String("text")},
				{Name: "Body__len", Value: service.Int64(int64(len(small)))},
				{Name: "_SplitParts", Value: service.Int32(1)},
			}}
			for name, read := range map[string]func() (service.Row, error){
				"Assemble":     func() (service.Row, error) { return Assemble(one, nil, bodyCol) },
				"AssembleMain": func() (service.Row, error) { return AssembleMain(one, bodyCol) },
			} {
				got, err := read()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if v, _ := got.Get("Body"); !v.Equal(service.String(small)) {
					t.Errorf("%s: Body = %v", name, v)
				}
			}
		})
	}
}

func TestAssembleRefusesDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(main *service.Row, conts *[]service.Row)
	}{
		{"missing continuation row", func(_ *service.Row, conts *[]service.Row) { *conts = nil }},
		{"continuation row of another entity", func(_ *service.Row, conts *[]service.Row) {
			setCell(&(*conts)[0], "_SplitOf", service.String("other"))
		}},
		{"changed chunk", func(_ *service.Row, conts *[]service.Row) {
			setCell(&(*conts)[0], "Body__c16", service.String("Tail!"))
		}},
		{"missing chunk", func(main *service.Row, _ *[]service.Row) {
			c := cellOf(main, "Body__c3")
			setCell(main, "Body__c3", service.Value{})
			setCell(main, "Body__c40", c)
		}},
		{"bad count", func(main *service.Row, _ *[]service.Row) { setCell(main, "Body__chunks", service.Int32(0)) }},
		{"bad encoding", func(main *service.Row, _ *[]service.Row) { setCell(main, "Body__enc", service.String("rot13")) }},
		{"bad length", func(main *service.Row, _ *[]service.Row) {
			setCell(main, "Body__len", service.Int64(cellOf(main, "Body__len").Int64()+1))
		}},
		{"bad hash", func(main *service.Row, _ *[]service.Row) {
			setCell(main, "Body__sha256", service.String(strings.Repeat("0", 64)))
		}},
		{"bad part count", func(main *service.Row, _ *[]service.Row) { setCell(main, "_SplitParts", service.String("2")) }},
		{"manifest without count", func(main *service.Row, _ *[]service.Row) { setCell(main, "Body__chunks", service.Value{}) }},
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
			lay, err := Plan("p", "doc", fixed, tc.vals, nil, Budget{})
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
