package abstractions

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitID(t *testing.T) {
	for _, tc := range []struct{ id, pk, rk string }{
		{"eu|alice", "eu", "alice"},
		{"vision|exec|agent", "vision", "exec|agent"},
		{"single", "single", "single"},
		{"|rk", "", "rk"},
		{"pk|", "pk", ""},
		{"", "", ""},
	} {
		pk, rk := SplitID(tc.id)
		if pk != tc.pk || rk != tc.rk {
			t.Errorf("SplitID(%q) = (%q, %q), want (%q, %q)", tc.id, pk, rk, tc.pk, tc.rk)
		}
		if id, err := CombineID(pk, rk); tc.id != "single" && tc.id != "" && (err != nil || id != tc.id) {
			t.Errorf("CombineID(SplitID(%q)) = %q, %v", tc.id, id, err)
		}
	}
}

func TestNormalizeID(t *testing.T) {
	for in, want := range map[string]string{
		"  EU|Alice Smith ": "eu|alice-smith",
		"a  b":              "a--b",
		"ÄÖ|X":              "äö|x",
		"already|fine":      "already|fine",
	} {
		if got := NormalizeID(in); got != want {
			t.Errorf("NormalizeID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGUID(t *testing.T) {
	const s = "00112233-4455-6677-8899-aabbccddeeff"
	g, err := ParseGUID("00112233-4455-6677-8899-AABBCCDDEEFF")
	if err != nil {
		t.Fatal(err)
	}
	if g.String() != s || g[0] != 0x00 || g[15] != 0xff || g[4] != 0x44 {
		t.Fatalf("ParseGUID gave %v (% x)", g, g[:])
	}
	for _, bad := range []string{"", "00112233445566778899aabbccddeeff", "0011223-34455-6677-8899-aabbccddeeff", "zz112233-4455-6677-8899-aabbccddeeff"} {
		if _, err := ParseGUID(bad); err == nil {
			t.Errorf("ParseGUID(%q) succeeded", bad)
		}
	}
	var back GUID
	if err := back.UnmarshalText([]byte(s)); err != nil || back != g {
		t.Fatalf("UnmarshalText: %v %v", back, err)
	}
}

func TestStatusError(t *testing.T) {
	err := error(&StatusError{StatusCode: 409, ErrorCode: "EntityAlreadyExists", Message: "the entity p|r exists"})
	if !HasStatus(err, 409, "EntityAlreadyExists") || !HasStatus(err, 409, "") || HasStatus(err, 404, "") {
		t.Fatal("HasStatus does not match")
	}
	if got := err.Error(); got != "storage service answered 409 EntityAlreadyExists: the entity p|r exists" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestCombineIDRefusesSeparatorInPartition(t *testing.T) {
	for _, pk := range []string{"a|b", "|", "tenant|"} {
		if id, err := CombineID(pk, "1"); !errors.Is(err, ErrInvalidKey) || id != "" {
			t.Errorf("CombineID(%q, \"1\") = %q, %v; want ErrInvalidKey", pk, id, err)
		}
	}
	if id, err := CombineID("a", "b|c"); err != nil || id != "a|b|c" {
		t.Errorf("a row key may hold the separator: %q, %v", id, err)
	}
}

// normalizeCases are partitions (none holding "|") whose normalisation is easy to get wrong.
var normalizeCases = []string{
	"acme", "acme ", " acme", "  Acme Corp ", "acme\u00a0", "\u00a0acme", "ac\u00a0me",
	"\tacme", "acme\t", "\u3000acme\u3000", "\u2007x\u2007", "\u205f", "\u0085a\u0085",
	" ", "   ", "\u00a0", "", "-", "a-b", "a b", "A  B",
	"\u212aelvin", "kelvin", "KELVIN", "\u2126", "\u03a9", "\u03c9", "İstanbul", "ǅ",
	"\U0001F600 x ", "x\u200b", "\u200bx", "\ufeffx", "ᏸ", "ſ",
}

// normalizeRowKeys are row keys the equivalence must hold for: empty, white space at either
// end, "|", case.
var normalizeRowKeys = []string{"", "r1", "R 1", " r", "r ", "\u00a0", " ", "a|b", "|", "\u3000X\u3000"}

// idPartition is the definition NormalizePartition must meet: the partition a store gives
// an id that starts with p, by normalising the whole id and splitting it.
func idPartition(p, rk string) string {
	pk, _ := SplitID(NormalizeID(p + IDSeparator + rk))
	return pk
}

func TestNormalizePartitionIsThePartitionOfAnID(t *testing.T) {
	want := map[string]string{
		"acme ":        "acme-",
		"  Acme Corp ": "acme-corp-",
		"acme\u00a0":   "acme\u00a0",
		"\u00a0acme":   "acme",
		"\tacme":       "acme",
		" ":            "",
		"\u3000":       "",
		"\u212aelvin":  "kelvin",
		"\u2126":       "\u03c9",
	}
	for p, w := range want {
		if got := NormalizePartition(p); got != w {
			t.Errorf("NormalizePartition(%q) = %q, want %q", p, got, w)
		}
	}
	for _, p := range normalizeCases {
		for _, rk := range normalizeRowKeys {
			if got, w := NormalizePartition(p), idPartition(p, rk); got != w {
				t.Errorf("NormalizePartition(%q) = %q, but the id %q is stored in partition %q", p, got, p+"|"+rk, w)
			}
		}
	}
	// Random partitions over an alphabet of every kind of white space, case pairs and
	// look-alikes (no "|": such a partition is not the start of any id).
	alphabet := []rune{' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xa0, 0x1680, 0x2000, 0x2007, 0x200a, 0x2028,
		0x2029, 0x202f, 0x205f, 0x3000, 0x200b, 0xfeff, '-', '_', 'a', 'A', 'k', 'K', 0x212a, 0x2126, 0x3a9, 0x3c9,
		0x130, 0x131, 0x1c5, 0x17f, 0xdf, 0x1e9e, 'z', '0', 0x1f600}
	r := rand.New(rand.NewPCG(7, 11))
	for range 5000 {
		b := make([]rune, r.IntN(8))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		p := string(b)
		rk := normalizeRowKeys[r.IntN(len(normalizeRowKeys))]
		if got, w := NormalizePartition(p), idPartition(p, rk); got != w {
			t.Fatalf("NormalizePartition(%q) = %q, but the id %q is stored in partition %q", p, got, p+"|"+rk, w)
		}
	}
	// A "|" is kept, for the stores to refuse: it is not the partition of any id.
	if got := NormalizePartition(" A|B"); got != "a|b" {
		t.Errorf("NormalizePartition(\" A|B\") = %q, want \"a|b\"", got)
	}
}

// FuzzNormalizePartition checks the equivalence on arbitrary valid UTF-8 partitions without
// "|", with a few row keys each.
func FuzzNormalizePartition(f *testing.F) {
	for _, p := range normalizeCases {
		f.Add(p, "r1")
	}
	f.Add("\u2029a\u2028", "\u00a0")
	f.Fuzz(func(t *testing.T, p, rk string) {
		if !utf8.ValidString(p) || !utf8.ValidString(rk) || strings.Contains(p, IDSeparator) {
			t.Skip()
		}
		got := NormalizePartition(p)
		for _, k := range append([]string{rk}, normalizeRowKeys...) {
			if w := idPartition(p, k); got != w {
				t.Fatalf("NormalizePartition(%q) = %q, but the id %q is stored in partition %q", p, got, p+"|"+k, w)
			}
		}
	})
}
