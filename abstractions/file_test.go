package abstractions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// memBlob is a driver.FileBlob over bytes, as a storage implementation would bind one.
type memBlob struct {
	data []byte
	gone bool
}

func (b *memBlob) OpenBlob(context.Context) (io.ReadCloser, error) {
	if b.gone {
		return nil, &StoreError{Kind: ErrIntegrity, Message: "gone"}
	}
	return io.NopCloser(bytes.NewReader(b.data)), nil
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// stream is a reader that cannot seek.
type stream struct{ r io.Reader }

func (s *stream) Read(p []byte) (int, error) { return s.r.Read(p) }

// failing delivers n bytes, then fails with errBroken.
type failing struct{ n int }

var errBroken = errors.New("broken source")

func (f *failing) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBroken
	}
	k := min(f.n, len(p))
	f.n -= k
	return k, nil
}

// write is what a store does with a File: take it, read its content, release it.
func write(ctx context.Context, f *File) ([]byte, error) {
	src, err := f.take(ctx)
	if err != nil {
		return nil, err
	}
	defer src.Release()
	rc, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func TestFileFromBytes(t *testing.T) {
	f := FileFromBytes([]byte("hello"), "")
	if n, ok := f.Length(); !ok || n != 5 {
		t.Errorf("Length = %d, %v", n, ok)
	}
	if s, ok := f.SHA256(); !ok || s != hexSum([]byte("hello")) {
		t.Errorf("SHA256 = %s, %v", s, ok)
	}
	if f.ContentType() != "application/octet-stream" {
		t.Errorf("ContentType = %q", f.ContentType())
	}
	rc, err := f.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	if string(got) != "hello" {
		t.Errorf("Open read %q", got)
	}
}

func TestFileSeekableReader(t *testing.T) {
	ctx := context.Background()
	r := bytes.NewReader([]byte("skip:content"))
	_, _ = r.Seek(5, io.SeekStart)
	f := FileFromReader(r, "text/plain")
	if _, ok := f.Length(); ok {
		t.Error("the length of an unread reader is known")
	}
	if _, err := f.Open(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Open of an unstored reader = %v, want ErrInvalidArgument", err)
	}
	for i := range 2 {
		got, err := write(ctx, f)
		if err != nil || string(got) != "content" {
			t.Fatalf("write %d read %q, %v", i, got, err)
		}
		if pos, _ := r.Seek(0, io.SeekCurrent); pos != 5 {
			t.Fatalf("after write %d the reader stands at %d, want 5", i, pos)
		}
	}
	// A new File over the same reader (a retried Mutate function) stores the same bytes.
	got, err := write(ctx, FileFromReader(r, ""))
	if err != nil || string(got) != "content" {
		t.Fatalf("a new File over the reader read %q, %v", got, err)
	}
}

func TestFileStreamRules(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"read once, kept in a temporary copy", func(t *testing.T) {
			s := &stream{strings.NewReader("payload")}
			f := FileFromReader(s, "")
			for range 2 {
				got, err := write(ctx, f)
				if err != nil || string(got) != "payload" {
					t.Fatalf("write read %q, %v", got, err)
				}
			}
		}},
		{"a consumed reader that delivers nothing is refused", func(t *testing.T) {
			s := &stream{strings.NewReader("payload")}
			if _, err := write(ctx, FileFromReader(s, "")); err != nil {
				t.Fatal(err)
			}
			_, err := write(ctx, FileFromReader(s, ""))
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "FileFromBytes(nil") {
				t.Fatalf("retry over a consumed reader = %v, want ErrInvalidArgument naming the remedies", err)
			}
		}},
		{"a consumed reader given a new payload is stored", func(t *testing.T) {
			s := &stream{strings.NewReader("first")}
			if _, err := write(ctx, FileFromReader(s, "")); err != nil {
				t.Fatal(err)
			}
			s.r = strings.NewReader("second")
			got, err := write(ctx, FileFromReader(s, ""))
			if err != nil || string(got) != "second" {
				t.Fatalf("new payload read %q, %v", got, err)
			}
		}},
		{"an empty first payload is stored", func(t *testing.T) {
			got, err := write(ctx, FileFromReader(&stream{strings.NewReader("")}, ""))
			if err != nil || len(got) != 0 {
				t.Fatalf("empty payload read %q, %v", got, err)
			}
		}},
		{"a reader read part of the way is lost", func(t *testing.T) {
			src := &failing{n: 10}
			f := FileFromReader(src, "")
			if _, err := write(ctx, f); !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, errBroken) {
				t.Fatalf("failing source = %v, want ErrInvalidArgument wrapping the reader's error", err)
			}
			if _, err := write(ctx, f); !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, errBroken) {
				t.Fatalf("the same File again = %v, want its failure", err)
			}
			if _, err := write(ctx, FileFromReader(src, "")); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("a new File over the broken reader = %v, want ErrInvalidArgument", err)
			}
		}},
		{"a cancelled write counts as read part of the way", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			s := &stream{strings.NewReader("payload")}
			if _, err := write(cctx, FileFromReader(s, "")); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled = %v", err)
			}
			if _, err := write(ctx, FileFromReader(s, "")); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("after a cancelled write = %v, want ErrInvalidArgument", err)
			}
		}},
		{"an uploaded File streams its blob", func(t *testing.T) {
			s := &stream{strings.NewReader("payload")}
			f := FileFromReader(s, "")
			src, err := f.take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			src.Uploaded(&memBlob{data: []byte("payload")})
			src.Release()
			rc, err := f.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(rc)
			if string(got) != "payload" {
				t.Fatalf("Open read %q", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

// seekFailing is an io.ReadSeeker whose reads fail with err from the pass'th pass over its
// content on (1 is the first), after delivering a few bytes of it.
type seekFailing struct {
	data []byte
	pos  int64
	pass int // passes begun (a Seek to the start begins one)
	from int
	err  error
}

func (s *seekFailing) Read(p []byte) (int, error) {
	if s.pass >= s.from && s.pos >= 2 {
		return 0, s.err
	}
	if s.pos >= int64(len(s.data)) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 2)], s.data[s.pos:])
	s.pos += int64(n)
	return n, nil
}

func (s *seekFailing) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		s.pos = off
		s.pass++
	case io.SeekCurrent:
		s.pos += off
	}
	return s.pos, nil
}

// A failing reader is the caller's input failing, not the service: the write fails with
// ErrInvalidArgument, never ErrUnavailable, and the reader's own error stays in the chain
// (errors.As finds an *http.MaxBytesError there), whether it failed while the File was
// hashed or uploaded, seekable or not. A reader's error that says what it is keeps its kind.
func TestFileReaderFailures(t *testing.T) {
	ctx := context.Background()
	tooLarge := func() io.Reader {
		return http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(strings.Repeat("x", 100))), 10)
	}
	unavailable := fmt.Errorf("%w: the stored file's stream broke", ErrUnavailable)
	for _, tc := range []struct {
		name  string
		r     func() io.Reader
		kind  error // ErrInvalidArgument, or the reader's own kind
		cause func(error) bool
	}{
		{"an oversized request body", tooLarge, ErrInvalidArgument, func(err error) bool {
			var mb *http.MaxBytesError
			return errors.As(err, &mb) && mb.Limit == 10
		}},
		{"a stream that breaks", func() io.Reader { return &failing{n: 3} }, ErrInvalidArgument, isBroken},
		{"a client that goes away", func() io.Reader {
			return &stream{io.MultiReader(strings.NewReader("ab"), errReader{io.ErrUnexpectedEOF})}
		},
			ErrInvalidArgument, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"a seekable reader failing as it is hashed", func() io.Reader {
			return &seekFailing{data: []byte("content"), from: 0, err: errBroken}
		}, ErrInvalidArgument, isBroken},
		{"a seekable reader failing as it is uploaded", func() io.Reader {
			return &seekFailing{data: []byte("content"), from: 2, err: errBroken}
		}, ErrInvalidArgument, isBroken},
		{"a reader over another stored file", func() io.Reader { return &stream{io.MultiReader(strings.NewReader("ab"), errReader{unavailable})} },
			ErrUnavailable, func(err error) bool { return errors.Is(err, unavailable) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := write(ctx, FileFromReader(tc.r(), ""))
			if !errors.Is(err, tc.kind) || !tc.cause(err) {
				t.Fatalf("got %v, want an error matching %v with the reader's error in its chain", err, tc.kind)
			}
			for _, other := range []error{ErrInvalidArgument, ErrUnavailable} {
				if other != tc.kind && errors.Is(err, other) {
					t.Errorf("%v also matches %v", err, other)
				}
			}
			if !strings.Contains(err.Error(), "the file's reader failed") {
				t.Errorf("%q does not say the reader failed", err)
			}
		})
	}
	// A reader a write read to its end, failing on the next write's first read.
	s := &stream{strings.NewReader("first")}
	if _, err := write(ctx, FileFromReader(s, "")); err != nil {
		t.Fatal(err)
	}
	s.r = &failing{}
	if _, err := write(ctx, FileFromReader(s, "")); !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, errBroken) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("a reused reader that fails = %v, want ErrInvalidArgument wrapping its error", err)
	}
}

func isBroken(err error) bool { return errors.Is(err, errBroken) }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestFileTakesTurns(t *testing.T) {
	f := FileFromBytes([]byte("x"), "")
	src, err := f.take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.take(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a write waiting for its turn = %v, want context.Canceled", err)
	}
	src.Release()
	src.Release() // a second Release does nothing
	if src, err := f.take(context.Background()); err != nil {
		t.Errorf("after Release: %v", err)
	} else {
		src.Release()
	}
}

func TestVerifyingReader(t *testing.T) {
	data := []byte("the stored content")
	tests := []struct {
		name    string
		stored  []byte
		length  int64
		wantErr bool
		want    string
	}{
		{"intact", data, int64(len(data)), false, string(data)},
		{"changed last byte", append(append([]byte{}, data[:len(data)-1]...), '!'), int64(len(data)), true, string(data[:len(data)-1])},
		{"ends early", data[:5], int64(len(data)), true, string(data[:5])},
		{"longer than recorded", append(append([]byte{}, data...), "extra"...), int64(len(data)), false, string(data)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newVerifyingReader(io.NopCloser(bytes.NewReader(tc.stored)), hexSum(data), tc.length)
			var got []byte
			buf := make([]byte, 4)
			var err error
			for {
				var n int
				n, err = v.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					break
				}
			}
			if tc.wantErr != errors.Is(err, ErrIntegrity) || !tc.wantErr && err != io.EOF {
				t.Fatalf("err = %v, want integrity error %v", err, tc.wantErr)
			}
			if tc.wantErr && len(got) >= len(data) {
				t.Errorf("handed out %d bytes of a damaged content", len(got))
			}
			if !strings.HasPrefix(tc.want, string(got)) || !tc.wantErr && string(got) != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			if tc.wantErr {
				if _, again := v.Read(buf); !errors.Is(again, ErrIntegrity) {
					t.Errorf("a later read = %v, want the same failure", again)
				}
			}
			// io.Copy takes the WriteTo path, which hands out the same.
			var copied bytes.Buffer
			_, err = io.Copy(&copied, newVerifyingReader(io.NopCloser(bytes.NewReader(tc.stored)), hexSum(data), tc.length))
			if tc.wantErr != errors.Is(err, ErrIntegrity) || !tc.wantErr && err != nil {
				t.Fatalf("io.Copy: err = %v, want integrity error %v", err, tc.wantErr)
			}
			if !strings.HasPrefix(tc.want, copied.String()) || !tc.wantErr && copied.String() != tc.want || tc.wantErr && copied.Len() >= len(data) {
				t.Errorf("io.Copy wrote %q, want %q", copied.String(), tc.want)
			}
		})
	}
}

// swapped is an io.ReadSeeker whose content a test replaces between the passes.
type swapped struct{ r *bytes.Reader }

func (s *swapped) Read(p []byte) (int, error)                { return s.r.Read(p) }
func (s *swapped) Seek(off int64, whence int) (int64, error) { return s.r.Seek(off, whence) }

// A source that changed between the pass that hashed it and the upload's pass fails the
// upload with ErrIntegrity, saying so, before its last bytes are handed out (so before an
// upload could commit them under the name of the content hashed): a seekable reader whose
// bytes or length changed, and the temporary copy of a reader that cannot seek. Read and
// io.Copy (WriteTo) behave alike.
func TestFileSourceChangedBetweenPasses(t *testing.T) {
	ctx := context.Background()
	content := bytes.Repeat([]byte("the content "), 100_000)
	changed := append([]byte{}, content...)
	changed[len(changed)/2] ^= 1
	tests := []struct {
		name   string
		file   func() *File
		change func(*File)
	}{
		{"a seekable reader whose bytes changed", func() *File {
			return FileFromReader(&swapped{bytes.NewReader(content)}, "")
		}, func(f *File) { f.r.(*swapped).r = bytes.NewReader(changed) }},
		{"a seekable reader that got shorter", func() *File {
			return FileFromReader(&swapped{bytes.NewReader(content)}, "")
		}, func(f *File) { f.r.(*swapped).r = bytes.NewReader(content[:len(content)-1]) }},
		{"a temporary copy that changed", func() *File {
			return FileFromReader(&stream{bytes.NewReader(content)}, "")
		}, func(f *File) {
			if _, err := f.tmp.WriteAt([]byte{changed[len(changed)/2]}, int64(len(changed)/2)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		for _, how := range []string{"Read", "io.Copy"} {
			t.Run(tc.name+", "+how, func(t *testing.T) {
				f := tc.file()
				src, err := f.take(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer src.Release()
				tc.change(f)
				rc, err := src.Open(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer rc.Close()
				var got bytes.Buffer
				if how == "Read" {
					_, err = got.ReadFrom(struct{ io.Reader }{rc})
				} else {
					_, err = io.Copy(&got, rc)
				}
				if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "source changed") {
					t.Fatalf("err = %v, want ErrIntegrity saying the source changed", err)
				}
				if got.Len() >= len(content) {
					t.Errorf("handed out %d bytes of a changed source of %d", got.Len(), len(content))
				}
			})
		}
	}
	// The same File, its source as hashed again, uploads; a File copied from a blob is still
	// verified against the SHA-256 of its name.
	t.Run("unchanged", func(t *testing.T) {
		f := FileFromReader(&swapped{bytes.NewReader(content)}, "")
		if got, err := write(ctx, f); err != nil || !bytes.Equal(got, content) {
			t.Fatalf("read %d bytes, %v", len(got), err)
		}
	})
	t.Run("a stored blob", func(t *testing.T) {
		f := newStoredFile(&memBlob{data: changed}, hexSum(content), int64(len(content)), "")
		if _, err := write(ctx, f); !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "SHA-256") {
			t.Fatalf("err = %v, want ErrIntegrity naming the SHA-256", err)
		}
	})
}

func TestStoredFileGone(t *testing.T) {
	b := &memBlob{data: []byte("x"), gone: true}
	f := newStoredFile(b, hexSum([]byte("x")), 1, "text/plain")
	if _, err := f.Open(context.Background()); !errors.Is(err, ErrIntegrity) {
		t.Errorf("Open of a gone blob = %v, want ErrIntegrity", err)
	}
}

// A zero File (&File{}) is refused, never waited on: its Length, SHA256 and Open return at
// once.
func TestZeroFileIsRefused(t *testing.T) {
	var f File
	if n, ok := f.Length(); n != 0 || ok {
		t.Errorf("Length: %d, %v", n, ok)
	}
	if _, ok := f.SHA256(); ok {
		t.Error("SHA256 known")
	}
	if _, err := f.Open(context.Background()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Open: %v", err)
	}
	if _, err := f.take(context.Background()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("take: %v", err)
	}
}
