package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// spool holds a blob's bytes while they are checked: in memory up to chunkBytes, in a
// temporary file beyond, so that heap use stays bounded whatever the blob's size.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	n    int64
	h    hash.Hash
}

func newSpool() *spool { return &spool{h: sha256.New()} }

func (s *spool) Write(p []byte) (int, error) {
	s.h.Write(p)
	s.n += int64(len(p))
	if s.file == nil && s.mem.Len()+len(p) <= chunkBytes {
		return s.mem.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "udtables-blob-*")
		if err != nil {
			return 0, err
		}
		s.file = f
		if _, err := f.Write(s.mem.Bytes()); err != nil {
			return 0, err
		}
		s.mem = bytes.Buffer{}
	}
	return s.file.Write(p)
}

// sum returns the lower-case hexadecimal SHA-256 of what was written.
func (s *spool) sum() string { return hex.EncodeToString(s.h.Sum(nil)) }

// check compares what was written with the expected hash and length.
func (s *spool) check(sha string, length int64) error {
	if got := s.sum(); got != sha || s.n != length {
		return fmt.Errorf("blob bytes (%d, SHA-256 %s) do not match the reference (%d, %s)", s.n, got, length, sha)
	}
	return nil
}

// small returns the bytes when they are held in memory.
func (s *spool) small() ([]byte, bool) {
	if s.file != nil {
		return nil, false
	}
	return s.mem.Bytes(), true
}

// reader returns a reader of the bytes from the start.
func (s *spool) reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.file, nil
}

// chunks calls fn with the bytes in pieces of at most chunkBytes (one empty piece for an
// empty blob).
func (s *spool) chunks(fn func([]byte) error) error {
	r, err := s.reader()
	if err != nil {
		return err
	}
	buf := make([]byte, chunkBytes)
	sent := false
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 || !sent {
			if e := fn(buf[:n]); e != nil {
				return e
			}
			sent = true
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// close removes the temporary file, if any.
func (s *spool) close() {
	if s.file != nil {
		name := s.file.Name()
		s.file.Close()
		os.Remove(name)
		s.file = nil
	}
}
