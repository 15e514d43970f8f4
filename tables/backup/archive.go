package backup

import (
	"compress/gzip"
	"encoding/json"
	"io"
)

// An archive is a sequence of gzip members, each holding whole lines; standard gzip readers
// read the members as one stream. A member ends after the header, every memberEntities
// entities or memberBytes uncompressed bytes, and before the trailer, which has a member of
// its own. The boundaries depend on the records alone, so a run resumed at a boundary
// writes the bytes an uninterrupted run writes.
var (
	memberEntities = 1000
	memberBytes    = 4 << 20
)

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// archiveWriter writes records, compressed in members or (for Copy) as plain lines.
type archiveWriter struct {
	out      *counter
	compress bool
	gz       *gzip.Writer
	open     bool
	entities int // entities in the open member
	bytes    int // uncompressed bytes in the open member
	line     []byte
}

func newArchiveWriter(w io.Writer, offset int64, compress bool) *archiveWriter {
	return &archiveWriter{out: &counter{w: w, n: offset}, compress: compress}
}

// record writes one line.
func (a *archiveWriter) record(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	a.line = append(append(a.line[:0], b...), '\n')
	if !a.compress {
		_, err = a.out.Write(a.line)
		return err
	}
	if !a.open {
		if a.gz == nil {
			// BestSpeed: the archive is written at the speed rows arrive; the header carries
			// no name and no time, so equal records give equal bytes.
			a.gz, _ = gzip.NewWriterLevel(a.out, gzip.BestSpeed)
		} else {
			a.gz.Reset(a.out)
		}
		a.open = true
	}
	a.bytes += len(a.line)
	_, err = a.gz.Write(a.line)
	return err
}

// full reports whether the open member should end after the entity just written.
func (a *archiveWriter) full() bool {
	return a.open && (a.entities >= memberEntities || a.bytes >= memberBytes)
}

// endMember closes the open member; the archive's size is then a resumable offset.
func (a *archiveWriter) endMember() error {
	if !a.open {
		return nil
	}
	a.open, a.entities, a.bytes = false, 0, 0
	return a.gz.Close()
}

// offset is the number of bytes written, the starting offset included.
func (a *archiveWriter) offset() int64 { return a.out.n }
