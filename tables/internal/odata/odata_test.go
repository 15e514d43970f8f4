package odata

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPrefixEnd(t *testing.T) {
	cases := []struct {
		prefix, want string
		ok           bool
	}{
		{"a", "b", true},
		{"msg_", "msg`", true},
		{"e\"", "e#", true},
		{"a\uffff", "b", true},
		{"\uffff\uffff", "", false},
		{"x\ud7ff", "x\U00010000", true},
		{"x😀", "x😁", true},
		{"x\U0001f3ff", "x\U0001f400", true}, // low surrogate 0xDFFF: the high one moves on
		{"x\U0010ffff", "x\ue000", true},
		{"x\ufffe", "x\uffff", true},
	}
	for _, c := range cases {
		got, ok := PrefixEnd(c.prefix)
		if got != c.want || ok != c.ok {
			t.Errorf("PrefixEnd(%+q) = %+q, %v; want %+q, %v", c.prefix, got, ok, c.want, c.ok)
		}
	}
}

// FuzzPrefixEnd checks the range property: a string lies in [prefix, end) exactly when it
// starts with prefix, in UTF-16 order.
func FuzzPrefixEnd(f *testing.F) {
	for _, s := range []string{"a", "a\uffff", "\ud7ff", "😀", "\U0010ffff", "\U0001f3ff"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, prefix, s string) {
		if prefix == "" || !utf8.ValidString(prefix) || !utf8.ValidString(s) {
			return
		}
		end, ok := PrefixEnd(prefix)
		in := service.CompareUTF16(s, prefix) >= 0 && (!ok || service.CompareUTF16(s, end) < 0)
		if in != strings.HasPrefix(s, prefix) {
			t.Fatalf("prefix %+q end %+q (%v): %+q in range %v", prefix, end, ok, s, in)
		}
	})
}
