package abstractions

import "strings"

// IDSeparator separates the partition key from the row key in a composite id.
const IDSeparator = "|"

// SplitID splits a composite id on its first "|": "eu|alice" is ("eu", "alice"),
// "vision|exec|agent" is ("vision", "exec|agent"), and a lone "single" addresses
// ("single", "single"). SplitID does not normalise; see NormalizeID.
func SplitID(id string) (partitionKey, rowKey string) {
	if pk, rk, ok := strings.Cut(id, IDSeparator); ok {
		return pk, rk
	}
	return id, id
}

// CombineID returns the composite id of a partition key and a row key.
func CombineID(partitionKey, rowKey string) string {
	return partitionKey + IDSeparator + rowKey
}

// NormalizeID returns the id as stores write it by default: trimmed, inner spaces replaced by
// "-", lower-cased. Accounts can opt out of normalisation (ids then address rows as written).
func NormalizeID(id string) string {
	id = strings.TrimSpace(id)
	id = strings.ReplaceAll(id, " ", "-")
	return strings.ToLower(id)
}
