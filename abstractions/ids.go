package abstractions

import (
	"fmt"
	"strings"
	"unicode"
)

// IDSeparator separates the partition key from the row key in a composite id.
const IDSeparator = "|"

// SplitID splits a composite id on its first "|": "eu|alice" is ("eu", "alice"),
// "vision|exec|agent" is ("vision", "exec|agent"), and a lone "single" addresses
// ("single", "single"). SplitID does not normalise; see NormalizeID.
//
// # Isolation
//
// Because the first "|" ends the partition, a partition key can never contain one: the id
// "acme|corp|42" addresses partition "acme", row "corp|42". Every API that takes a partition
// on its own (List, Count, DeletePartition, Query.Partition, the append-log and
// versioned-stream helpers) refuses a partition holding "|" with an error matching
// ErrInvalidKey, and CombineID refuses to build an id from one, so a value a caller uses
// as a tenant's partition can never read or write another tenant's rows. Row keys may hold
// "|" freely.
//
// # Checks and normalisation
//
// A store takes an id through these steps, in order: an id that is not valid UTF-8 is
// refused with ErrInvalidKey, before normalisation, which would turn every invalid byte into
// U+FFFD and so make different ids address one row; the whole id is normalised (see
// NormalizeID) unless the account keeps ids as written; it is split with SplitID; then each
// key is checked, and one longer than 512 UTF-16 code units or holding a character the
// service forbids is refused with ErrInvalidKey, as is an empty key in every call but a read
// by id (see Empty keys). The keys are checked as they will be stored: " |x" normalises to
// "|x", whose partition key is empty. Because the id is normalised before it is split,
// spaces next to "|" become "-" like any inner space ("eu | alice" addresses ("eu-",
// "-alice")).
//
// A partition given on its own (List, Count, DeletePartition, Query.Partition, the sweep,
// the append-log and versioned-stream helpers) takes the same path: it is refused when it is
// not valid UTF-8, normalised with NormalizePartition, which gives exactly the partition key
// of every id that starts with it, then refused with ErrInvalidKey when it holds "|", is
// empty (so "" and an all-whitespace partition are refused too, as " |x" is) or breaks a key
// rule. So List("acme ") reads the partition "acme-" that CombineID("acme ", "r1") writes,
// never tenant "acme"'s.
//
// The default normalisation merges strings that differ only in:
//   - case, lower-cased by Unicode's simple mapping (strings.ToLower): "Acme" and "acme",
//     and also look-alikes such as the Kelvin sign U+212A and "k", or the Ohm sign U+2126,
//     "Ω" and "ω", address one partition;
//   - white space at the start of an id (of any Unicode kind: tab, U+00A0, U+3000, …) and at
//     its end, so a partition's leading white space and a row key's trailing white space;
//   - spaces against "-": "Acme Corp|1" and "acme-corp|1" are one row (other white space
//     inside an id, such as U+00A0, is kept as it is).
//
// When two tenants must never share a partition, give them ids that stay distinct under
// normalisation, or keep ids as written with the account option IDsAsWritten, which keeps
// all of these apart (the key checks still apply).
//
// # Empty keys
//
// Azure stores rows whose PartitionKey or RowKey is empty, and other programs write them (a
// .NET service with the id "|x" or "x|", the raw SDK). A store reads them by id: One and
// Exists take "|x" (partition "", row "x"), "x|" and "|"; a query of the whole table
// returns them with those ids. It writes none: every write (Create, Update, Upsert, Patch,
// Delete, the batches) refuses an id with an empty key with ErrInvalidKey before sending
// anything, and so do the verbs built on them, after their read. An empty partition key
// cannot be put in the URL of an update, a merge or a delete by the Azure SDK for Go, so a
// row written with one could never be changed or removed through the library; an empty row
// key comes from ids such as "tenant|", which are nearly always a mistake. An id that is
// empty as a whole is refused by reads too. To bring such a row under keys of its own, read
// it with One, write it under a new id with Create, and delete the old row with the program
// that wrote it (or any client that can address an empty key in a URL: the Azure SDK for Go
// can for an empty row key, not for an empty partition key).
func SplitID(id string) (partitionKey, rowKey string) {
	if pk, rk, ok := strings.Cut(id, IDSeparator); ok {
		return pk, rk
	}
	return id, id
}

// CombineID returns the composite id of a partition key and a row key. A partition key that
// contains "|" fails with an error matching ErrInvalidKey: the id would address another
// partition (see the isolation rule at SplitID). The row key may contain "|".
func CombineID(partitionKey, rowKey string) (string, error) {
	if strings.Contains(partitionKey, IDSeparator) {
		return "", fmt.Errorf("%w: the partition key %q contains %q, which ends a partition in an id; "+
			"an id built from it would address partition %q instead", ErrInvalidKey, partitionKey, IDSeparator,
			partitionKey[:strings.Index(partitionKey, IDSeparator)])
	}
	return partitionKey + IDSeparator + rowKey, nil
}

// NormalizeID returns the id as stores write it by default: trimmed of leading and
// trailing white space (unicode.IsSpace), inner spaces (U+0020) replaced by "-",
// lower-cased. Accounts can opt out of normalisation (ids then address rows as written).
// Invalid UTF-8 is not repaired here: stores refuse it before normalising, so two different
// invalid ids never become one. See SplitID for what the normalisation merges.
func NormalizeID(id string) string {
	return normalizeInner(strings.TrimSpace(id))
}

// NormalizePartition returns the partition key a store gives, by default, to a partition
// given on its own: for a partition without "|", the partition part of
// NormalizeID(partition + "|" + rowKey), whatever the row key, so a partition given alone
// addresses exactly the rows of the ids that start with it. Leading white space is trimmed,
// because the partition starts the id; trailing white space is not, because the "|"
// follows it; spaces become "-" and the result is lower-cased. So "  Acme " is "acme-",
// the partition CombineID("  Acme ", "r1") is stored in, never "acme"; and "acme" followed
// by U+00A0 keeps its U+00A0.
//
// It does not check the key: a partition holding "|" keeps it, and "" or an all-whitespace
// partition gives "", which stores refuse with ErrInvalidKey (see SplitID). Invalid UTF-8
// is not repaired: stores refuse it before normalising.
func NormalizePartition(partition string) string {
	return normalizeInner(strings.TrimLeftFunc(partition, unicode.IsSpace))
}

// normalizeInner is the part of the normalisation that applies to every character of an
// id: spaces as "-", lower case. It maps character by character, so it gives the same
// result on an id as on its parts.
func normalizeInner(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, " ", "-"))
}
