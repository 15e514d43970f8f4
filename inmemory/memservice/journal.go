package memservice

import (
	"strconv"
	"strings"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// The emulator's data directory reaches the service through package journal, so that a
// persistent service adds nothing to this package's exported API.
func init() {
	journal.Attach = func(svc any, l journal.Log) { svc.(*Service).journal = l }
	journal.Restore = func(svc any, c *journal.Change) { svc.(*Service).restore(c) }
	journal.Dump = func(svc any, emit func(*journal.Change) error) error { return svc.(*Service).dump(emit) }
}

// logged appends the table or container change c to the service's log, if it has one, and
// returns its sequence number (0 without a log). The caller holds s.mu (s.blobMu for a
// container). Row and blob writes append directly, after checking for a log, so that a
// service without one builds no change.
func (s *Service) logged(c *journal.Change) uint64 {
	if s.journal == nil {
		return 0
	}
	return s.journal.Append(c)
}

// synced waits until the change numbered seq is durable. The caller holds no lock.
func (s *Service) synced(seq uint64) error {
	if s.journal == nil {
		return nil
	}
	return s.journal.Sync(seq)
}

// rowChange is the logged form of a committed change c, stored with w.
func rowChange(c change, w service.Written) journal.RowChange {
	if c.del {
		return journal.RowChange{Delete: true, Row: service.Row{PartitionKey: c.key.pk, RowKey: c.key.rk}}
	}
	r := c.row
	r.ETag, r.Timestamp = w.ETag, w.Timestamp
	return journal.RowChange{Row: r}
}

// restore applies a logged change as state: a table made empty or removed, rows stored with
// their ETag and Timestamp or removed. Rows of a table that does not exist are skipped: a
// log replayed over a snapshot that was read after the table was deleted holds them before
// the table's deletion. Later stamps follow the latest restored one.
func (s *Service) restore(c *journal.Change) {
	if c.Kind >= journal.CreateContainer {
		s.restoreBlob(c)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.Kind {
	case journal.CreateTable:
		if old := s.lookup(c.Table); old != nil {
			s.tables.Delete(s.tableKey(old.name))
		}
		s.tables.Store(s.tableKey(c.Table), makeTable(c.Table))
	case journal.DeleteTable:
		if t := s.lookup(c.Table); t != nil {
			s.tables.Delete(s.tableKey(t.name))
			t.mu.Lock()
			t.dropped = true
			t.mu.Unlock()
		}
	case journal.Rows:
		t := s.lookup(c.Table)
		if t == nil {
			return
		}
		for _, rc := range c.Rows {
			r := rc.Row
			if rc.Delete {
				p, _ := t.writePartition(r.PartitionKey, false)
				emptied := t.remove(p, r.RowKey)
				t.release(p, true)
				if emptied {
					t.dropEmpty(r.PartitionKey)
				}
				continue
			}
			p, _ := t.writePartition(r.PartitionKey, true)
			r.Properties = clipped(r.Properties)
			t.put(p, r)
			t.release(p, true)
			s.stampMu.Lock()
			if r.Timestamp.After(s.lastStamp) {
				s.lastStamp = r.Timestamp
			}
			s.stampMu.Unlock()
		}
	}
}

// restoreBlob applies a logged change of containers and blobs as state: a container made
// empty or removed, a blob stored as it was (with its ETag and LastModified) or removed.
// Blobs of a container that does not exist are skipped, as rows are. Later ETags are
// numbered above every restored one.
func (s *Service) restoreBlob(c *journal.Change) {
	s.blobMu.Lock()
	defer s.blobMu.Unlock()
	switch c.Kind {
	case journal.CreateContainer:
		s.containers[c.Container] = &container{blobs: make(map[string]*blob), props: ContainerProperties{
			Name: c.Container, ETag: c.Props.ETag, LastModified: c.Props.LastModified}}
		s.restoredETag(c.Props.ETag)
	case journal.DeleteContainer:
		delete(s.containers, c.Container)
	case journal.PutBlob:
		ct := s.containers[c.Container]
		if ct == nil {
			return
		}
		data := c.Data
		if data == nil {
			data = []byte{}
		}
		props := c.Props
		props.ContentLength = int64(len(data))
		ct.blobs[c.Blob] = &blob{data: data, props: props, metadata: c.Metadata, annex: c.Annex}
		s.restoredETag(props.ETag)
	case journal.DeleteBlob:
		if ct := s.containers[c.Container]; ct != nil {
			delete(ct.blobs, c.Blob)
		}
	}
}

// restoredETag numbers later blob ETags above etag, if it is one the service made. The
// caller holds s.blobMu.
func (s *Service) restoredETag(etag string) {
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.Trim(etag, `"`), "0x"), 16, 64)
	if err == nil && n > etagBase && n-etagBase > s.blobSeq {
		s.blobSeq = n - etagBase
	}
}

// dumpChunk is the most rows dump puts in one change.
const dumpChunk = 1000

// dump calls emit with a CreateTable change for each table and then its rows, a partition
// at a time, each partition copied under its lock and emitted after; then the containers
// and blobs (dumpBlobs).
func (s *Service) dump(emit func(*journal.Change) error) error {
	var tabs []*table
	s.tables.Range(func(_, v any) bool {
		tabs = append(tabs, v.(*table))
		return true
	})
	for _, t := range tabs {
		t.mu.RLock()
		if t.dropped {
			t.mu.RUnlock()
			continue
		}
		rows := make([]journal.RowChange, 0, int(t.rows.Load()))
		t.order.Ascend(func(p *partition) bool {
			p.mu.RLock()
			p.order.Ascend(func(sl *slot) bool {
				rows = append(rows, journal.RowChange{Row: sl.row})
				return true
			})
			p.mu.RUnlock()
			return true
		})
		t.mu.RUnlock()
		if err := emit(&journal.Change{Kind: journal.CreateTable, Table: t.name}); err != nil {
			return err
		}
		for len(rows) > 0 {
			n := min(len(rows), dumpChunk)
			if err := emit(&journal.Change{Kind: journal.Rows, Table: t.name, Rows: rows[:n]}); err != nil {
				return err
			}
			rows = rows[n:]
		}
	}
	return s.dumpBlobs(emit)
}

// dumpBlobs calls emit with a CreateContainer change for each container and then a PutBlob
// change for each of its blobs, all read at one moment (blobs are never changed in place,
// so the moment costs a copy of the pointers).
func (s *Service) dumpBlobs(emit func(*journal.Change) error) error {
	type named struct {
		name string
		b    *blob
	}
	type dumped struct {
		props ContainerProperties
		blobs []named
	}
	s.blobMu.RLock()
	all := make([]dumped, 0, len(s.containers))
	for _, c := range s.containers {
		d := dumped{props: c.props, blobs: make([]named, 0, len(c.blobs))}
		for name, b := range c.blobs {
			d.blobs = append(d.blobs, named{name, b})
		}
		all = append(all, d)
	}
	s.blobMu.RUnlock()
	for _, d := range all {
		if err := emit(&journal.Change{Kind: journal.CreateContainer, Container: d.props.Name,
			Props: service.BlobProperties{ETag: d.props.ETag, LastModified: d.props.LastModified}}); err != nil {
			return err
		}
		for _, nb := range d.blobs {
			if err := emit(nb.b.change(d.props.Name, nb.name)); err != nil {
				return err
			}
		}
	}
	return nil
}
