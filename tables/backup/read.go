package backup

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reading an archive: nothing of a compressed archive is used before it is verified.
//
// Gzip checks its CRC-32 and length only at the end of a member (1,000 entities or 4 MiB
// of records, see archive.go). A reader that decoded records as they came out of the
// decompressor would hand on the records of a damaged member before the check failed: a bit
// flipped in the compressed bytes changes the records after it (values, keys) and the
// damage shows only at the member's end. So a compressed archive is read a member at a
// time: each member is decompressed whole and its checksum and length checked before any
// of its bytes reach the record decoder. A member is held in memory up to memberSpill
// bytes; the rest of a larger one (a member holding an entity's blobs is as large as the
// blobs) waits in a temporary file, so heap use stays bounded.
//
// An uncompressed archive (JSON Lines, for instance filtered with jq) has no checksum: its
// records are used as they are read, each checked for what the format itself carries (the
// hashes of blobs and split values, the counts of the trailer).

// memberSpill is the most of one member's decompressed bytes held in memory; tests lower it.
var memberSpill = 8 << 20

// sourceError is a failure of the reader the archive comes from (a file's read error, the
// writing side of a copy), as opposed to damage in the bytes it delivered.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// spillError is a failure of the temporary file that holds a large member.
type spillError struct{ err error }

func (e *spillError) Error() string {
	return "backup: the temporary file of a large member of the archive: " + e.err.Error()
}
func (e *spillError) Unwrap() error { return e.err }

// damage describes what is wrong with the archive's bytes; the reader adds how many
// entities came before it.
type damage struct{ what string }

func (e *damage) Error() string { return e.what }

// countingReader counts the bytes read through it and marks its reader's failures as the
// source's.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		err = &sourceError{err}
	}
	return n, err
}

// openArchive returns the reader of an archive's records: the verified members of a
// compressed archive, or the bytes of an uncompressed one. close removes a member's
// temporary file, if any.
func openArchive(cr *countingReader) (in io.Reader, close func()) {
	br := bufio.NewReaderSize(cr, 64<<10)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		m := &memberReader{src: br, consumed: func() int64 { return cr.n - int64(br.Buffered()) }}
		return m, m.close
	}
	return br, func() {}
}

// memberReader reads the decompressed bytes of a sequence of gzip members, a member at a
// time, each only once it is read to its end and its checksum and length are checked.
type memberReader struct {
	src      *bufio.Reader
	consumed func() int64 // the compressed bytes the gzip reader has taken
	gz       *gzip.Reader

	mem     bytes.Buffer // the verified member, or its first memberSpill bytes
	file    *os.File     // the rest of a larger member
	cur     io.Reader    // what is left of the verified member
	members int
	err     error // once set, every Read returns it
}

func (m *memberReader) Read(p []byte) (int, error) {
	for {
		if m.cur != nil {
			n, err := m.cur.Read(p)
			if n > 0 {
				return n, nil
			}
			if err != nil && err != io.EOF {
				m.err = &spillError{err}
				return 0, m.err
			}
			m.cur = nil
		}
		if m.err != nil {
			return 0, m.err
		}
		m.err = m.load()
	}
}

// load decompresses the next member whole and checks it; io.EOF when none follows.
func (m *memberReader) load() error {
	start := m.consumed()
	var err error
	if m.gz == nil {
		m.gz, err = gzip.NewReader(m.src)
	} else {
		err = m.gz.Reset(m.src)
	}
	if err == io.EOF && m.members > 0 {
		return io.EOF
	}
	if err != nil {
		return m.fail(start, err)
	}
	m.gz.Multistream(false)
	m.mem.Reset()
	if m.file != nil {
		if _, err := m.file.Seek(0, io.SeekStart); err != nil {
			return &spillError{err}
		}
		if err := m.file.Truncate(0); err != nil {
			return &spillError{err}
		}
	}
	spilled := false
	// Copy reads the member to its end: gzip checks the checksum and length there.
	if _, err := io.CopyN(&m.mem, m.gz, int64(memberSpill)); err != nil && err != io.EOF {
		return m.fail(start, err)
	} else if err == nil {
		if m.file == nil {
			if m.file, err = os.CreateTemp("", "udtables-member-*"); err != nil {
				return &spillError{err}
			}
		}
		if _, err := io.Copy(m.file, m.gz); err != nil {
			var pe *os.PathError
			var se *sourceError
			if !errors.As(err, &se) && errors.As(err, &pe) {
				return &spillError{err}
			}
			return m.fail(start, err)
		}
		if _, err := m.file.Seek(0, io.SeekStart); err != nil {
			return &spillError{err}
		}
		spilled = true
	}
	m.members++
	m.cur = &m.mem
	if spilled {
		m.cur = io.MultiReader(&m.mem, m.file)
	}
	return nil
}

// fail describes a member that did not read whole and check.
func (m *memberReader) fail(start int64, err error) error {
	var se *sourceError
	var ce flate.CorruptInputError
	switch {
	case errors.As(err, &se):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &damage{fmt.Sprintf("incomplete: it ends inside its gzip member %d (from byte %d), which was cut short", m.members+1, start)}
	case errors.Is(err, gzip.ErrChecksum):
		return &damage{fmt.Sprintf("damaged: its gzip member %d (from byte %d) fails its checksum", m.members+1, start)}
	case errors.Is(err, gzip.ErrHeader) && m.members > 0:
		return &damage{fmt.Sprintf("damaged: the bytes after its gzip member %d (from byte %d) are not a gzip member", m.members, start)}
	case errors.Is(err, gzip.ErrHeader):
		return &damage{"damaged: its first gzip member has an invalid header"}
	case errors.As(err, &ce):
		return &damage{fmt.Sprintf("damaged: its gzip member %d (from byte %d) does not decompress (%v)", m.members+1, start, err)}
	}
	return &damage{fmt.Sprintf("damaged: its gzip member %d (from byte %d) does not read: %v", m.members+1, start, err)}
}

// close removes the temporary file, if any.
func (m *memberReader) close() {
	if m.file != nil {
		name := m.file.Name()
		m.file.Close()
		os.Remove(name)
		m.file = nil
	}
}
