package emulator

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/inmemory/memservice"
)

// The files of an account's directory in the data directory.
const (
	logName      = "log"      // the write-ahead log: changes since the snapshot
	oldLogName   = "log.old"  // the log being folded into a new snapshot
	snapName     = "snapshot" // the tables, rows, containers, blobs and staged blocks at some moment
	snapTempName = "snapshot.tmp"
)

// Each file starts with its magic, which names its format's version.
var (
	logMagic  = []byte("UDTLOG1\n")
	snapMagic = []byte("UDTSNP1\n")
)

// defaultSnapshotEvery is how many logged changes start a snapshot, unless
// Options.SnapshotEvery says otherwise.
const defaultSnapshotEvery = 100_000

// A store keeps one account's service in a directory: it is the service's journal.Log.
//
// Appends go to buf under mu, numbered in the order the service makes them. Sync writes
// buf to the log with one write and fsyncs it (group commit: one fsync covers every change
// appended before it), under syncMu, which also orders a log's rotation with its writes.
type store struct {
	dir   string
	svc   *memservice.Service
	blobs *blobState // what the blob service keeps beside svc's blobs
	every int        // changes between snapshots

	mu      sync.Mutex
	buf     []byte
	seq     uint64 // the last change appended
	synced  uint64 // the last change that is durable
	pending int    // changes appended since the last rotation
	err     error  // sticky: once the directory failed, nothing more is acknowledged

	syncMu sync.Mutex
	log    *os.File

	snapMu sync.Mutex // held while the loop or close writes a snapshot

	kick chan struct{} // asks the snapshot loop for a snapshot
	stop chan struct{}
	done chan struct{}
}

// openStore loads the account's directory into svc (which must be empty), writes a snapshot
// when it replayed a log, and attaches itself to svc. It refuses to start on a file it
// cannot read, naming the file and the offset.
func openStore(dir string, svc *memservice.Service, blobs *blobState, every int) (*store, error) {
	if every <= 0 {
		every = defaultSnapshotEvery
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("emulator: data directory: %w", err)
	}
	s := &store{dir: dir, svc: svc, blobs: blobs, every: every, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	// A snapshot that was being written when the process stopped was never renamed into
	// place: the snapshot and the logs beside it hold everything.
	if err := os.Remove(s.path(snapTempName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if _, err := s.replay(snapName, snapMagic, false); err != nil {
		return nil, err
	}
	replayed := 0
	for _, name := range []string{oldLogName, logName} {
		n, err := s.replay(name, logMagic, name == logName)
		if err != nil {
			return nil, err
		}
		replayed += n
	}
	if replayed > 0 || s.exists(oldLogName) {
		// Fold the logs into a snapshot before anything is appended: a crash at any point
		// leaves a snapshot and logs that replay to the same state.
		if err := s.writeSnapshot(); err != nil {
			return nil, err
		}
		if err := os.Remove(s.path(oldLogName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err := s.openLog(true); err != nil {
			return nil, err
		}
	} else if err := s.openLog(false); err != nil {
		return nil, err
	}
	journal.Attach(svc, s)
	go s.loop()
	return s, nil
}

func (s *store) path(name string) string { return filepath.Join(s.dir, name) }

func (s *store) exists(name string) bool {
	_, err := os.Stat(s.path(name))
	return err == nil
}

// A CorruptError reports a file of the data directory that cannot be read: the emulator
// refuses to start rather than lose what it holds.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("emulator: %s is damaged at offset %d: %s; the emulator will not start on it rather than lose data", e.File, e.Offset, e.Reason)
}

// replay applies the changes of file name, if it exists, to the service and returns how
// many it applied. Every record must check out, except, with tornTail, a torn last one (a
// write the process did not finish, never acknowledged: the file ends inside it, only zeros
// follow, or its checksum fails where the file ends): the file is then cut before it.
func (s *store) replay(name string, magic []byte, tornTail bool) (int, error) {
	path := s.path(name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("emulator: %w", err)
	}
	bad := func(off int, reason string) error {
		return &CorruptError{File: path, Offset: int64(off), Reason: reason}
	}
	if len(data) < len(magic) {
		if tornTail && bytes.HasPrefix(magic, data) {
			return 0, s.cut(path, 0)
		}
		return 0, bad(0, "the file is too short for its header")
	}
	if !bytes.Equal(data[:len(magic)], magic) {
		return 0, bad(0, fmt.Sprintf("the file does not start with %q", magic))
	}
	off, n, ended := len(magic), 0, false
	for off < len(data) {
		rest := data[off:]
		if ended {
			return n, bad(off, "a record follows the snapshot's end")
		}
		// A torn last record: the file ends inside it, or its bytes are not what was
		// written (after a crash of the machine, unsynced blocks may hold anything, often
		// zeros). It was never acknowledged: its change was not synced.
		torn := len(rest) < frameHeader || allZero(rest)
		var size int64
		if !torn {
			size = int64(binary.LittleEndian.Uint32(rest))
			torn = size > int64(len(rest)-frameHeader) ||
				size == int64(len(rest)-frameHeader) && crc32.Checksum(rest[frameHeader:], crcTable) != binary.LittleEndian.Uint32(rest[4:])
		}
		if torn {
			if tornTail {
				return n, s.cut(path, off)
			}
			return n, bad(off, "the last record is cut short or damaged")
		}
		payload := rest[frameHeader : frameHeader+size]
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(rest[4:]) {
			return n, bad(off, "the record's checksum does not match")
		}
		off += frameHeader + int(size)
		if bytes.Equal(payload, snapEnd) && bytes.Equal(magic, snapMagic) {
			ended = true
			continue
		}
		c, err := decodeChange(payload)
		if err != nil {
			return n, bad(off-frameHeader-int(size), err.Error())
		}
		if c.Kind != journal.StageBlock {
			journal.Restore(s.svc, c)
		}
		if err := s.blobs.restore(c); err != nil {
			return n, bad(off-frameHeader-int(size), err.Error())
		}
		n++
	}
	if bytes.Equal(magic, snapMagic) && !ended {
		return n, bad(off, "the snapshot has no end record")
	}
	return n, nil
}

// snapEnd is the payload of a snapshot's last record: a snapshot without it is incomplete.
var snapEnd = []byte("\x00end")

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// cut truncates the file at off (a torn last record) and makes the cut durable.
func (s *store) cut(path string, off int) error {
	if off == 0 {
		if err := os.Remove(path); err != nil {
			return err
		}
		return syncDir(s.dir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(int64(off)); err != nil {
		return err
	}
	return f.Sync()
}

// openLog opens the log for appending, making it (with its header) when it is missing; with
// fresh, a new empty log replaces it.
func (s *store) openLog(fresh bool) error {
	path := s.path(logName)
	flag := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if fresh {
		flag |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && st.Size() == 0 {
		if _, err = f.Write(logMagic); err == nil {
			if err = f.Sync(); err == nil {
				err = syncDir(s.dir)
			}
		}
	}
	if err != nil {
		f.Close()
		return err
	}
	s.log = f
	return nil
}

// syncDir makes the directory's entries (files made, renamed or removed) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Append implements journal.Log.
func (s *store) Append(c *journal.Change) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = appendFrame(s.buf, c)
	s.seq++
	s.pending++
	if s.pending == s.every {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return s.seq
}

// Sync implements journal.Log.
func (s *store) Sync(seq uint64) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	return s.flush(seq)
}

// flush writes and fsyncs the buffered changes, unless change seq is durable already. The
// caller holds syncMu.
func (s *store) flush(seq uint64) error {
	s.mu.Lock()
	if s.synced >= seq {
		s.mu.Unlock()
		return nil
	}
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	buf, upto := s.buf, s.seq
	s.buf = nil
	s.mu.Unlock()
	var err error
	if s.log == nil {
		err = errors.New("the data directory is closed")
	} else if _, err = s.log.Write(buf); err == nil {
		err = s.log.Sync()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = fmt.Errorf("emulator: writing the log of %s: %w", s.dir, err)
		return s.err
	}
	s.synced = upto
	return nil
}

// fail makes err the store's sticky error.
func (s *store) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	return err
}

// snapshot writes the service's state to a new snapshot and drops the log it replaces:
//
//  1. Under syncMu, the log is flushed and renamed to log.old, and a new log started:
//     every change in log.old is in the service already, every later one goes to log.
//  2. The service is dumped to snapshot.tmp, which is fsynced and renamed over snapshot.
//     Partitions are read one at a time while writes go on, so the dump holds every change
//     of log.old and perhaps some of log; replaying log over it ends in the right state
//     all the same, since a logged change sets state (see journal.Change).
//  3. log.old is removed.
//
// After a crash at any step, the snapshot on disk and the logs beside it hold every
// acknowledged change: replaying log.old (if present) and log over the snapshot in that
// order rebuilds them. A failure makes the store refuse every later write.
func (s *store) snapshot() error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if err := s.rotate(); err != nil {
		return s.fail(err)
	}
	if err := s.writeSnapshot(); err != nil {
		return s.fail(err)
	}
	if err := os.Remove(s.path(oldLogName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return s.fail(err)
	}
	return s.fail(syncDir(s.dir))
}

// rotate flushes the log, renames it to log.old and starts a new one.
func (s *store) rotate() error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	upto := s.seq
	s.pending = 0
	s.mu.Unlock()
	if err := s.flush(upto); err != nil {
		return err
	}
	if err := os.Rename(s.path(logName), s.path(oldLogName)); err != nil {
		return err
	}
	if err := s.log.Close(); err != nil {
		return err
	}
	s.log = nil
	return s.openLog(true)
}

// writeSnapshot dumps the service to snapshot.tmp and renames it over snapshot, durably.
func (s *store) writeSnapshot() error {
	tmp := s.path(snapTempName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w := &frameWriter{f: f, buf: append([]byte(nil), snapMagic...)}
	err = journal.Dump(s.svc, w.write)
	if err == nil {
		err = s.blobs.dumpStaged(w.write)
	}
	if err == nil {
		w.buf = appendRaw(w.buf, snapEnd)
		err = w.flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path(snapName))
	}
	if err == nil {
		err = syncDir(s.dir)
	}
	return err
}

// A frameWriter writes frames to a file through a buffer.
type frameWriter struct {
	f   io.Writer
	buf []byte
}

func (w *frameWriter) write(c *journal.Change) error {
	w.buf = appendFrame(w.buf, c)
	if len(w.buf) < 1<<20 {
		return nil
	}
	return w.flush()
}

func (w *frameWriter) flush() error {
	_, err := w.f.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// loop writes a snapshot each time Append asks for one, until close.
func (s *store) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
			_ = s.snapshot() // a failure is sticky: later writes report it
		}
	}
}

// close stops the snapshot loop, writes a last snapshot (so that the next start reads no
// log) and closes the log. Writes after it fail.
func (s *store) close() error {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	failed := s.err
	s.mu.Unlock()
	var err error
	if failed == nil {
		err = s.snapshot()
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.log != nil {
		if cerr := s.log.Close(); err == nil {
			err = cerr
		}
		s.log = nil
	}
	_ = s.fail(errors.New("emulator: the data directory is closed"))
	return err
}
