package memservice

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

type container struct {
	blobs map[string]*blob
	props ContainerProperties
}

// ContainerProperties describe a container: its name, and the ETag and time (at one-second
// resolution) of its creation, which the service reports for it.
type ContainerProperties struct {
	Name         string
	ETag         string
	LastModified time.Time
}

// A blob's data and metadata are never changed after it is stored: an upload stores a new
// blob.
type blob struct {
	data     []byte
	props    service.BlobProperties
	metadata map[string]string
	annex    []byte // what the emulator keeps beside it (see journal.Change), logged with it
}

// change is the logged form of the blob stored as name in container.
func (b *blob) change(container, name string) *journal.Change {
	return &journal.Change{Kind: journal.PutBlob, Container: container, Blob: name,
		Props: b.props, Metadata: b.metadata, Data: b.data, Annex: b.annex}
}

// metadata returns the metadata an upload stores: the names in lower case, as the service
// reports them, or nil for none. A name that is not an identifier (ASCII letters, digits and
// underscores, not starting with a digit), or two names that differ only in case, fail
// with 400 InvalidMetadata.
func metadata(md map[string]string) (map[string]string, error) {
	if len(md) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(md))
	for name, v := range md {
		if !identifier(name) {
			return nil, errInvalidMetadata()
		}
		lower := strings.ToLower(name)
		if _, dup := out[lower]; dup {
			return nil, errInvalidMetadata()
		}
		out[lower] = v
	}
	return out, nil
}

func identifier(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return name != ""
}

// etagBase makes blob ETags look like the service's ("0x8DC…"); a counter above it keeps
// them unique.
const etagBase = 0x8DC000000000000

// checkContainerName applies the service's container-name rules: 3–63 characters, lower-case
// letters, digits and hyphens, starting and ending with a letter or digit, no two hyphens in
// a row.
func checkContainerName(name string) error {
	if len(name) < 3 || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' ||
		strings.Contains(name, "--") {
		return errContainerName()
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return errContainerName()
		}
	}
	return nil
}

// container returns the named container. The caller holds s.blobMu.
func (s *Service) container(name string) (*container, error) {
	if err := checkContainerName(name); err != nil {
		return nil, err
	}
	c := s.containers[name]
	if c == nil {
		return nil, errContainerNotFound()
	}
	return c, nil
}

// secondOf returns t in UTC at the one-second resolution the blob service reports.
func secondOf(t time.Time) time.Time { return t.UTC().Truncate(time.Second).Round(0) }

// sameETag compares two blob ETags, ignoring the quotes a caller may have dropped.
func sameETag(a, b string) bool { return strings.Trim(a, `"`) == strings.Trim(b, `"`) }

// check applies read or delete conditions to an existing blob.
func (b *blob) check(cond service.Conditions) error {
	if cond.IfMatch != "" && cond.IfMatch != service.ETagAny && !sameETag(cond.IfMatch, b.props.ETag) {
		return errConditionNotMet()
	}
	if !cond.IfUnmodifiedSince.IsZero() && b.props.LastModified.After(secondOf(cond.IfUnmodifiedSince)) {
		return errConditionNotMet()
	}
	return nil
}

// CreateContainer creates a container. A bad name fails with 400 InvalidResourceName, an
// existing container with 409 ContainerAlreadyExists.
func (s *Service) CreateContainer(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkContainerName(name); err != nil {
		return err
	}
	s.blobMu.Lock()
	if s.containers[name] != nil {
		s.blobMu.Unlock()
		return errContainerExists()
	}
	s.blobSeq++
	p := ContainerProperties{
		Name:         name,
		ETag:         fmt.Sprintf(`"0x%X"`, etagBase+s.blobSeq),
		LastModified: secondOf(s.now()),
	}
	s.containers[name] = &container{blobs: make(map[string]*blob), props: p}
	seq := s.logged(&journal.Change{Kind: journal.CreateContainer, Container: name,
		Props: service.BlobProperties{ETag: p.ETag, LastModified: p.LastModified}})
	s.blobMu.Unlock()
	return s.synced(seq)
}

// Container returns the properties of the named container. A bad name fails with 400
// InvalidResourceName, a missing container with 404 ContainerNotFound.
func (s *Service) Container(ctx context.Context, name string) (ContainerProperties, error) {
	if err := ctx.Err(); err != nil {
		return ContainerProperties{}, err
	}
	s.blobMu.RLock()
	defer s.blobMu.RUnlock()
	c, err := s.container(name)
	if err != nil {
		return ContainerProperties{}, err
	}
	return c.props, nil
}

// Containers returns the properties of the containers whose names start with prefix, in
// name order.
func (s *Service) Containers(ctx context.Context, prefix string) ([]ContainerProperties, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.blobMu.RLock()
	defer s.blobMu.RUnlock()
	var out []ContainerProperties
	for name, c := range s.containers {
		if strings.HasPrefix(name, prefix) {
			out = append(out, c.props)
		}
	}
	slices.SortFunc(out, func(a, b ContainerProperties) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteContainer deletes a container and its blobs. A bad name fails with 400
// InvalidResourceName, a missing container with 404 ContainerNotFound.
func (s *Service) DeleteContainer(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.blobMu.Lock()
	if _, err := s.container(name); err != nil {
		s.blobMu.Unlock()
		return err
	}
	delete(s.containers, name)
	seq := s.logged(&journal.Change{Kind: journal.DeleteContainer, Container: name})
	s.blobMu.Unlock()
	return s.synced(seq)
}

// Upload stores a copy of data as the named blob under opts' condition. UploadCreate fails
// with 409 BlobAlreadyExists when the blob exists; UploadIfMatch fails with 412
// ConditionNotMet when the blob is missing (even for "*", as on the real service) or carries
// another ETag. An empty IfMatch with UploadIfMatch means "*". The content type defaults to
// application/octet-stream, as on the service. Metadata is stored with names in lower case;
// a name that is not an identifier fails with 400 InvalidMetadata.
func (s *Service) Upload(ctx context.Context, containerName, name string, data []byte, opts service.UploadOptions) (service.BlobProperties, error) {
	if err := ctx.Err(); err != nil {
		return service.BlobProperties{}, err
	}
	return s.store(ctx, containerName, name, bytes.Clone(data), opts)
}

// checkUpload applies an upload's condition. The caller holds s.blobMu.
func (s *Service) checkUpload(containerName, name string, opts service.UploadOptions) error {
	c, err := s.container(containerName)
	if err != nil {
		return err
	}
	if _, err := metadata(opts.Metadata); err != nil {
		return err
	}
	old := c.blobs[name]
	switch opts.Mode {
	case service.UploadOverwrite:
	case service.UploadCreate:
		if old != nil {
			return errBlobExists()
		}
	case service.UploadIfMatch:
		if old == nil || opts.IfMatch != "" && opts.IfMatch != service.ETagAny && !sameETag(opts.IfMatch, old.props.ETag) {
			return errConditionNotMet()
		}
	default:
		return statusError(http.StatusBadRequest, "InvalidInput",
			fmt.Sprintf("The upload mode %d is not supported.", opts.Mode))
	}
	return nil
}

// store stores data, which it owns, as the named blob under opts' condition, with the
// annex ctx carries, and waits for its change to be durable.
func (s *Service) store(ctx context.Context, containerName, name string, data []byte, opts service.UploadOptions) (service.BlobProperties, error) {
	p, seq, err := s.storeLocked(ctx, containerName, name, data, opts)
	if err != nil {
		return service.BlobProperties{}, err
	}
	if err := s.synced(seq); err != nil {
		return service.BlobProperties{}, err
	}
	return p, nil
}

// storeLocked stores the blob under s.blobMu and logs it.
func (s *Service) storeLocked(ctx context.Context, containerName, name string, data []byte, opts service.UploadOptions) (service.BlobProperties, uint64, error) {
	s.blobMu.Lock()
	defer s.blobMu.Unlock()
	if err := s.checkUpload(containerName, name, opts); err != nil {
		return service.BlobProperties{}, 0, err
	}
	c := s.containers[containerName]
	md, _ := metadata(opts.Metadata) // checked by checkUpload
	s.blobSeq++
	contentType := opts.ContentType
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	b := &blob{
		data:     data,
		metadata: md,
		props: service.BlobProperties{
			ETag:            fmt.Sprintf(`"0x%X"`, etagBase+s.blobSeq),
			LastModified:    secondOf(s.now()),
			ContentLength:   int64(len(data)),
			ContentType:     contentType,
			ContentEncoding: opts.ContentEncoding,
		},
	}
	if b.data == nil {
		b.data = []byte{}
	}
	c.blobs[name] = b
	var seq uint64
	if s.journal != nil {
		b.annex = journal.AnnexOf(ctx)
		seq = s.journal.Append(b.change(containerName, name))
	}
	return b.props, seq, nil
}

// UploadStream stores what body delivers as the named blob, under opts' condition, with the
// errors of Upload. The condition is checked before body is read (an upload bound to fail
// reads nothing, as the Azure adapter does) and again when the content is stored; a body
// that fails stores nothing and its error is returned.
func (s *Service) UploadStream(ctx context.Context, containerName, name string, body io.Reader, opts service.UploadOptions) (service.BlobProperties, error) {
	if err := ctx.Err(); err != nil {
		return service.BlobProperties{}, err
	}
	s.blobMu.RLock()
	err := s.checkUpload(containerName, name, opts)
	s.blobMu.RUnlock()
	if err != nil {
		return service.BlobProperties{}, err
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return service.BlobProperties{}, err
	}
	return s.store(ctx, containerName, name, data, opts)
}

// Touch marks the named blob as written now: its LastModified becomes the service's time
// and it gets a new ETag; its content, headers and metadata stay. A missing blob fails with 404
// BlobNotFound.
func (s *Service) Touch(ctx context.Context, containerName, name string) (service.BlobProperties, error) {
	if err := ctx.Err(); err != nil {
		return service.BlobProperties{}, err
	}
	s.blobMu.Lock()
	c, err := s.container(containerName)
	if err != nil {
		s.blobMu.Unlock()
		return service.BlobProperties{}, err
	}
	b := c.blobs[name]
	if b == nil {
		s.blobMu.Unlock()
		return service.BlobProperties{}, errBlobNotFound()
	}
	s.blobSeq++
	// What the emulator kept beside b describes b's version, not this one: it is dropped.
	nb := &blob{data: b.data, props: b.props, metadata: b.metadata}
	nb.props.ETag = fmt.Sprintf(`"0x%X"`, etagBase+s.blobSeq)
	nb.props.LastModified = secondOf(s.now())
	c.blobs[name] = nb
	var seq uint64
	if s.journal != nil {
		seq = s.journal.Append(nb.change(containerName, name))
	}
	s.blobMu.Unlock()
	if err := s.synced(seq); err != nil {
		return service.BlobProperties{}, err
	}
	return nb.props, nil
}

// Download opens the named blob for reading, over a copy of its data. A missing blob fails
// with 404 BlobNotFound whatever cond says (the real service; Azurite answers 412 when
// If-Match is set); an existing one that fails cond with 412 ConditionNotMet.
func (s *Service) Download(ctx context.Context, containerName, name string, cond service.Conditions) (*service.Blob, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.blobMu.RLock()
	defer s.blobMu.RUnlock()
	c, err := s.container(containerName)
	if err != nil {
		return nil, err
	}
	b := c.blobs[name]
	if b == nil {
		return nil, errBlobNotFound()
	}
	if err := b.check(cond); err != nil {
		return nil, err
	}
	return &service.Blob{
		Properties: b.props,
		Metadata:   maps.Clone(b.metadata),
		Body:       io.NopCloser(bytes.NewReader(bytes.Clone(b.data))),
	}, nil
}

// DeleteBlob deletes the named blob under cond, with the errors of Download.
func (s *Service) DeleteBlob(ctx context.Context, containerName, name string, cond service.Conditions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	seq, err := s.deleteLocked(ctx, containerName, name, cond)
	if err != nil {
		return err
	}
	return s.synced(seq)
}

// deleteLocked deletes the blob under s.blobMu and logs its deletion, with the annex ctx
// carries.
func (s *Service) deleteLocked(ctx context.Context, containerName, name string, cond service.Conditions) (uint64, error) {
	s.blobMu.Lock()
	defer s.blobMu.Unlock()
	c, err := s.container(containerName)
	if err != nil {
		return 0, err
	}
	b := c.blobs[name]
	if b == nil {
		return 0, errBlobNotFound()
	}
	if err := b.check(cond); err != nil {
		return 0, err
	}
	delete(c.blobs, name)
	if s.journal == nil {
		return 0, nil
	}
	return s.journal.Append(&journal.Change{Kind: journal.DeleteBlob, Container: containerName, Blob: name, Annex: journal.AnnexOf(ctx)}), nil
}

// List returns one page of the container's blobs whose names start with opts.Prefix, in
// name order (by UTF-16 code units, as Azurite sorts). With a Delimiter, names that continue
// past the prefix with it are folded into one entry of Prefixes; blobs and prefixes share
// the page's MaxResults (0 or above 5000 means 5000; negative fails with 400
// OutOfRangeInput). NextMarker names the first entry of the next page.
func (s *Service) List(ctx context.Context, containerName string, opts service.ListOptions) (service.BlobPage, error) {
	if err := ctx.Err(); err != nil {
		return service.BlobPage{}, err
	}
	limit := opts.MaxResults
	switch {
	case limit < 0:
		return service.BlobPage{}, statusError(http.StatusBadRequest, "OutOfRangeInput",
			"One of the query parameters specified in the request URI is outside the permissible range.")
	case limit == 0 || limit > maxListResults:
		limit = maxListResults
	}
	s.blobMu.RLock()
	defer s.blobMu.RUnlock()
	c, err := s.container(containerName)
	if err != nil {
		return service.BlobPage{}, err
	}
	names := make([]string, 0, len(c.blobs))
	for name := range c.blobs {
		if strings.HasPrefix(name, opts.Prefix) && service.CompareUTF16(name, opts.Marker) >= 0 {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, service.CompareUTF16)

	var page service.BlobPage
	entries := 0
	for i := 0; i < len(names); i++ {
		name := names[i]
		entry := name
		folded := false
		if opts.Delimiter != "" {
			if j := strings.Index(name[len(opts.Prefix):], opts.Delimiter); j >= 0 {
				entry = name[:len(opts.Prefix)+j+len(opts.Delimiter)]
				folded = true
			}
		}
		if entries == limit {
			page.NextMarker = entry
			break
		}
		entries++
		if !folded {
			page.Blobs = append(page.Blobs, service.BlobItem{Name: name, Properties: c.blobs[name].props})
			continue
		}
		page.Prefixes = append(page.Prefixes, entry)
		// Skip the other names under the same prefix; they sort right after this one.
		for i+1 < len(names) && strings.HasPrefix(names[i+1], entry) {
			i++
		}
	}
	return page, nil
}

// Now returns the service's clock at one-second resolution, as a response's Date header
// reports it.
func (s *Service) Now(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	return secondOf(s.now()), nil
}
