// Package largevalue stores values larger than one table cell: it plans the rows of a
// split-aware entity (split cells on the main row and on continuation rows) and reassembles
// and verifies them on a read. The engine calls it for every type whose plan reports
// codec.Plan.LargeValues; every other type never reaches it.
//
// # Layout
//
// The rows and cells are those the .NET library (Unified.Data.Tables 0.9.0) writes, so a
// table written by either library is read by both. For a large value of column P:
//
//   - Tier 1, inline: one cell (P, or P__Json for a JSON-stored value), exactly as a plain
//     type stores it, whenever the value fits one cell and the row has room for it.
//   - Tier 2, split: chunk cells P__c0 … P__c{N-1} and four manifest cells on the main row:
//     P__chunks (Edm.Int32, N), P__sha256 (Edm.String, 64 lower-case hexadecimal digits of the
//     SHA-256 of the stored bytes), P__enc (Edm.String: text, gzip, binary or utf16le) and
//     P__len (Edm.Int64, the length of the stored bytes). Text chunks are Edm.String cells of
//     at most 32,000 UTF-16 code units that never divide a character; the stored bytes of
//     text are its UTF-8 form. Every other encoding stores Edm.Binary chunks of at most
//     65,536 bytes: gzip holds the gzip form of the text (or bytes), binary the bytes
//     themselves, utf16le the text's UTF-16 code units, little-endian.
//   - A main row with split values also holds _SplitParts (Edm.Int32): the number of rows
//     the entity occupies, the main row included. Chunks that do not fit the main row go to
//     continuation rows in the same partition with RowKey {RowKey}~0001, ~0002, … (four
//     digits), each holding _SplitOf (Edm.String, the main row's RowKey), _SplitIndex
//     (Edm.Int32, its number) and chunk cells under the same names as on the main row. The
//     main row and its continuation rows are written in one entity-group transaction.
//   - Tier 3, blob offload (when the store's account configures it, see Offload): a value
//     stored split whose stored bytes exceed the threshold, the largest split value while
//     the rows do not fit one transaction, and every file, is stored in a blob named
//     {table}/{pk}/{rk}/{P}/{sha256} (segments escaped, see EscapeSegment), and the main
//     row holds only P__blob, an Edm.String with the reference as JSON (BlobRef: path,
//     sha256, length, contentType, encoding). The blob holds the stored bytes (the gzip form
//     for gzip, with Content-Encoding: gzip), so a split value and the same value offloaded
//     have the same hash. Without offload, a value that would need a blob is refused with an
//     *OversizedValueError, and a read of a row holding one fails with an *OffloadedError
//     rather than return the value empty.
//
// # Readers
//
// Assemble reads a split-aware type's values, from the main row and its continuation rows.
// A Column may be an alias (Column.AliasOf), the old name of a renamed column: the value
// stored under it is read, in every form, unless the row holds the column's own value
// (Column.Superseded). A reader whose account configures offload marks its columns
// Column.ReadsBlob: Assemble then leaves each P__blob reference on the row, and the reader
// downloads the blob and decodes it (DecodeBlob). AssembleMain is the reader of a type
// that is not split-aware: it reassembles a value whose chunks are all on the main row, and
// refuses one that continues on continuation rows; a group of cells counts as a split value
// only when its manifest is complete and well formed.
//
// The .NET manifest leaves some facts unstated; this package fixes them as above (the part
// count includes the main row, the lengths count stored bytes). The hash is lower-case
// hexadecimal: the .NET library names blobs by the lower-case digits of the same hash, and
// a split value and the same value offloaded have one hash. A reader accepts Edm.Int32 and
// Edm.Int64 for every count and length, and hexadecimal digits of either case.
// golden_test.go checks what the planner writes against rows written by hand from the .NET
// layout's description.
//
// # Limits
//
// An entity holds 252 properties besides the keys and Timestamp. A split value keeps four
// manifest cells on the main row and the row one _SplitParts, so an entity with P other
// properties holds S split values while P + 4×S + 1 ≤ 252: a bare entity (Id, CreatedAt,
// UpdatedAt) holds 62 and refuses 63. Cells that cannot leave the main row (everything but
// chunks) must fit one entity (service.MaxEntityBytes); when they do not, the largest inline
// values are moved to split form (one or more chunks, plus the manifest) until they do. Every
// row stays within service.MaxEntityBytes stored and service.MaxEntityWireBytes on the wire,
// and the whole entity within one transaction: at most 100 rows,
// service.MaxTransactionEntityBytes stored and service.MaxTransactionWireBytes on the wire
// (the deletes of stale continuation rows included, which the engine adds).
//
// Sizes on the wire are those of the JSON the Azure SDK for Go sends (service.BodySize). The
// Go SDK escapes only quotes, backslashes, control characters and <, > and &, so text counts
// as its UTF-8 bytes: 700,000 Cyrillic characters are 1.4 MB on the wire and are stored split
// here, where the .NET SDK's escaping (six bytes a character) makes the .NET library offload
// them. Both libraries read either form.
//
// # Errors
//
// *OversizedValueError (matching abstractions.ErrOversizedValue) reports an entity that fits
// no form: it names the column, its encoded bytes, the reason and what to do. *IntegrityError
// (matching abstractions.ErrIntegrity) reports stored cells that do not reassemble: a missing
// chunk or continuation row, a malformed manifest, a length or SHA-256 that does not match.
// *OffloadedError (matching abstractions.ErrBlobOffloadNotConfigured) reports a value held
// in a blob to a reader that does not read blobs. A read never returns part of a value.
package largevalue
