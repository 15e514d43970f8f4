package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/unified-data/gotables/tables/internal/callerr"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// ClientClockMargin is how far back a cleanup or sweep moves the client's clock when the
// blob service's time cannot be read, so that a client clock running ahead cannot make a
// freshly touched blob look old.
const ClientClockMargin = 5 * time.Minute

// CleanupOvertime bounds the cleanup of a committed write whose context ended: it runs on
// for at most this long, then leaves the rest to the sweep.
const CleanupOvertime = 5 * time.Second

// OffloadConfig is an account's resolved offload configuration.
type OffloadConfig struct {
	Container string
	Threshold int
	Grace     time.Duration // < 0: none
	Cleanup   bool

	Mu      sync.Mutex
	Created bool
}

// EnsureContainer creates the offload container unless the account already did. A 409
// ContainerAlreadyExists is success; a failure is not remembered.
func (a *Account) EnsureContainer(ctx context.Context) error {
	o := a.Off
	o.Mu.Lock()
	done := o.Created
	o.Mu.Unlock()
	if done {
		return nil
	}
	err := a.Blobs.CreateContainer(ctx, o.Container)
	if err != nil && !abstractions.HasStatus(err, http.StatusConflict, "ContainerAlreadyExists") {
		return err
	}
	o.Mu.Lock()
	o.Created = true
	o.Mu.Unlock()
	return nil
}

// PlannerOffload is the planner's view of the store's offload, nil when not configured.
func (s *Table) PlannerOffload() *largevalue.Offload {
	if s.Acct.Off == nil {
		return nil
	}
	return &largevalue.Offload{Table: s.Name, Threshold: s.Acct.Off.Threshold}
}

// PlanLarge plans the rows of a prepared split-aware entity whose files (if any) are
// resolved, and its logical row (the read cache's form).
func (s *Table) PlanLarge(op string, p *Write) error {
	lay, err := largevalue.Plan(p.PK, p.RK, p.Fixed, p.Values, s.PlannerOffload(), s.Acct.TxBudget())
	if err != nil {
		if errors.Is(err, abstractions.ErrInvalidKey) {
			return &abstractions.StoreError{Kind: abstractions.ErrInvalidKey, Op: op, Table: s.Name, PartitionKey: p.PK, RowKey: p.RK,
				Message: "the keys are too long for the names of the entity's blobs; nothing was stored", Err: err}
		}
		return RowError(op, s.Name, p.PK, p.RK, "the entity cannot be stored; nothing was stored", err)
	}
	p.Layout = lay
	p.Row = lay.Rows[0]
	refs := map[string]largevalue.BlobRef{}
	for _, b := range lay.Blobs {
		refs[b.Column] = b.Ref
	}
	logical := append(make([]service.Property, 0, len(p.Fixed)+len(p.Values)), p.Fixed...)
	for _, v := range p.Values {
		if v.Ref != nil {
			logical = append(logical, service.Property{Name: v.Column + largevalue.BlobSuffix, Value: refs[v.Column].Value()})
			continue
		}
		logical = append(logical, service.Property{Name: v.Cell, Value: v.Value})
	}
	p.Logical = service.Row{PartitionKey: p.PK, RowKey: p.RK, Properties: logical}
	return nil
}

// UploadBlobs uploads the blobs of a unit's layout that this write has not uploaded yet:
// create-only, an existing blob (the same name, so the same content) being touched instead.
func (s *Table) UploadBlobs(ctx context.Context, op string, p *Write, fs *FileSources) error {
	lay := p.Layout
	if len(lay.Blobs) == 0 {
		return nil
	}
	if err := s.Acct.EnsureContainer(ctx); err != nil {
		return s.Translate(op, p.PK, p.RK, err)
	}
	for _, b := range lay.Blobs {
		if p.Uploaded[b.Ref.Path] {
			continue
		}
		var err error
		if b.Data != nil {
			data := b.Data
			_, err = s.PutBlob(ctx, b.Ref, func(ctx context.Context, opts service.UploadOptions) (service.BlobProperties, error) {
				return s.Acct.Blobs.Upload(ctx, s.Acct.Off.Container, b.Ref.Path, data, opts)
			})
			err = s.Translate(op, p.PK, p.RK, err)
		} else {
			err = s.UploadFile(ctx, op, p, b, fs)
		}
		if err != nil {
			return err
		}
		if p.Uploaded == nil {
			p.Uploaded = map[string]bool{}
		}
		p.Uploaded[b.Ref.Path] = true
	}
	return nil
}

// PutBlob runs an upload create-only; a blob that exists already is touched instead (its
// name holds its hash, so it holds the same bytes). A blob that vanishes between the two is
// uploaded again, once.
func (s *Table) PutBlob(ctx context.Context, ref largevalue.BlobRef, upload func(context.Context, service.UploadOptions) (service.BlobProperties, error)) (service.BlobProperties, error) {
	opts := service.UploadOptions{Mode: service.UploadCreate, ContentType: ref.ContentType}
	if ref.Encoding == largevalue.EncGzip {
		opts.ContentEncoding = "gzip"
	}
	for attempt := 0; ; attempt++ {
		props, err := upload(ctx, opts)
		if err == nil {
			s.Acct.Tel.Meters.Offload(ctx, s.Name, ref.Length)
			return props, nil
		}
		if !abstractions.HasStatus(err, http.StatusConflict, "BlobAlreadyExists") {
			return service.BlobProperties{}, err
		}
		props, err = s.Acct.Blobs.Touch(ctx, s.Acct.Off.Container, ref.Path)
		if err == nil || attempt > 0 || !abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
			return props, err
		}
	}
}

// BlobRefs returns the blob references of a stored row read for a write: every cell whose
// name ends in __blob and that parses as a reference.
func BlobRefs(row *service.Row) []largevalue.BlobRef {
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

// Released returns the blobs of old that a write of row (pk, rk) no longer references and
// that are the row's own.
func (s *Table) Released(pk, rk string, old []largevalue.BlobRef, keep []largevalue.Blob) []string {
	prefix := largevalue.RowBlobPrefix(s.Name, pk, rk)
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

// ServiceNow returns the blob service's time, or the client's moved back by
// ClientClockMargin when the service's cannot be read.
func (a *Account) ServiceNow(ctx context.Context) time.Time {
	if t, err := a.Blobs.Now(ctx); err == nil {
		return t
	}
	return a.Clock().Add(-ClientClockMargin)
}

// Cutoff returns the If-Unmodified-Since of a delete that may remove only blobs last
// written more than olderThan before at (a service time): blobs of whole seconds strictly
// before at-olderThan.
func Cutoff(at time.Time, olderThan time.Duration) time.Time {
	c := at.UTC().Truncate(time.Second).Add(-olderThan)
	if t := c.Truncate(time.Second); t.Equal(c) {
		return c.Add(-time.Second)
	}
	return c.Truncate(time.Second)
}

// Cleanup deletes released blobs of a committed write or delete, each on condition that it
// is older than the grace at the commit's time at (zero: ask the service). It runs on after
// ctx ends, for at most CleanupOvertime, and reports nothing: what it leaves is the sweep's.
func (s *Table) Cleanup(ctx context.Context, at time.Time, paths []string) {
	off := s.Acct.Off
	if len(paths) == 0 || off == nil || !off.Cleanup {
		return
	}
	cctx, cancel := Overtime(ctx, CleanupOvertime)
	defer cancel()
	if at.IsZero() {
		at = s.Acct.ServiceNow(cctx)
	}
	cond := service.Conditions{IfUnmodifiedSince: Cutoff(at, off.Grace)}
	for _, p := range paths {
		err := s.Acct.Blobs.DeleteBlob(cctx, off.Container, p, cond)
		if err != nil && !abstractions.HasStatus(err, http.StatusNotFound, "") && !abstractions.HasStatus(err, http.StatusPreconditionFailed, "") {
			s.Acct.Logger().Debug("unified tables: a released blob was not deleted; the orphan sweep will", "table", s.Name, "error", callerr.KindName(err))
		}
		if cctx.Err() != nil {
			return
		}
	}
}

// Overtime returns a context that outlives ctx by at most d: it ends d after ctx ends.
func Overtime(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
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

// FetchBlobs downloads the offloaded values of a reassembled row and puts each in its cell,
// verified; a value stored under an alias is fetched only when the row holds none of its
// column's own. File references stay as they are (a read never downloads a file). On an
// account without offload it returns the row as it is: largevalue.Assemble has refused
// every reference it could not read (an *largevalue.OffloadedError). A missing or changed
// blob is an *largevalue.IntegrityError.
func (s *Table) FetchBlobs(ctx context.Context, op string, row service.Row) (service.Row, error) {
	if s.Acct.Off == nil {
		return row, nil
	}
	var out *service.Row
	for _, c := range s.Large {
		cell, ok := row.Get(c.Name + largevalue.BlobSuffix)
		if !ok || c.Superseded(&row) {
			continue
		}
		ref, ok := largevalue.ParseBlobRef(cell)
		if !ok {
			return service.Row{}, &largevalue.IntegrityError{Column: c.Name, Reason: "the cell " + c.Name + largevalue.BlobSuffix + " does not hold a blob reference"}
		}
		data, err := s.Download(ctx, ref)
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

// Download reads a referenced blob whole, at most its recorded length and one byte more. A
// missing blob is an *largevalue.IntegrityError.
func (s *Table) Download(ctx context.Context, ref largevalue.BlobRef) ([]byte, error) {
	blob, err := s.Acct.Blobs.Download(ctx, s.Acct.Off.Container, ref.Path, service.Conditions{})
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
