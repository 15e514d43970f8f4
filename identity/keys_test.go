package identity

import (
	"context"
	"errors"
	"testing"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/memservice"
)

// TestHashKeyIsPinned pins the key hash: MD5 over the UTF-8 bytes of the text, 32 lower-case
// hex digits, and "" for "". The expected values were computed with md5sum over the same
// bytes; a change here changes every hashed key a .NET host reads.
func TestHashKeyIsPinned(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"ALICE@EXAMPLE.COM", "bb4a3a241d023b031e53d235fc679a1b"},
		{"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", "5be5bd283feebd309672ac7e090a8cb6"},
		{"Grüße/#?", "b454062d06c5b7375e4360ef8a2e82ab"}, // UTF-8: 47 72 c3 bc c3 9f 65 2f 23 3f
		{"1234567890", "e807f1fcf82d132f9bb018ca6738a19f"},
		{"12345", "827ccb0eea8a706c4c34a16891f84e7b"},
	}
	for _, tc := range cases {
		if got := HashKey(tc.in); got != tc.want {
			t.Errorf("HashKey(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestRowIDs pins every kind of row id against the ids the .NET package composes for the
// same input (its key tests publish these strings for a user "u1", a role "r1", the claim
// friendly-name/Bob, the role claim perm/read, the Google login 12345 and the Google token
// AuthenticatorKey), compared as the account stores them: normalised.
func TestRowIDs(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"user", userRowID("u1"), "User|u1"},
		{"role", roleRowID("r1"), "Role|r1"},
		{"membership", userRoleID("u1", "r1"), "u1|r1"},
		{"user claim", userClaimID("u1", Claim{"friendly-name", "Bob"}), "u1|9872af6969e880b1438106f4a6e7cf32"},
		{"role claim", roleClaimID("r1", Claim{"perm", "read"}), "r1|d95564ddfe8b558513601ba05961f3e4"},
		{"login", loginID("google", "12345"), "Google|827ccb0eea8a706c4c34a16891f84e7b"},
		{"token", tokenID("u1", "Google", "AuthenticatorKey"), "u1|a92660cffb43f1f88f52617e09118370"},
		// This module's own index rows (the .NET package has none).
		{"user name index", userNameIndexID("ALICE@EXAMPLE.COM"), "bb4a3a241d023b031e53d235fc679a1b|username"},
		{"email index", emailIndexID("ALICE@EXAMPLE.COM"), "bb4a3a241d023b031e53d235fc679a1b|email"},
		{"role name index", roleNameIndexID("ADMIN"), "73acd9a5972130b75066c82595a1fae3|rolename"},
	}
	for _, tc := range cases {
		if abstractions.NormalizeID(tc.got) != abstractions.NormalizeID(tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestKeyPart(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		// Kept as given: the account's id mode decides on normalisation, as for .NET.
		{"6F9619FF-8B86-D011-B42D-00CF4FC964FF", "6F9619FF-8B86-D011-B42D-00CF4FC964FF", true},
		{"[AspNetUserStore]", "[AspNetUserStore]", true},
		{" Microsoft Account ", " Microsoft Account ", true},
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

// A user or role id with white space at an end is refused: as a partition (its claims) and
// as a row key (its own row) it would normalise to different keys, one of which another id
// ("alice-", "alice") also reaches.
func TestIDPartRefusesWhiteSpaceAtTheEnds(t *testing.T) {
	for _, id := range []string{" alice", "alice ", "\u00a0alice", "alice\u3000", " "} {
		if got, err := idPart("user id", id); !errors.Is(err, abstractions.ErrInvalidKey) {
			t.Errorf("idPart(%q) = %q, %v; want ErrInvalidKey", id, got, err)
		}
	}
	for _, id := range []string{"alice", "al ice", "6F9619FF-8B86-D011-B42D-00CF4FC964FF"} {
		if got, err := idPart("user id", id); err != nil || got != id {
			t.Errorf("idPart(%q) = %q, %v; want it unchanged", id, got, err)
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

// Through the store: a user id with white space at an end is refused by every call that
// takes one, before anything is sent, so it can never reach the rows of "alice" or "alice-".
func TestUserIDsWithWhiteSpaceAtTheEndsAreRefused(t *testing.T) {
	ctx := context.Background()
	users, _ := stores(t, memTables(t, memservice.New(), nil))
	for _, id := range []string{"alice ", " alice"} {
		err := users.Create(ctx, &User{UserId: id, UserName: "a" + id})
		if !errors.Is(err, abstractions.ErrInvalidKey) {
			t.Errorf("Create(%q) = %v, want ErrInvalidKey", id, err)
		}
		if err := users.AddClaims(ctx, id, Claim{Type: "t", Value: "v"}); !errors.Is(err, abstractions.ErrInvalidKey) {
			t.Errorf("AddClaims(%q) = %v, want ErrInvalidKey", id, err)
		}
	}
}
