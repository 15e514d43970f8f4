package blobdocs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/telemetry"
	"github.com/unified-data/gotables/tables/service"
)

// DefaultMaxSize is the largest document a Registry reads or writes unless Options.MaxSize
// says otherwise: 64 MiB, serialized and inflated.
const DefaultMaxSize = 64 << 20

// Options configure a Registry. A nil *Options, like the zero value, means the defaults.
type Options struct {
	// Serializer is the serializer of registrations that name none; nil means JSON.
	Serializer Serializer
	// MaxSize is the largest document, in bytes, that a write stores or a read accepts:
	// the serialized bytes before compression, the blob as stored, and its content once
	// inflated. A read of a larger blob fails with abstractions.ErrOversizedValue before it
	// inflates more than MaxSize bytes, so a small compressed blob cannot expand without
	// bound. 0 means DefaultMaxSize; a negative value is refused.
	MaxSize int64
}

// Registry is the set of document types registered over one blob service. A type is
// registered once, as a document (Register) or as a state document (RegisterState); the
// handle the registration returns does the reads and writes. A Registry is safe for
// concurrent use; make one per blob service and keep it with the handles.
type Registry struct {
	blobs      service.Blobs
	tel        *telemetry.Telemetry // the account's, when blobs is an account's (Account.Blobs)
	serializer Serializer
	maxSize    int64

	mu    sync.Mutex
	types map[reflect.Type]string // registered type → "document" or "state document"
}

// New returns an empty Registry over a blob service: an Azure account's (tables.NewAccount
// with tables.Options{Blobs: azblobs.Connect}, then Account.Blobs) or an in-memory one's
// (inmemory.NewAccount(nil).Blobs()). The documents' calls are traced and measured with the
// account's options when blobs is the value Account.Blobs returns (a wrapper of it carries
// no telemetry). A nil service is refused with
// abstractions.ErrInvalidArgument, as are negative Options.MaxSize.
func New(blobs service.Blobs, opts *Options) (*Registry, error) {
	if blobs == nil {
		return nil, fmt.Errorf("%w: blobdocs: the blob service is nil; an Azure account has one only when built "+
			"with tables.Options{Blobs: azblobs.Connect}", abstractions.ErrInvalidArgument)
	}
	r := &Registry{blobs: blobs, tel: telemetry.From(blobs), serializer: JSON{}, maxSize: DefaultMaxSize, types: map[reflect.Type]string{}}
	if opts != nil {
		if opts.Serializer != nil {
			r.serializer = opts.Serializer
		}
		switch {
		case opts.MaxSize < 0:
			return nil, fmt.Errorf("%w: blobdocs: Options.MaxSize is negative (%d)", abstractions.ErrInvalidArgument, opts.MaxSize)
		case opts.MaxSize > 0:
			r.maxSize = opts.MaxSize
		}
	}
	return r, nil
}

// NameContext is what a blob-name function is given: which document is being addressed.
type NameContext struct {
	// Type is the registered document type.
	Type reflect.Type
	// ID is the document's identity, as the caller gave it (never empty).
	ID string
	// Tenant is the tenant the handle was scoped to with WithTenant; empty when there is
	// none.
	Tenant string
}

// Registration says where the documents of one type live. Container and BlobName are
// required: there is no default layout, because the mapping from identity to blob name is
// what only the application knows, and a layout this package chose would not fit a
// container that already holds blobs.
type Registration struct {
	// Container is the blob container holding the documents. It must exist: blob
	// documents never create containers, and a read or write in a missing one fails with
	// ErrContainerNotFound.
	Container string
	// BlobName returns the name of the blob holding a document, such as
	//
	//	func(c blobdocs.NameContext) string { return "invoices/v7/" + c.Tenant + "/" + c.ID + ".json" }
	//
	// It must be deterministic and safe for concurrent use. A name that is empty, not valid
	// UTF-8, longer than 1024 characters or of more than 254 "/"-separated segments fails
	// the call with abstractions.ErrInvalidKey before anything is sent.
	BlobName func(NameContext) string
	// Serializer turns documents into blob content and back; nil means the Registry's
	// (Options.Serializer, by default JSON).
	Serializer Serializer
	// Compression is how new blobs are compressed; reads honour each blob's own
	// Content-Encoding whatever this says.
	Compression Compression
}

// binding is one registration, as its handles use it.
type binding struct {
	blobs       service.Blobs
	tel         *telemetry.Telemetry
	typ         reflect.Type
	container   string
	name        func(NameContext) string
	serializer  Serializer
	compression Compression
	maxSize     int64
}

// register checks and records a registration of T as kind.
func register[T any](r *Registry, reg Registration, kind string) (*binding, error) {
	typ := reflect.TypeFor[T]()
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: blobdocs: registering %v as a %s: %s", abstractions.ErrInvalidArgument, typ, kind, fmt.Sprintf(format, args...))
	}
	if r == nil {
		return nil, refuse("the registry is nil; make one with blobdocs.New")
	}
	if reg.Container == "" || reg.BlobName == nil {
		return nil, refuse("both Container and BlobName are required (there is no default blob layout)")
	}
	if err := checkContainerName(reg.Container); err != nil {
		return nil, refuse("%v", err)
	}
	if !reg.Compression.valid() {
		return nil, refuse("unknown Compression %q (use NoCompression, Gzip or Brotli)", string(reg.Compression))
	}
	b := &binding{
		blobs: r.blobs, tel: r.tel, typ: typ, container: reg.Container, name: reg.BlobName,
		serializer: reg.Serializer, compression: reg.Compression, maxSize: r.maxSize,
	}
	if b.serializer == nil {
		b.serializer = r.serializer
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.types[typ]; ok {
		return nil, refuse("the type is already registered as a %s of this registry; register each type once", prev)
	}
	r.types[typ] = kind
	return b, nil
}

// begin starts the telemetry of a call of a document handle: a span and a measurement
// named by the operation and the container, when the registry's account traces or
// measures.
func (b *binding) begin(ctx context.Context, op string) (context.Context, telemetry.Call) {
	return b.tel.Begin(ctx, b.container, op)
}

// checkContainerName applies the service's container-name rules, so that a malformed name
// is refused at registration rather than at the first call: 3 to 63 characters, lower-case
// letters, digits and hyphens, starting and ending with a letter or digit, no two hyphens
// in a row.
func checkContainerName(name string) error {
	bad := len(name) < 3 || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--")
	for i := 0; i < len(name) && !bad; i++ {
		c := name[i]
		bad = !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-')
	}
	if bad {
		return fmt.Errorf("the container name %q is not valid: 3 to 63 lower-case letters, digits and single hyphens, "+
			"starting and ending with a letter or digit", name)
	}
	return nil
}

// Blob-name limits of the service.
const (
	maxBlobNameChars    = 1024
	maxBlobNameSegments = 254
)

// blobName returns the name of the blob holding the document id of tenant, refusing an
// unusable id or name with abstractions.ErrInvalidKey.
func (b *binding) blobName(op, id, tenant string) (string, error) {
	if id == "" || !utf8.ValidString(id) {
		return "", refuse(abstractions.ErrInvalidKey, op, b.container, "", "the id %q is empty or not valid UTF-8", id)
	}
	name := b.name(NameContext{Type: b.typ, ID: id, Tenant: tenant})
	switch {
	case name == "" || !utf8.ValidString(name):
		return "", refuse(abstractions.ErrInvalidKey, op, b.container, "",
			"the BlobName function returned %q for id %q, which is empty or not valid UTF-8", name, id)
	case utf8.RuneCountInString(name) > maxBlobNameChars:
		return "", refuse(abstractions.ErrInvalidKey, op, b.container, "",
			"the BlobName function returned a name of %d characters for id %q; the service allows %d",
			utf8.RuneCountInString(name), id, maxBlobNameChars)
	case strings.Count(name, "/")+1 > maxBlobNameSegments:
		return "", refuse(abstractions.ErrInvalidKey, op, b.container, "",
			"the BlobName function returned a name of more than %d path segments for id %q", maxBlobNameSegments, id)
	}
	return name, nil
}

// read downloads the named blob and decodes it into v, returning the blob's ETag.
func (b *binding) read(ctx context.Context, op, name string, v any) (string, error) {
	blob, err := b.blobs.Download(ctx, b.container, name, service.Conditions{})
	if err != nil {
		return "", translate(callerr.Read, op, b.container, name, err)
	}
	defer blob.Body.Close()
	if blob.Properties.ContentLength > b.maxSize {
		return "", b.tooLarge(op, name, fmt.Sprintf("the stored blob is %d bytes, more than %d", blob.Properties.ContentLength, b.maxSize))
	}
	raw, err := readAtMost(blob.Body, b.maxSize)
	if errors.Is(err, errTooLarge) {
		return "", b.tooLarge(op, name, fmt.Sprintf("the stored blob is more than %d bytes", b.maxSize))
	}
	if err != nil {
		return "", translate(callerr.Read, op, b.container, name, err)
	}
	data, err := inflate(raw, blob.Properties.ContentEncoding, b.maxSize)
	switch {
	case errors.Is(err, errTooLarge):
		return "", b.tooLarge(op, name, fmt.Sprintf("the document is more than %d bytes once inflated", b.maxSize))
	case errors.Is(err, abstractions.ErrNotSupported):
		return "", &Error{Kind: abstractions.ErrNotSupported, Op: op, Container: b.container, Blob: name,
			Message: "the blob's Content-Encoding cannot be read back", Err: err}
	case err != nil:
		return "", &Error{Kind: abstractions.ErrIntegrity, Op: op, Container: b.container, Blob: name,
			Message: "the blob's content does not match its Content-Encoding", Err: err}
	}
	if err := b.serializer.Unmarshal(data, v); err != nil {
		if errors.Is(err, abstractions.ErrNotFound) {
			return "", &Error{Kind: abstractions.ErrNotFound, Op: op, Container: b.container, Blob: name,
				Message: "the serializer reads the stored blob as no document", Err: err}
		}
		return "", &Error{Kind: abstractions.ErrIntegrity, Op: op, Container: b.container, Blob: name,
			Message: fmt.Sprintf("the stored blob does not decode as %v; check the registration's Serializer", b.typ), Err: err}
	}
	return blob.Properties.ETag, nil
}

// tooLarge is the refusal of a read above Options.MaxSize; what says what was found.
func (b *binding) tooLarge(op, name, what string) error {
	return refuse(abstractions.ErrOversizedValue, op, b.container, name,
		"%s, the registry's limit (Options.MaxSize); raise Options.MaxSize to read it", what)
}

// write encodes v and uploads it as the named blob under opts' condition, returning the new
// ETag (see upload for a write whose answer was lost).
func (b *binding) write(ctx context.Context, op, name string, v any, opts service.UploadOptions) (string, error) {
	data, err := b.serializer.Marshal(v)
	if err != nil {
		return "", &Error{Kind: abstractions.ErrInvalidArgument, Op: op, Container: b.container, Blob: name,
			Message: fmt.Sprintf("the document does not serialize as %v", b.typ), Err: err}
	}
	if int64(len(data)) > b.maxSize {
		return "", refuse(abstractions.ErrOversizedValue, op, b.container, name,
			"the serialized document is %d bytes, above the registry's limit of %d; raise Options.MaxSize", len(data), b.maxSize)
	}
	data, err = b.compression.compress(data)
	if err != nil {
		return "", &Error{Kind: abstractions.ErrInvalidArgument, Op: op, Container: b.container, Blob: name,
			Message: "the document could not be compressed", Err: err}
	}
	opts.ContentType = b.serializer.ContentType()
	opts.ContentEncoding = string(b.compression)
	return b.upload(ctx, op, name, data, opts)
}

// deleteBlob deletes the named blob under cond.
func (b *binding) deleteBlob(ctx context.Context, name string, cond service.Conditions) error {
	return b.blobs.DeleteBlob(ctx, b.container, name, cond)
}
