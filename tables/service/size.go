package service

import "encoding/base64"

// Limits of one entity and one entity-group transaction, as the library plans writes within
// them. The stored limits are those the service documents, with room to spare; the wire
// limits bound the JSON the Azure SDK sends (see BodySize), which the storage emulator
// checks for each row.
const (
	// MaxEntityProperties is the most custom properties one row holds (PartitionKey, RowKey
	// and Timestamp excluded).
	MaxEntityProperties = 252
	// MaxEntityBytes is the most stored bytes (EntitySize) the library puts in one row; the
	// service's limit is 1 MiB.
	MaxEntityBytes = 1_000_000
	// MaxEntityWireBytes is the most JSON body bytes (BodySize) the library sends for one row:
	// the storage emulator refuses an update whose body exceeds 1 MiB.
	MaxEntityWireBytes = 1_000_000
	// MaxTransactionEntityBytes is the most stored bytes the library puts in one transaction.
	MaxTransactionEntityBytes = 3_000_000
	// MaxTransactionWireBytes is the most request bytes (TransactionBodySize) the library
	// sends in one transaction: the 4 MiB limit less 64 KiB for the framing.
	MaxTransactionWireBytes = MaxBodySize - 64<<10
	// MaxStringUnits is the most UTF-16 code units one Edm.String cell holds (64 KiB).
	MaxStringUnits = 32768
	// MaxBinaryBytes is the most bytes one Edm.Binary cell holds (64 KiB).
	MaxBinaryBytes = 65536
)

// CellTooLarge reports whether v is a string or binary value larger than one cell holds
// (MaxStringUnits, MaxBinaryBytes), which the service refuses with 400
// PropertyValueTooLarge, and its size in bytes as the service counts it (a string two bytes
// a UTF-16 code unit).
func CellTooLarge(v Value) (size int, over bool) {
	switch v.Kind() {
	case KindString:
		s := v.Str()
		if len(s) <= MaxStringUnits {
			return 2 * len(s), false // an upper bound: at most one unit a byte
		}
		n := UTF16Len(s)
		return 2 * n, n > MaxStringUnits
	case KindBinary:
		n := len(v.Bytes())
		return n, n > MaxBinaryBytes
	}
	return 0, false
}

// EntitySize returns the size the service counts for a row with these keys and properties:
// 4 bytes, the keys as UTF-16, and for each property 8 bytes, its name as UTF-16 and its value
// (Value.Size, plus 4 bytes of length for a string or binary value). Invalid values (nulls,
// which the service drops) count nothing. It is Table Storage's count; EntitySizeOn gives
// another service's.
func EntitySize(partitionKey, rowKey string, props []Property) int {
	return EntitySizeOn(Storage, partitionKey, rowKey, props)
}

// EntitySizeOn is EntitySize as the service p counts it. Azure Cosmos DB for Table keeps
// binary values less compactly than Table Storage, its FAQ says, without a figure; the
// library counts a binary value there at the length of its base64 text, the form the
// protocol carries it in (4 bytes for every 3), and so plans binary-heavy rows within the
// same 1 MiB on both. The zero Product counts as Table Storage.
func EntitySizeOn(p Product, partitionKey, rowKey string, props []Property) int {
	n := 4 + 2*UTF16Len(partitionKey) + 2*UTF16Len(rowKey)
	for i := range props {
		n += PropertySizeOn(p, &props[i])
	}
	return n
}

// PropertySize is the share of one property in EntitySize.
func PropertySize(p *Property) int { return PropertySizeOn(Storage, p) }

// PropertySizeOn is the share of one property in EntitySizeOn(product, ...).
func PropertySizeOn(product Product, p *Property) int {
	if !p.Value.IsValid() {
		return 0
	}
	n := 8 + 2*UTF16Len(p.Name) + p.Value.Size()
	if k := p.Value.Kind(); k == KindString || k == KindBinary {
		n += 4
		if k == KindBinary && product == Cosmos {
			n += base64.StdEncoding.EncodedLen(len(p.Value.Bytes())) - len(p.Value.Bytes())
		}
	}
	return n
}

// PropertyBodySize is the share of one property in BodySize: its name, value and, where the
// adapter sends one, its @odata.type annotation, with the separating comma.
func PropertyBodySize(p *Property) int {
	if !p.Value.IsValid() {
		return 0
	}
	n := len(`,:`) + jsonStringLen(p.Name) + jsonValueLen(p.Value)
	if annotated(p.Value.Kind()) {
		n += len(`,:`) + jsonStringLen(p.Name+"@odata.type") + jsonStringLen(p.Value.Kind().String())
	}
	return n
}
