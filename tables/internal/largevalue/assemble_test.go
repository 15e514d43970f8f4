package largevalue

import (
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// planned returns the rows of an entity with one text value in column col (its cell cell).
func planned(t *testing.T, col, cell, text string) []service.Row {
	t.Helper()
	lay, err := Plan("p", "doc", []service.Property{{Name: "Id", Value: service.String("p|doc")}},
		[]Value{{Column: col, Cell: cell, Value: service.String(text), Encoding: EncText}}, nil, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	return lay.Rows
}

// cellNames lists a row's cell names.
func cellNames(r service.Row) []string {
	var out []string
	for _, p := range r.Properties {
		out = append(out, p.Name)
	}
	return out
}

// A value stored under an old column name (an alias) is reassembled into the alias's cell,
// from the main row and from continuation rows, unless the row holds the column's own value.
func TestAssembleAliases(t *testing.T) {
	small := strings.Repeat("ab", 40000)    // 80,000 units: chunks on the main row
	large := strings.Repeat("xyz", 400_000) // 1.2 MB: continuation rows
	body := Column{Name: "Body", Cell: "Body"}
	old := Column{Name: "Old", Cell: "Old", AliasOf: "Body"}
	oldJSON := Column{Name: "Old", Cell: "Old__Json", AliasOf: "Body"}
	tests := []struct {
		name  string
		rows  []service.Row
		cols  []Column
		cell  string // the cell the value is read into
		value string // "" when no value is read
	}{
		{"on the main row", planned(t, "Old", "Old", small), []Column{body, old}, "Old", small},
		{"on continuation rows", planned(t, "Old", "Old", large), []Column{body, old}, "Old", large},
		{"a JSON-stored value", planned(t, "Old", "Old__Json", `"`+small+`"`), []Column{{Name: "Body", Cell: "Body__Json"}, oldJSON},
			"Old__Json", `"` + small + `"`},
		{"the column's own value wins", func() []service.Row {
			rows := planned(t, "Old", "Old", small)
			rows[0].Properties = append(rows[0].Properties, service.Property{Name: "Body", Value: service.String("own")})
			return rows
		}(), []Column{body, old}, "Body", "own"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Assemble(tc.rows[0], tc.rows[1:], tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := got.Get(tc.cell)
			if !ok || v.Str() != tc.value {
				t.Fatalf("%s holds %d characters, want %d (cells %v)", tc.cell, len(v.Str()), len(tc.value), cellNames(got))
			}
		})
	}
}

// The column's own value wins even over an alias whose cells are damaged: they are not read.
func TestAssembleIgnoresSupersededAlias(t *testing.T) {
	rows := planned(t, "Old", "Old", strings.Repeat("ab", 40000))
	for i, p := range rows[0].Properties {
		if p.Name == "Old__sha256" {
			rows[0].Properties[i].Value = service.String(strings.Repeat("0", 64))
		}
	}
	rows[0].Properties = append(rows[0].Properties, service.Property{Name: "Body", Value: service.String("own")})
	cols := []Column{{Name: "Body", Cell: "Body"}, {Name: "Old", Cell: "Old", AliasOf: "Body"}}
	got, err := Assemble(rows[0], nil, cols)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := got.Get("Body"); v.Str() != "own" {
		t.Fatalf("Body = %v", v)
	}
	// Without the column's own value, the damage is found.
	rows[0].Properties = rows[0].Properties[:len(rows[0].Properties)-1]
	if _, err := Assemble(rows[0], nil, cols); !errors.Is(err, abstractions.ErrIntegrity) {
		t.Fatalf("got %v, want an integrity error", err)
	}
}

// A value held in a blob is never read as empty.
func TestAssembleRefusesBlobReferences(t *testing.T) {
	ref := service.Property{Name: "Body__blob", Value: service.String(`{"container":"c","name":"t/p/doc/Body/0"}`)}
	main := service.Row{PartitionKey: "p", RowKey: "doc", Properties: []service.Property{ref}}
	_, err := Assemble(main, nil, bodyCol)
	var oe *OffloadedError
	if !errors.As(err, &oe) || !errors.Is(err, abstractions.ErrBlobOffloadNotConfigured) || oe.Column != "Body" {
		t.Fatalf("got %v, want an OffloadedError for Body", err)
	}
	// A reader that reads blobs itself gets the reference left on the row.
	reads := []Column{{Name: "Body", Cell: "Body", ReadsBlob: true}}
	got, err := Assemble(main, nil, reads)
	if v, ok := got.Get("Body__blob"); err != nil || !ok || v.Str() != ref.Value.Str() {
		t.Fatalf("with ReadsBlob: got %v, %v", got, err)
	}
	// A row that also holds the value in its cell reads it.
	main.Properties = append(main.Properties, service.Property{Name: "Body", Value: service.String("inline")})
	got, err = Assemble(main, nil, bodyCol)
	if v, _ := got.Get("Body"); err != nil || v.Str() != "inline" {
		t.Fatalf("got %v, %v", v, err)
	}
}

// An alias is superseded by any form of its column's own value on the row.
func TestColumnSuperseded(t *testing.T) {
	alias := Column{Name: "Old", Cell: "Old__Json", AliasOf: "Body"}
	for _, tc := range []struct {
		cell string
		want bool
	}{
		{"Body__Json", true}, {"Body__GZip", true}, {"Body__chunks", true}, {"Body__blob", true},
		{"Body", false}, {"Old__blob", false}, {"Other__blob", false},
	} {
		r := service.Row{Properties: []service.Property{{Name: tc.cell, Value: service.String("x")}}}
		if got := alias.Superseded(&r); got != tc.want {
			t.Errorf("%s: Superseded = %v, want %v", tc.cell, got, tc.want)
		}
	}
	own := Column{Name: "Body", Cell: "Body"}
	r := service.Row{Properties: []service.Property{{Name: "Body", Value: service.String("x")}}}
	if own.Superseded(&r) {
		t.Error("a column's own value supersedes the column")
	}
}

// A reader that is not split-aware reassembles a value whose chunks are all on the main row,
// refuses one that continues on continuation rows or does not verify, and leaves cells that
// merely have a manifest's names alone.
func TestAssembleMain(t *testing.T) {
	small := strings.Repeat("ab", 40000)
	body := []Column{{Name: "Body", Cell: "Body"}}
	mainOf := func(text string) service.Row { return planned(t, "Body", "Body", text)[0] }
	set := func(r service.Row, name string, v service.Value) service.Row {
		r = r.Clone()
		for i := range r.Properties {
			if r.Properties[i].Name == name {
				r.Properties[i].Value = v
				return r
			}
		}
		r.Properties = append(r.Properties, service.Property{Name: name, Value: v})
		return r
	}
	drop := func(r service.Row, name string) service.Row {
		r = r.Clone()
		for i := range r.Properties {
			if r.Properties[i].Name == name {
				r.Properties = append(r.Properties[:i], r.Properties[i+1:]...)
				break
			}
		}
		return r
	}
	tests := []struct {
		name      string
		main      service.Row
		cols      []Column
		integrity bool
		unchanged bool // the row comes back as it was
	}{
		{name: "chunks on the main row", main: mainOf(small), cols: body},
		{name: "through an alias", main: planned(t, "Old", "Old", small)[0],
			cols: []Column{{Name: "Body", Cell: "Body"}, {Name: "Old", Cell: "Old", AliasOf: "Body"}}},
		{name: "continues on continuation rows", main: mainOf(strings.Repeat("xyz", 400_000)), cols: body, integrity: true},
		{name: "a checksum that does not match", main: set(mainOf(small), "Body__sha256", service.String(strings.Repeat("0", 64))),
			cols: body, integrity: true},
		{name: "a chunk missing", main: drop(mainOf(small), "Body__c1"), cols: body, integrity: true},
		{name: "no manifest", main: service.Row{Properties: []service.Property{{Name: "Body", Value: service.String("x")}}},
			cols: body, unchanged: true},
		{name: "a count of zero", main: set(mainOf(small), "Body__chunks", service.Int32(0)), cols: body, unchanged: true},
		{name: "an unknown encoding", main: set(mainOf(small), "Body__enc", service.String("zip")), cols: body, unchanged: true},
		{name: "a hash that is not hexadecimal", main: set(mainOf(small), "Body__sha256", service.String(strings.Repeat("g", 64))),
			cols: body, unchanged: true},
		{name: "no length", main: drop(mainOf(small), "Body__len"), cols: body, unchanged: true},
		{name: "a negative length", main: set(mainOf(small), "Body__len", service.Int64(-1)), cols: body, unchanged: true},
		{name: "a column the type does not map", main: mainOf(small), cols: []Column{{Name: "Other", Cell: "Other"}}, unchanged: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AssembleMain(tc.main, tc.cols)
			switch {
			case tc.integrity:
				if !errors.Is(err, abstractions.ErrIntegrity) {
					t.Fatalf("got %v, want an integrity error", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.unchanged:
				if len(got.Properties) != len(tc.main.Properties) {
					t.Fatalf("the row changed: %v", cellNames(got))
				}
				return
			}
			cell := tc.cols[len(tc.cols)-1].Cell
			v, ok := got.Get(cell)
			if !ok || v.Str() != small {
				t.Fatalf("%s holds %d characters (cells %v)", cell, len(v.Str()), cellNames(got))
			}
			for _, n := range cellNames(got) {
				if strings.Contains(n, "__") {
					t.Errorf("the cell %s was left", n)
				}
			}
		})
	}
}
