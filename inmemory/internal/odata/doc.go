// Package odata parses the OData $filter expressions the table service accepts and
// evaluates them against rows, for the in-memory table service. It follows the real
// service, not Azurite: what Parse accepts, the service accepts, and Match selects the rows
// the service would select. Anything outside the subset below is refused with a
// *SyntaxError, which the in-memory service reports as 400 InvalidInput.
//
// # Grammar
//
// Keywords and operators are case-sensitive, as the service documents: eq ne gt ge lt le,
// and or not, true false. "EQ" or "And" are refused. Tokens are separated by spaces or tabs;
// the filter arrives URL-decoded and must be valid UTF-8.
//
//   - A comparison is a property and a literal joined by an operator, in either order
//     ('a' lt S means S gt 'a'). Two properties, or two literals (5 eq 5), are refused.
//   - Property names match [A-Za-z_][A-Za-z0-9_]*. PartitionKey and RowKey are strings and
//     Timestamp is a datetime, read from the row's fields.
//   - and binds tighter than or; not binds tightest, so "not X eq 1" is refused and
//     "not (X eq 1)" is meant. Parentheses group. A bare property is a Boolean test.
//   - Literals: 'text' (a quote inside is written twice); 123 (Edm.Int32; a value
//     outside the Int32 range is refused); 123L (Edm.Int64); 1.5, -2.0, 1e10, 1.5E-3
//     (Edm.Double, no d suffix); true and false; datetime'2024-01-02T03:04:05.1234567Z' (at
//     most seven fractional digits, Z or an offset required, converted to UTC); guid'…' (hex
//     in either case); X'0a0B' and binary'0a0b' (an even number of hex digits). Numbers take
//     a leading '-'.
//   - The null literal, functions such as startswith(…), arithmetic, and more than
//     MaxComparisons comparisons are refused.
//
// # Semantics
//
// A comparison on a property the row lacks is false for every operator, ne included, so
// not (Missing eq 'x') is true. A bare property is true only when it exists, is an
// Edm.Boolean and is true.
//
// Values compare within their type: strings ordinally by UTF-16 code units and with case,
// Booleans with false before true, datetimes to the full 100 ns precision (Azurite
// truncates to milliseconds), GUIDs by value whatever the case of the literal, binary
// bytewise and then by length.
//
// Values of different types compare the way the service compares them, which its
// documentation only hints at (it asks for a literal of the property's own type if the
// results are to be valid). An Int64 value also compares by value with an Int32 literal, and a Double
// value with an Int32 or Int64 literal (exactly: an Int64 is never rounded through a float;
// a NaN is unequal to everything, so only ne holds). Every other pairing of stored type and
// literal type (an Int32 value and an Int64 or Double literal, an Int64 value and a Double
// literal, a string and a number, a DateTime and a string, a string and a datetime or guid
// literal, a Guid and a string, a Boolean and anything else, a key or the Timestamp and a
// literal of another type) compares the stored value as less than the literal: eq, gt and
// ge are false, ne, lt and le true. A literal written on the left is moved right first, so
// 5 gt S is S lt 5, true for a string S.
//
// That rule is the best evidence there is of the service: Azure/Azurite#2342, where a
// maintainer's trace of the production service shows Double and DateTime values comparing
// less than the empty string (ne selects them, gt does not), and the comparison tests of CloudStub,
// written to run against a live account, which state the whole table above, the Int32/Int64
// asymmetry included. It is not verified here (there is no live account); Azurite 3.35
// answers otherwise (see the fidelity suite's "filter-type-mismatch" deviation).
package odata
