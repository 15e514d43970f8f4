package emulator

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// Containers.

func (q *blobRequest) createContainer(container string) {
	for name := range q.r.Header {
		l := strings.ToLower(name)
		if strings.HasPrefix(l, "x-ms-meta-") || l == "x-ms-blob-public-access" || strings.HasPrefix(l, "x-ms-default-encryption-scope") {
			q.fail(errNotImplemented("container metadata, public access and encryption scopes"))
			return
		}
	}
	ctx := q.r.Context()
	if err := q.acct.svc.CreateContainer(ctx, container); err != nil {
		q.fail(err)
		return
	}
	p, err := q.acct.svc.Container(ctx, container)
	if err != nil {
		q.fail(err)
		return
	}
	q.stamp(p.ETag, p.LastModified)
	q.w.WriteHeader(http.StatusCreated)
}

func (q *blobRequest) deleteContainer(container string) {
	if q.hasAny("If-Modified-Since", "If-Unmodified-Since", "x-ms-lease-id") {
		q.fail(errNotImplemented("conditions and leases on containers"))
		return
	}
	q.st.mu.Lock()
	defer q.st.mu.Unlock()
	if err := q.acct.svc.DeleteContainer(q.r.Context(), container); err != nil {
		q.fail(err)
		return
	}
	q.st.dropContainer(container)
	q.w.WriteHeader(http.StatusAccepted)
}

func (q *blobRequest) containerProperties(container string) {
	if q.hasAny("x-ms-lease-id") {
		q.fail(errNotImplemented("leases"))
		return
	}
	p, err := q.acct.svc.Container(q.r.Context(), container)
	if err != nil {
		q.fail(err)
		return
	}
	q.stamp(p.ETag, p.LastModified)
	hdr := q.w.Header()
	hdr.Set("x-ms-lease-status", "unlocked")
	hdr.Set("x-ms-lease-state", "available")
	hdr.Set("x-ms-has-immutability-policy", "false")
	hdr.Set("x-ms-has-legal-hold", "false")
	q.w.WriteHeader(http.StatusOK)
}

// hasAny reports whether the request carries any of the headers.
func (q *blobRequest) hasAny(names ...string) bool {
	for _, n := range names {
		if q.r.Header.Get(n) != "" {
			return true
		}
	}
	return false
}

// stamp sets the ETag and Last-Modified headers of a response.
func (q *blobRequest) stamp(etag string, t time.Time) {
	q.w.Header().Set("ETag", etag)
	q.w.Header().Set("Last-Modified", t.UTC().Format(http.TimeFormat))
}

// unsupportedBlobHeaders are request headers of features the emulator does not have: a
// request that carries one fails with 501 rather than succeeding without it.
var unsupportedBlobHeaders = []string{
	"x-ms-lease-id", "x-ms-copy-source", "x-ms-tags", "x-ms-access-tier",
	"x-ms-encryption-key", "x-ms-encryption-scope", "x-ms-immutability-policy-until-date",
	"x-ms-legal-hold", "x-ms-if-tags", "x-ms-source-if-match",
}

func (q *blobRequest) refuseUnsupported() error {
	for _, h := range unsupportedBlobHeaders {
		if q.r.Header.Get(h) != "" {
			return errNotImplemented("the " + h + " header")
		}
	}
	return nil
}

// Conditions.

// blobConditions are a request's conditional headers.
type blobConditions struct {
	ifMatch, ifNoneMatch               string
	ifModifiedSince, ifUnmodifiedSince time.Time // zero when absent
}

// conditions reads the request's conditional headers. A date that does not parse is
// ignored, as HTTP says.
func (q *blobRequest) conditions() blobConditions {
	h := q.r.Header
	c := blobConditions{ifMatch: h.Get("If-Match"), ifNoneMatch: h.Get("If-None-Match")}
	if t, err := http.ParseTime(h.Get("If-Modified-Since")); err == nil {
		c.ifModifiedSince = t
	}
	if t, err := http.ParseTime(h.Get("If-Unmodified-Since")); err == nil {
		c.ifUnmodifiedSince = t
	}
	return c
}

// What a request does with a blob, for its conditions.
type condMode uint8

const (
	condRead   condMode = iota // a read: a failed If-None-Match or If-Modified-Since is 304
	condWrite                  // a change of an existing blob
	condCreate                 // a write that may create the blob: If-None-Match: * on an existing one is 409
)

func sameBlobETag(a, b string) bool { return strings.Trim(a, `"`) == strings.Trim(b, `"`) }

// check applies c to the blob with properties p, nil when there is none. A missing blob
// fails a read or a change with 404 BlobNotFound; a write that would create it fails with
// 412 ConditionNotMet when it asks for an ETag (If-Match) or an age (If-Unmodified-Since).
func (c blobConditions) check(p *service.BlobProperties, mode condMode) error {
	if p == nil {
		if mode != condCreate {
			return errBlobNotFound()
		}
		if c.ifMatch != "" || !c.ifUnmodifiedSince.IsZero() {
			return errConditionNotMet()
		}
		return nil
	}
	if c.ifMatch != "" && c.ifMatch != service.ETagAny && !sameBlobETag(c.ifMatch, p.ETag) {
		return errConditionNotMet()
	}
	if !c.ifUnmodifiedSince.IsZero() && p.LastModified.After(c.ifUnmodifiedSince) {
		return errConditionNotMet()
	}
	notModified := errConditionNotMet
	if mode == condRead {
		notModified = errNotModified
	}
	if c.ifNoneMatch != "" && (c.ifNoneMatch == service.ETagAny || sameBlobETag(c.ifNoneMatch, p.ETag)) {
		if mode == condCreate && c.ifNoneMatch == service.ETagAny {
			return errBlobExists()
		}
		return notModified()
	}
	if !c.ifModifiedSince.IsZero() && !p.LastModified.After(c.ifModifiedSince) {
		return notModified()
	}
	return nil
}

// Blobs.

// storedBlob is a blob as the memory service holds it, read at one moment.
type storedBlob struct {
	props    service.BlobProperties
	metadata map[string]string
	data     []byte
}

// load reads the named blob: nil when the container has no such blob; a missing container
// fails with 404 ContainerNotFound.
func (q *blobRequest) load(container, name string) (*storedBlob, error) {
	b, err := q.acct.svc.Download(q.r.Context(), container, name, service.Conditions{})
	if isStatus(err, http.StatusNotFound, "BlobNotFound") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer b.Body.Close()
	data, err := io.ReadAll(b.Body)
	if err != nil {
		return nil, err
	}
	return &storedBlob{props: b.Properties, metadata: b.Metadata, data: data}, nil
}

func (b *storedBlob) propsOrNil() *service.BlobProperties {
	if b == nil {
		return nil
	}
	return &b.props
}

// blobHeaders are the properties a write sets from the request's headers: each from its
// x-ms-blob-* header, or, when put is set (Put Blob), from the plain header.
func (q *blobRequest) blobHeaders(put bool) (service.UploadOptions, *sideProps) {
	h := q.r.Header
	get := func(xms, plain string) string {
		if v := h.Get(xms); v != "" || !put || plain == "" {
			return v
		}
		return h.Get(plain)
	}
	opts := service.UploadOptions{
		ContentType:     get("x-ms-blob-content-type", "Content-Type"),
		ContentEncoding: get("x-ms-blob-content-encoding", "Content-Encoding"),
	}
	side := &sideProps{
		contentMD5:         h.Get("x-ms-blob-content-md5"),
		contentLanguage:    get("x-ms-blob-content-language", "Content-Language"),
		contentDisposition: get("x-ms-blob-content-disposition", ""),
		cacheControl:       get("x-ms-blob-cache-control", "Cache-Control"),
	}
	return opts, side
}

// metadata reads the request's x-ms-meta-* headers; the memory service checks the names.
func (q *blobRequest) metadata() map[string]string {
	var md map[string]string
	for name, vs := range q.r.Header {
		if n, ok := strings.CutPrefix(strings.ToLower(name), "x-ms-meta-"); ok {
			if md == nil {
				md = make(map[string]string)
			}
			md[n] = strings.Join(vs, ",")
		}
	}
	return md
}

// write stores data as the named blob, whose stored state is cur (nil: none), under cond,
// with opts' properties and metadata and what side keeps beside them. The upload is
// conditional on cur's ETag, so that a blob changed meanwhile by a writer that is not the
// emulator's is not overwritten (412). The caller holds q.st.mu for writing.
func (q *blobRequest) write(container, name string, cur *storedBlob, cond blobConditions, mode condMode, data []byte, opts service.UploadOptions, side *sideProps) (service.BlobProperties, error) {
	if err := cond.check(cur.propsOrNil(), mode); err != nil {
		return service.BlobProperties{}, err
	}
	if cur != nil {
		if err := q.mayOverwrite(); err != nil {
			return service.BlobProperties{}, err
		}
	}
	switch {
	case cur != nil:
		opts.Mode, opts.IfMatch = service.UploadIfMatch, cur.props.ETag
	case cond.ifNoneMatch == service.ETagAny:
		opts.Mode = service.UploadCreate
	default:
		opts.Mode = service.UploadOverwrite
	}
	ctx := q.r.Context()
	if q.acct.store != nil {
		if int64(len(data)) > maxLoggedBlob {
			return service.BlobProperties{}, errNotImplemented("blobs larger than 4 GiB less 1 MiB with a data directory")
		}
		// condCreate: a Put Blob or Put Block List, which discard the blob's staged blocks.
		ctx = journal.WithAnnex(ctx, side.annex(mode == condCreate))
	}
	p, err := q.acct.svc.Upload(ctx, container, name, data, opts)
	if err != nil {
		return service.BlobProperties{}, err
	}
	side.etag = p.ETag
	q.st.side[blobKey{container, name}] = side
	return p, nil
}

func (q *blobRequest) putBlob(container, name string) {
	if err := q.refuseUnsupported(); err != nil {
		q.fail(err)
		return
	}
	switch t := q.r.Header.Get("x-ms-blob-type"); t {
	case "BlockBlob":
	case "":
		q.fail(errMissingHeader("x-ms-blob-type"))
		return
	case "PageBlob", "AppendBlob":
		q.fail(errNotImplemented("page and append blobs"))
		return
	default:
		q.fail(errInvalidHeader("x-ms-blob-type"))
		return
	}
	if err := q.readBody(); err != nil {
		q.fail(err)
		return
	}
	opts, side := q.blobHeaders(true)
	opts.Metadata = q.metadata()
	if side.contentMD5 == "" {
		side.contentMD5 = md5Of(q.body)
	}
	cond := q.conditions()
	q.st.mu.Lock()
	defer q.st.mu.Unlock()
	cur, err := q.load(container, name)
	if err != nil {
		q.fail(err)
		return
	}
	p, err := q.write(container, name, cur, cond, condCreate, q.body, opts, side)
	if err != nil {
		q.fail(err)
		return
	}
	delete(q.st.staged, blobKey{container, name})
	q.stamp(p.ETag, p.LastModified)
	q.w.Header().Set("Content-MD5", md5Of(q.body))
	q.w.Header().Set("x-ms-request-server-encrypted", "true")
	q.w.WriteHeader(http.StatusCreated)
}

// blobRange is the byte range a read asks for.
type blobRange struct {
	start, end int64 // end inclusive; -1: to the end
}

// parseRange reads the range of a read: x-ms-range, else Range, "bytes=start-" or
// "bytes=start-end". A Range the service does not understand is ignored (the whole blob
// is sent), an x-ms-range it does not understand fails with 400 InvalidHeaderValue.
func (q *blobRequest) parseRange() (*blobRange, error) {
	header := "x-ms-range"
	v := q.r.Header.Get(header)
	if v == "" {
		header = "Range"
		v = q.r.Header.Get(header)
	}
	if v == "" {
		return nil, nil
	}
	r, ok := parseByteRange(v)
	if !ok {
		if header == "Range" {
			return nil, nil
		}
		return nil, errInvalidHeader(header)
	}
	return r, nil
}

func parseByteRange(v string) (*blobRange, bool) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return nil, false
	}
	from, to, ok := strings.Cut(spec, "-")
	if !ok {
		return nil, false
	}
	start, err := strconv.ParseInt(from, 10, 64)
	if err != nil || start < 0 {
		return nil, false
	}
	if to == "" {
		return &blobRange{start: start, end: -1}, true
	}
	end, err := strconv.ParseInt(to, 10, 64)
	if err != nil || end < start {
		return nil, false
	}
	return &blobRange{start: start, end: end}, true
}

// maxRangeMD5 is the largest range whose MD5 the service computes (x-ms-range-get-content-md5).
const maxRangeMD5 = 4 << 20

func (q *blobRequest) getBlob(container, name string) {
	if err := q.refuseUnsupported(); err != nil {
		q.fail(err)
		return
	}
	rng, err := q.parseRange()
	if err != nil {
		q.fail(err)
		return
	}
	cond := q.conditions()
	q.st.mu.RLock()
	cur, err := q.load(container, name)
	var side *sideProps
	if cur != nil {
		side = q.st.sideOf(blobKey{container, name}, cur.props)
	}
	q.st.mu.RUnlock()
	if err != nil {
		q.fail(err)
		return
	}
	if err := cond.check(cur.propsOrNil(), condRead); err != nil {
		q.failRead(cur, err)
		return
	}
	q.blobResponseHeaders(cur, side)
	q.overrideHeaders()
	hdr := q.w.Header()
	size := int64(len(cur.data))
	if q.r.Method == http.MethodHead {
		hdr.Set("Content-Length", strconv.FormatInt(size, 10))
		q.w.WriteHeader(http.StatusOK)
		return
	}
	if rng == nil {
		hdr.Set("Content-Length", strconv.FormatInt(size, 10))
		if side.contentMD5 != "" {
			hdr.Set("Content-MD5", side.contentMD5)
		}
		q.w.WriteHeader(http.StatusOK)
		_, _ = q.w.Write(cur.data)
		return
	}
	if rng.start >= size {
		hdr.Del("ETag")
		hdr.Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
		q.fail(statusError(http.StatusRequestedRangeNotSatisfiable, "InvalidRange",
			"The range specified is invalid for the current size of the resource."))
		return
	}
	end := rng.end
	if end < 0 || end >= size {
		end = size - 1
	}
	part := cur.data[rng.start : end+1]
	if strings.EqualFold(q.r.Header.Get("x-ms-range-get-content-md5"), "true") {
		if len(part) > maxRangeMD5 {
			q.fail(errOutOfRange())
			return
		}
		hdr.Set("Content-MD5", md5Of(part))
	}
	if side.contentMD5 != "" {
		hdr.Set("x-ms-blob-content-md5", side.contentMD5)
	}
	hdr.Set("Content-Range", "bytes "+strconv.FormatInt(rng.start, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.FormatInt(size, 10))
	hdr.Set("Content-Length", strconv.Itoa(len(part)))
	q.w.WriteHeader(http.StatusPartialContent)
	_, _ = q.w.Write(part)
}

// blobResponseHeaders sets the headers a read of the blob answers with (but its length).
func (q *blobRequest) blobResponseHeaders(b *storedBlob, side *sideProps) {
	hdr := q.w.Header()
	q.stamp(b.props.ETag, b.props.LastModified)
	hdr.Set("Content-Type", b.props.ContentType)
	for name, v := range map[string]string{
		"Content-Encoding":    b.props.ContentEncoding,
		"Content-Language":    side.contentLanguage,
		"Content-Disposition": side.contentDisposition,
		"Cache-Control":       side.cacheControl,
	} {
		if v != "" {
			hdr.Set(name, v)
		}
	}
	if q.r.Method == http.MethodHead && side.contentMD5 != "" {
		hdr.Set("Content-MD5", side.contentMD5)
	}
	hdr.Set("Accept-Ranges", "bytes")
	hdr.Set("x-ms-blob-type", "BlockBlob")
	hdr.Set("x-ms-lease-status", "unlocked")
	hdr.Set("x-ms-lease-state", "available")
	hdr.Set("x-ms-server-encrypted", "true")
	for n, v := range b.metadata {
		hdr.Set("x-ms-meta-"+n, v)
	}
}

func (q *blobRequest) deleteBlob(container, name string) {
	if err := q.refuseUnsupported(); err != nil {
		q.fail(err)
		return
	}
	if q.r.Header.Get("x-ms-delete-snapshots") == "only" {
		q.fail(errNotImplemented("blob snapshots"))
		return
	}
	cond := q.conditions()
	q.st.mu.Lock()
	defer q.st.mu.Unlock()
	cur, err := q.load(container, name)
	if err != nil {
		q.fail(err)
		return
	}
	if err := cond.check(cur.propsOrNil(), condWrite); err != nil {
		q.fail(err)
		return
	}
	ctx := q.r.Context()
	if q.acct.store != nil {
		ctx = journal.WithAnnex(ctx, []byte{}) // the deletion discards the staged blocks
	}
	if err := q.acct.svc.DeleteBlob(ctx, container, name, service.Conditions{IfMatch: cur.props.ETag}); err != nil {
		q.fail(err)
		return
	}
	k := blobKey{container, name}
	delete(q.st.side, k)
	delete(q.st.staged, k)
	q.w.WriteHeader(http.StatusAccepted)
}

// change rewrites an existing blob's properties (props set) or metadata (props not set),
// keeping its content, under the request's conditions.
func (q *blobRequest) change(container, name string, props bool) {
	if err := q.refuseUnsupported(); err != nil {
		q.fail(err)
		return
	}
	if q.hasAny("x-ms-blob-content-length", "x-ms-sequence-number-action") {
		q.fail(errNotImplemented("page blobs"))
		return
	}
	cond := q.conditions()
	q.st.mu.Lock()
	defer q.st.mu.Unlock()
	cur, err := q.load(container, name)
	if err != nil {
		q.fail(err)
		return
	}
	if cur == nil {
		q.fail(errBlobNotFound())
		return
	}
	k := blobKey{container, name}
	old := q.st.sideOf(k, cur.props)
	var opts service.UploadOptions
	side := &sideProps{}
	if props {
		opts, side = q.blobHeaders(false)
		opts.Metadata = cur.metadata
	} else {
		*side = *old
		opts = service.UploadOptions{ContentType: cur.props.ContentType, ContentEncoding: cur.props.ContentEncoding, Metadata: q.metadata()}
	}
	side.blocks = old.blocks
	p, err := q.write(container, name, cur, cond, condWrite, cur.data, opts, side)
	if err != nil {
		q.fail(err)
		return
	}
	q.stamp(p.ETag, p.LastModified)
	if !props {
		q.w.Header().Set("x-ms-request-server-encrypted", "true")
	}
	q.w.WriteHeader(http.StatusOK)
}

func (q *blobRequest) getMetadata(container, name string) {
	cond := q.conditions()
	q.st.mu.RLock()
	cur, err := q.load(container, name)
	q.st.mu.RUnlock()
	if err != nil {
		q.fail(err)
		return
	}
	if err := cond.check(cur.propsOrNil(), condRead); err != nil {
		q.failRead(cur, err)
		return
	}
	q.stamp(cur.props.ETag, cur.props.LastModified)
	for n, v := range cur.metadata {
		q.w.Header().Set("x-ms-meta-"+n, v)
	}
	q.w.WriteHeader(http.StatusOK)
}

// committedData returns the content of the committed block list of cur, by block id: nil when
// cur has no block list (its side record is of another version or it was put whole).
func committedData(cur *storedBlob, side *sideProps) map[string][]byte {
	if cur == nil || side.blocks == nil {
		return nil
	}
	out := make(map[string][]byte, len(side.blocks))
	r := bytes.NewReader(cur.data)
	for _, b := range side.blocks {
		buf := make([]byte, b.size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil
		}
		out[b.id] = buf
	}
	return out
}

// failRead answers a read of cur with err; a 304 carries the blob's ETag and Last-Modified,
// as the service sends them.
func (q *blobRequest) failRead(cur *storedBlob, err error) {
	if cur != nil && isStatus(err, http.StatusNotModified, "ConditionNotMet") {
		q.stamp(cur.props.ETag, cur.props.LastModified)
	}
	q.fail(err)
}
