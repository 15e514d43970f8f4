package codec_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/codec/codectest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden pins the stored layout, column names, EDM types and values, of reference
// values. A change of wire format shows up as a diff of these files; regenerate them with
// go test -run TestGolden -update once the change is deliberate.
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		v    any
	}{
		{"customer", codectest.Reference()},
		{"scalars", &Scalars{
			S: "text", B: true, I8: -8, I16: -16, I32: -32, I: -64, I64: -64, U8: 8, U16: 16, U32: 32,
			U: 1<<64 - 1, U64: 1 << 63, F32: 0.5, F64: 10, T: time.Date(2001, 2, 3, 4, 5, 6, 700, time.UTC),
			D: 1500 * time.Millisecond, G: abstractions.GUID{0xff, 1: 0xee, 15: 1}, Bytes: []byte("bin"),
			Arr: [4]byte{1, 2, 3, 4}, Tier: Silver,
		}},
		{"shapes", &struct {
			Embedded
			Nested
			JSONish
			P Pointers
		}{
			Embedded: Embedded{Entity: abstractions.Entity{ID: "a|b", CreatedAt: refTime}, Extra: &Extra{Note: "n"}},
			Nested:   Nested{Work: &Address{City: "w"}},
			JSONish:  JSONish{Tags: []string{"t"}, Scores: map[string]int{"b": 2, "a": 1}, Any: 1.5},
			P:        Pointers{S: ptr("s"), Addr: &Address{}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			props, err := codec.Encode(tc.v, nil)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := codec.PlanOf(reflect.TypeOf(tc.v))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "# The cells of the %s reference value, in order: column, EDM type, value.\n", tc.name)
			w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			for _, p := range props {
				v := p.Value.String()
				if len(v) > 120 {
					v = v[:120] + "…"
				}
				v = strings.TrimSuffix(strings.TrimPrefix(v, p.Value.Kind().String()+"("), ")")
				fmt.Fprintf(w, "%s\t%s\t%s\n", p.Name, p.Value.Kind(), v)
			}
			w.Flush()
			fmt.Fprintf(&b, "\n# The plan's fields: column, EDM type (json when stored as JSON), role, Go path, Go type, aliases.\n")
			w = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			for _, f := range pl.Fields() {
				kind := f.Kind.String()
				if f.JSON {
					kind = "json"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%v\t%s\n", f.Name, kind, f.Role, f.Path, f.Type, strings.Join(f.Aliases, "|"))
			}
			w.Flush()
			lines := strings.Split(b.String(), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimRight(l, " ")
			}
			checkGolden(t, filepath.Join("testdata", "golden", tc.name+".txt"), strings.Join(lines, "\n"))
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("the stored layout changed; if that is deliberate, run go test -run TestGolden -update\n--- %s\n%s\n--- got\n%s",
			path, want, got)
	}
}
