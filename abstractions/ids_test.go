package abstractions

import (
	"errors"
	"testing"
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
