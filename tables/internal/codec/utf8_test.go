package codec_test

import (
	"errors"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/codec"
)

type jsonText struct {
	abstractions.Entity
	Tags  []string
	Meta  map[string]string
	Inner *struct{ Note string }
	Any   any
}

// Invalid UTF-8 inside a JSON-stored field is refused as it is in a plain string column:
// encoding/json would store U+FFFD in its place. Real U+FFFD and the text \ufffd are kept.
func TestJSONFieldsRefuseInvalidUTF8(t *testing.T) {
	bad := "a\xffb"
	for _, tc := range []struct {
		name string
		v    jsonText
		ok   bool
	}{
		{"a slice element", jsonText{Tags: []string{"x", bad}}, false},
		{"a map value", jsonText{Meta: map[string]string{"k": bad}}, false},
		{"a map key", jsonText{Meta: map[string]string{bad: "v"}}, false},
		{"a nested field", jsonText{Inner: &struct{ Note string }{bad}}, false},
		{"behind an interface", jsonText{Any: []any{1, bad}}, false},
		{"a real U+FFFD", jsonText{Tags: []string{"\ufffd"}, Meta: map[string]string{"\ufffd": "\ufffd"}}, true},
		{"the text of the escape", jsonText{Tags: []string{`\ufffd`}, Any: `\ufffd`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := codec.EncodeRow(&tc.v, "p", "r", nil)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ve *codec.ValueError
			if !errors.Is(err, abstractions.ErrInvalidArgument) || !errors.As(err, &ve) {
				t.Fatalf("EncodeRow = %v, want a ValueError matching ErrInvalidArgument", err)
			}
		})
	}
}
