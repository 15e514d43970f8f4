package azservice

import (
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// asciiBodies rewrites the JSON body of a request so that it holds only ASCII: every other
// character becomes a \u escape (a UTF-16 surrogate pair above U+FFFF), which the service
// reads as the same text.
//
// It is there for Azurite 3.35, which decodes the body of a single-entity write chunk by
// chunk as it arrives: a multi-byte character that straddles two chunks is stored as U+FFFD
// replacement characters, and a value near a size limit may grow past it and be refused
// (Azure/Azurite#2670; the multipart bodies of transactions are read whole and are not
// affected). An ASCII body has no character to split. The constructors add the policy only
// for the emulator's development account (on Azure it would only make bodies longer), to
// the aztables clients; the row client escapes the entity bodies it writes as it writes
// them (rowClient.write), without reading them back.
//
// Outside JSON strings, JSON is ASCII, so escaping every non-ASCII character of the body
// changes no structure. The body is the SDK's own encoding (it decodes and re-encodes each
// entity), which holds valid UTF-8; an invalid byte would become U+FFFD, as JSON requires.
type asciiBodies struct{}

func (asciiBodies) Do(req *policy.Request) (*http.Response, error) {
	body := req.Body()
	ct := req.Raw().Header.Get("Content-Type")
	if body == nil || !strings.HasPrefix(ct, "application/json") {
		return req.Next()
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if i := firstNonASCII(data); i >= 0 {
		if err := setMemBody(req, escapeNonASCII(data, i), ct); err != nil {
			return nil, err
		}
	}
	return req.Next()
}

// firstNonASCII returns the index of the first byte of data outside ASCII, or -1.
func firstNonASCII(data []byte) int {
	for i, b := range data {
		if b >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

// escapeNonASCII returns data with every character from index from on that is not ASCII
// written as \u escapes; data[:from] must be ASCII.
func escapeNonASCII(data []byte, from int) []byte {
	out := make([]byte, 0, len(data)+len(data)/2)
	out = append(out, data[:from]...)
	for i := from; i < len(data); {
		b := data[i]
		if b < utf8.RuneSelf {
			out = append(out, b)
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			out = appendEscape(out, 0xd800+(r>>10))
			out = appendEscape(out, 0xdc00+(r&0x3ff))
			continue
		}
		out = appendEscape(out, r) // utf8.RuneError for an invalid byte
	}
	return out
}

func appendEscape(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
