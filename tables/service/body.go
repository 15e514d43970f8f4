package service

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/unified-data/gotables/tables/internal/wire"
)

// Request-size limits of the table service.
const (
	// MaxBodySize is the largest request body the service accepts (4 MiB); a larger one
	// fails with 413 RequestBodyTooLarge.
	MaxBodySize = 4 << 20
	// MaxTransactionActions is the most actions one entity-group transaction may hold.
	MaxTransactionActions = 100

	txActionOverhead = 512 // estimated multipart headers and request line per action
	txEnvelope       = 256 // estimated batch and changeset boundaries
)

// BodySize returns the bytes of the JSON request body sent for a single-row write a (the
// entity with its @odata.type annotations). A delete sends no body. The in-memory service
// applies the 4 MiB limit to it, and the large-value planner keeps each row within
// MaxEntityWireBytes by it.
//
// The Azure SDK decodes the adapter's JSON into a map and encodes it again with
// encoding/json, which escapes <, > and & as \u003c and writes a whole double without its
// ".0". BodySize counts the escapes and keeps the ".0", so it is never below the body that
// goes on the wire and exceeds it by at most two bytes per double property (more only for
// \b, \f and invalid UTF-8, which it counts at six bytes).
func BodySize(a *Action) int { return bodySize(a, &sdkJSON) }

// bodySize is the length of a's entity body with strings escaped as t says.
func bodySize(a *Action, t *jsonEscapes) int {
	if a.Op == OpDelete {
		return 0
	}
	n := len(`{"PartitionKey":,"RowKey":}`) + t.stringLen(a.Row.PartitionKey) + t.stringLen(a.Row.RowKey)
	for _, p := range a.Row.Properties {
		if !p.Value.IsValid() {
			continue
		}
		n += len(`,:`) + t.stringLen(p.Name) + t.valueLen(p.Value)
		if annotated(p.Value.Kind()) {
			// ,"Name@odata.type":"Edm.Int64"
			n += len(`,:`) + t.stringLen(p.Name+"@odata.type") + t.stringLen(p.Value.Kind().String())
		}
	}
	return n
}

// TransactionBodySize estimates the body of a transaction as the Azure adapter sends it: each
// action's entity, its multipart headers and request line (with the keys in the URL unless
// it is an insert), and the batch envelope (TransactionEnvelopeSize). The adapter writes a
// transaction's body itself, so its entities are counted as the adapter encodes them: as
// BodySize does, without the SDK's HTML escapes.
func TransactionBodySize(actions []Action) int {
	n := TransactionEnvelopeSize
	for i := range actions {
		n += ActionBodySize(&actions[i])
	}
	return n
}

// TransactionEnvelopeSize is the share of the batch and changeset boundaries in
// TransactionBodySize.
const TransactionEnvelopeSize = txEnvelope

// ActionBodySize is the share of one action in TransactionBodySize: ActionFramingSize plus
// its entity as the adapter encodes it.
func ActionBodySize(a *Action) int { return ActionFramingSize(a) + bodySize(a, &adapterJSON) }

// ActionFramingSize is the share of one action in TransactionBodySize besides its entity
// body: its multipart headers and request line, with the keys in the URL unless it is an
// insert. A planner that already knows the size of an action's entity adds this instead of
// measuring the entity again.
func ActionFramingSize(a *Action) int {
	n := txActionOverhead
	if a.Op != OpInsert {
		n += urlKeyLen(a.Row.PartitionKey) + urlKeyLen(a.Row.RowKey)
	}
	return n
}

// urlKeyLen bounds the length of a key in a request line: every byte but an unreserved
// ASCII character is percent-encoded (three bytes), and a single quote is doubled first.
func urlKeyLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~':
			n++
		case c == '\'':
			n += 6
		default:
			n += 3
		}
	}
	return n
}

// annotated reports whether the adapter sends an @odata.type annotation for the kind; JSON
// strings, booleans and numbers that fit an Int32 carry their type themselves.
func annotated(k Kind) bool {
	switch k {
	case KindBinary, KindInt64, KindDouble, KindDateTime, KindGuid:
		return true
	}
	return false
}

// jsonEscapes is how a JSON encoder escapes ASCII: the length of each ASCII character in a
// JSON string.
type jsonEscapes [utf8.RuneSelf]uint8

// sdkJSON is encoding/json's escaping, which the Azure SDK's re-encoding of an entity uses:
// two bytes for quote, backslash, \n, \r and \t; six (\u00XX) for the other control
// characters and the HTML characters <, > and &; one for the rest. adapterJSON is the
// Azure adapter's, the same without the HTML escapes.
var sdkJSON, adapterJSON = jsonASCII(true), jsonASCII(false)

func jsonASCII(html bool) (t jsonEscapes) {
	for c := range t {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			t[c] = 2
		case c < 0x20 || html && (c == '<' || c == '>' || c == '&'):
			t[c] = 6
		default:
			t[c] = 1
		}
	}
	return t
}

// jsonValueLen is the length of v as the SDK sends it.
func jsonValueLen(v Value) int { return sdkJSON.valueLen(v) }

// valueLen is the length of v in JSON with strings escaped as t says.
func (t *jsonEscapes) valueLen(v Value) int {
	switch v.Kind() {
	case KindString:
		return t.stringLen(v.Str())
	case KindBinary:
		return 2 + base64.StdEncoding.EncodedLen(len(v.Bytes()))
	case KindBool:
		if v.Bool() {
			return len("true")
		}
		return len("false")
	case KindInt32:
		return len(strconv.FormatInt(int64(v.Int32()), 10))
	case KindInt64:
		return 2 + len(strconv.FormatInt(v.Int64(), 10))
	case KindDouble:
		var buf [32]byte
		return len(wire.AppendJSONDouble(buf[:0], v.Float()))
	case KindDateTime:
		return 2 + len(FormatDateTime(v.Time()))
	case KindGuid:
		return 2 + len(v.Str())
	}
	return len("null")
}

// jsonStringLen is the length of s as the SDK sends it, quotes included: the escapes of
// encoding/json.Marshal, so quote, backslash, \n, \r and \t take two bytes; <, > and &
// (HTML escapes), other control characters, U+2028, U+2029 and each invalid byte six.
func jsonStringLen(s string) int { return sdkJSON.stringLen(s) }

// stringLen is the length of s as a JSON string escaped as t says; beyond ASCII, U+2028,
// U+2029 and each invalid byte take six bytes and every other character its UTF-8 bytes.
func (t *jsonEscapes) stringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n += int(t[c])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
