package blobdocs

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

// Writes that tell their own echo.
//
// The Azure SDK resends a request whose response was lost, or that met a 500 or 503, and
// the answer to the resend becomes the call's result. When the first try was applied, that
// answer can be a refusal the write caused itself: 409 BlobAlreadyExists for a create, 412
// for an upload conditional on the ETag the first try replaced, 404 (412 on Azurite) for a
// conditional delete. A call may also get no answer at all.
//
// Every upload stores a write token, a random string unique to the call, as the blob's
// metadata (tokenKey). When a refusal follows a resend, or no answer came, the write reads
// the blob: if it carries the call's token, the write is stored and the call succeeds with
// the stored ETag. Content alone could not tell: two writers of a counter store the same
// bytes. A delete leaves nothing to read, so a conditional delete refused after a resend
// cannot be told from a lost race, and says so; an unconditional delete succeeds whenever the
// blob is gone, whoever removed it.

// tokenKey is the metadata name of the write token.
const tokenKey = "blobdocs_write"

// upload stores data as the named blob under opts' condition with a new write token, and
// returns the stored ETag. A failed upload that its own applied try may explain is settled
// by reading the token back (see above).
func (b *binding) upload(ctx context.Context, op, name string, data []byte, opts service.UploadOptions) (string, error) {
	token := rand.Text()
	opts.Metadata = map[string]string{tokenKey: token}
	tctx, tries := attempt.WithAttempts(ctx)
	props, err := b.blobs.Upload(tctx, b.container, name, data, opts)
	if err == nil {
		return props.ETag, nil
	}
	failed := translate(callerr.Write, op, b.container, name, err)
	echo := tries.Retried() && refusesOwnEcho(opts.Mode, err)
	if !echo && !errors.Is(failed, abstractions.ErrUnavailable) {
		return "", failed
	}
	etag, ours, rerr := b.holds(ctx, name, token)
	switch {
	case ours:
		return etag, nil
	case !echo:
		return "", failed // no answer, and not stored: the error says the outcome is unknown
	case rerr != nil:
		return "", unknownOutcome(ctx, op, b.container, name,
			"the service refused a resend of this write, and the read that would tell whether its first try was applied failed", err)
	}
	return "", unknownOutcome(ctx, op, b.container, name,
		"the service refused a resend of this write, and the document stored is not the one this call wrote: "+
			"either its first try was refused too, or it was applied and another writer has replaced or deleted it since", err)
}

// refusesOwnEcho reports whether err is the refusal a resend of an applied upload of mode
// meets.
func refusesOwnEcho(mode service.UploadMode, err error) bool {
	switch mode {
	case service.UploadCreate:
		return abstractions.HasStatus(err, http.StatusConflict, "BlobAlreadyExists")
	case service.UploadIfMatch:
		return abstractions.HasStatus(err, http.StatusPreconditionFailed, "")
	}
	return false
}

// holds reads the named blob and reports whether it carries token, with its ETag. A missing
// blob carries none; a read that fails returns its error.
func (b *binding) holds(ctx context.Context, name, token string) (etag string, ours bool, err error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	blob, err := b.blobs.Download(ctx, b.container, name, service.Conditions{})
	if abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	blob.Body.Close()
	return blob.Properties.ETag, blob.Metadata[tokenKey] == token, nil
}

// gone reports whether the named blob is known to be missing.
func (b *binding) gone(ctx context.Context, name string) bool {
	if ctx.Err() != nil {
		return false
	}
	blob, err := b.blobs.Download(ctx, b.container, name, service.Conditions{})
	if err == nil {
		blob.Body.Close()
	}
	return abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound")
}
