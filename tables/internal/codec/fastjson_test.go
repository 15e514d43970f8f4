package codec_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/service"
)

type label string

type upper string

func (u *upper) UnmarshalText(b []byte) error { *u = upper("U:" + string(b)); return nil }

type stringSlices struct {
	Tags   []string
	Labels []label
	Upper  []upper
	P      *[]string
}

// TestStringSliceMatchesEncodingJSON checks that the codec's own reader of a JSON string
// array gives what encoding/json gives, for every text, including those it hands over.
func TestStringSliceMatchesEncodingJSON(t *testing.T) {
	texts := []string{
		`[]`, ` [ ] `, `["a"]`, `["a","b"]`, ` [ "a" , "b" ] `, "[\n\"x\"\t]", `[""]`, `["héllo","😀"]`,
		`["a\"b"]`, `["\u00e9"]`, `["a\\b"]`, `null`, `["a",]`, `["a" "b"]`, `["a"`, `["a"]x`, `[1]`,
		`["` + "\xff" + `"]`, "[\"\x01\"]", `{"a":1}`, `["a",null]`, ``, `[`, `["a",`,
	}
	for _, text := range texts {
		for _, col := range []string{"Tags", "Labels", "Upper"} {
			t.Run(col+" "+text, func(t *testing.T) {
				var want stringSlices
				wantErr := json.Unmarshal([]byte(`{"`+col+`":`+text+`}`), &want)
				if text == "" || text == "[" {
					wantErr = json.Unmarshal([]byte(text), new([]string))
				}
				row := service.Row{Properties: []service.Property{{Name: col + "__Json", Value: service.String(text)}}}
				got, err := codec.Decode[stringSlices](&row, nil)
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("error %v, encoding/json %v", err, wantErr)
				}
				if err == nil && !reflect.DeepEqual(*got, want) {
					t.Fatalf("got %#v, encoding/json %#v", *got, want)
				}
			})
		}
	}
	in := &stringSlices{Tags: []string{"<&>", "\u2028"}, Labels: []label{}, Upper: []upper{"x"}, P: ptr([]string{"p"})}
	out, _ := roundTrip(t, in, nil)
	in.Upper = []upper{"U:x"}
	mustEqual(t, out, in)
}

func TestStringSliceEncodingMatchesEncodingJSON(t *testing.T) {
	for _, tags := range [][]string{
		{}, {""}, {"a", "b"}, {"héllo", "😀"}, {"<"}, {">"}, {"&"}, {`"`}, {`\`}, {"\n"}, {"\x7f"}, {"\u2028"},
		{"\u2029x"}, {"\xff"}, {"a\x00"}, {"ok", "<b>"}, {"\t"}, {"\u00a0"}, {"\ufffd"},
	} {
		for _, in := range []*stringSlices{{Tags: tags}, {Labels: toLabels(tags)}} {
			props, err := codec.Encode(in, nil)
			if slices.ContainsFunc(tags, func(s string) bool { return !utf8.ValidString(s) }) {
				// encoding/json would store U+FFFD: refused, as in a plain column.
				if !errors.Is(err, abstractions.ErrInvalidArgument) {
					t.Errorf("%q: %v, want ErrInvalidArgument", tags, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(in.Tags)
			if in.Labels != nil {
				want, _ = json.Marshal(in.Labels)
			}
			if len(props) != 1 || props[0].Value.Str() != string(want) {
				t.Errorf("%q: stored %v, encoding/json writes %s", tags, props, want)
			}
		}
	}
}

func toLabels(s []string) []label {
	out := make([]label, len(s))
	for i, v := range s {
		out[i] = label(v)
	}
	return out
}
