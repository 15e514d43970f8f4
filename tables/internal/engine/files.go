// Files (*abstractions.File fields): their content hashed before a write, uploaded to the
// offload container with the entity, and bound to the blob they stream on a read.

package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/unified-data/gotables/tables/internal/callerr"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/abstractions/driver"
	"github.com/unified-data/gotables/tables/internal/codec"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// FileValue is a file of a prepared entity.
type FileValue struct {
	Field *codec.Field
	File  *abstractions.File
	Value int // index in prepared.values
}

// FileSources are the files one write holds, each taken once (a File assigned to several
// fields or entities of the write is hashed and locked once).
type FileSources struct {
	Mu sync.Mutex // the partitions of a batch upload concurrently
	M  map[*abstractions.File]driver.FileSource
}

// Get takes f's turn for this write once, hashing its content, and returns its source.
func (fs *FileSources) Get(ctx context.Context, f *abstractions.File) (driver.FileSource, error) {
	fs.Mu.Lock()
	defer fs.Mu.Unlock()
	if src, ok := fs.M[f]; ok {
		return src, nil
	}
	src, err := driver.TakeFile(ctx, f)
	if err != nil {
		return nil, err
	}
	if fs.M == nil {
		fs.M = map[*abstractions.File]driver.FileSource{}
	}
	fs.M[f] = src
	return src, nil
}

// Release gives every file back (a seekable reader stands where its content starts).
func (fs *FileSources) Release() {
	fs.Mu.Lock()
	defer fs.Mu.Unlock()
	for _, src := range fs.M {
		src.Release()
	}
	fs.M = nil
}

// ResolveFiles hashes the files of a prepared entity (taking them for this write) and plans
// its rows. An account without offload refuses a file before its reader is read.
func (s *Table) ResolveFiles(ctx context.Context, op string, p *Write, fs *FileSources) error {
	if p.Layout != nil {
		return nil
	}
	for _, fv := range p.Files {
		ref := &largevalue.BlobRef{ContentType: fv.File.ContentType(), Encoding: largevalue.EncFile}
		if s.Acct.Off != nil {
			src, err := fs.Get(ctx, fv.File)
			if err != nil {
				return s.FileError(op, p, fv, err)
			}
			ref.SHA256, ref.Length = src.SHA256(), src.Length()
		}
		p.Values[fv.Value].Ref = ref
	}
	return s.PlanLarge(op, p)
}

// FileError names the file a write could not take.
func (s *Table) FileError(op string, p *Write, fv FileValue, err error) error {
	kind := abstractions.ErrInvalidArgument
	for _, k := range []error{context.Canceled, context.DeadlineExceeded, abstractions.ErrIntegrity, abstractions.ErrUnavailable, abstractions.ErrInvalidArgument} {
		if errors.Is(err, k) {
			kind = k
			break
		}
	}
	return &abstractions.StoreError{Kind: kind, Op: op, Table: s.Name, PartitionKey: p.PK, RowKey: p.RK, Err: err,
		Message: fmt.Sprintf("the file in %s cannot be stored; nothing was stored", fv.Field.Path)}
}

// StoreBlob is a blob of the offload container that a File streams.
type StoreBlob struct {
	Blobs     service.Blobs
	Container string
	Path      string
	// Gone runs when the blob is found missing (it evicts the row from the read cache).
	Gone func()
}

// OpenBlob implements driver.FileBlob.
func (b *StoreBlob) OpenBlob(ctx context.Context) (io.ReadCloser, error) {
	if b.Blobs == nil {
		return nil, &abstractions.StoreError{Kind: abstractions.ErrBlobOffloadNotConfigured, Op: "open file",
			Message: "the file is stored in a blob and the account that read it has no blob offload configured; configure Options.BlobOffload"}
	}
	blob, err := b.Blobs.Download(ctx, b.Container, b.Path, service.Conditions{})
	if abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
		if b.Gone != nil {
			b.Gone()
		}
		return nil, &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "open file", Err: err,
			Message: fmt.Sprintf("the blob this file was uploaded to or read from (%q) is gone: the row may have changed (replaced or deleted) since the entity was read; read the entity again and open its current file", b.Path)}
	}
	if err != nil {
		return nil, callerr.Table("open file", "", "", "", err)
	}
	return &GoneBody{ReadCloser: blob.Body, B: b}, nil
}

// GoneBody reports a blob deleted under an open stream as damage, and any other failure of
// the stream as every blob call's failure is reported (translate).
type GoneBody struct {
	io.ReadCloser
	B *StoreBlob
}

// Read reads the stream, reporting its failures as GoneBody says.
func (g *GoneBody) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p)
	switch {
	case err == nil || err == io.EOF:
	case abstractions.HasStatus(err, http.StatusNotFound, "") || abstractions.HasStatus(err, http.StatusPreconditionFailed, ""):
		if g.B.Gone != nil {
			g.B.Gone()
		}
		err = &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: "read file", Err: err,
			Message: "the file's blob changed or was deleted while it was read; read the entity again and open its current file"}
	default:
		err = callerr.Table("read file", "", "", "", err)
	}
	return n, err
}

// SameBlob reports whether a File's blob is the named blob of this store's account.
func (s *Table) SameBlob(fb driver.FileBlob, path string) bool {
	b, ok := fb.(*StoreBlob)
	return ok && b.Blobs == s.Acct.Blobs && b.Container == s.Acct.Off.Container && b.Path == path
}

// BlobOf returns the offload blob path of row (pk, rk), as a File streams it.
func (s *Table) BlobOf(pk, rk, path string) *StoreBlob {
	b := &StoreBlob{Blobs: s.Acct.Blobs, Path: path}
	if s.Acct.Off != nil {
		b.Container = s.Acct.Off.Container
	} else {
		b.Blobs = nil
	}
	b.Gone = func() { s.Acct.Cache.Drop(s.WriteKeys([2]string{pk, rk})) }
	return b
}

// BindFile returns the File of a stored reference.
func (s *Table) BindFile(pk, rk string, ref largevalue.BlobRef) *abstractions.File {
	return driver.NewStoredFile(s.BlobOf(pk, rk, ref.Path), ref.SHA256, ref.Length, ref.ContentType)
}

// UploadFile uploads (or touches) the blob of one file of a unit.
func (s *Table) UploadFile(ctx context.Context, op string, p *Write, b largevalue.Blob, fs *FileSources) error {
	var fv FileValue
	for _, f := range p.Files {
		if f.Field.Name == b.Column {
			fv = f
		}
	}
	src := fs.M[fv.File]
	if src.Blob() != nil && s.SameBlob(src.Blob(), b.Ref.Path) {
		// The row's own blob, read or uploaded before: keep it, and restart its age.
		_, err := s.Acct.Blobs.Touch(ctx, s.Acct.Off.Container, b.Ref.Path)
		if abstractions.HasStatus(err, http.StatusNotFound, "BlobNotFound") {
			return &abstractions.StoreError{Kind: abstractions.ErrIntegrity, Op: op, Table: s.Name, PartitionKey: p.PK, RowKey: p.RK, Err: err,
				Message: fmt.Sprintf("the blob the file in %s was uploaded to or read from is gone (an orphan sweep or a cleanup collected it); nothing was written: make the File again from its source", fv.Field.Path)}
		}
		return s.Translate(op, p.PK, p.RK, err)
	}
	_, err := s.PutBlob(ctx, b.Ref, func(ctx context.Context, opts service.UploadOptions) (service.BlobProperties, error) {
		body, err := src.Open(ctx)
		if err != nil {
			return service.BlobProperties{}, err
		}
		defer body.Close()
		return s.Acct.Blobs.UploadStream(ctx, s.Acct.Off.Container, b.Ref.Path, body, opts)
	})
	if err != nil {
		if errors.Is(err, abstractions.ErrIntegrity) || errors.Is(err, abstractions.ErrInvalidArgument) {
			return s.FileError(op, p, fv, err)
		}
		return s.Translate(op, p.PK, p.RK, err)
	}
	if src.Blob() == nil {
		// A File of bytes keeps its bytes; one made from a reader streams its blob now.
		src.Uploaded(s.BlobOf(p.PK, p.RK, b.Ref.Path))
		return nil
	}
	// A File that streams another blob keeps it; the written field gets the new one.
	return codec.SetFile(p.V, fv.Field, s.BindFile(p.PK, p.RK, b.Ref))
}
