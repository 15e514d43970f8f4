package service

import (
	"context"
	"io"
	"time"
)

// UploadMode says which condition an upload carries.
type UploadMode uint8

// Upload conditions.
const (
	// UploadOverwrite writes the blob whether or not it exists.
	UploadOverwrite UploadMode = iota
	// UploadCreate writes only if no blob has the name (If-None-Match: *); otherwise
	// 409 BlobAlreadyExists.
	UploadCreate
	// UploadIfMatch writes only over the blob with the given ETag (If-Match); otherwise
	// 412 ConditionNotMet.
	UploadIfMatch
)

// UploadOptions are the properties and condition of a blob upload.
type UploadOptions struct {
	Mode UploadMode
	// IfMatch is the ETag UploadIfMatch requires.
	IfMatch         string
	ContentType     string
	ContentEncoding string
	// Metadata is stored with the blob (x-ms-meta-* headers), replacing any it had. Names
	// are identifiers (ASCII letters, digits and underscores, not starting with a digit),
	// compared without regard to case; the service refuses others with 400
	// InvalidMetadata. Values are ASCII text, as HTTP headers carry it.
	Metadata map[string]string
}

// Conditions restrict a blob read or delete. Zero fields impose nothing.
type Conditions struct {
	// IfMatch requires the blob's current ETag.
	IfMatch string
	// IfUnmodifiedSince requires the blob not to have changed after this time (the
	// service compares at one-second resolution).
	IfUnmodifiedSince time.Time
}

// BlobProperties describe a stored blob.
type BlobProperties struct {
	ETag string
	// LastModified has one-second resolution, as the service reports it.
	LastModified    time.Time
	ContentLength   int64
	ContentType     string
	ContentEncoding string
}

// A Blob is a download in progress: the blob's properties, its metadata and its content.
// The caller must close Body.
type Blob struct {
	Properties BlobProperties
	// Metadata is what the last upload stored (UploadOptions.Metadata), with names in lower
	// case: the service does not keep their case. It is nil when there is none.
	Metadata map[string]string
	Body     io.ReadCloser
}

// BlobItem is one listed blob.
type BlobItem struct {
	Name       string
	Properties BlobProperties
}

// ListOptions select the blobs one List call returns.
type ListOptions struct {
	Prefix string
	// Delimiter, when set, folds names that continue past the prefix with the delimiter into
	// one entry of Prefixes ("directories").
	Delimiter string
	// Marker continues a listing where an earlier page ended; empty starts at the beginning.
	Marker string
	// MaxResults caps the page size; 0 means the service's maximum (5000).
	MaxResults int
}

// BlobPage is one page of a listing, in name order.
type BlobPage struct {
	Blobs    []BlobItem
	Prefixes []string
	// NextMarker continues the listing; empty when the listing is complete.
	NextMarker string
}

// Blobs is a blob service. Implementations are safe for concurrent use. Failures are
// *abstractions.StatusError values with the blob service's codes (404 BlobNotFound,
// 404 ContainerNotFound, 409 BlobAlreadyExists, 412 ConditionNotMet, …).
type Blobs interface {
	// CreateContainer creates a container; an existing one fails with 409 ContainerAlreadyExists.
	CreateContainer(ctx context.Context, container string) error
	// DeleteContainer deletes a container and its blobs; a missing one fails with 404
	// ContainerNotFound.
	DeleteContainer(ctx context.Context, container string) error
	// Upload stores data as the named blob under opts' condition.
	Upload(ctx context.Context, container, name string, data []byte, opts UploadOptions) (BlobProperties, error)
	// UploadStream stores what body delivers, to its end, as the named blob under opts'
	// condition, without holding the whole content in memory: large content is sent in
	// blocks and committed at the end. Nothing is stored when body fails (its error is
	// returned) or the condition does not hold; the condition is checked again at the
	// commit, so a blob another writer created meanwhile still fails UploadCreate.
	UploadStream(ctx context.Context, container, name string, body io.Reader, opts UploadOptions) (BlobProperties, error)
	// Touch marks the named blob as written now (its LastModified becomes the service's
	// time and its ETag changes) without changing its content, its headers or its
	// metadata, and returns its properties. A missing blob fails with 404 BlobNotFound.
	Touch(ctx context.Context, container, name string) (BlobProperties, error)
	// Download opens the named blob for reading; a missing blob fails with 404 BlobNotFound.
	Download(ctx context.Context, container, name string, cond Conditions) (*Blob, error)
	// DeleteBlob deletes the named blob under cond; a missing blob fails with 404 BlobNotFound.
	DeleteBlob(ctx context.Context, container, name string, cond Conditions) error
	// List returns one page of the container's blobs.
	List(ctx context.Context, container string, opts ListOptions) (BlobPage, error)
	// Now returns the service's clock, read from a response's Date header (one-second
	// resolution).
	Now(ctx context.Context) (time.Time, error)
}
