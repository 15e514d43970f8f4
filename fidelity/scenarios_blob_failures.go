package fidelity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// stalledBlobs is a blob service that does not answer until the call's context ends: every
// call but container creation is held until then and sent with the ended context, so the
// backend's own client reports the deadline, as it does after retrying a failing service
// until the deadline passes.
type stalledBlobs struct{ service.Blobs }

func (b stalledBlobs) Upload(ctx context.Context, c, name string, data []byte, o service.UploadOptions) (service.BlobProperties, error) {
	<-ctx.Done()
	return b.Blobs.Upload(ctx, c, name, data, o)
}

func (b stalledBlobs) UploadStream(ctx context.Context, c, name string, body io.Reader, o service.UploadOptions) (service.BlobProperties, error) {
	<-ctx.Done()
	return b.Blobs.UploadStream(ctx, c, name, body, o)
}

func (b stalledBlobs) Touch(ctx context.Context, c, name string) (service.BlobProperties, error) {
	<-ctx.Done()
	return b.Blobs.Touch(ctx, c, name)
}

func (b stalledBlobs) Download(ctx context.Context, c, name string, cond service.Conditions) (*service.Blob, error) {
	<-ctx.Done()
	return b.Blobs.Download(ctx, c, name, cond)
}

func (b stalledBlobs) List(ctx context.Context, c string, o service.ListOptions) (service.BlobPage, error) {
	<-ctx.Done()
	return b.Blobs.List(ctx, c, o)
}

func (b stalledBlobs) DeleteBlob(ctx context.Context, c, name string, cond service.Conditions) error {
	<-ctx.Done()
	return b.Blobs.DeleteBlob(ctx, c, name, cond)
}

// failsOnUpload is an io.ReadSeeker that reads well while a write hashes it and fails with
// errBody once the upload reads it again (after its second seek to the start).
type failsOnUpload struct {
	*bytes.Reader
	rewinds int
}

func (f *failsOnUpload) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekStart {
		f.rewinds++
	}
	return f.Reader.Seek(off, whence)
}

func (f *failsOnUpload) Read(p []byte) (int, error) {
	if f.rewinds >= 2 {
		return 0, errBody
	}
	return f.Reader.Read(p)
}

// changesOnUpload is an io.ReadSeeker whose content is replaced by next once the upload
// reads it again (at its second seek to the start): a source that changed between the pass
// that hashed it and the upload.
type changesOnUpload struct {
	*bytes.Reader
	next    []byte
	rewinds int
}

func (c *changesOnUpload) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekStart {
		if c.rewinds++; c.rewinds == 2 {
			c.Reader = bytes.NewReader(c.next)
		}
	}
	return c.Reader.Seek(off, whence)
}

// stalledDeadline is how long a call against stalledBlobs waits for its answer.
const stalledDeadline = 200 * time.Millisecond

// blobFailureScenarios are the failures of the blob service as the stores report them.
func blobFailureScenarios() []Scenario {
	return []Scenario{
		{
			// The deadline of a call whose blob requests get no answer is the service's
			// unavailability, as for table requests: ErrUnavailable, with the deadline in
			// the chain, and nothing stored.
			Name: "blob-failures/deadline-while-the-blob-service-does-not-answer",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, noGrace)
				acct := e.NewAccount(e.Tables, stalledBlobs{e.Blobs}, &tables.Options{Now: storeClock, Logger: discardLogger(),
					BlobOffload: s.Account().BlobOffload()})
				stalled, err := tables.For[offDoc](acct, &tables.StoreOptions{Table: e.Table})
				if err != nil {
					e.Fatalf("store: %v", err)
				}
				unavailable := func(step string, call func(ctx context.Context) error) {
					e.t.Helper()
					cctx, cancel := context.WithTimeout(ctx, stalledDeadline)
					defer cancel()
					err := call(cctx)
					e.Is(step, err, abstractions.ErrUnavailable)
					e.Equal(step+": the deadline is in the chain", errors.Is(err, context.DeadlineExceeded), true)
				}
				e.OK("an entity with a large value and a file", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|old"}, Title: "v1",
					Body: strings.Repeat("o", 150_000), Attachment: abstractions.FileFromBytes([]byte("old file"), "text/plain")}))

				// Writes: nothing is stored, and the stored row is left as it was.
				unavailable("create with an offloaded value", func(ctx context.Context) error {
					return stalled.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|value"}, Body: strings.Repeat("v", 150_000)})
				})
				unavailable("create with a file of bytes", func(ctx context.Context) error {
					return stalled.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|bytes"}, Attachment: abstractions.FileFromBytes([]byte("bytes"), "")})
				})
				unavailable("create with a file from a reader", func(ctx context.Context) error {
					return stalled.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|reader"},
						Attachment: abstractions.FileFromReader(bytes.NewReader(pattern(10_000, 3)), "")})
				})
				unavailable("replace a row's offloaded value", func(ctx context.Context) error {
					return stalled.Upsert(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|old"}, Title: "v2", Body: strings.Repeat("n", 150_000)})
				})
				unavailable("a batch with offloaded values", func(ctx context.Context) error {
					return stalled.CreateBatch(ctx, []*offDoc{
						{Entity: abstractions.Entity{ID: "q|a"}, Body: strings.Repeat("a", 150_000)},
						{Entity: abstractions.Entity{ID: "q|b"}, Body: strings.Repeat("b", 150_000)},
					})
				})

				// Reads.
				unavailable("read an offloaded value", func(ctx context.Context) error {
					_, err := stalled.One(ctx, "p|old")
					return err
				})
				e.OK("an entity with a file alone", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|file"},
					Attachment: abstractions.FileFromBytes([]byte("a file"), "text/plain")}))
				got, err := stalled.One(ctx, "p|file")
				e.OK("its read downloads nothing", err)
				unavailable("open its file", func(ctx context.Context) error {
					_, err := readFile(ctx, got.Attachment)
					return err
				})
				unavailable("sweep orphans", func(ctx context.Context) error {
					_, err := stalled.SweepOrphanBlobs(ctx, 0)
					return err
				})

				old, err := s.One(ctx, "p|old")
				e.OK("the row as it was", err)
				e.Equal("its title", old.Title, "v1")
				e.Equal("its value", old.Body == strings.Repeat("o", 150_000), true)
				e.observeOffRows(ctx, "rows")
				e.observeBlobs(ctx, c, "blobs")
				e.clearTable(ctx)
			},
		},
		{
			// A file whose reader fails is the caller's input failing: ErrInvalidArgument,
			// never ErrUnavailable, with the reader's error in the chain, and nothing stored.
			Name: "blob-failures/a-file-whose-reader-fails",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, noGrace)
				refused := func(step string, err error, cause func(error) bool) {
					e.t.Helper()
					e.Is(step, err, abstractions.ErrInvalidArgument)
					e.Equal(step+": not the service's unavailability", errors.Is(err, abstractions.ErrUnavailable), false)
					e.Equal(step+": the reader's error is in the chain", cause(err), true)
				}
				isBody := func(err error) bool { return errors.Is(err, errBody) }
				body := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(pattern(300_000, 5))), 100_000)
				refused("an oversized request body", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|large"},
					Attachment: abstractions.FileFromReader(body, "application/pdf")}), func(err error) bool {
					var mb *http.MaxBytesError
					return errors.As(err, &mb) && mb.Limit == 100_000
				})
				refused("a stream that breaks part of the way", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|stream"},
					Attachment: abstractions.FileFromReader(&failingReader{left: 200_000}, "")}), isBody)
				seeker := &failsOnUpload{Reader: bytes.NewReader(pattern(300_000, 6))}
				refused("a seekable reader that fails as it is uploaded", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|seek"},
					Attachment: abstractions.FileFromReader(seeker, "")}), isBody)
				e.OK("an entity with a file that reads well", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|old"},
					Attachment: abstractions.FileFromBytes([]byte("old"), "text/plain")}))
				refused("a replace whose file's reader breaks", s.Upsert(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|old"},
					Attachment: abstractions.FileFromReader(&failingReader{left: 10}, "")}), isBody)
				got, err := s.One(ctx, "p|old")
				e.OK("the row as it was", err)
				data, err := readFile(ctx, got.Attachment)
				e.OK("open its file", err)
				e.Equal("its content", string(data), "old")
				e.observeOffRows(ctx, "rows")
				e.observeBlobs(ctx, c, "blobs")
				e.clearTable(ctx)
			},
		},
		{
			// A file whose seekable source changes between the pass that hashed it (for its
			// name) and the upload fails the write with ErrIntegrity and stores nothing: not
			// the row, and no blob under the name of the content hashed, whether the upload
			// is one request or staged blocks, and whether the bytes or the length changed.
			Name: "blob-failures/a-file-whose-source-changes-between-the-passes",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, noGrace)
				for _, tc := range []struct {
					name          string
					content, next []byte
				}{
					{"small, one byte changed", pattern(300_000, 7), flipped(pattern(300_000, 7), 150_000)},
					{"several blocks, one byte changed", pattern(9_000_000, 8), flipped(pattern(9_000_000, 8), 8_999_999)},
					{"several blocks, shorter", pattern(9_000_000, 9), pattern(9_000_000, 9)[:5_000_000]},
				} {
					err := s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|changed"},
						Attachment: abstractions.FileFromReader(&changesOnUpload{Reader: bytes.NewReader(tc.content), next: tc.next}, "")})
					e.Is(tc.name+": the write", err, abstractions.ErrIntegrity)
					e.Equal(tc.name+": the error says the source changed", strings.Contains(fmt.Sprint(err), "source changed"), true)
					_, err = s.One(ctx, "p|changed")
					e.Is(tc.name+": no row", err, abstractions.ErrNotFound)
					e.Equal(tc.name+": no blob", len(e.blobNames(ctx, c)), 0)
				}
				e.observeOffRows(ctx, "rows")
				e.clearTable(ctx)
			},
		},
	}
}

// flipped returns b with the byte at i changed.
func flipped(b []byte, i int) []byte {
	b[i] ^= 0xff
	return b
}
