package odata

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var testTime = time.Date(2024, 1, 2, 3, 4, 5, 123456700, time.UTC)

// testRow holds one property of every type, plus awkward values.
func testRow() *service.Row {
	g, err := service.ParseGuid("00112233-4455-6677-8899-aabbccddeeff")
	if err != nil {
		panic(err)
	}
	return &service.Row{
		PartitionKey: "p1",
		RowKey:       "r1",
		Timestamp:    testTime,
		Properties: []service.Property{
			{Name: "S", Value: service.String("abc")},
			{Name: "E", Value: service.String("")},
			{Name: "U", Value: service.String("\uff61")},
			{Name: "Q", Value: service.String("it's")},
			{Name: "SD", Value: service.String("2024-01-02T03:04:05.1234567Z")},
			{Name: "SG", Value: service.String("00112233-4455-6677-8899-aabbccddeeff")},
			{Name: "S5", Value: service.String("5")},
			{Name: "I", Value: service.Int32(5)},
			{Name: "L", Value: service.Int64(1<<53 + 1)},
			{Name: "N", Value: service.Int64(-7)},
			{Name: "D", Value: service.Double(2.5)},
			{Name: "P", Value: service.Double(1 << 53)},
			{Name: "NaN", Value: service.Double(math.NaN())},
			{Name: "B", Value: service.Bool(true)},
			{Name: "F", Value: service.Bool(false)},
			{Name: "T", Value: service.DateTime(testTime)},
			{Name: "G", Value: g},
			{Name: "X", Value: service.Binary([]byte{0x0a, 0x0b})},
			{Name: "Z", Value: service.Binary(nil)},
		},
	}
}

// tree prints the parsed tree fully parenthesised, to show how the parser grouped it.
func tree(n node) string {
	var b strings.Builder
	var walk func(n node)
	walk = func(n node) {
		switch n := n.(type) {
		case *orNode:
			b.WriteByte('(')
			walk(n.l)
			b.WriteString(" or ")
			walk(n.r)
			b.WriteByte(')')
		case *andNode:
			b.WriteByte('(')
			walk(n.l)
			b.WriteString(" and ")
			walk(n.r)
			b.WriteByte(')')
		case *notNode:
			b.WriteString("not ")
			walk(n.x)
		case *boolNode:
			b.WriteString(n.prop.name)
		case *cmpNode:
			b.WriteByte('[')
			n.format(&b, precCmp)
			b.WriteByte(']')
		}
	}
	walk(n)
	return b.String()
}

func TestParseTree(t *testing.T) {
	tests := []struct {
		name, filter, want string
	}{
		{"and binds tighter than or", "A eq 1 or B eq 2 and C eq 3", "([A eq 1] or ([B eq 2] and [C eq 3]))"},
		{"and before or", "A eq 1 and B eq 2 or C eq 3", "(([A eq 1] and [B eq 2]) or [C eq 3])"},
		{"and is left-associative", "A eq 1 and B eq 2 and C eq 3", "(([A eq 1] and [B eq 2]) and [C eq 3])"},
		{"or is left-associative", "A eq 1 or B eq 2 or C eq 3", "(([A eq 1] or [B eq 2]) or [C eq 3])"},
		{"parentheses group", "(A eq 1 or B eq 2) and C eq 3", "(([A eq 1] or [B eq 2]) and [C eq 3])"},
		{"right grouping kept", "A eq 1 and (B eq 2 and C eq 3)", "([A eq 1] and ([B eq 2] and [C eq 3]))"},
		{"not binds tightest", "not A and B", "(not A and B)"},
		{"not of a group", "not (A or B)", "not (A or B)"},
		{"not of a comparison", "not (A eq 1)", "not [A eq 1]"},
		{"double not", "not not A", "not not A"},
		{"bare bool and comparison", "B and X eq 1", "(B and [X eq 1])"},
		{"redundant parentheses", "((A eq 1))", "[A eq 1]"},
		{"constant on the left flips lt", "'a' lt S", "[S gt 'a']"},
		{"constant on the left flips ge", "5 ge I", "[I le 5]"},
		{"constant on the left keeps eq", "5 eq I", "[I eq 5]"},
		{"constant on the left keeps ne", "5 ne I", "[I ne 5]"},
		{"no spaces around parentheses", "(A eq 1)and(B eq 2)", "([A eq 1] and [B eq 2])"},
		{"tabs and outer blanks", " \tA\teq\t1 ", "[A eq 1]"},
		{"system properties", "PartitionKey eq 'p' and RowKey lt 'r' and Timestamp gt datetime'2020-01-01T00:00:00Z'",
			"(([PartitionKey eq 'p'] and [RowKey lt 'r']) and [Timestamp gt datetime'2020-01-01T00:00:00.0000000Z'])"},
		{"keyword case makes a name", "True eq 1", "[True eq 1]"},
		{"underscore name", "_a1 eq 1", "[_a1 eq 1]"},
		{"keyword prefix is a name", "andy eq 1 or order", "([andy eq 1] or order)"},
		{"Unicode letters", "Größe eq 1 and \u540d\u524d lt 'x'", "([Größe eq 1] and [\u540d\u524d lt 'x'])"},
		{"combining mark, connector and digit", "e\u0301\u203f\u0663 eq 1", "[e\u0301\u203f\u0663 eq 1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.filter)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.filter, err)
			}
			if got := tree(f.root); got != tc.want {
				t.Errorf("Parse(%q) = %s, want %s", tc.filter, got, tc.want)
			}
		})
	}
}

func TestParseLiterals(t *testing.T) {
	tests := []struct {
		filter string
		kind   service.Kind
		want   string // the literal as String prints it
	}{
		{"S eq 'abc'", service.KindString, "'abc'"},
		{"S eq ''", service.KindString, "''"},
		{"S eq 'it''s'", service.KindString, "'it''s'"},
		{"S eq ''''", service.KindString, "''''"},
		{"S eq 'a ( eq ) or'", service.KindString, "'a ( eq ) or'"},
		{"S eq 'h\u00e9llo \U0001F600'", service.KindString, "'h\u00e9llo \U0001F600'"},
		{"I eq 0", service.KindInt32, "0"},
		{"I eq 007", service.KindInt32, "7"},
		{"I eq -5", service.KindInt32, "-5"},
		{"I eq 2147483647", service.KindInt32, "2147483647"},
		{"I eq -2147483648", service.KindInt32, "-2147483648"},
		{"L eq 5L", service.KindInt64, "5L"},
		{"L eq 2147483648L", service.KindInt64, "2147483648L"},
		{"L eq 9223372036854775807L", service.KindInt64, "9223372036854775807L"},
		{"L eq -9223372036854775808L", service.KindInt64, "-9223372036854775808L"},
		{"D eq 1.5", service.KindDouble, "1.5"},
		{"D eq -2.0", service.KindDouble, "-2.0"},
		{"D eq 0.0", service.KindDouble, "0.0"},
		{"D eq 1e10", service.KindDouble, "1e+10"},
		{"D eq 1E10", service.KindDouble, "1e+10"},
		{"D eq 1.5E-3", service.KindDouble, "0.0015"},
		{"D eq 2e+2", service.KindDouble, "200.0"},
		{"D eq -1.5e-300", service.KindDouble, "-1.5e-300"},
		{"B eq true", service.KindBool, "true"},
		{"B eq false", service.KindBool, "false"},
		{"T eq datetime'2024-01-02T03:04:05.1234567Z'", service.KindDateTime, "datetime'2024-01-02T03:04:05.1234567Z'"},
		{"T eq datetime'2024-01-02T03:04:05Z'", service.KindDateTime, "datetime'2024-01-02T03:04:05.0000000Z'"},
		{"T eq datetime'2024-01-02T03:04:05.5Z'", service.KindDateTime, "datetime'2024-01-02T03:04:05.5000000Z'"},
		{"T eq datetime'2024-01-02T05:04:05.1234567+02:00'", service.KindDateTime, "datetime'2024-01-02T03:04:05.1234567Z'"},
		{"T eq datetime'2024-01-01T22:34:05-04:30'", service.KindDateTime, "datetime'2024-01-02T03:04:05.0000000Z'"},
		{"T eq datetime'2024-02-29T00:00:00Z'", service.KindDateTime, "datetime'2024-02-29T00:00:00.0000000Z'"},
		{"T eq datetime'0001-01-01T00:00:00Z'", service.KindDateTime, "datetime'0001-01-01T00:00:00.0000000Z'"},
		{"T eq datetime'9999-12-31T23:59:59.9999999Z'", service.KindDateTime, "datetime'9999-12-31T23:59:59.9999999Z'"},
		{"G eq guid'00112233-4455-6677-8899-aabbccddeeff'", service.KindGuid, "guid'00112233-4455-6677-8899-aabbccddeeff'"},
		{"G eq guid'00112233-4455-6677-8899-AABBCCDDEEFF'", service.KindGuid, "guid'00112233-4455-6677-8899-aabbccddeeff'"},
		{"X eq X'0a0B'", service.KindBinary, "X'0a0b'"},
		{"X eq binary'0a0b'", service.KindBinary, "X'0a0b'"},
		{"X eq X''", service.KindBinary, "X''"},
	}
	for _, tc := range tests {
		t.Run(tc.filter, func(t *testing.T) {
			f, err := Parse(tc.filter)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			c, ok := f.root.(*cmpNode)
			if !ok {
				t.Fatalf("root is %T, want a comparison", f.root)
			}
			if c.lit.kind != tc.kind {
				t.Errorf("literal kind = %v, want %v", c.lit.kind, tc.kind)
			}
			var b strings.Builder
			c.lit.format(&b)
			if got := b.String(); got != tc.want {
				t.Errorf("literal = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	comparisons := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "A eq 1"
		}
		return strings.Join(parts, " and ")
	}
	tests := []struct {
		name, filter string
		offset       int    // -1: not checked
		msg          string // a fragment of the message
	}{
		{"empty", "", 0, "empty"},
		{"blank", "  \t ", 0, "empty"},
		{"upper-case operator", "A EQ 1", 2, "unexpected"},
		{"mixed-case operator", "A Eq 1", 2, "unexpected"},
		{"upper-case and", "A eq 1 AND B eq 2", 7, "unexpected"},
		{"capitalised And", "A eq 1 And B eq 2", 7, "unexpected"},
		{"upper-case NOT", "NOT A", 4, "unexpected"},
		{"capitalised True is a property", "A eq True", 2, "property"},
		{"null literal", "A eq null", 5, "null"},
		{"null on the left", "null ne A", 0, "null"},
		{"dangling or", "A eq 1 or", 9, "end of filter"},
		{"dangling and", "A eq 1 and ", 11, "end of filter"},
		{"leading or", "or A eq 1", 0, "unexpected"},
		{"missing right operand", "A eq", 4, "end of filter"},
		{"missing left operand", "eq 1", 0, "unexpected"},
		{"two comparisons without and", "A eq 1 B eq 2", 7, "unexpected"},
		{"chained comparison", "A eq 1 eq 2", 7, "unexpected"},
		{"empty parentheses", "()", 1, "unexpected"},
		{"unclosed parenthesis", "(A eq 1", 7, "')'"},
		{"extra closing parenthesis", "A eq 1)", 6, "unexpected"},
		{"function", "startswith(S, 'a')", 0, "function"},
		{"function after and", "S eq 'a' and substringof('a', S)", 13, "function"},
		{"function with a space", "S eq 'a' or length (S) eq 1", -1, ""},
		{"unterminated string", "S eq 'abc", 5, "closing quote"},
		{"unterminated string after escape", "S eq 'it''s", 5, "closing quote"},
		{"lone quote", "S eq '", 5, "closing quote"},
		{"16 comparisons", comparisons(16), len(comparisons(15)) + len(" and A "), "more than 15"},
		{"literal vs literal", "5 eq 5", 2, "two literals"},
		{"string vs string", "'a' eq 'a'", 4, "two literals"},
		{"property vs property", "A eq B", 2, "property"},
		{"keys vs each other", "PartitionKey eq RowKey", 13, "property"},
		{"not before a comparison", "not A eq 1", 6, "property on one side"},
		{"parenthesised property operand", "(A) eq 1", 4, "property on one side"},
		{"parenthesised literal operand", "A eq (1)", 6, "literal is not a condition"},
		{"bare literal", "5", 0, "literal is not a condition"},
		{"bare true", "true", 0, "literal is not a condition"},
		{"not of a literal", "not 'a'", 4, "literal is not a condition"},
		{"literal in or", "A eq 1 or 5", 10, "literal is not a condition"},
		{"short guid", "G eq guid'0011'", 5, "guid"},
		{"non-hex guid", "G eq guid'00112233-4455-6677-8899-aabbccddeefg'", 5, "guid"},
		{"braced guid", "G eq guid'{00112233-4455-6677-8899-aabbccddeeff}'", 5, "guid"},
		{"guid without dashes", "G eq guid'00112233445566778899aabbccddeeff'", 5, "guid"},
		{"unterminated guid", "G eq guid'00112233-4455-6677-8899-aabbccddeeff", 5, "closing quote"},
		{"capitalised Guid prefix", "G eq Guid'00112233-4455-6677-8899-aabbccddeeff'", 5, "prefix"},
		{"date only", "T eq datetime'2024-01-02'", 5, "datetime"},
		{"no zone", "T eq datetime'2024-01-02T03:04:05'", 5, "datetime"},
		{"no seconds", "T eq datetime'2024-01-02T03:04Z'", 5, "datetime"},
		{"eight fractional digits", "T eq datetime'2024-01-02T03:04:05.12345678Z'", 5, "datetime"},
		{"empty fraction", "T eq datetime'2024-01-02T03:04:05.Z'", 5, "datetime"},
		{"February 30", "T eq datetime'2024-02-30T00:00:00Z'", 5, "datetime"},
		{"February 29 of a common year", "T eq datetime'2023-02-29T00:00:00Z'", 5, "datetime"},
		{"month 13", "T eq datetime'2024-13-01T00:00:00Z'", 5, "datetime"},
		{"hour 24", "T eq datetime'2024-01-01T24:00:00Z'", 5, "datetime"},
		{"leap second", "T eq datetime'2016-12-31T23:59:60Z'", 5, "datetime"},
		{"lower-case t", "T eq datetime'2024-01-02t03:04:05Z'", 5, "datetime"},
		{"lower-case z", "T eq datetime'2024-01-02T03:04:05z'", 5, "datetime"},
		{"offset too large", "T eq datetime'2024-01-02T03:04:05+15:00'", 5, "datetime"},
		{"offset without colon", "T eq datetime'2024-01-02T03:04:05+0100'", 5, "datetime"},
		{"year 0", "T eq datetime'0000-06-01T00:00:00Z'", 5, "datetime"},
		{"after year 9999 in UTC", "T eq datetime'9999-12-31T23:00:00-05:00'", 5, "datetime"},
		{"before year 1 in UTC", "T eq datetime'0001-01-01T00:00:00+01:00'", 5, "datetime"},
		{"trailing text in datetime", "T eq datetime'2024-01-02T03:04:05Z '", 5, "datetime"},
		{"capitalised DateTime prefix", "T eq DateTime'2024-01-02T03:04:05Z'", 5, "prefix"},
		{"odd hex", "X eq X'0a0'", 5, "odd"},
		{"non-hex", "X eq X'zz'", 5, "hex"},
		{"non-hex binary", "X eq binary'0g'", 5, "hex"},
		{"lower-case x prefix", "X eq x'0a'", 5, "prefix"},
		{"capitalised Binary prefix", "X eq Binary'0a'", 5, "prefix"},
		{"operator glued to a string", "S eq'a'", 2, "prefix"},
		{"int32 overflow", "I eq 2147483648", 5, "L suffix"},
		{"int32 underflow", "I eq -2147483649", 5, "L suffix"},
		{"int64 overflow", "L eq 9223372036854775808L", 5, "Int64"},
		{"lower-case l suffix", "L eq 5l", 5, "malformed"},
		{"double L", "L eq 5LL", 5, "malformed"},
		{"number glued to a name", "I eq 5x", 5, "malformed"},
		{"number glued to and", "I eq 5and B", 5, "malformed"},
		{"trailing point", "D eq 1.", 5, "decimal point"},
		{"leading point", "D eq .5", 5, "unexpected character"},
		{"two points", "D eq 1.2.3", 5, "malformed"},
		{"bare exponent", "D eq 1e", 5, "exponent"},
		{"signed bare exponent", "D eq 1e+", 5, "exponent"},
		{"double with L", "D eq 1.5L", 5, "malformed"},
		{"d suffix", "D eq 1.5d", 5, "malformed"},
		{"D suffix", "D eq 1.5D", 5, "malformed"},
		{"M suffix", "D eq 1.5M", 5, "malformed"},
		{"double overflow", "D eq 1e400", 5, "out of range"},
		{"minus then space", "I eq - 5", 5, "'-'"},
		{"lone minus", "I eq -", 5, "'-'"},
		{"plus sign", "I eq +5", 5, "unexpected character"},
		{"negated property", "-I eq 5", 0, "'-'"},
		{"comma", "A eq 1, B eq 2", 6, "unexpected character"},
		{"equals sign", "A = 1", 2, "unexpected character"},
		{"double ampersand", "A eq 1 && B eq 2", 7, "unexpected character"},
		{"slash path", "A/B eq 1", 1, "unexpected character"},
		{"member access", "A.B eq 1", 1, "unexpected character"},
		{"arithmetic", "A add 1 eq 2", 2, "unexpected"},
		{"newline", "A eq 1\nor B", 6, "unexpected character"},
		{"name starting with a combining mark", "\u0301e eq 1", 0, "unexpected character"},
		{"symbol in a name", "a\U0001F600 eq 1", 1, "unexpected character"},
		{"invalid UTF-8 in a name", "a\xff eq 1", 1, "UTF-8"},
		{"number followed by a Unicode letter", "A eq 1\u00e9", 5, "malformed number"},
		{"invalid UTF-8", "S eq 'a\xffb'", 7, "UTF-8"},
		{"unterminated datetime", "T eq datetime'2024", 5, "closing quote"},
		{"too deep", strings.Repeat("(", maxDepth+1) + "A" + strings.Repeat(")", maxDepth+1), maxDepth, "nested"},
		{"too many nots", strings.Repeat("not ", maxDepth+1) + "A", 4 * maxDepth, "nested"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.filter)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", tc.filter, f)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T %v, want *SyntaxError", tc.filter, err, err)
			}
			if tc.offset >= 0 && se.Offset != tc.offset {
				t.Errorf("Parse(%q) offset = %d, want %d (%v)", tc.filter, se.Offset, tc.offset, err)
			}
			if !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Parse(%q) message %q does not mention %q", tc.filter, se.Msg, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "odata: invalid $filter at offset ") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

func TestDepthLimitAccepted(t *testing.T) {
	for _, filter := range []string{
		strings.Repeat("(", maxDepth) + "A" + strings.Repeat(")", maxDepth),
		strings.Repeat("not ", maxDepth) + "A",
	} {
		if _, err := Parse(filter); err != nil {
			t.Errorf("Parse(%.20q…): %v", filter, err)
		}
	}
}

func TestComparisons(t *testing.T) {
	tests := []struct {
		filter string
		want   int
	}{
		{"B", 0},
		{"not B and F", 0},
		{"A eq 1", 1},
		{"A eq 1 and not (B lt 2 or C)", 2},
		{strings.Repeat("A eq 1 or ", MaxComparisons-1) + "A eq 1", MaxComparisons},
	}
	for _, tc := range tests {
		f, err := Parse(tc.filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.filter, err)
		}
		if got := f.Comparisons(); got != tc.want {
			t.Errorf("Parse(%q).Comparisons() = %d, want %d", tc.filter, got, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	const (
		ts   = "datetime'2024-01-02T03:04:05.1234567Z'"
		guid = "guid'00112233-4455-6677-8899-aabbccddeeff'"
	)
	tests := []struct {
		group string
		cases map[string]bool
	}{
		{"string", map[string]bool{
			"S eq 'abc'":   true,
			"S ne 'abc'":   false,
			"S ne 'abd'":   true,
			"S gt 'ab'":    true,
			"S gt 'abc'":   false,
			"S ge 'abc'":   true,
			"S lt 'abd'":   true,
			"S lt 'abc'":   false,
			"S le 'abb'":   false,
			"S le 'abc'":   true,
			"S eq 'ABC'":   false, // case-sensitive
			"S gt 'ABC'":   true,  // ordinal: lower case after upper case
			"S lt 'abc '":  true,  // a prefix sorts first
			"'abc' eq S":   true,
			"'abd' gt S":   true,
			"'abd' lt S":   false,
			"'ab' le S":    true,
			"E eq ''":      true,
			"E lt 'a'":     true,
			"Q eq 'it''s'": true,
		}},
		{"UTF-16 order", map[string]bool{
			// U+1F600 is the surrogate pair D83D DE00, so it sorts before U+FF61 (one unit,
			// FF61) in UTF-16, although Go's byte order puts U+FF61 first.
			"U gt '\U0001F600'": true,
			"U lt '\U0001F600'": false,
			"'\U0001F600' lt U": true,
			"U gt '\u00e9'":     true,
			"U lt '\uffff'":     true,
		}},
		{"absent property", map[string]bool{
			"M eq 'x'":         false,
			"M ne 'x'":         false,
			"M gt 'x'":         false,
			"M ge 1":           false,
			"M lt 1":           false,
			"M le 1L":          false,
			"'x' ne M":         false,
			"not (M eq 'x')":   true,
			"not (M ne 'x')":   true,
			"M":                false,
			"not M":            true,
			"M eq 1 or S eq 1": false,
		}},
		{"Int32", map[string]bool{
			"I eq 5":  true,
			"I ne 5":  false,
			"I gt 4":  true,
			"I ge 5":  true,
			"I lt 5":  false,
			"I le 5":  true,
			"I eq -5": false,
			"I gt -6": true,
		}},
		{"Int64", map[string]bool{
			"L eq 9007199254740993L": true,
			"L gt 9007199254740992L": true,
			"L gt 5":                 true, // an Int32 literal compares by value with an Int64
			"N lt 0":                 true,
			"N eq -7":                true,
			"N eq -7L":               true,
			"N ne -7":                false,
			"N ge -7":                true,
		}},
		{"Double", map[string]bool{
			"D eq 2.5":    true,
			"D ne 2.5":    false,
			"D eq 2.50":   true,
			"D ge 2.5e0":  true,
			"D lt 25E-1":  false,
			"D gt 2":      true,
			"D lt 3":      true,
			"D eq 2":      false,
			"D lt 3L":     true,
			"D gt 2L":     true,
			"2 lt D":      true,
			"D eq 25e-1":  true,
			"D gt -1.5e3": true,
			// Exact: 2^53 is not rounded up to 2^53+1, nor the literal down to 2^53.
			"P eq 9007199254740992L":     true,
			"P eq 9007199254740993L":     false,
			"P lt 9007199254740993L":     true,
			"P gt 9007199254740991L":     true,
			"P lt 9223372036854775807L":  true,
			"P gt -9223372036854775808L": true,
		}},
		{"NaN", map[string]bool{
			"NaN eq 1.0":       false,
			"NaN ne 1.0":       true,
			"NaN lt 1.0":       false,
			"NaN gt 1.0":       false,
			"NaN ge 1.0":       false,
			"NaN le 1.0":       false,
			"NaN eq 1":         false,
			"NaN ne 1":         true,
			"NaN gt 1L":        false,
			"NaN ne 1L":        true,
			"not (NaN eq 1.0)": true,
		}},
		{"Boolean", map[string]bool{
			"B":              true,
			"not B":          false,
			"F":              false,
			"not F":          true,
			"not not B":      true,
			"B eq true":      true,
			"B ne false":     true,
			"B gt false":     true,
			"B ge true":      true,
			"F lt true":      true,
			"F ge true":      false,
			"F eq false":     true,
			"true eq B":      true,
			"false lt B":     true,
			"B and not F":    true,
			"F or B":         true,
			"((B))":          true,
			"S":              false, // a bare non-Boolean is false
			"not S":          true,
			"I":              false,
			"PartitionKey":   false,
			"not RowKey":     true,
			"B and I eq 5":   true,
			"F or S eq 'no'": false,
		}},
		{"DateTime", map[string]bool{
			"T eq " + ts: true,
			"T ne " + ts: false,
			"T ge " + ts: true,
			"T le " + ts: true,
			"T eq datetime'2024-01-02T03:04:05.123Z'":           false, // no millisecond truncation
			"T gt datetime'2024-01-02T03:04:05.1234Z'":          true,
			"T gt datetime'2024-01-02T03:04:05.123456Z'":        true,
			"T lt datetime'2024-01-02T03:04:05.1234568Z'":       true,
			"T gt datetime'2024-01-02T03:04:05.1234566Z'":       true,
			"T eq datetime'2024-01-02T05:04:05.1234567+02:00'":  true,
			"T eq datetime'2024-01-01T22:04:05.1234567-05:00'":  true,
			"T lt datetime'2024-01-02T03:04:05.1234567-00:01'":  true,
			"T gt datetime'1601-01-01T00:00:00Z'":               true,
			"Timestamp eq " + ts:                                true,
			"Timestamp gt datetime'2024-01-01T00:00:00Z'":       true,
			"Timestamp lt datetime'2024-01-01T00:00:00Z'":       false,
			"Timestamp eq '2024-01-02T03:04:05.1234567Z'":       false,
			"not (Timestamp eq '2024-01-02T03:04:05.1234567Z')": true,
		}},
		{"Guid", map[string]bool{
			"G eq " + guid: true,
			"G ne " + guid: false,
			"G eq guid'00112233-4455-6677-8899-AABBCCDDEEFF'": true,
			"G gt guid'00112233-4455-6677-8899-aabbccddeefe'": true,
			"G lt guid'10112233-4455-6677-8899-aabbccddeeff'": true,
			"G lt guid'00112233-4455-6677-8899-AABBCCDDEEF0'": false,
			"G ge guid'00112233-4455-6677-8899-AABBCCDDEEFF'": true,
		}},
		{"Binary", map[string]bool{
			"X eq X'0a0b'":      true,
			"X eq binary'0A0B'": true,
			"X ne X'0a0b'":      false,
			"X gt X'0a'":        true, // a longer value after its prefix
			"X lt X'0a0b00'":    true,
			"X lt X'0a0c'":      true,
			"X lt X'0b'":        true, // bytes first, then length
			"X gt X'0a0aff'":    true,
			"Z eq X''":          true,
			"Z lt X'00'":        true,
		}},
		{"system properties", map[string]bool{
			"PartitionKey eq 'p1'":                    true,
			"PartitionKey ne 'p1'":                    false,
			"RowKey gt 'r0'":                          true,
			"RowKey le 'r0'":                          false,
			"'r1' eq RowKey":                          true,
			"PartitionKey eq 'p1' and RowKey eq 'r1'": true,
			"PartitionKey eq 1":                       false,
			"RowKey ne 1":                             true, // a mismatch: the key is less than the literal
			"PartitionKey eq 'p1' and RowKey eq 'r2'": false,
			"PartitionKey eq 'P1' or RowKey ge 'r1'":  true,
			"not (PartitionKey eq guid'00112233-4455-6677-8899-aabbccddeeff')": true,
		}},
		{"type mismatch", map[string]bool{
			// Every pairing the service does not compare by value ranks the stored value
			// below the literal: eq, gt and ge are false, ne, lt and le true.
			"S eq 5":       false,
			"S ne 5":       true,
			"S lt 5":       true,
			"S le 5":       true,
			"S gt 5":       false,
			"S ge 5":       false,
			"5 gt S":       true, // S lt 5
			"not (S eq 5)": true,
			"not (S ne 5)": false,
			"E eq 0L":      false, // the empty string is no number (Azurite says it equals 0L)
			"E ne 0L":      true,
			"S5 eq 5":      false,
			"S5 eq 5L":     false,
			"S5 gt 4":      false,
			"I eq '5'":     false,
			"I ne '5'":     true,
			"I gt '4'":     false,
			"I eq true":    false,
			// Int32 takes only Int32 literals; Int64 takes Int32 and Int64; Double takes
			// every number.
			"I eq 5L":                             false,
			"I ne 5L":                             true,
			"I lt 6L":                             true,
			"I gt 4L":                             false,
			"I eq 5.0":                            false,
			"I gt 4.5":                            false,
			"I le 4.5":                            true,
			"N eq -7.0":                           false,
			"N lt -7.5":                           true,
			"N gt -7.5":                           false,
			"L ge 1.0":                            false,
			"B eq 1":                              false,
			"B ne 1":                              true,
			"B eq 'true'":                         false,
			"D eq true":                           false,
			"D lt ''":                             true, // Azure/Azurite#2342: a Double is less than ''
			"D gt ''":                             false,
			"D ne ''":                             true,
			"T lt ''":                             true, // and so is a DateTime
			"T gt ''":                             false,
			"SD eq " + ts:                         false, // a datetime literal never matches a string column
			"SD ne " + ts:                         true,
			"SD gt " + ts:                         false,
			"T eq '2024-01-02T03:04:05.1234567Z'": false,
			"T ne '2024-01-02T03:04:05.1234567Z'": true,
			"SG eq " + guid:                       false, // a guid literal never matches a string column
			"SG ne " + guid:                       true,
			"G eq '00112233-4455-6677-8899-aabbccddeeff'": false,
			"G ne '00112233-4455-6677-8899-aabbccddeeff'": true,
			"G ge '00112233-4455-6677-8899-aabbccddeeff'": false,
			"X eq 'Cgs='": false, // Azurite matches the base64 text; the service does not
			"X ne 'Cgs='": true,
			"G eq X'00'":  false,
			"T eq 5L":     false,
			"T le 5L":     true,
			"X eq 10":     false,
			"X lt 10":     true,
			"NaN eq ''":   false,
			"NaN lt ''":   true, // a mismatch, not an unordered number
		}},
		{"precedence", map[string]bool{
			// True only if and binds tighter than or: 5 or (6 and 7).
			"I eq 5 or I eq 6 and I eq 7":          true,
			"(I eq 5 or I eq 6) and I eq 7":        false,
			"I eq 7 and I eq 6 or I eq 5":          true,
			"not (I eq 6) and I eq 5":              true,
			"not (I eq 5 and S eq 'x')":            true,
			"not (I eq 5 or S eq 'x')":             false,
			"not F and not (M eq 1) and B":         true,
			"F or F or B":                          true,
			"B and B and F":                        false,
			"(B or F) and (F or I ge 5)":           true,
			"not (not (B) or F)":                   true,
			"((I eq 5) and ((S eq 'abc') or (F)))": true,
		}},
	}
	row := testRow()
	for _, g := range tests {
		t.Run(g.group, func(t *testing.T) {
			for filter, want := range g.cases {
				f, err := Parse(filter)
				if err != nil {
					t.Errorf("Parse(%q): %v", filter, err)
					continue
				}
				if got := f.Match(row); got != want {
					t.Errorf("%q: Match = %v, want %v", filter, got, want)
				}
			}
		})
	}
}

func TestMatchRowWithoutTimestamp(t *testing.T) {
	row := &service.Row{PartitionKey: "p", RowKey: "r"}
	for filter, want := range map[string]bool{
		"Timestamp gt datetime'0001-01-01T00:00:00Z'":       false,
		"Timestamp eq datetime'0001-01-01T00:00:00Z'":       false,
		"not (Timestamp ge datetime'0001-01-01T00:00:00Z')": true,
		"PartitionKey eq 'p'":                               true,
		"RowKey eq ''":                                      false,
		"A ne 1":                                            false,
	} {
		f, err := Parse(filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", filter, err)
		}
		if got := f.Match(row); got != want {
			t.Errorf("%q: Match = %v, want %v", filter, got, want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, filter := range []string{
		"A eq 1 or B eq 2 and C eq 3",
		"(A eq 1 or B eq 2) and C eq 3",
		"A eq 1 and (B eq 2 and C eq 3)",
		"A or (B or C)",
		"not (A eq 1) and not (B or C) and not not D",
		"'x' lt S and 5 ge I",
		"T eq datetime'2024-01-02T05:04:05.1234567+02:00' or G eq guid'00112233-4455-6677-8899-AABBCCDDEEFF'",
		"X eq binary'0A0b' or D eq 1e300 or D eq -0.0 or L eq -5L or S eq 'it''s'",
	} {
		f, err := Parse(filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", filter, err)
		}
		s := f.String()
		g, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(String()) of %q = Parse(%q): %v", filter, s, err)
		}
		if tree(g.root) != tree(f.root) {
			t.Errorf("%q printed as %q reads back as %s, want %s", filter, s, tree(g.root), tree(f.root))
		}
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	row := benchRow()
	for _, filter := range []string{
		benchFilter,
		"not (P03 eq 'x') or P19 eq datetime'2024-01-02T03:04:05Z' or P05",
		"Timestamp gt datetime'2020-01-01T00:00:00Z' and P11 ne X'00ff'",
	} {
		f, err := Parse(filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", filter, err)
		}
		if n := testing.AllocsPerRun(100, func() { f.Match(row) }); n != 0 {
			t.Errorf("%q: Match allocates %v times per row", filter, n)
		}
	}
}

const benchFilter = "PartitionKey eq 'pk' and P12 ge 10 and P18 lt 'zzz'"

// benchRow has 20 properties of mixed types; the filter's properties sit late in the slice.
func benchRow() *service.Row {
	row := &service.Row{PartitionKey: "pk", RowKey: "rk", Timestamp: testTime}
	for i := range 20 {
		name := "P" + string(rune('0'+i/10)) + string(rune('0'+i%10))
		var v service.Value
		switch i % 5 {
		case 0:
			v = service.Bool(i%2 == 0)
		case 1:
			v = service.Binary([]byte{byte(i), 0xff})
		case 2:
			v = service.Int64(int64(i))
		case 3:
			v = service.String("value of " + name)
		case 4:
			v = service.DateTime(testTime.Add(time.Duration(i) * time.Hour))
		}
		row.Properties = append(row.Properties, service.Property{Name: name, Value: v})
	}
	return row
}

func BenchmarkMatch(b *testing.B) {
	f, err := Parse(benchFilter)
	if err != nil {
		b.Fatal(err)
	}
	row := benchRow()
	if !f.Match(row) {
		b.Fatal("the benchmark row does not match")
	}
	b.ReportAllocs()
	for b.Loop() {
		f.Match(row)
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchFilter); err != nil {
			b.Fatal(err)
		}
	}
}

func TestIsName(t *testing.T) {
	for name, want := range map[string]bool{
		"A": true, "_": true, "a_1": true, "Größe": true, "\u540d": true, "e\u0301": true, "a\u203fb": true,
		"": false, "1a": false, "a-b": false, "a b": false, "a.b": false, "\u0301e": false, "\u0663": false,
		"a\U0001F600": false, "a\xff": false, "Größe-x": false,
		"Customer": true, "Z9_z": true, "_0": true, "a-\u00e9": false, "a\u00e9-": false, "x\x00": false, "a@": false, "@a": false,
	} {
		if got := IsName(name); got != want {
			t.Errorf("IsName(%q) = %v, want %v", name, got, want)
		}
	}
	// The ASCII table agrees with the rules rune by rune, on names mixing ASCII and other
	// characters (an invalid byte included) at every position.
	alphabet := []string{"a", "Z", "_", "0", "9", "-", " ", ".", "@", "\x00", "\x7f", "é", "\u0301", "\u0663", "\u203f", "\U0001F600", "\xff", "\u540d"}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20_000 {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		if s := b.String(); IsName(s) != isNameByRunes(s) {
			t.Fatalf("IsName(%q) = %v, rune by rune %v", s, IsName(s), isNameByRunes(s))
		}
	}
}
