package engine

import (
	"fmt"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// MaxKeyLength is the longest key, in UTF-16 code units, the engine sends. The service
// documents 1 KiB; its emulator stops at 512 units, so the engine stays within both.
const MaxKeyLength = 512

// checkKey returns why the service would refuse key, or "".
func checkKey(key string) string {
	if key == "" {
		return "is empty"
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

// keyError is the refusal of a key, before anything is sent.
func keyError(op, table, pk, rk, which, reason string) error {
	return &abstractions.StoreError{
		Kind: abstractions.ErrInvalidKey, Op: op, Table: table, PartitionKey: pk, RowKey: rk,
		Message: fmt.Sprintf("the %s %s; nothing was sent", which, reason),
	}
}

// resolveID normalises id (unless the account keeps ids as written), splits it and checks
// both keys. It returns the id as it will be stored.
func (s *Store[T]) resolveID(op, id string) (stored, pk, rk string, err error) {
	if s.acct.opts.IDs == NormalizeIDs {
		id = abstractions.NormalizeID(id)
	}
	pk, rk = abstractions.SplitID(id)
	if reason := checkKey(pk); reason != "" {
		return "", pk, rk, keyError(op, s.table, pk, rk, "partition key", reason)
	}
	if reason := checkKey(rk); reason != "" {
		return "", pk, rk, keyError(op, s.table, pk, rk, "row key", reason)
	}
	return id, pk, rk, nil
}

// checkPartition checks a partition key given on its own (List, Count, DeletePartition).
// It is normalised like the partition part of an id.
func (s *Store[T]) checkPartition(op, partition string) (string, error) {
	if s.acct.opts.IDs == NormalizeIDs {
		partition = abstractions.NormalizeID(partition)
	}
	if reason := checkKey(partition); reason != "" {
		return "", keyError(op, s.table, partition, "", "partition key", reason)
	}
	return partition, nil
}
