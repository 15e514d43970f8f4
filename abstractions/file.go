package abstractions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"reflect"
	"runtime"
	"sync"
	"weak"

	"github.com/unified-data/gotables/abstractions/internal/backend"
)

// File is a file stored with an entity: a field of type *File is always stored in a blob of
// the account's blob offload container, whatever its size, and its row holds only a
// reference to it. Reading an entity never downloads a file: Open streams it when the caller
// asks. A nil *File stores nothing.
//
// Make one with [FileFromBytes] or [FileFromReader]. A File is safe for concurrent use: one
// File may be assigned to several fields or entities, written at the same time, and the
// writes take turns on it (the first hashes its source, the others use that result).
//
// # Readers
//
// FileFromReader never buffers the content in memory and never closes the reader. What a
// write does with the reader depends on whether it can seek:
//
//   - An io.ReadSeeker is read from the position it stands at when the first write uses it,
//     twice (once to hash, once to upload; see "What a write verifies"), and put back at
//     that position whenever the library is done reading it: after hashing, after each
//     upload, and after a write that failed, was cancelled or succeeded. It must not change
//     until the write completes. So a failed write can be retried with the same File, and a
//     retry that makes a new File over the same reader (a Mutate function that runs again)
//     stores the same bytes. A reader that cannot be put back (Seek fails) makes every later
//     write of the File, and of any new File over that reader, fail with ErrInvalidArgument
//     before anything is uploaded.
//   - Any other reader is read once, to its end, into a temporary file (os.CreateTemp in the
//     default directory, removed when the File no longer needs it), hashing as it goes; the
//     upload reads the temporary file. A write that cannot create the temporary file fails
//     before it reads anything, and leaves the reader as it was.
//
// The library remembers, for as long as the reader lives, each non-seekable reader a write
// has read, by the reader's identity (a pointer):
//
//   - A reader a write read to its end, whether that write stored its row or failed: a new
//     File over it is stored when the reader delivers at least one byte (it was given a new
//     payload, as a server's request body is on each request of a connection), and refused
//     with ErrInvalidArgument before anything is uploaded when it delivers nothing. That is
//     the retry that would otherwise store an empty file and report success; so an empty
//     payload on a reused reader is refused too. Store an empty file with FileFromBytes(nil,
//     ...) or from an io.ReadSeeker.
//   - A reader a failed or cancelled write read only part of (a cancelled write that had
//     begun to read counts as having read part of it): every later File over it is refused
//     with ErrInvalidArgument. The File whose write failed so has lost its bytes, and every
//     later write of it is refused the same way: make the File again from its source.
//
// A File that a write has uploaded streams that blob from then on and no longer reads its
// reader: a retry of the same File (say the row write lost a race) reuses the blob, as long
// as an orphan sweep has not collected it meanwhile (the retry then fails with ErrIntegrity
// and the File must be made again). Go's wrapping readers (bufio.Reader, gzip.Reader, …) do
// not expose the reader they wrap, so the library cannot see through them: a new wrapper
// over a reader an earlier attempt consumed is a reader of its own, and stores whatever that
// reader still delivers, possibly nothing.
//
// So when a write may run again (abstractions.Mutate and the other verbs retry their
// function after a conflict, or a retry loop of your own), make the File once, outside the
// function, and assign that File on every attempt; or use FileFromBytes or an io.ReadSeeker;
// or open the source again for each attempt (a new request, the file opened again), never a
// new wrapper over the reader an earlier attempt read.
//
// # Reading
//
// Open streams the stored blob and verifies it: the read that would return the last byte
// compares the SHA-256 first and fails with ErrIntegrity instead of returning that data when
// it does not match, so a caller that reads to the end never gets changed content. A blob
// that is gone (the row was replaced or deleted, and cleanup or a sweep removed it) fails
// with ErrIntegrity: read the entity again and open its current file.
//
// # What a write verifies
//
// A file's blob is named after its content's SHA-256, so a write reads a reader's content
// once to learn it before uploading, and uploads from a second pass: over the seekable
// reader again, or over the temporary copy of one that cannot seek. The first pass computes
// the SHA-256 and, alongside it, a keyed 64-bit hash (hash/maphash, under a seed drawn at
// random for each File); the second pass is checked against the length and that keyed hash,
// which costs a small fraction of hashing the content with SHA-256 again. A source that
// changed between the passes fails the write with ErrIntegrity ("the file's source changed
// …") on the read that would deliver its last bytes, before the upload commits, so nothing
// is stored, neither the row nor a blob under the name of other bytes. The keyed hash
// catches a source changed by accident or by another writer; it is not a cryptographic
// check, and nothing relies on it for more: every read of a stored blob (Open, and a write
// that copies a File read from another row into a blob of its own) verifies the SHA-256
// against the recorded one, so content that does not match its name never gets past a read.
// The bytes of FileFromBytes are not checked again (they must not change).
//
// # Errors
//
// A reader that fails (a Read returns an error other than io.EOF) fails the write with an
// error that matches ErrInvalidArgument and wraps the reader's own error: the caller's
// input failed, not the service, so it is never ErrUnavailable. errors.As reaches the
// reader's error, so a handler that reads an upload through http.MaxBytesReader answers 413
// when errors.As finds an *http.MaxBytesError, and 400 for any other failure of the body (a
// client that went away is told nothing). A reader's error that already matches a context
// error or one of this package's sentinels (a reader over another stored file reports
// ErrUnavailable or ErrIntegrity) keeps that kind instead. Nothing is stored, and the reader
// rules above say what a later write of the File or of its reader does.
type File struct {
	files // fileOps, in the type, for driver
	// turn is the lock writes take turns on; a channel so that waiting honours a context.
	turn        chan struct{}
	contentType string

	// The source: bytes, a reader, or a stored blob.
	data    []byte
	isBytes bool
	r       io.Reader
	seeker  io.Seeker
	started bool  // start is known
	start   int64 // where a seekable reader's content starts

	// tmp is the temporary copy of a non-seekable reader; tmpPath is its name while it is
	// not removed yet.
	tmp     *os.File
	tmpPath string
	cleanup runtime.Cleanup

	hashed bool
	sum    string
	length int64
	// seed and check are the keyed hash of the content a reader delivered on the pass that
	// hashed it, which the upload's own pass of the reader (or of its temporary copy) must
	// reproduce (see verifySource).
	seed  maphash.Seed
	check []byte

	blob backend.FileBlob
	// broken is why the File can no longer be written.
	broken error
}

// FileFromBytes returns a File holding data, with the content type recorded in the row
// ("" stores application/octet-stream). The array is not copied: do not change it
// afterwards. Its length and SHA-256 are known at once.
func FileFromBytes(data []byte, contentType string) *File {
	f := newFile(contentType)
	f.data, f.isBytes = data, true
	sum := sha256.Sum256(data)
	f.sum, f.length, f.hashed = hex.EncodeToString(sum[:]), int64(len(data)), true
	return f
}

// FileFromReader returns a File whose content is what r delivers, from its current position
// to its end when r is an io.ReadSeeker. Nothing is read until a write stores the File; the
// reader rules of [File] apply. A nil r is refused by the write (ErrInvalidArgument).
func FileFromReader(r io.Reader, contentType string) *File {
	f := newFile(contentType)
	f.r = r
	if s, ok := r.(io.Seeker); ok {
		f.seeker = s
	}
	return f
}

// files carries fileOps in File's type (backend.Files), so that package driver takes Files
// for writes and makes the Files of stored blobs, which it can do without a File at hand.
type files = backend.Files[File, fileOps]

// fileOps are the operations on Files that driver calls (driver.TakeFile,
// driver.NewStoredFile).
type fileOps struct{}

func (fileOps) Take(ctx context.Context, f *File) (backend.FileSource, error) {
	src, err := f.take(ctx)
	if err != nil {
		return nil, err // not a nil *fileSource in an interface
	}
	return src, nil
}

func (fileOps) Stored(blob backend.FileBlob, sha256 string, length int64, contentType string) *File {
	return newStoredFile(blob, sha256, length, contentType)
}

// newStoredFile returns the File of a stored blob (driver.NewStoredFile).
func newStoredFile(blob backend.FileBlob, sha256 string, length int64, contentType string) *File {
	f := newFile(contentType)
	f.blob, f.sum, f.length, f.hashed = blob, sha256, length, true
	return f
}

func newFile(contentType string) *File {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	// files is empty: naming it says that every File carries fileOps, which driver reaches
	// through the type (and which a check of this package alone would think unused).
	return &File{files: files{}, turn: make(chan struct{}, 1), contentType: contentType}
}

// ContentType returns the content type recorded in the row.
func (f *File) ContentType() string { return f.contentType }

// Length returns the content's length in bytes; ok is false until a write has hashed the
// content (it is known at once for FileFromBytes and for a File a read returned).
func (f *File) Length() (n int64, ok bool) {
	if f.lock(context.Background()) != nil {
		return 0, false
	}
	defer f.unlock()
	return f.length, f.hashed
}

// SHA256 returns the lower-case hexadecimal SHA-256 of the content; ok is false until it is
// known (see Length).
func (f *File) SHA256() (sum string, ok bool) {
	if f.lock(context.Background()) != nil {
		return "", false
	}
	defer f.unlock()
	return f.sum, f.hashed
}

// Open returns the content: the bytes of a FileFromBytes, or the stored blob, streamed and
// verified as [File] describes. The caller must close it. A File made from a reader that no
// write has stored yet cannot be opened (ErrInvalidArgument): its reader is the library's
// until the write is done.
func (f *File) Open(ctx context.Context) (io.ReadCloser, error) {
	if err := f.lock(ctx); err != nil {
		return nil, err
	}
	blob, data, isBytes, sum, n := f.blob, f.data, f.isBytes, f.sum, f.length
	f.unlock()
	switch {
	case isBytes:
		return io.NopCloser(bytes.NewReader(data)), nil
	case blob != nil:
		rc, err := blob.OpenBlob(ctx)
		if err != nil {
			return nil, err
		}
		return newVerifyingReader(rc, sum, n), nil
	}
	return nil, fmt.Errorf("%w: the file was made from a reader and no write has stored it yet; open the reader itself, or store the entity first", ErrInvalidArgument)
}

// lock takes the File's turn, or fails with ctx's error. A File not made by this package
// (the zero File, &File{}) has no turn to take: it is refused rather than waited on forever.
func (f *File) lock(ctx context.Context) error {
	if f.turn == nil {
		return fmt.Errorf("%w: the File is a zero File, not one made by FileFromBytes or FileFromReader; make it with one of them", ErrInvalidArgument)
	}
	select {
	case f.turn <- struct{}{}:
		return nil
	default:
	}
	select {
	case f.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *File) unlock() { <-f.turn }

// fileSource is a File's content as one write sees it (driver.FileSource).
type fileSource struct {
	f      *File
	sha256 string
	length int64
	blob   backend.FileBlob // the File's blob when the source was taken
	done   bool
}

// take takes the File's turn for one write and returns its content's description,
// hashing the source first when no write has (a reader read to its end, a non-seekable
// one copied to a temporary file). It applies the reader rules of [File]: a refused or
// broken File fails with ErrInvalidArgument, before anything is uploaded. The caller must
// call Release (driver.TakeFile).
func (f *File) take(ctx context.Context) (*fileSource, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: the file is nil", ErrInvalidArgument)
	}
	if err := f.lock(ctx); err != nil {
		return nil, err
	}
	if err := f.hash(ctx); err != nil {
		f.unlock()
		return nil, err
	}
	return &fileSource{f: f, sha256: f.sum, length: f.length, blob: f.blob}, nil
}

func (s *fileSource) SHA256() string { return s.sha256 }

func (s *fileSource) Length() int64 { return s.length }

func (s *fileSource) Blob() backend.FileBlob { return s.blob }

// Open returns the content's bytes from the first one, for an upload: the File's bytes, its
// temporary copy or its seekable reader (put back at the start when the returned reader is
// closed), checked against the pass that hashed them, or its blob, verified against its
// SHA-256; either way an upload of changed bytes fails before it completes. The caller must
// close it before Release.
func (s *fileSource) Open(ctx context.Context) (io.ReadCloser, error) {
	f := s.f
	switch {
	case f.isBytes:
		return io.NopCloser(bytes.NewReader(f.data)), nil
	case f.blob != nil:
		rc, err := f.blob.OpenBlob(ctx)
		if err != nil {
			return nil, err
		}
		return newVerifyingReader(rc, f.sum, f.length), nil
	case f.tmp != nil:
		return f.verifySource(io.NopCloser(io.NewSectionReader(f.tmp, 0, f.length))), nil
	case f.seeker != nil:
		if _, err := f.seeker.Seek(f.start, io.SeekStart); err != nil {
			return nil, f.lose(fmt.Errorf("%w: the file's reader cannot be put back at the start of its content (%v); make the File again over a reader that can seek",
				ErrInvalidArgument, err))
		}
		return &seekBack{verifyingReader: f.verifySource(io.NopCloser(io.LimitReader(sourceReader{f.r}, f.length+1))), f: f}, nil
	}
	return nil, f.lose(fmt.Errorf("%w: the file's temporary copy was released by a failed write; make the File again from its source", ErrInvalidArgument))
}

// verifySource returns the upload's pass over a reader's content (the reader again, or its
// temporary copy), checked against the length and keyed hash of the pass that hashed it, as
// [File] describes under "What a write verifies".
func (f *File) verifySource(rc io.ReadCloser) *verifyingReader {
	var h maphash.Hash
	h.SetSeed(f.seed)
	return &verifyingReader{rc: rc, want: hex.EncodeToString(f.check), left: f.length, h: &h, source: true}
}

// seekBack puts a seekable reader back at the start of its content when closed.
type seekBack struct {
	*verifyingReader
	f *File
}

func (s *seekBack) Close() error {
	if _, err := s.f.seeker.Seek(s.f.start, io.SeekStart); err != nil {
		s.f.lose(fmt.Errorf("%w: the file's reader cannot be put back at the start of its content (%v); make the File again over a reader that can seek",
			ErrInvalidArgument, err))
		markReader(s.f.r, readerBroken)
	}
	return nil
}

// Uploaded records that the write stored the content in blob: a File made from a reader
// streams that blob from now on (its temporary copy is removed); a File of bytes keeps
// reading its bytes.
func (s *fileSource) Uploaded(blob backend.FileBlob) {
	f := s.f
	if f.isBytes || f.blob != nil {
		return
	}
	f.blob = blob
	f.dropTemp()
}

// Release gives the File's turn back. A seekable reader stands at the start of its content.
func (s *fileSource) Release() {
	if s.done {
		return
	}
	s.done = true
	f := s.f
	if f.seeker != nil && f.broken == nil && f.started {
		if _, err := f.seeker.Seek(f.start, io.SeekStart); err != nil {
			f.lose(fmt.Errorf("%w: the file's reader cannot be put back at the start of its content (%v); make the File again over a reader that can seek",
				ErrInvalidArgument, err))
			markReader(f.r, readerBroken)
		}
	}
	f.unlock()
}

// lose marks the File unwritable with err and returns it.
func (f *File) lose(err error) error {
	if f.broken == nil {
		f.broken = err
	}
	f.dropTemp()
	return f.broken
}

func (f *File) dropTemp() {
	if f.tmp == nil {
		return
	}
	f.cleanup.Stop()
	_ = f.tmp.Close()
	if f.tmpPath != "" {
		_ = os.Remove(f.tmpPath)
	}
	f.tmp, f.tmpPath = nil, ""
}

// hash learns the content's SHA-256 and length. The caller holds the turn.
func (f *File) hash(ctx context.Context) error {
	switch {
	case f.broken != nil:
		return f.broken
	case f.hashed:
		return nil
	case f.r == nil:
		return f.lose(fmt.Errorf("%w: the file has no reader (FileFromReader was given nil)", ErrInvalidArgument))
	}
	switch readerState(f.r) {
	case readerPartlyRead:
		return f.lose(fmt.Errorf("%w: a failed or cancelled write read this file's reader only part of the way, so its content is lost; "+
			"make the File again from a new source of the bytes (open the file again, a new request), or buffer the content into an io.ReadSeeker",
			ErrInvalidArgument))
	case readerBroken:
		return f.lose(fmt.Errorf("%w: a write could not put this file's reader back at the start of its content; make the File again over a new reader",
			ErrInvalidArgument))
	}
	if f.seeker != nil {
		return f.hashSeekable(ctx)
	}
	return f.hashStream(ctx)
}

func (f *File) hashSeekable(ctx context.Context) error {
	if !f.started {
		pos, err := f.seeker.Seek(0, io.SeekCurrent)
		if err != nil {
			markReader(f.r, readerBroken)
			return f.lose(fmt.Errorf("%w: the file's reader cannot report its position (%v); make the File over a reader that can seek, or one that cannot (FileFromReader(struct{ io.Reader }{r}, ...))",
				ErrInvalidArgument, err))
		}
		f.start, f.started = pos, true
	}
	h, check := sha256.New(), f.newCheck()
	n, err := copyContext(ctx, io.MultiWriter(h, check), sourceReader{f.r})
	if _, serr := f.seeker.Seek(f.start, io.SeekStart); serr != nil {
		markReader(f.r, readerBroken)
		return f.lose(fmt.Errorf("%w: the file's reader cannot be put back at the start of its content (%v); make the File again over a new reader",
			ErrInvalidArgument, serr))
	}
	if err != nil {
		return err // the reader stands where it started: the File can be written again
	}
	f.sum, f.length, f.hashed, f.check = hex.EncodeToString(h.Sum(nil)), n, true, check.Sum(nil)
	return nil
}

// newCheck returns the keyed hash the first pass over a reader takes alongside its SHA-256,
// under a new seed (see verifySource).
func (f *File) newCheck() *maphash.Hash {
	f.seed = maphash.MakeSeed()
	var h maphash.Hash
	h.SetSeed(f.seed)
	return &h
}

func (f *File) hashStream(ctx context.Context) error {
	tmp, err := os.CreateTemp("", "gotables-file-*")
	if err != nil {
		// Nothing was read: the reader, and this File, can be written again.
		return fmt.Errorf("%w: a file made from a reader that cannot seek is copied to a temporary file first, and none could be created: %v",
			ErrUnavailable, err)
	}
	f.tmp, f.tmpPath = tmp, tmp.Name()
	if os.Remove(f.tmpPath) == nil {
		f.tmpPath = "" // unlinked; it lives until closed
	}
	f.cleanup = runtime.AddCleanup(f, func(t tempFile) { t.release() }, tempFile{tmp, f.tmpPath})
	var src io.Reader = sourceReader{f.r}
	reused := readerState(f.r) == readerDone
	if reused {
		// The reader was read to its end by an earlier write: store it only if it was given
		// a new payload, that is, if it delivers at least one byte now.
		var one [1]byte
		n, err := io.ReadFull(src, one[:])
		if n == 0 {
			if err != nil && err != io.EOF {
				markReader(f.r, readerPartlyRead)
				return f.lose(fmt.Errorf("%w; make the File again from its source", err))
			}
			return f.lose(fmt.Errorf("%w: an earlier write read this file's reader to its end, and it delivers nothing now: "+
				"that is a retry, which would store an empty file. Make the File once outside a function that may run again and assign it on every attempt, "+
				"use FileFromBytes or an io.ReadSeeker, or open the source again for each attempt; store an empty file with FileFromBytes(nil, contentType)",
				ErrInvalidArgument))
		}
		src = io.MultiReader(bytes.NewReader(one[:n]), src)
	}
	h, check := sha256.New(), f.newCheck()
	n, err := copyContext(ctx, io.MultiWriter(h, check, tmp), src)
	if err == nil {
		markReader(f.r, readerDone)
		if _, err = tmp.Seek(0, io.SeekStart); err == nil {
			f.sum, f.length, f.hashed, f.check = hex.EncodeToString(h.Sum(nil)), n, true, check.Sum(nil)
			return nil
		}
		return f.lose(fmt.Errorf("%w: the file's temporary copy failed (%v); its temporary copy was released by a failed write: make the File again from its source", ErrUnavailable, err))
	}
	// Read part of the way, or to its end into a copy that failed: either way the File has
	// lost its bytes, and a cancelled read cannot tell what the reader took from its source.
	markReader(f.r, readerPartlyRead)
	if re := (*readerError)(nil); errors.As(err, &re) {
		return f.lose(fmt.Errorf("%w; it was read part of the way, so the File's content is lost: make the File again from a new source of the bytes", err))
	}
	return f.lose(fmt.Errorf("%w: copying the file's reader to its temporary file stopped part of the way (%v), so its content is lost; make the File again from a new source of the bytes",
		kindOf(err), err))
}

// readerError is a failure of a File's reader: the caller's input, not the service (see
// [File]). It matches ErrInvalidArgument unless the reader's error says what it is itself
// (kind nil), and unwraps to the reader's error.
type readerError struct {
	kind error
	err  error
}

func (e *readerError) Error() string        { return "the file's reader failed: " + e.err.Error() }
func (e *readerError) Is(target error) bool { return e.kind != nil && target == e.kind }
func (e *readerError) Unwrap() error        { return e.err }

// sourceReader is a File's reader, whose failures it reports as *readerError.
type sourceReader struct{ r io.Reader }

func (s sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	e := &readerError{kind: ErrInvalidArgument, err: err}
	for _, k := range []error{context.Canceled, context.DeadlineExceeded, ErrUnavailable, ErrIntegrity, ErrInvalidArgument} {
		if errors.Is(err, k) {
			e.kind = nil
			break
		}
	}
	return n, e
}

// kindOf is the sentinel a failed copy to the temporary file reports: the context's error,
// or ErrUnavailable (the temporary file could not be written).
func kindOf(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return ErrUnavailable
}

type tempFile struct {
	f    *os.File
	path string
}

func (t tempFile) release() {
	_ = t.f.Close()
	if t.path != "" {
		_ = os.Remove(t.path)
	}
}

var errWrite = errors.New("write failed")

// copyContext copies src to dst, checking ctx between reads.
func copyContext(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := src.Read(buf)
		if m > 0 {
			if _, werr := dst.Write(buf[:m]); werr != nil {
				return n, fmt.Errorf("%w: %v", errWrite, werr)
			}
			n += int64(m)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// The states of a remembered reader.
const (
	readerUnknown = iota
	readerDone
	readerPartlyRead
	readerBroken
)

// readers remembers the non-seekable readers writes have read, by identity, without
// keeping them alive.
var readers struct {
	mu sync.Mutex
	m  map[weak.Pointer[byte]]int
}

// readerKey returns a weak identity of r: readers that are pointers have one.
func readerKey(r io.Reader) (weak.Pointer[byte], bool) {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Size() == 0 {
		return weak.Pointer[byte]{}, false
	}
	return weak.Make((*byte)(v.UnsafePointer())), true
}

func readerState(r io.Reader) int {
	k, ok := readerKey(r)
	if !ok {
		return readerUnknown
	}
	readers.mu.Lock()
	defer readers.mu.Unlock()
	return readers.m[k]
}

func markReader(r io.Reader, state int) {
	k, ok := readerKey(r)
	if !ok {
		return
	}
	readers.mu.Lock()
	defer readers.mu.Unlock()
	if readers.m == nil {
		readers.m = map[weak.Pointer[byte]]int{}
	}
	if len(readers.m) >= 64 {
		// Forget readers that no longer exist.
		for k := range readers.m {
			if k.Value() == nil {
				delete(readers.m, k)
			}
		}
	}
	if old := readers.m[k]; old == readerPartlyRead || old == readerBroken {
		return // a lost reader stays lost
	}
	readers.m[k] = state
}

// verifyingReader hands out a content of known length and digest and verifies it by the
// time it has delivered it: the read that would return the last byte compares the digest
// first and fails with ErrIntegrity instead of returning that data when it does not match.
// Bytes beyond the length are never handed out, content that ends early fails at its end,
// and once a check has failed every later read fails the same way. The digest is the
// SHA-256 of a stored blob (newVerifyingReader), or the keyed hash of a reader's first pass
// for the upload's pass over it (File.verifySource).
type verifyingReader struct {
	rc   io.ReadCloser
	want string // the digest, lower-case hexadecimal
	left int64
	h    hashWriter
	// source is set when the content is a File's reader (or its temporary copy) read again
	// for an upload, not a stored blob: a mismatch means the source changed.
	source bool
	err    error
}

type hashWriter interface {
	io.Writer
	Sum([]byte) []byte
}

// newVerifyingReader returns a verifyingReader of rc, which must deliver length bytes whose
// SHA-256 is sha256 (lower-case hexadecimal). Closing it closes rc.
func newVerifyingReader(rc io.ReadCloser, sha256Hex string, length int64) *verifyingReader {
	return &verifyingReader{rc: rc, want: sha256Hex, left: length, h: sha256.New()}
}

// Read implements io.Reader.
func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if v.left == 0 {
		if v.check() != nil {
			return 0, v.err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > v.left {
		p = p[:v.left]
	}
	n, err := v.rc.Read(p)
	if n > 0 {
		v.h.Write(p[:n])
		v.left -= int64(n)
		if v.left == 0 && v.check() != nil {
			return 0, v.err
		}
	}
	switch {
	case err == io.EOF && v.left > 0:
		if v.source {
			v.err = v.damaged(fmt.Sprintf("ended %d bytes short of the length hashed", v.left))
		} else {
			v.err = v.damaged(fmt.Sprintf("ended %d bytes before its recorded length", v.left))
		}
		if n > 0 {
			return n, nil
		}
		return 0, v.err
	case err == io.EOF:
		return n, nil
	case err != nil:
		if errors.Is(err, ErrIntegrity) {
			v.err = err
		}
		return n, err
	}
	return n, nil
}

// copyBufferSize is the size of the reads WriteTo makes: large enough that a stream from the
// network is read in few system calls, whatever buffer the caller's io.Copy would use.
const copyBufferSize = 256 << 10

// WriteTo implements io.WriterTo, so that io.Copy reads the content in large pieces; it
// verifies as Read does, and writes nothing a read would not have handed out.
func (v *verifyingReader) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, min(copyBufferSize, max(v.left, 1)))
	var n int64
	for {
		m, err := v.Read(buf)
		if m > 0 {
			k, werr := w.Write(buf[:m])
			n += int64(k)
			if werr == nil && k < m {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func (v *verifyingReader) check() error {
	if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
		if v.source {
			v.err = v.damaged("delivered other bytes than on the pass that hashed it")
		} else {
			v.err = v.damaged("does not match its recorded SHA-256 (it was changed outside the library); nothing more is handed out")
		}
	}
	return v.err
}

// damaged returns the failure of a content that is not what was recorded.
func (v *verifyingReader) damaged(reason string) error {
	if v.source {
		return &integrityError{source: true, reason: reason + "; it must not change until the write completes. Nothing was stored: write the File again, or make it again, once its source holds the content to store"}
	}
	return &integrityError{reason: "the stored content " + reason}
}

// Close closes the content.
func (v *verifyingReader) Close() error { return v.rc.Close() }

// integrityError is a content that is not what was recorded: a stored blob, or a File's
// source read again for an upload (source).
type integrityError struct {
	source bool
	reason string
}

func (e *integrityError) Error() string {
	if e.source {
		return "the file's source changed between the pass that hashed it and the upload: it " + e.reason
	}
	return "stored file damaged: " + e.reason
}

func (e *integrityError) Is(target error) bool { return target == ErrIntegrity }
