package codec_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

type bigText struct {
	Text  string
	Tier  *Tier
	List  []string
	Blob  map[string]string
	Bytes []byte
}

// noise returns n bytes of incompressible ASCII text.
func noise(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('!' + r.IntN(94))
	}
	return string(b)
}

func TestOversizedStrings(t *testing.T) {
	compressible := strings.Repeat("abcdefgh", 10000) // 80,000 units
	incompressible := noise(100000, 1)
	emoji := strings.Repeat("😀", 16385) // 32,770 UTF-16 units in 65,540 bytes
	cases := []struct {
		name   string
		text   string
		policy codec.OversizedPolicy
		column string // the cell written, "" when refused
		want   string // what a read returns (the input when empty)
	}{
		{"limit fits", strings.Repeat("x", 32768), codec.OversizedRefuse, "Text", ""},
		{"emoji limit fits", strings.Repeat("😀", 16384), codec.OversizedRefuse, "Text", ""},
		{"refused by default", strings.Repeat("x", 32769), codec.OversizedRefuse, "", ""},
		{"emoji refused by default", emoji, codec.OversizedRefuse, "", ""},
		{"compressed", compressible, codec.OversizedCompress, "Text__GZip", ""},
		{"compress not enough", incompressible, codec.OversizedCompress, "", ""},
		{"trim prefers compression", compressible, codec.OversizedTrim, "Text__GZip", ""},
		{"trimmed", incompressible, codec.OversizedTrim, "Text", incompressible[:32768]},
		{"trimmed with marker", incompressible, codec.OversizedTrimWithMarker, "Text",
			incompressible[:32768-utf8.RuneCountInString(codec.DefaultTrimMarker)] + codec.DefaultTrimMarker},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := &codec.Options{Oversized: tc.policy}
			row, err := codec.EncodeRow(&bigText{Text: tc.text}, "p", "r", opts)
			if tc.column == "" {
				var oe *codec.OversizedCellError
				if !errorsAs(err, &oe) {
					t.Fatalf("error %v, want an *OversizedCellError", err)
				}
				wantErrIs(t, err, abstractions.ErrOversizedCell)
				if oe.Column != "Text" || oe.Size != 2*utf16Len(tc.text) || oe.Limit != 65536 ||
					!strings.Contains(err.Error(), `"Text"`) || !strings.Contains(err.Error(), "Options.Oversized") {
					t.Fatalf("error %+v: %v", oe, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(row.Properties); len(got) != 1 || got[0] != tc.column {
				t.Fatalf("cells %v, want %s", got, tc.column)
			}
			out, err := codec.Decode[bigText](&row, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.text
			}
			if out.Text != want {
				t.Fatalf("read %d bytes, want %d", len(out.Text), len(want))
			}
		})
	}
	t.Run("custom marker and surrogate pairs", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 3))
		var sb strings.Builder
		sb.WriteString("x") // so that a pair straddles the limit
		for range 60000 {
			sb.WriteRune(rune(0x1F300 + r.IntN(1024)))
		}
		text := sb.String()
		row, err := codec.EncodeRow(&bigText{Text: text}, "p", "r",
			&codec.Options{Oversized: codec.OversizedTrimWithMarker, TrimMarker: "…"})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := row.Get("Text")
		s := v.Str()
		if !utf8.ValidString(s) || !strings.HasSuffix(s, "…") || utf16Len(s) > 32768 || utf16Len(s) < 32766 {
			t.Fatalf("trimmed to %d units", utf16Len(s))
		}
	})
	t.Run("text types follow the policy", func(t *testing.T) {
		_, err := codec.Encode(&bigText{Tier: ptr(Gold)}, nil)
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("bytes above a cell are refused under every policy", func(t *testing.T) {
		for _, pol := range []codec.OversizedPolicy{codec.OversizedRefuse, codec.OversizedCompress, codec.OversizedTrim, codec.OversizedTrimWithMarker} {
			_, err := codec.EncodeRow(&bigText{Bytes: make([]byte, 65537)}, "p", "r", &codec.Options{Oversized: pol})
			var oe *codec.OversizedCellError
			if !errors.Is(err, abstractions.ErrOversizedCell) || !errors.As(err, &oe) || !oe.Binary || oe.Size != 65537 {
				t.Fatalf("policy %d: %v", pol, err)
			}
		}
		row, err := codec.EncodeRow(&bigText{Bytes: make([]byte, 65536)}, "p", "r", nil)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := row.Get("Bytes"); v.Size() != 65536 {
			t.Fatalf("bytes cell %v", v.Size())
		}
	})
}

func utf16Len(s string) int { return service.UTF16Len(s) }

func TestOversizedJSON(t *testing.T) {
	many := make([]string, 5000)
	for i := range many {
		many[i] = "item-number-" + strings.Repeat("z", i%7)
	}
	huge := make([]string, 1000)
	for i := range huge {
		huge[i] = noise(100, uint64(i))
	}
	hugeMap := map[string]string{}
	for i, s := range huge {
		hugeMap[s] = huge[(i+1)%len(huge)]
	}
	t.Run("gzip fallback", func(t *testing.T) {
		in := &bigText{List: many}
		out, row := roundTrip(t, in, nil)
		mustEqual(t, out, in)
		if got := names(row.Properties); len(got) != 2 || got[1] != "List__GZip" {
			t.Fatalf("cells %v", got)
		}
	})
	t.Run("too large even compressed", func(t *testing.T) {
		for _, in := range []*bigText{{List: huge}, {Blob: hugeMap}} {
			_, err := codec.Encode(in, &codec.Options{Oversized: codec.OversizedCompress})
			var oe *codec.OversizedCellError
			if !errorsAs(err, &oe) || oe.Compressed <= 65536 {
				t.Fatalf("error %v", err)
			}
		}
	})
	t.Run("trimmed list", func(t *testing.T) {
		row, err := codec.EncodeRow(&bigText{List: huge, Blob: hugeMap}, "p", "r", &codec.Options{Oversized: codec.OversizedTrim})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(row.Properties); len(got) != 2 || got[1] != "List__GZip" {
			t.Fatalf("cells %v: the map should be dropped, the list kept", got)
		}
		out, err := codec.Decode[bigText](&row, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := len(out.List)
		if n < 300 || n >= len(huge) || out.List[n-1] != huge[n-1] || out.Blob != nil {
			t.Fatalf("kept %d elements", n)
		}
	})
}
