package faults

import (
	"context"
	"net/http"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

// Blobs is a service.Blobs that injects its Plan's faults into the calls of the blob
// service it wraps, with the retries of Tables. Downloads, listings and Now are Reads;
// uploads and blob deletes are Writes (the SDK sends both as PUT or DELETE, so a reset
// mid-body is resent); container calls are TableCalls.
type Blobs struct {
	service.Blobs
	Plan
	// Retries is as Tables.Retries.
	Retries int
}

// NewBlobs returns a Blobs over inner.
func NewBlobs(inner service.Blobs) *Blobs { return &Blobs{Blobs: inner} }

var _ service.Blobs = (*Blobs)(nil)

func (b *Blobs) run(ctx context.Context, kind Calls, call func() error) error {
	t := Tables{Retries: b.Retries}
	return runWith(ctx, &b.Plan, t.retries(), kind, true, call)
}

// CreateContainer implements service.Blobs.
func (b *Blobs) CreateContainer(ctx context.Context, container string) error {
	return b.run(ctx, TableCalls, func() error { return b.Blobs.CreateContainer(ctx, container) })
}

// DeleteContainer implements service.Blobs.
func (b *Blobs) DeleteContainer(ctx context.Context, container string) error {
	return b.run(ctx, TableCalls, func() error { return b.Blobs.DeleteContainer(ctx, container) })
}

// Upload implements service.Blobs.
func (b *Blobs) Upload(ctx context.Context, container, name string, data []byte, opts service.UploadOptions) (p service.BlobProperties, err error) {
	err = b.run(ctx, Writes, func() (err error) { p, err = b.Blobs.Upload(ctx, container, name, data, opts); return err })
	return p, err
}

// Download implements service.Blobs.
func (b *Blobs) Download(ctx context.Context, container, name string, cond service.Conditions) (blob *service.Blob, err error) {
	err = b.run(ctx, Reads, func() (err error) {
		if blob != nil {
			blob.Body.Close() // a try whose answer was lost
		}
		blob, err = b.Blobs.Download(ctx, container, name, cond)
		return err
	})
	if err != nil && blob != nil {
		blob.Body.Close()
		blob = nil
	}
	return blob, err
}

// DeleteBlob implements service.Blobs.
func (b *Blobs) DeleteBlob(ctx context.Context, container, name string, cond service.Conditions) error {
	return b.run(ctx, Writes, func() error { return b.Blobs.DeleteBlob(ctx, container, name, cond) })
}

// List implements service.Blobs.
func (b *Blobs) List(ctx context.Context, container string, opts service.ListOptions) (page service.BlobPage, err error) {
	err = b.run(ctx, Reads, func() (err error) { page, err = b.Blobs.List(ctx, container, opts); return err })
	return page, err
}

// Now implements service.Blobs.
func (b *Blobs) Now(ctx context.Context) (now time.Time, err error) {
	err = b.run(ctx, Reads, func() (err error) { now, err = b.Blobs.Now(ctx); return err })
	return now, err
}

// statusFault is the answer of an InternalError or ServerBusy fault.
func statusFault(f Fault) error {
	if f == InternalError {
		return &abstractions.StatusError{StatusCode: http.StatusInternalServerError, ErrorCode: "InternalError", Message: "The server encountered an internal error (injected)."}
	}
	return &abstractions.StatusError{StatusCode: http.StatusServiceUnavailable, ErrorCode: "ServerBusy", Message: "The server is busy (injected)."}
}
