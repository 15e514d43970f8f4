package identity

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
)

// HashKey returns the key form of unbounded text (a normalised user name or email, a claim
// type or value, a provider key): the MD5 digest of its UTF-8 bytes as 32 lower-case hex
// digits. The table service refuses /, \, #, ? and control characters in keys, and such
// text may hold any of them, so it is hashed; the rows keep the text itself in their
// columns. MD5 is used as a fixed, well-spread name, not for secrecy: every lookup compares
// the stored text too, so two texts with one digest can never be taken for each other.
func HashKey(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Constant key parts, used verbatim.
const (
	userNameIndexRow = "username" // row key of a user-name index row
	emailIndexRow    = "email"    // row key of an email index row
	roleNameIndexRow = "rolename" // row key of a role-name index row
	reversePrefix    = "user|"    // row-key prefix of the rows listed by role or by claim
)

// keyPart returns s as a verbatim key part: normalised as stores normalise ids (trimmed,
// spaces as "-", lower case), so the key is the same whether the account normalises ids or
// keeps them as written. Text that cannot be a key part is refused with an error matching
// abstractions.ErrInvalidKey: empty text, invalid UTF-8, "|" (it would end the partition),
// and the characters the service forbids in keys.
func keyPart(what, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: the %s is not valid UTF-8", abstractions.ErrInvalidKey, what)
	}
	k := abstractions.NormalizeID(s)
	if k == "" {
		return "", fmt.Errorf("%w: the %s is empty", abstractions.ErrInvalidKey, what)
	}
	for _, r := range k {
		switch {
		case r == '|':
			return "", fmt.Errorf("%w: the %s %q contains \"|\", which separates the keys of an id; choose one without it",
				abstractions.ErrInvalidKey, what, s)
		case r == '/' || r == '\\' || r == '#' || r == '?' || r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return "", fmt.Errorf("%w: the %s %q contains %q, which the table service forbids in keys",
				abstractions.ErrInvalidKey, what, s, r)
		}
	}
	return k, nil
}

// The ids of the rows, one function per kind of row. u and r are key parts of a user and a
// role id, p of a login provider.

func userRowID(u string) string { return u } // a lone id: partition and row key are both u

func userNameIndexID(normalizedName string) string {
	return HashKey(normalizedName) + "|" + userNameIndexRow
}

func emailIndexID(normalizedEmail string) string {
	return HashKey(normalizedEmail) + "|" + emailIndexRow
}

func roleRowID(r string) string { return r }

func roleNameIndexID(normalizedName string) string {
	return HashKey(normalizedName) + "|" + roleNameIndexRow
}

func userRoleByUserID(u, r string) string { return u + "|" + r }

func userRoleByRoleID(r, u string) string { return r + "|" + reversePrefix + u }

// claimKey is the key form of a claim: the hashes of its type and of its value.
func claimKey(c Claim) string { return HashKey(c.Type) + "-" + HashKey(c.Value) }

func userClaimByUserID(u string, c Claim) string { return u + "|" + claimKey(c) }

func userClaimByClaimID(c Claim, u string) string { return claimKey(c) + "|" + reversePrefix + u }

func roleClaimID(r string, c Claim) string { return r + "|" + claimKey(c) }

func loginOwnerID(p, providerKey string) string { return p + "|" + HashKey(providerKey) }

func loginByUserID(u, p, providerKey string) string { return u + "|" + p + "|" + HashKey(providerKey) }

func tokenID(u, p, name string) string { return u + "|" + p + "|" + name }

// sameKey reports whether two ids address the same row once normalised.
func sameKey(a, b string) bool {
	return abstractions.NormalizeID(a) == abstractions.NormalizeID(b)
}

// NormalizeName returns the lookup form of a user name, an email or a role name, as ASP.NET
// Core Identity's default normaliser makes it: upper case. The stores use it when a user or
// role is created or updated without a normalised form.
func NormalizeName(s string) string { return strings.ToUpper(s) }
