package azblobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/azconn"
	"github.com/unified-data/gotables/tables/service"
)

// identityEncoding asks for blob content as stored (see Download).
var identityEncoding = http.Header{"Accept-Encoding": []string{"identity"}}

// defaultContentType is what the service stores for a blob uploaded without a content type.
const defaultContentType = "application/octet-stream"

func (s *Service) container(name string) (*container.Client, error) {
	return s.blobs.ServiceClient().NewContainerClient(name), nil
}

// CreateContainer creates a container; an existing one fails with 409
// ContainerAlreadyExists.
func (s *Service) CreateContainer(ctx context.Context, name string) error {
	c, err := s.container(name)
	if err != nil {
		return err
	}
	_, err = c.Create(ctx, nil)
	return mapError(ctx, "create container", err)
}

// DeleteContainer deletes a container and its blobs; a missing one fails with 404
// ContainerNotFound.
func (s *Service) DeleteContainer(ctx context.Context, name string) error {
	c, err := s.container(name)
	if err != nil {
		return err
	}
	_, err = c.Delete(ctx, nil)
	return mapError(ctx, "delete container", err)
}

// Upload stores data as the named blob with one Put Blob request, so the condition is
// checked before anything is stored: UploadCreate sends If-None-Match: * (an existing blob
// fails with 409 BlobAlreadyExists), UploadIfMatch sends If-Match with opts.IfMatch, or *
// when it is empty, as for row actions (a changed blob fails with 412 ConditionNotMet).
// The returned properties are those the service reports on a later read; a blob stored
// without a content type reads back as application/octet-stream. opts.Metadata is sent as
// x-ms-meta-* headers. Upload refuses an unknown mode without sending anything.
func (s *Service) Upload(ctx context.Context, containerName, name string, data []byte, opts service.UploadOptions) (service.BlobProperties, error) {
	c, err := s.container(containerName)
	if err != nil {
		return service.BlobProperties{}, err
	}
	cond, err := uploadConditions(opts)
	if err != nil {
		return service.BlobProperties{}, err
	}
	uo := &blockblob.UploadOptions{HTTPHeaders: uploadHeaders(opts), Metadata: uploadMetadata(opts), AccessConditions: cond}
	resp, err := c.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), uo)
	if err != nil {
		return service.BlobProperties{}, mapError(ctx, "upload", err)
	}
	props := service.BlobProperties{
		ETag:            etagString(resp.ETag),
		LastModified:    timeOf(resp.LastModified),
		ContentLength:   int64(len(data)),
		ContentType:     opts.ContentType,
		ContentEncoding: opts.ContentEncoding,
	}
	if props.ContentType == "" {
		props.ContentType = defaultContentType
	}
	return props, nil
}

// uploadHeaders returns the headers an upload stores with the blob: opts' content type and
// encoding, when set.
func uploadHeaders(opts service.UploadOptions) *blob.HTTPHeaders {
	h := &blob.HTTPHeaders{}
	if opts.ContentType != "" {
		h.BlobContentType = &opts.ContentType
	}
	if opts.ContentEncoding != "" {
		h.BlobContentEncoding = &opts.ContentEncoding
	}
	return h
}

// uploadMetadata returns the metadata an upload stores, as the SDK takes it; nil for none.
func uploadMetadata(opts service.UploadOptions) map[string]*string {
	if len(opts.Metadata) == 0 {
		return nil
	}
	md := make(map[string]*string, len(opts.Metadata))
	for k, v := range opts.Metadata {
		md[k] = &v
	}
	return md
}

// downloadedMetadata returns a blob's metadata with names in lower case (the SDK reports
// them as Go canonicalizes header names); nil for none.
func downloadedMetadata(md map[string]*string) map[string]string {
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]string, len(md))
	for k, v := range md {
		out[strings.ToLower(k)] = azconn.Deref(v)
	}
	return out
}

// uploadConditions returns the condition of an upload's mode: none for UploadOverwrite,
// If-None-Match: * for UploadCreate, If-Match with opts.IfMatch (or * when it is empty) for
// UploadIfMatch. An unknown mode is an error.
func uploadConditions(opts service.UploadOptions) (*blob.AccessConditions, error) {
	switch opts.Mode {
	case service.UploadOverwrite:
		return nil, nil
	case service.UploadCreate:
		star := azcore.ETagAny
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &star}}, nil
	case service.UploadIfMatch:
		etag := azcore.ETag(opts.IfMatch)
		if etag == "" {
			etag = azcore.ETagAny
		}
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}, nil
	}
	return nil, fmt.Errorf("azblobs: upload: unknown mode %d", opts.Mode)
}

// Block sizes of UploadStream: blocks of streamBlockSize bytes, at most streamConcurrency of
// them in flight, so an upload holds at most their product in memory whatever its size.
// Chosen by measurement on Azurite, against azblob's defaults (1 MiB, one at a time), 4 MiB
// × 2, 4 MiB × 4, 2 MiB × 3 and 8 MiB × 2: 8 MiB × 2 was as fast and holds more memory,
// the others were slower.
const (
	streamBlockSize   = 4 << 20
	streamConcurrency = 3
)

// UploadStream stores what body delivers as the named blob with the SDK's staged upload:
// content smaller than one block is one Put Blob (the condition checked before anything is
// stored); larger content is sent as blocks of 4 MiB, at most three in flight, and committed
// with one Put Block List that carries the condition, so nothing is stored when body fails
// or the condition does not hold. UploadCreate first asks whether the blob exists (one Get
// Blob Properties), so that an upload bound to fail does not send its blocks; the commit
// still carries If-None-Match: *, which a blob created meanwhile fails (the service answers
// 409 BlobAlreadyExists or 412 ConditionNotMet there; both are reported as 409
// BlobAlreadyExists). Upload refuses an unknown mode without sending anything.
func (s *Service) UploadStream(ctx context.Context, containerName, name string, body io.Reader, opts service.UploadOptions) (service.BlobProperties, error) {
	c, err := s.container(containerName)
	if err != nil {
		return service.BlobProperties{}, err
	}
	cond, err := uploadConditions(opts)
	if err != nil {
		return service.BlobProperties{}, err
	}
	uo := &blockblob.UploadStreamOptions{BlockSize: streamBlockSize, Concurrency: streamConcurrency,
		HTTPHeaders: uploadHeaders(opts), Metadata: uploadMetadata(opts), AccessConditions: cond}
	bc := c.NewBlockBlobClient(name)
	if opts.Mode == service.UploadCreate {
		if _, err := bc.GetProperties(ctx, nil); err == nil {
			return service.BlobProperties{}, &abstractions.StatusError{StatusCode: http.StatusConflict, ErrorCode: "BlobAlreadyExists",
				Message: "The specified blob already exists."}
		} else if !bloberror.HasCode(err, bloberror.BlobNotFound) && !isStatus(err, http.StatusNotFound) {
			return service.BlobProperties{}, mapError(ctx, "upload", err)
		}
	}
	counted := &countingReader{r: body}
	resp, err := bc.UploadStream(ctx, counted, uo)
	if err != nil {
		if opts.Mode == service.UploadCreate && bloberror.HasCode(err, bloberror.ConditionNotMet) {
			return service.BlobProperties{}, &abstractions.StatusError{StatusCode: http.StatusConflict, ErrorCode: "BlobAlreadyExists",
				Message: "The specified blob already exists.", Err: err}
		}
		if counted.err != nil {
			// The body failed: report its own error, which the SDK wraps.
			return service.BlobProperties{}, counted.err
		}
		return service.BlobProperties{}, mapError(ctx, "upload", err)
	}
	props := service.BlobProperties{
		ETag:            etagString(resp.ETag),
		LastModified:    timeOf(resp.LastModified),
		ContentLength:   counted.n,
		ContentType:     opts.ContentType,
		ContentEncoding: opts.ContentEncoding,
	}
	if props.ContentType == "" {
		props.ContentType = defaultContentType
	}
	return props, nil
}

// countingReader counts what an upload read and keeps the reader's own failure.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// isStatus reports an SDK response error with the status (a HEAD answer carries no code
// in its body).
func isStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}

// Touch marks the named blob as written now: it reads the blob's properties and sets its
// metadata to what it holds, on condition of the ETag read, which changes its
// LastModified and ETag and nothing else. A blob changed between the two requests is read
// again (three attempts in all).
func (s *Service) Touch(ctx context.Context, containerName, name string) (service.BlobProperties, error) {
	c, err := s.container(containerName)
	if err != nil {
		return service.BlobProperties{}, err
	}
	bc := c.NewBlobClient(name)
	var last error
	for range 3 {
		p, err := bc.GetProperties(ctx, nil)
		if err != nil {
			if isStatus(err, http.StatusNotFound) {
				return service.BlobProperties{}, &abstractions.StatusError{StatusCode: http.StatusNotFound, ErrorCode: "BlobNotFound",
					Message: "The specified blob does not exist.", Err: err}
			}
			return service.BlobProperties{}, mapError(ctx, "touch", err)
		}
		resp, err := bc.SetMetadata(ctx, p.Metadata, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: p.ETag}}})
		if err == nil {
			return service.BlobProperties{
				ETag:            etagString(resp.ETag),
				LastModified:    timeOf(resp.LastModified),
				ContentLength:   azconn.Deref(p.ContentLength),
				ContentType:     azconn.Deref(p.ContentType),
				ContentEncoding: azconn.Deref(p.ContentEncoding),
			}, nil
		}
		last = mapError(ctx, "touch", err)
		if !bloberror.HasCode(err, bloberror.ConditionNotMet) {
			return service.BlobProperties{}, last
		}
	}
	return service.BlobProperties{}, last
}

// Download opens the named blob for reading under cond, with its metadata (names in lower
// case). The body is the SDK's retry
// reader: a broken connection is resumed with If-Match on the first response's ETag, so a
// blob overwritten mid-read fails the read instead of mixing two versions. The caller must
// close the body.
func (s *Service) Download(ctx context.Context, containerName, name string, cond service.Conditions) (*service.Blob, error) {
	c, err := s.container(containerName)
	if err != nil {
		return nil, err
	}
	// Blob content is opaque bytes to this library. Without an Accept-Encoding header Go's
	// HTTP transport asks for gzip itself and then transparently gunzips a response whose
	// Content-Encoding is gzip, so a blob stored with that encoding would come back decoded
	// (or, if it is not really gzip, fail to read). The header rides on the context, so it
	// holds for every client, and for the retry reader's resumed requests.
	ctx = policy.WithHTTPHeader(ctx, identityEncoding)
	resp, err := c.NewBlobClient(name).DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: accessConditions(cond)})
	if err != nil {
		return nil, mapError(ctx, "download", err)
	}
	if resp.Body == nil {
		// azblob turns a 304 into a success without a body. The conditions this contract
		// offers cannot produce one, but report it rather than hand out a nil body.
		code := ""
		if resp.ErrorCode != nil {
			code = *resp.ErrorCode
		}
		return nil, &abstractions.StatusError{StatusCode: http.StatusNotModified, ErrorCode: code, Message: "the blob was not modified"}
	}
	props := service.BlobProperties{
		ETag:            etagString(resp.ETag),
		LastModified:    timeOf(resp.LastModified),
		ContentLength:   azconn.Deref(resp.ContentLength),
		ContentType:     azconn.Deref(resp.ContentType),
		ContentEncoding: azconn.Deref(resp.ContentEncoding),
	}
	return &service.Blob{Properties: props, Metadata: downloadedMetadata(resp.Metadata),
		Body: &blobBody{ctx: ctx, r: resp.NewRetryReader(ctx, nil)}}, nil
}

// blobBody maps the errors of a download's later requests (the retry reader's resumptions)
// as the other calls map theirs.
type blobBody struct {
	ctx context.Context
	r   io.ReadCloser
}

func (b *blobBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = mapError(b.ctx, "read blob", err)
	}
	return n, err
}

func (b *blobBody) Close() error { return b.r.Close() }

// DeleteBlob deletes the named blob under cond; a missing blob fails with 404 BlobNotFound,
// a failed condition with 412 ConditionNotMet.
func (s *Service) DeleteBlob(ctx context.Context, containerName, name string, cond service.Conditions) error {
	c, err := s.container(containerName)
	if err != nil {
		return err
	}
	_, err = c.NewBlobClient(name).Delete(ctx, &blob.DeleteOptions{AccessConditions: accessConditions(cond)})
	return mapError(ctx, "delete blob", err)
}

func accessConditions(cond service.Conditions) *blob.AccessConditions {
	if cond.IfMatch == "" && cond.IfUnmodifiedSince.IsZero() {
		return nil
	}
	m := &blob.ModifiedAccessConditions{}
	if cond.IfMatch != "" {
		etag := azcore.ETag(cond.IfMatch)
		m.IfMatch = &etag
	}
	if !cond.IfUnmodifiedSince.IsZero() {
		t := cond.IfUnmodifiedSince
		m.IfUnmodifiedSince = &t
	}
	return &blob.AccessConditions{ModifiedAccessConditions: m}
}

// List returns one page of the container's blobs: one List Blobs call, hierarchical when
// opts.Delimiter is set, flat otherwise. Listed ETags are quoted like those of the other
// calls (the listing itself sends them bare).
func (s *Service) List(ctx context.Context, containerName string, opts service.ListOptions) (service.BlobPage, error) {
	c, err := s.container(containerName)
	if err != nil {
		return service.BlobPage{}, err
	}
	var prefix, marker *string
	if opts.Prefix != "" {
		prefix = &opts.Prefix
	}
	if opts.Marker != "" {
		marker = &opts.Marker
	}
	var maxResults *int32
	if opts.MaxResults > 0 {
		m := int32(min(opts.MaxResults, 5000))
		maxResults = &m
	}
	var page service.BlobPage
	if opts.Delimiter != "" {
		resp, err := c.NewListBlobsHierarchyPager(opts.Delimiter, &container.ListBlobsHierarchyOptions{
			Prefix: prefix, Marker: marker, MaxResults: maxResults,
		}).NextPage(ctx)
		if err != nil {
			return service.BlobPage{}, mapError(ctx, "list blobs", err)
		}
		if seg := resp.Segment; seg != nil {
			page.Blobs = blobItems(seg.BlobItems)
			for _, p := range seg.BlobPrefixes {
				if p != nil && p.Name != nil {
					page.Prefixes = append(page.Prefixes, *p.Name)
				}
			}
		}
		page.NextMarker = azconn.Deref(resp.NextMarker)
		return page, nil
	}
	resp, err := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Prefix: prefix, Marker: marker, MaxResults: maxResults,
	}).NextPage(ctx)
	if err != nil {
		return service.BlobPage{}, mapError(ctx, "list blobs", err)
	}
	if resp.Segment != nil {
		page.Blobs = blobItems(resp.Segment.BlobItems)
	}
	page.NextMarker = azconn.Deref(resp.NextMarker)
	return page, nil
}

func blobItems(items []*container.BlobItem) []service.BlobItem {
	out := make([]service.BlobItem, 0, len(items))
	for _, it := range items {
		if it == nil || it.Name == nil {
			continue
		}
		bi := service.BlobItem{Name: *it.Name}
		if p := it.Properties; p != nil {
			bi.Properties = service.BlobProperties{
				ETag:            quoteETag(etagString(p.ETag)),
				LastModified:    timeOf(p.LastModified),
				ContentLength:   azconn.Deref(p.ContentLength),
				ContentType:     azconn.Deref(p.ContentType),
				ContentEncoding: azconn.Deref(p.ContentEncoding),
			}
		}
		out = append(out, bi)
	}
	return out
}

// Now returns the blob service's clock: the Date header of a Get Blob Service Properties
// response. Every response carries one, so Now reads it even from a refusal (a SAS without
// service-level permission answers 403 with a Date); only a failure to reach the service
// fails.
func (s *Service) Now(ctx context.Context) (time.Time, error) {
	var raw *http.Response
	_, err := s.blobs.ServiceClient().GetProperties(policy.WithCaptureResponse(ctx, &raw), nil)
	if raw != nil {
		if t, perr := http.ParseTime(raw.Header.Get("Date")); perr == nil {
			return t.UTC(), nil
		}
	}
	if err == nil {
		return time.Time{}, fmt.Errorf("azservice: now: the service's response has no valid Date header")
	}
	return time.Time{}, mapError(ctx, "now", err)
}

func etagString(e *azcore.ETag) string {
	if e == nil {
		return ""
	}
	return string(*e)
}

// quoteETag returns a listed ETag in the form the headers use. The listing's XML writes a
// blob's ETag without quotes (0x8D…) where every response header quotes it ("0x8D…");
// one blob version should have one ETag string, whichever call reported it.
func quoteETag(e string) string {
	if e == "" || strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`) {
		return e
	}
	return `"` + e + `"`
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}
