package azservice

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeString feeds arbitrary JSON string literals to the lexer and to
// encoding/json: both must accept the same literals and read the same text.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\udc00x"`, `"\x"`, `"a\"b"`, "\"\xff\"", `"\/"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var want string
		stdErr := json.Unmarshal([]byte(in), &want)
		l := lexer[string]{s: in}
		var buf []byte
		l.ws()
		got, err := l.str(&buf)
		if err == nil {
			err = l.end() // trailing bytes: not one literal
		}
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("%q: lexer err %v, encoding/json err %v", in, err, stdErr)
		}
		if err == nil && got != want {
			t.Fatalf("%q: lexer %q, encoding/json %q", in, got, want)
		}
	})
}
