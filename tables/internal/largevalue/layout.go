package largevalue

import (
	"fmt"
	"strconv"
)

// Column names of the layout.
const (
	// ChunkSuffix followed by a decimal index names a chunk cell: Body__c0.
	ChunkSuffix = "__c"
	// ChunksSuffix names a value's chunk count: Body__chunks.
	ChunksSuffix = "__chunks"
	// SHA256Suffix names the SHA-256 of a value's stored bytes: Body__sha256.
	SHA256Suffix = "__sha256"
	// EncSuffix names a value's encoding: Body__enc.
	EncSuffix = "__enc"
	// LenSuffix names the length of a value's stored bytes: Body__len.
	LenSuffix = "__len"
	// BlobSuffix names a blob reference (blob offload): Body__blob.
	BlobSuffix = "__blob"
	// PartsColumn holds, on a main row with split values, how many rows the entity occupies.
	PartsColumn = "_SplitParts"
	// OfColumn holds, on a continuation row, the RowKey of its main row.
	OfColumn = "_SplitOf"
	// IndexColumn holds, on a continuation row, its number (1 for {RowKey}~0001).
	IndexColumn = "_SplitIndex"
)

// The encodings a manifest names (P__enc).
const (
	EncText    = "text"
	EncGzip    = "gzip"
	EncBinary  = "binary"
	EncUTF16LE = "utf16le"
)

// Chunk and row limits of the layout.
const (
	// MaxTextChunkUnits is the most UTF-16 code units in one text chunk.
	MaxTextChunkUnits = 32000
	// MaxBinaryChunkBytes is the most bytes in one binary chunk.
	MaxBinaryChunkBytes = 65536
	// MaxContinuationRows is the most continuation rows of one entity: with the main row,
	// one transaction of 100 actions.
	MaxContinuationRows = 99
	// MaxSplitRowKeyLength is the longest RowKey, in UTF-16 code units, of a split-aware
	// type: it leaves room for the continuation suffix.
	MaxSplitRowKeyLength = 480
	// maxCellUnits and maxCellBytes are the limits of one cell.
	maxCellUnits = 32768
	maxCellBytes = 65536
)

// ChunkName returns the name of chunk i of column col: col__c{i}.
func ChunkName(col string, i int) string { return col + ChunkSuffix + strconv.Itoa(i) }

// ContinuationKey returns the RowKey of continuation row i (1-based) of the main row rk.
func ContinuationKey(rk string, i int) string { return fmt.Sprintf("%s~%04d", rk, i) }

// IsContinuationKey reports whether rk has the shape reserved for continuation rows: it ends
// with '~' and exactly four decimal digits (r~0001, a~b~0042). It returns the main row's key
// and the index. Split-aware types refuse to write rows with such keys.
func IsContinuationKey(rk string) (main string, index int, ok bool) {
	n := len(rk)
	if n < 5 || rk[n-5] != '~' {
		return "", 0, false
	}
	for i := n - 4; i < n; i++ {
		c := rk[i]
		if c < '0' || c > '9' {
			return "", 0, false
		}
		index = index*10 + int(c-'0')
	}
	return rk[:n-5], index, true
}
