package tables

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/tables/internal/callerr"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Blob offload (tier 3 of large values) and files.
//
// A split-aware type's value whose stored bytes exceed the threshold, or that the entity's
// rows cannot hold in one transaction, and every file (*abstractions.File), is stored in a
// blob of the account's offload container; the main row holds {Column}__blob, a reference
// (package largevalue has the layout and the names). The ordering keeps every committed row
// readable:
//
//   - Write: each blob is uploaded create-only first (a blob that exists already has the
//     same name, so the same SHA-256: it counts as uploaded, and is touched so that its age
//     starts again), then the rows are written as for split values.
//   - Replace: the new blobs, then the row swap on condition of the version read, then the
//     deletion of the blobs the stored row referenced and the new one does not, when they
//     are the row's own ({table}/{pk}/{rk}/…) and older than CleanupGrace, measured back
//     from the commit on the service's clock.
//   - Delete: the rows (conditional or not, as the split rows are), then the row's own
//     blobs, subject to CleanupGrace; a delete that loses its condition deletes no blob.
//   - A failed write never deletes a blob: what it uploaded is left for the orphan sweep.
//   - Reads download each offloaded string, []byte or JSON value and verify its length and
//     SHA-256; a missing or changed blob is damage or a race, handled as for split values.
//     A file is never downloaded by a read: the entity gets a *abstractions.File bound to
//     its blob, which Open streams and verifies.

// BlobOffloadOptions configure blob offload for every store of an account. Set
// Options.BlobOffload to turn it on; the account then needs a blob service.
type BlobOffloadOptions struct {
	// Container is the offload container, created on first use; "" means
	// "unified-tables-values". The container belongs to offload alone: sweeps list all of
	// a table's prefix in it (they delete only names of the offload shape).
	Container string
	// ThresholdBytes is the most stored bytes a large value keeps in the table: a value
	// stored split whose stored (encoded) bytes exceed it goes to a blob instead. 0 means
	// 3,145,728; it may be 1 to 4,194,304.
	ThresholdBytes int
	// CleanupGrace is how old a blob a replace or delete released must be (since it was
	// last written or touched, on the service's clock) to be deleted at once; younger ones
	// are left for the orphan sweep. 0 means DefaultCleanupGrace. A blob's LastModified has
	// one-second resolution, so a grace below a second protects nothing: a blob another
	// writer touched in the second of the commit could be deleted under it. A negative
	// grace means none beyond that resolution (tests only): a released blob is deleted once
	// the second it was last written in has passed, so one released in that same second
	// waits for the sweep. NoCleanup switches the cleanup off.
	CleanupGrace time.Duration
}

// DefaultCleanupGrace is the cleanup grace unless BlobOffloadOptions say otherwise.
const DefaultCleanupGrace = 5 * time.Minute

// NoCleanup as BlobOffloadOptions.CleanupGrace switches the cleanup after writes and deletes
// off: every released blob is left for the orphan sweep.
const NoCleanup time.Duration = math.MaxInt64

// clientClockMargin is how far back a cleanup or sweep moves the client's clock when the
// blob service's time cannot be read, so that a client clock running ahead cannot make a
// freshly touched blob look old.
const clientClockMargin = 5 * time.Minute

// cleanupOvertime bounds the cleanup of a committed write whose context ended: it runs on
// for at most this long, then leaves the rest to the sweep.
const cleanupOvertime = 5 * time.Second

// Check returns an error matching abstractions.ErrInvalidArgument when the options are out
// of range: a ThresholdBytes outside 1 to 4,194,304 (0 means the default) or a container
// name the blob service refuses.
func (o *BlobOffloadOptions) check() error {
	if o == nil {
		return nil
	}
	if o.ThresholdBytes < 0 || o.ThresholdBytes > largevalue.MaxThreshold {
		return fmt.Errorf("%w: BlobOffloadOptions.ThresholdBytes is %d; it must be 1 to %d (0 for the default, %d)",
			abstractions.ErrInvalidArgument, o.ThresholdBytes, largevalue.MaxThreshold, largevalue.DefaultThreshold)
	}
	if c := o.Container; c != "" && !validContainer(c) {
		return fmt.Errorf("%w: BlobOffloadOptions.Container %q is not a container name: 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit",
			abstractions.ErrInvalidArgument, c)
	}
	return nil
}

func validContainer(name string) bool {
	if len(name) < 3 || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// offloadConfig is an account's resolved offload configuration.
type offloadConfig struct {
	container string
	threshold int
	grace     time.Duration // < 0: none
	cleanup   bool

	mu      sync.Mutex
	created bool
}

func newOffload(o *BlobOffloadOptions) *offloadConfig {
	c := &offloadConfig{container: o.Container, threshold: o.ThresholdBytes, grace: o.CleanupGrace, cleanup: true}
	if c.container == "" {
		c.container = largevalue.DefaultContainer
	}
	if c.threshold == 0 {
		c.threshold = largevalue.DefaultThreshold
	}
	switch {
	case c.grace == NoCleanup:
		c.cleanup = false
	case c.grace == 0:
		c.grace = DefaultCleanupGrace
	case c.grace < 0:
		c.grace = 0
	}
	return c
}

// ensureContainer creates the offload container unless the account already did. A 409
// ContainerAlreadyExists is success; a failure is not remembered.
func (a *acctCore) ensureContainer(ctx context.Context) error {
	o := a.off
	o.mu.Lock()
	done := o.created
	o.mu.Unlock()
	if done {
		return nil
	}
	err := a.blobs.CreateContainer(ctx, o.container)
	if err != nil && !abstractions.HasStatus(err, http.StatusConflict, "ContainerAlreadyExists") {
		return err
	}
	o.mu.Lock()
	o.created = true
	o.mu.Unlock()
	return nil
}

// BlobOffload returns the account's blob offload settings as in force (defaults filled in),
// or nil when offload is not configured.
func (a *Account) BlobOffload() *BlobOffloadOptions {
	off := a.e.off
	if off == nil {
		return nil
	}
	o := &BlobOffloadOptions{Container: off.container, ThresholdBytes: off.threshold, CleanupGrace: off.grace}
	if !off.cleanup {
		o.CleanupGrace = NoCleanup
	}
	return o
}

// plannerOffload is the planner's view of the store's offload, nil when not configured.
func (s *core) plannerOffload() *largevalue.Offload {
	if s.acct.off == nil {
		return nil
	}
	return &largevalue.Offload{Table: s.table, Threshold: s.acct.off.threshold}
}

// fileValue is a file of a prepared entity.
type fileValue struct {
	field *codec.Field
	file  *abstractions.File
	value int // index in prepared.values
}

// fileSources are the files one write holds, each taken once (a File assigned to several
// fields or entities of the write is hashed and locked once).
type fileSources struct {
	mu sync.Mutex // the partitions of a batch upload concurrently
	m  map[*abstractions.File]driver.FileSource
}

func (fs *fileSources) get(ctx context.Context, f *abstractions.File) (driver.FileSource, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if src, ok := fs.m[f]; ok {
		return src, nil
	}
	src, err := driver.TakeFile(ctx, f)
	if err != nil {
		return nil, err
	}
	if fs.m == nil {
		fs.m = map[*abstractions.File]driver.FileSource{}
	}
	fs.m[f] = src
	return src, nil
}

// release gives every file back (a seekable reader stands where its content starts).
func (fs *fileSources) release() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, src := range fs.m {
		src.Release()
	}
	fs.m = nil
}

// planLarge plans the rows of a prepared split-aware entity whose files (if any) are
// resolved, and its logical row (the read cache's form).
func (s *core) planLarge(op string, p *write) error {
	lay, err := largevalue.Plan(p.pk, p.rk, p.fixed, p.values, s.plannerOffload())
	if err != nil {
		if errors.Is(err, abstractions.ErrInvalidKey) {
			return &abstractions.StoreError{Kind: abstractions.ErrInvalidKey, Op: op, Table: s.table, PartitionKey: p.pk, RowKey: p.rk,
				Message: "the keys are too long for the names of the entity's blobs; nothing was stored", Err: err}
		}
		return rowError(op, s.table, p.pk, p.rk, "the entity cannot be stored; nothing was stored", err)
	}
	p.layout = lay
	p.row = lay.Rows[0]
	refs := map[string]largevalue.BlobRef{}
	for _, b := range lay.Blobs {
		refs[b.Column] = b.Ref
	}
	logical := append(make([]service.Property, 0, len(p.fixed)+len(p.values)), p.fixed...)
	for _, v := range p.values {
		if v.Ref != nil {
			logical = append(logical, service.Property{Name: v.Column + largevalue.BlobSuffix, Value: refs[v.Column].Value()})
			continue
		}
		logical = append(logical, service.Property{Name: v.Cell, Value: v.Value})
	}
	p.logical = service.Row{PartitionKey: p.pk, RowKey: p.rk, Properties: logical}
	return nil
}

// resolveFiles hashes the files of a prepared entity (taking them for this write) and plans
// its rows. An account without offload refuses a file before its reader is read.
func (s *core) resolveFiles(ctx context.Context, op string, p *write, fs *fileSources) error {
	if p.layout != nil {
		return nil
	}
	for _, fv := range p.files {
		ref := &largevalue.BlobRef{ContentType: fv.file.ContentType(), Encoding: largevalue.EncFile}
		if s.acct.off != nil {
			src, err := fs.get(ctx, fv.file)
			if err != nil {
				return s.fileError(op, p, fv, err)
			}
			ref.SHA256, ref.Length = src.SHA256(), src.Length()
		}
		p.values[fv.value].Ref = ref
	}
	return s.planLarge(op, p)
}

// fileError names the file a write could not take.
func (s *core) fileError(op string, p *write, fv fileValue, err error) error {
	kind := abstractions.ErrInvalidArgument
	for _, k := range []error{context.Canceled, context.DeadlineExceeded, abstractions.ErrIntegrity, abstractions.ErrUnavailable, abstractions.ErrInvalidArgument} {
		if errors.Is(err, k) {
			kind = k
			break
		}
	}
	return &abstractions.StoreError{Kind: kind, Op: op, Table: s.table, PartitionKey: p.pk, RowKey: p.rk, Err: err,
		Message: fmt.Sprintf("the file in %s cannot be stored; nothing was stored", fv.field.Path)}
}

// storeBlob is a blob of the offload container that a File streams.
type storeBlob struct {
	blobs     service.Blobs
	container string
	path      string
	// gone runs when the blob is found missing (it evicts the row from the read cache).
	gone func()
}

// OpenBlob implements driver.FileBlob.
func (b *storeBlob) OpenBlob(ctx context.Context) (io.ReadCloser, error) {
	if b.blobs == nil {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrBlobOffloadNotConfigured, Op: "open file",
			Message: "the file is stored in a blob and the account that read it has no blob offload configured; configure Options.BlobOffload"}
	}
	blob, err := b.blobs.Download(ctx, b.container, b.path, service.Conditions{})
	if abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
		if b.gone != nil {
			b.gone()
		}
		return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "open file", Err: err,
			Message: fmt.Sprintf("the blob this file was uploaded to or read from (%q) is gone: the row may have changed (replaced or deleted) since the entity was read; read the entity again and open its current file", b.path)}
	}
	if err != nil {
		return nil, callerr.Table("open file", "", "", "", err)
	}
	return &goneBody{ReadCloser: blob.Body, b: b}, nil
}

// goneBody reports a blob deleted under an open stream as damage, and any other failure of
// the stream as every blob call's failure is reported (translate).
type goneBody struct {
	io.ReadCloser
	b *storeBlob
}

func (g *goneBody) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p)
	switch {
	case err == nil || err == io.EOF:
	case abstractions.HasStatus(err, http.StatusNotFound, "") || abstractions.HasStatus(err, http.StatusPreconditionFailed, ""):
		if g.b.gone != nil {
			g.b.gone()
		}
		err = &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "read file", Err: err,
			Message: "the file's blob changed or was deleted while it was read; read the entity again and open its current file"}
	default:
		err = callerr.Table("read file", "", "", "", err)
	}
	return n, err
}

// sameBlob reports whether a File's blob is the named blob of this store's account.
func (s *core) sameBlob(fb driver.FileBlob, path string) bool {
	b, ok := fb.(*storeBlob)
	return ok && b.blobs == s.acct.blobs && b.container == s.acct.off.container && b.path == path
}

// blobOf returns the offload blob path of row (pk, rk), as a File streams it.
func (s *core) blobOf(pk, rk, path string) *storeBlob {
	b := &storeBlob{blobs: s.acct.blobs, path: path}
	if s.acct.off != nil {
		b.container = s.acct.off.container
	} else {
		b.blobs = nil
	}
	b.gone = func() { s.acct.cache.Drop(s.writeKeys([2]string{pk, rk})) }
	return b
}

// bindFile returns the File of a stored reference.
func (s *core) bindFile(pk, rk string, ref largevalue.BlobRef) *abstractions.File {
	return driver.NewStoredFile(s.blobOf(pk, rk, ref.Path), ref.SHA256, ref.Length, ref.ContentType)
}

// bindFiles sets the file fields of a decoded entity from the reference cells of its row:
// the field's own, or else the first of its aliases' the row holds.
func (s *Store[T]) bindFiles(v *T, row *service.Row) error {
	for _, f := range s.files {
		var name string
		var cell service.Value
		found := false
		for _, name = range fileColumns(f) {
			if cell, found = row.Get(name + largevalue.BlobSuffix); found {
				break
			}
		}
		if !found {
			continue
		}
		ref, ok := largevalue.ParseBlobRef(cell)
		if !ok {
			return &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "read", Table: s.table, PartitionKey: row.PartitionKey, RowKey: row.RowKey,
				Message: fmt.Sprintf("the cell %s__blob does not hold a blob reference (path, sha256, length, contentType, encoding as JSON); nothing was returned", name)}
		}
		if err := codec.SetFile(v, f, s.bindFile(row.PartitionKey, row.RowKey, ref)); err != nil {
			return err
		}
	}
	return nil
}

// uploadBlobs uploads the blobs of a unit's layout that this write has not uploaded yet:
// create-only, an existing blob (the same name, so the same content) being touched instead.
func (s *core) uploadBlobs(ctx context.Context, op string, p *write, fs *fileSources) error {
	lay := p.layout
	if len(lay.Blobs) == 0 {
		return nil
	}
	if err := s.acct.ensureContainer(ctx); err != nil {
		return s.translate(op, p.pk, p.rk, err)
	}
	for _, b := range lay.Blobs {
		if p.uploaded[b.Ref.Path] {
			continue
		}
		var err error
		if b.Data != nil {
			data := b.Data
			_, err = s.putBlob(ctx, b.Ref, func(ctx context.Context, opts service.UploadOptions) (service.BlobProperties, error) {
				return s.acct.blobs.Upload(ctx, s.acct.off.container, b.Ref.Path, data, opts)
			})
			err = s.translate(op, p.pk, p.rk, err)
		} else {
			err = s.uploadFile(ctx, op, p, b, fs)
		}
		if err != nil {
			return err
		}
		if p.uploaded == nil {
			p.uploaded = map[string]bool{}
		}
		p.uploaded[b.Ref.Path] = true
	}
	return nil
}

// uploadFile uploads (or touches) the blob of one file of a unit.
func (s *core) uploadFile(ctx context.Context, op string, p *write, b largevalue.Blob, fs *fileSources) error {
	var fv fileValue
	for _, f := range p.files {
		if f.field.Name == b.Column {
			fv = f
		}
	}
	src := fs.m[fv.file]
	if src.Blob() != nil && s.sameBlob(src.Blob(), b.Ref.Path) {
		// The row's own blob, read or uploaded before: keep it, and restart its age.
		_, err := s.acct.blobs.Touch(ctx, s.acct.off.container, b.Ref.Path)
		if abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
			return &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.table, PartitionKey: p.pk, RowKey: p.rk, Err: err,
				Message: fmt.Sprintf("the blob the file in %s was uploaded to or read from is gone (an orphan sweep or a cleanup collected it); nothing was written: make the File again from its source", fv.field.Path)}
		}
		return s.translate(op, p.pk, p.rk, err)
	}
	_, err := s.putBlob(ctx, b.Ref, func(ctx context.Context, opts service.UploadOptions) (service.BlobProperties, error) {
		body, err := src.Open(ctx)
		if err != nil {
			return service.BlobProperties{}, err
		}
		defer body.Close()
		return s.acct.blobs.UploadStream(ctx, s.acct.off.container, b.Ref.Path, body, opts)
	})
	if err != nil {
		if errors.Is(err, abstractions.ErrIntegrity) || errors.Is(err, abstractions.ErrInvalidArgument) {
			return s.fileError(op, p, fv, err)
		}
		return s.translate(op, p.pk, p.rk, err)
	}
	if src.Blob() == nil {
		// A File of bytes keeps its bytes; one made from a reader streams its blob now.
		src.Uploaded(s.blobOf(p.pk, p.rk, b.Ref.Path))
		return nil
	}
	// A File that streams another blob keeps it; the written field gets the new one.
	return codec.SetFile(p.v, fv.field, s.bindFile(p.pk, p.rk, b.Ref))
}

// putBlob runs an upload create-only; a blob that exists already is touched instead (its
// name holds its hash, so it holds the same bytes). A blob that vanishes between the two is
// uploaded again, once.
func (s *core) putBlob(ctx context.Context, ref largevalue.BlobRef, upload func(context.Context, service.UploadOptions) (service.BlobProperties, error)) (service.BlobProperties, error) {
	opts := service.UploadOptions{Mode: service.UploadCreate, ContentType: ref.ContentType}
	if ref.Encoding == largevalue.EncGzip {
		opts.ContentEncoding = "gzip"
	}
	for attempt := 0; ; attempt++ {
		props, err := upload(ctx, opts)
		if err == nil {
			s.acct.tel.Meters.Offload(ctx, s.table, ref.Length)
			return props, nil
		}
		if !abstractions.HasStatus(err, http.StatusConflict, "BlobAlreadyExists") {
			return service.BlobProperties{}, err
		}
		props, err = s.acct.blobs.Touch(ctx, s.acct.off.container, ref.Path)
		if err == nil || attempt > 0 || !abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
			return props, err
		}
	}
}

// blobRefs returns the blob references of a stored row read for a write: every cell whose
// name ends in __blob and that parses as a reference.
func blobRefs(row *service.Row) []largevalue.BlobRef {
	var out []largevalue.BlobRef
	for _, p := range row.Properties {
		if !strings.HasSuffix(p.Name, largevalue.BlobSuffix) {
			continue
		}
		if ref, ok := largevalue.ParseBlobRef(p.Value); ok {
			out = append(out, ref)
		}
	}
	return out
}

// released returns the blobs of old that a write of row (pk, rk) no longer references and
// that are the row's own.
func (s *core) released(pk, rk string, old []largevalue.BlobRef, keep []largevalue.Blob) []string {
	prefix := largevalue.RowBlobPrefix(s.table, pk, rk)
	kept := map[string]bool{}
	for _, b := range keep {
		kept[b.Ref.Path] = true
	}
	var out []string
	for _, r := range old {
		if strings.HasPrefix(r.Path, prefix) && !kept[r.Path] {
			if _, ok := largevalue.ParseBlobName(r.Path); ok {
				out = append(out, r.Path)
				kept[r.Path] = true
			}
		}
	}
	return out
}

// serviceNow returns the blob service's time, or the client's moved back by
// clientClockMargin when the service's cannot be read.
func (a *acctCore) serviceNow(ctx context.Context) time.Time {
	if t, err := a.blobs.Now(ctx); err == nil {
		return t
	}
	return a.clock().Add(-clientClockMargin)
}

// cutoff returns the If-Unmodified-Since of a delete that may remove only blobs last
// written more than olderThan before at (a service time): blobs of whole seconds strictly
// before at-olderThan.
func cutoff(at time.Time, olderThan time.Duration) time.Time {
	c := at.UTC().Truncate(time.Second).Add(-olderThan)
	if t := c.Truncate(time.Second); t.Equal(c) {
		return c.Add(-time.Second)
	}
	return c.Truncate(time.Second)
}

// cleanup deletes released blobs of a committed write or delete, each on condition that it
// is older than the grace at the commit's time at (zero: ask the service). It runs on after
// ctx ends, for at most cleanupOvertime, and reports nothing: what it leaves is the sweep's.
func (s *core) cleanup(ctx context.Context, at time.Time, paths []string) {
	off := s.acct.off
	if len(paths) == 0 || off == nil || !off.cleanup {
		return
	}
	cctx, cancel := overtime(ctx, cleanupOvertime)
	defer cancel()
	if at.IsZero() {
		at = s.acct.serviceNow(cctx)
	}
	cond := service.Conditions{IfUnmodifiedSince: cutoff(at, off.grace)}
	for _, p := range paths {
		err := s.acct.blobs.DeleteBlob(cctx, off.container, p, cond)
		if err != nil && !abstractions.HasStatus(err, http.StatusNotFound, "") && !abstractions.HasStatus(err, http.StatusPreconditionFailed, "") {
			s.acct.logger().Debug("unified tables: a released blob was not deleted; the orphan sweep will", "table", s.table, "error", callerr.KindName(err))
		}
		if cctx.Err() != nil {
			return
		}
	}
}

// overtime returns a context that outlives ctx by at most d: it ends d after ctx ends.
func overtime(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var timer *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if cctx.Err() == nil {
			timer = time.AfterFunc(d, cancel)
		}
	})
	return cctx, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// fetchBlobs downloads the offloaded values of a reassembled row and puts each in its cell,
// verified; a value stored under an alias is fetched only when the row holds none of its
// column's own. File references stay as they are (a read never downloads a file). On an
// account without offload it returns the row as it is: largevalue.Assemble has refused
// every reference it could not read (an *largevalue.OffloadedError). A missing or changed
// blob is an *largevalue.IntegrityError.
func (s *core) fetchBlobs(ctx context.Context, op string, row service.Row) (service.Row, error) {
	if s.acct.off == nil {
		return row, nil
	}
	var out *service.Row
	for _, c := range s.large {
		cell, ok := row.Get(c.Name + largevalue.BlobSuffix)
		if !ok || c.Superseded(&row) {
			continue
		}
		ref, ok := largevalue.ParseBlobRef(cell)
		if !ok {
			return service.Row{}, &largevalue.IntegrityError{Column: c.Name, Reason: "the cell " + c.Name + largevalue.BlobSuffix + " does not hold a blob reference"}
		}
		data, err := s.download(ctx, ref)
		if err != nil {
			return service.Row{}, err
		}
		prop, err := largevalue.DecodeBlob(c, ref, data)
		if err != nil {
			return service.Row{}, err
		}
		if out == nil {
			r := row
			r.Properties = append([]service.Property(nil), row.Properties...)
			out = &r
		}
		props := out.Properties[:0]
		for _, p := range out.Properties {
			if p.Name != c.Name+largevalue.BlobSuffix && p.Name != c.Cell {
				props = append(props, p)
			}
		}
		out.Properties = append(props, prop)
	}
	if out == nil {
		return row, nil
	}
	return *out, nil
}

// download reads a referenced blob whole, at most its recorded length and one byte more. A
// missing blob is an *largevalue.IntegrityError.
func (s *core) download(ctx context.Context, ref largevalue.BlobRef) ([]byte, error) {
	blob, err := s.acct.blobs.Download(ctx, s.acct.off.container, ref.Path, service.Conditions{})
	if abstractions.HasStatus(err, http.StatusNotFound, "") {
		return nil, &largevalue.IntegrityError{Reason: fmt.Sprintf("the blob %q is missing", ref.Path)}
	}
	if err != nil {
		return nil, err
	}
	defer blob.Body.Close()
	var buf bytes.Buffer
	buf.Grow(int(min(ref.Length, 64<<20)) + 1)
	if _, err := io.Copy(&buf, io.LimitReader(blob.Body, ref.Length+1)); err != nil {
		if abstractions.HasStatus(err, http.StatusNotFound, "") || abstractions.HasStatus(err, http.StatusPreconditionFailed, "") {
			return nil, &largevalue.IntegrityError{Reason: fmt.Sprintf("the blob %q changed or vanished while it was read", ref.Path)}
		}
		return nil, err
	}
	return buf.Bytes(), nil
}
