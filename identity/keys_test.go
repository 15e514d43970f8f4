package identity

import (
	"errors"
	"testing"

	"github.com/unified-data/gotables/abstractions"
)

// TestHashKeyIsPinned pins the key hash: MD5 over the UTF-8 bytes of the text, 32 lower-case
// hex digits. The expected values were computed with md5sum over the same bytes; a change
// here changes every hashed key a .NET host reads.
func TestHashKeyIsPinned(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"ALICE@EXAMPLE.COM", "bb4a3a241d023b031e53d235fc679a1b"},
		{"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", "5be5bd283feebd309672ac7e090a8cb6"},
		{"Grüße/#?", "b454062d06c5b7375e4360ef8a2e82ab"}, // UTF-8: 47 72 c3 bc c3 9f 65 2f 23 3f
		{"1234567890", "e807f1fcf82d132f9bb018ca6738a19f"},
	}
	for _, tc := range cases {
		if got := HashKey(tc.in); got != tc.want {
			t.Errorf("HashKey(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestRowIDs pins every kind of row id.
func TestRowIDs(t *testing.T) {
	const u, r = "6f9619ff-8b86-d011-b42d-00cf4fc964ff", "0d4bfa1b-38b8-4bd7-9b49-0f3a9b4dd1c2"
	c := Claim{Type: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", Value: "1234567890"}
	cases := []struct{ name, got, want string }{
		{"user", userRowID(u), u},
		{"user name index", userNameIndexID("ALICE@EXAMPLE.COM"), "bb4a3a241d023b031e53d235fc679a1b|username"},
		{"email index", emailIndexID("ALICE@EXAMPLE.COM"), "bb4a3a241d023b031e53d235fc679a1b|email"},
		{"role", roleRowID(r), r},
		{"role name index", roleNameIndexID(""), "d41d8cd98f00b204e9800998ecf8427e|rolename"},
		{"membership by user", userRoleByUserID(u, r), u + "|" + r},
		{"membership by role", userRoleByRoleID(r, u), r + "|user|" + u},
		{"claim by user", userClaimByUserID(u, c), u + "|5be5bd283feebd309672ac7e090a8cb6-e807f1fcf82d132f9bb018ca6738a19f"},
		{"claim by claim", userClaimByClaimID(c, u), "5be5bd283feebd309672ac7e090a8cb6-e807f1fcf82d132f9bb018ca6738a19f|user|" + u},
		{"role claim", roleClaimID(r, c), r + "|5be5bd283feebd309672ac7e090a8cb6-e807f1fcf82d132f9bb018ca6738a19f"},
		{"login owner", loginOwnerID("google", "1234567890"), "google|e807f1fcf82d132f9bb018ca6738a19f"},
		{"login by user", loginByUserID(u, "google", "1234567890"), u + "|google|e807f1fcf82d132f9bb018ca6738a19f"},
		{"token", tokenID(u, "[aspnetuserstore]", "recoverycodes"), u + "|[aspnetuserstore]|recoverycodes"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
		if tc.got != abstractions.NormalizeID(tc.got) {
			t.Errorf("%s: %q changes under normalisation; keys must be the same in both id modes", tc.name, tc.got)
		}
	}
}

func TestKeyPart(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"6F9619FF-8B86-D011-B42D-00CF4FC964FF", "6f9619ff-8b86-d011-b42d-00cf4fc964ff", true},
		{"[AspNetUserStore]", "[aspnetuserstore]", true},
		{" Microsoft Account ", "microsoft-account", true},
		{"", "", false},
		{"   ", "", false},
		{"a|b", "", false},
		{"https://login.example", "", false},
		{"a#b", "", false},
		{"a?b", "", false},
		{`a\b`, "", false},
		{"a\tb", "", false},
		{"a\u0085b", "", false},
		{"\xff", "", false},
	}
	for _, tc := range cases {
		got, err := keyPart("user id", tc.in)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("keyPart(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if !tc.ok && !errors.Is(err, abstractions.ErrInvalidKey) {
			t.Errorf("keyPart(%q) = %q, %v; want ErrInvalidKey", tc.in, got, err)
		}
	}
}

func TestSentinelsMatchTheLibrarys(t *testing.T) {
	cases := []struct{ err, kind error }{
		{ErrDuplicateUserName, abstractions.ErrDuplicateKey},
		{ErrDuplicateEmail, abstractions.ErrDuplicateKey},
		{ErrDuplicateRoleName, abstractions.ErrDuplicateKey},
		{ErrLoginTaken, abstractions.ErrDuplicateKey},
		{ErrConcurrencyFailure, abstractions.ErrConcurrencyConflict},
		{ErrRoleNotFound, abstractions.ErrNotFound},
		{ErrUserCacheEnabled, abstractions.ErrInvalidArgument},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.kind) {
			t.Errorf("%v does not match %v", tc.err, tc.kind)
		}
		if errors.Is(tc.err, abstractions.ErrIntegrity) {
			t.Errorf("%v matches an unrelated sentinel", tc.err)
		}
	}
}
