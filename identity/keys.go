package identity

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
)

// HashKey returns the key form of unbounded text (a claim's type and value, a provider key,
// a token's provider and name, a normalised user name or email): the MD5 digest of its
// UTF-8 bytes as 32 lower-case hex digits, and "" for "" (as the .NET package's key helper
// hashes). The table service refuses /, \, #, ? and control characters in keys, and such
// text may hold any of them, so it is hashed; the rows keep the text itself in their
// columns. MD5 is used as a fixed, well-spread name, not for secrecy: every lookup compares
// the stored text too, so two texts with one digest can never be taken for each other.
func HashKey(s string) string {
	if s == "" {
		return ""
	}
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Constant key parts, used verbatim (an account that normalises ids lower-cases the
// partitions of user and role rows, as the .NET library's does).
const (
	userPartition    = "User"     // partition of every user row
	rolePartition    = "Role"     // partition of every role row
	userNameIndexRow = "username" // row key of a user-name index row
	emailIndexRow    = "email"    // row key of an email index row
	roleNameIndexRow = "rolename" // row key of a role-name index row
)

// keyPart returns s as a verbatim key part, as the .NET package uses ids: unchanged, so that
// the account's id mode decides, as it does for the .NET library, whether the key is
// normalised (trimmed, spaces as "-", lower case: the default) or kept as written. Text
// that cannot be a key part is refused with an error matching abstractions.ErrInvalidKey:
// empty text (or only spaces), invalid UTF-8, "|" (it would end the partition), and the
// characters the service forbids in keys.
func keyPart(what, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: the %s is not valid UTF-8", abstractions.ErrInvalidKey, what)
	}
	if abstractions.NormalizeID(s) == "" {
		return "", fmt.Errorf("%w: the %s is empty", abstractions.ErrInvalidKey, what)
	}
	for _, r := range s {
		switch {
		case r == '|':
			return "", fmt.Errorf("%w: the %s %q contains \"|\", which separates the keys of an id; choose one without it",
				abstractions.ErrInvalidKey, what, s)
		case r == '/' || r == '\\' || r == '#' || r == '?' || r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return "", fmt.Errorf("%w: the %s %q contains %q, which the table service forbids in keys",
				abstractions.ErrInvalidKey, what, s, r)
		}
	}
	return s, nil
}

// idPart returns a user or role id as a key part: keyPart's rules, and no white space at its
// start or end. Such an id is the row key of its own row (User|id) and the partition of its
// claims, roles and tokens, and an account that normalises ids trims the two ends of a whole
// id only: " alice" and "alice " would be one user's row key and another user's partition
// ("alice", "alice-"), so one user's calls could reach another's rows. Refused with an
// error matching abstractions.ErrInvalidKey.
func idPart(what, s string) (string, error) {
	k, err := keyPart(what, s)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) != s {
		return "", fmt.Errorf("%w: the %s %q begins or ends with white space, which a partition and a row key "+
			"normalise differently; trim it", abstractions.ErrInvalidKey, what, s)
	}
	return k, nil
}

// The ids of the rows, one function per kind of row, composed as the .NET package composes
// them. u and r are key parts of a user and a role id, p of a login provider; the hashed
// parts take the text as the caller gave it.

func userRowID(u string) string { return userPartition + "|" + u }

func userNameIndexID(normalizedName string) string {
	return HashKey(normalizedName) + "|" + userNameIndexRow
}

func emailIndexID(normalizedEmail string) string {
	return HashKey(normalizedEmail) + "|" + emailIndexRow
}

func roleRowID(r string) string { return rolePartition + "|" + r }

func roleNameIndexID(normalizedName string) string {
	return HashKey(normalizedName) + "|" + roleNameIndexRow
}

func userRoleID(u, r string) string { return u + "|" + r }

// claimHash is the key form of a claim: the hash of its type and value joined by "-". (Two
// claims whose joined texts are equal, such as "a-b"/"c" and "a"/"b-c", have one key: the
// stores compare the stored type and value before they remove or replace a claim.)
func claimHash(c Claim) string { return HashKey(c.Type + "-" + c.Value) }

func userClaimID(u string, c Claim) string { return u + "|" + claimHash(c) }

func roleClaimID(r string, c Claim) string { return r + "|" + claimHash(c) }

func loginID(p, providerKey string) string { return p + "|" + HashKey(providerKey) }

func tokenID(u, loginProvider, name string) string { return u + "|" + HashKey(loginProvider+"-"+name) }

// sameKey reports whether two ids (or key parts) address the same row once normalised.
func sameKey(a, b string) bool {
	return abstractions.NormalizeID(a) == abstractions.NormalizeID(b)
}

// NormalizeName returns the lookup form of a user name, an email or a role name, as ASP.NET
// Core Identity's default normaliser makes it: upper case. The stores use it when a user or
// role is created or updated without a normalised form.
func NormalizeName(s string) string { return strings.ToUpper(s) }
