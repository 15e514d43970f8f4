package blobdocs

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"

	"github.com/unified-data/gotables/abstractions"
)

// A Serializer turns a document into the bytes of its blob and back. It sees the content
// before compression and after decompression: Compression and Content-Encoding are handled
// around it. Implement it for another format, an envelope around the payload, a checksum or
// encryption, and set it as Registration.Serializer (or Options.Serializer for every
// registration). Implementations must be safe for concurrent use.
type Serializer interface {
	// ContentType is the Content-Type the blobs are stored with, such as
	// "application/json". Reads do not check it: another client may have stored the blob
	// with a different one.
	ContentType() string
	// Marshal encodes the document v (a non-nil pointer to the registered type).
	Marshal(v any) ([]byte, error)
	// Unmarshal decodes data into v (a non-nil pointer to a zero value of the registered
	// type). An error matching abstractions.ErrNotFound makes the read report a missing
	// document: a serializer that knows what "deleted" means for its payload answers so.
	// Any other error fails the read with abstractions.ErrIntegrity.
	Unmarshal(data []byte, v any) error
}

// JSON is the default Serializer: encoding/json, stored as application/json. A blob
// holding the JSON literal null reads as a missing document.
//
// It is encoding/json rather than the table codec's fast JSON reader: that reader handles
// one shape (a table cell holding an array of strings), while a document is a whole tree of
// arbitrary shape, which encoding/json already decodes in one pass.
type JSON struct{}

// ContentType returns "application/json".
func (JSON) ContentType() string { return "application/json" }

// Marshal returns the JSON encoding of v.
func (JSON) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes the JSON document in data into v; the literal null is a missing
// document.
func (JSON) Unmarshal(data []byte, v any) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return fmt.Errorf("%w: the blob holds null", abstractions.ErrNotFound)
	}
	return json.Unmarshal(data, v)
}

// Compression is how a document's serialized bytes are compressed in its blob. Its value is
// the Content-Encoding the blob is stored with, so any HTTP client reading the blob knows
// how to inflate it.
type Compression string

// The compressions. Reads do not depend on the registration's Compression: they honour the
// Content-Encoding each blob carries, so a registration can change its compression, and a
// document written compressed by another client reads back, whatever the registration says.
const (
	// NoCompression stores the serialized bytes as they are, with no Content-Encoding.
	// The default.
	NoCompression Compression = ""
	// Gzip stores the bytes gzip-compressed (compress/gzip, default level), with
	// Content-Encoding: gzip.
	Gzip Compression = "gzip"
	// Brotli stores the bytes brotli-compressed (github.com/andybalholm/brotli, quality 6),
	// with Content-Encoding: br. It compresses JSON better than gzip, at a higher cost to
	// write.
	Brotli Compression = "br"
)

func (c Compression) valid() bool {
	return c == NoCompression || c == Gzip || c == Brotli
}

// compress returns data in c's encoding.
func (c Compression) compress(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch c {
	case NoCompression:
		return data, nil
	case Gzip:
		w = gzip.NewWriter(&buf)
	case Brotli:
		w = brotli.NewWriterLevel(&buf, brotli.DefaultCompression)
	default:
		return nil, fmt.Errorf("%w: unknown compression %q", abstractions.ErrInvalidArgument, string(c))
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errTooLarge reports content above Options.MaxSize.
var errTooLarge = errors.New("too large")

// inflate returns the content of a blob stored with the given Content-Encoding, refusing
// more than limit bytes once inflated. The encodings understood are none (empty or
// "identity"), gzip (also "x-gzip") and br; anything else, including a list of several
// encodings, fails with abstractions.ErrNotSupported, and data that does not inflate with
// abstractions.ErrIntegrity.
func inflate(raw []byte, encoding string, limit int64) ([]byte, error) {
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%w: the blob says Content-Encoding %s but is not gzip data: %v", abstractions.ErrIntegrity, encoding, err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(raw))
	default:
		return nil, fmt.Errorf("%w: the blob is stored with Content-Encoding %q; blob documents read only gzip, br or none",
			abstractions.ErrNotSupported, encoding)
	}
	data, err := readAtMost(r, limit)
	if err != nil && !errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("%w: the blob's %s content does not inflate: %v", abstractions.ErrIntegrity, encoding, err)
	}
	return data, err
}

// readAtMost reads r to its end, failing with errTooLarge past limit bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}
