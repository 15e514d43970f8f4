package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/feedrow"
	"github.com/unified-data/gotables/tables/internal/indexrow"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// MaxKeyLength is the longest key, in UTF-16 code units, the engine sends. The service
// documents 1 KiB; its emulator stops at 512 units, so the engine stays within both.
const MaxKeyLength = 512

// CheckKey returns why the engine refuses key, or "".
//
// Empty keys are the library's own refusal, not the service's: Azure stores a row with an
// empty PartitionKey or RowKey, but the Azure SDK for Go cannot put an empty partition key
// in the URL of an update, a merge or a delete, so such a row could be created and never
// changed or removed through this library. An empty row key is refused with it, because the
// ids that produce one ("tenant|", an id built from an empty part) are nearly always a bug.
// A read by id takes an empty key all the same (see ResolveReadID): rows other programs
// wrote that way can be read, and moved to keys of their own.
func CheckKey(key string) string {
	if key == "" {
		return "is empty (the library refuses empty keys: the Azure SDK cannot update or delete a row whose partition key is empty)"
	}
	if !utf8.ValidString(key) {
		return "is not valid UTF-8"
	}
	if n := service.UTF16Len(key); n > MaxKeyLength {
		return fmt.Sprintf("is %d UTF-16 code units long; the limit is %d", n, MaxKeyLength)
	}
	for _, r := range key {
		switch {
		case r == '/' || r == '\\' || r == '#' || r == '?':
			return fmt.Sprintf("contains %q, which the table service forbids in keys", r)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return fmt.Sprintf("contains the control character %U, which the table service forbids in keys", r)
		}
	}
	return ""
}

// KeyError is the refusal of a key, before anything is sent.
func KeyError(op, table, pk, rk, which, reason string) error {
	return &abstractions.StoreError{
		Kind: abstractions.ErrInvalidKey, Op: op, Table: table, PartitionKey: pk, RowKey: rk,
		Message: fmt.Sprintf("the %s %s; nothing was sent", which, reason),
	}
}

// InvalidUTF8 is the refusal of an id or key that is not valid UTF-8. It comes before
// normalisation, which would turn every invalid byte into U+FFFD and so make two different
// ids address one row. The value is not quoted back: it is not text.
func InvalidUTF8(op, table, which string) error {
	return &abstractions.StoreError{Kind: abstractions.ErrInvalidKey, Op: op, Table: table,
		Message: fmt.Sprintf("the %s is not valid UTF-8; nothing was sent", which)}
}

// ResolveID normalises id (unless the account keeps ids as written), splits it and checks
// both keys. It returns the id as it will be stored. It is the check of every call that
// writes (or takes its turn to write) the row, and refuses an empty key.
func (s *Table) ResolveID(op, id string) (stored, pk, rk string, err error) {
	return s.ResolveKeys(op, id, false)
}

// ResolveReadID is ResolveID for a call that only reads the row (One, Exists). It also takes
// an empty partition or row key ("|x", "x|", "|"), which Azure stores and other programs
// (a .NET service, the raw SDK) write: such rows can be read, and moved to keys of their
// own. An id that is empty as a whole is refused still: it is a zero Entity, not a key.
func (s *Table) ResolveReadID(op, id string) (stored, pk, rk string, err error) {
	return s.ResolveKeys(op, id, true)
}

// ResolveKeys is ResolveID (read false) and ResolveReadID (read true).
func (s *Table) ResolveKeys(op, id string, read bool) (stored, pk, rk string, err error) {
	if !utf8.ValidString(id) {
		return "", "", "", InvalidUTF8(op, s.Name, "id")
	}
	id = s.NormalID(id)
	pk, rk = abstractions.SplitID(id)
	for _, k := range [...]struct{ which, key, write string }{
		{"partition key", pk, "the Azure SDK for Go cannot put an empty partition key in the URL of an update, a merge or a delete, " +
			"so the row could never be changed or removed"},
		{"row key", rk, `an id ending in "|" is nearly always a mistake`},
	} {
		reason := ""
		switch {
		case k.key == "" && id == "":
			reason = "is empty: the id is empty (a zero Entity?); give the row an id \"partition|row\""
		case k.key == "" && read:
			continue
		case k.key == "":
			reason = "is empty: a row with an empty key can be read (One, Exists), not written, because " + k.write +
				"; write the row under an id with both keys (see abstractions.SplitID)"
		default:
			reason = CheckKey(k.key)
			if reason == "" && k.which == "row key" && indexrow.IsKey(k.key) {
				reason = fmt.Sprintf("starts with %q, which marks the rows of partition indexes (package tables/internal/indexrow); give the row another key", indexrow.Prefix)
			}
			if reason == "" && feedrow.IsKey(k.key) {
				reason = fmt.Sprintf("starts with %q, which marks the rows of change feeds (package tables/internal/feedrow); give the row another key", feedrow.Prefix)
			}
			if reason == "" && k.which == "partition key" && indexrow.IsClaimPartition(k.key) {
				reason = fmt.Sprintf("starts with %q, which marks the claims of unique indexes; give the row another partition", indexrow.ClaimPrefix)
			}
		}
		if reason != "" {
			return "", pk, rk, KeyError(op, s.Name, pk, rk, k.which, reason)
		}
	}
	return id, pk, rk, nil
}

// CheckPartition checks a partition key given on its own (List, Count, DeletePartition,
// Query.Partition, Page, the sweep) and returns it as it is stored. It takes the path of the
// partition part of an id (see abstractions.SplitID): refused when not valid UTF-8,
// normalised by NormalPartition, then refused when it holds the id separator (no id can
// address such a partition, and a value that holds one is, in a multi-tenant program, one
// tenant's name reaching for another's rows) or breaks a key rule; so "" and a partition
// that normalises to "" are refused too.
func (s *Table) CheckPartition(op, partition string) (string, error) {
	if !utf8.ValidString(partition) {
		return "", InvalidUTF8(op, s.Name, "partition key")
	}
	pk := s.NormalPartition(partition)
	if strings.Contains(pk, abstractions.IDSeparator) {
		return "", KeyError(op, s.Name, pk, "", "partition key",
			fmt.Sprintf("contains %q, which ends the partition in an id, so no id can address it", abstractions.IDSeparator))
	}
	if pk == "" && partition != "" {
		return "", KeyError(op, s.Name, pk, "", "partition key",
			fmt.Sprintf("%q is empty once normalised (white space at its start is trimmed, as at the start of an id)", partition))
	}
	if feedrow.IsPartition(pk) {
		return "", KeyError(op, s.Name, pk, "", "partition key",
			fmt.Sprintf("starts with %q, which marks the registry and leases of change feeds, not a partition of entities", feedrow.Prefix))
	}
	if indexrow.IsClaimPartition(pk) {
		return "", KeyError(op, s.Name, pk, "", "partition key",
			fmt.Sprintf("starts with %q, which marks the claims of unique indexes, not a partition of entities", indexrow.ClaimPrefix))
	}
	if reason := CheckKey(pk); reason != "" {
		return "", KeyError(op, s.Name, pk, "", "partition key", reason)
	}
	return pk, nil
}

// NormalID returns an id as the store addresses it: normalised with abstractions.NormalizeID
// unless the account keeps ids as written. It checks nothing: see ResolveID.
func (s *Table) NormalID(id string) string {
	if s.Acct.Cfg.NormalizeIDs {
		return abstractions.NormalizeID(id)
	}
	return id
}

// NormalPartition returns a partition given on its own as the store addresses it: normalised
// with abstractions.NormalizePartition (the partition part of every id that starts with
// it) unless the account keeps ids as written. It checks nothing: see CheckPartition.
func (s *Table) NormalPartition(partition string) string {
	if s.Acct.Cfg.NormalizeIDs {
		return abstractions.NormalizePartition(partition)
	}
	return partition
}

// NormalRowKeyPrefix returns a row-key prefix as the store matches it: normalised as the
// row-key part of an id is (abstractions.NormalizeID: spaces as "-", lower case), except
// that nothing is trimmed, since more of the row key may follow the prefix and the
// partition precedes it. Unless the account keeps ids as written.
func (s *Table) NormalRowKeyPrefix(prefix string) string {
	if s.Acct.Cfg.NormalizeIDs {
		return strings.ToLower(strings.ReplaceAll(prefix, " ", "-"))
	}
	return prefix
}

// RowError wraps err, a refusal or failure about one row that did not come from the service
// (a value the codec or the large-value layout refused, a stored row that does not decode), in
// a *StoreError naming the operation, the table and the keys, as every other error about one
// row is. Its Kind is the sentinel err matches, so errors.Is and errors.As see both.
func RowError(op, table, pk, rk, message string, err error) error {
	_, kind := callerr.Kind(err)
	return &abstractions.StoreError{Kind: kind, Op: op, Table: table, PartitionKey: pk, RowKey: rk, Message: message, Err: err}
}
