package emulator

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/unified-data/gotables/inmemory/internal/journal"
)

// What the emulator keeps beside an account's blobs (blob.go) reaches the data directory
// with the memory service's own changes: a blob's side record travels as the annex of the
// PutBlob change that stores the blob (so that a blob and its properties are logged in one
// record), and each staged block is a StageBlock change the emulator appends itself, under
// the lock of the account's blob state, which orders staging with the writes that discard
// staged blocks.

// maxLoggedBlob is the largest blob a data directory logs: a record's length is 32 bits.
const maxLoggedBlob = 1<<32 - 1<<20

// Flags of an annex.
const (
	annexDropsStaged = 1 << iota // the write discarded the blob's staged blocks (Put Blob, Put Block List, Delete Blob)
	annexBlockList               // a committed block list follows
)

// annex encodes side, without its ETag (the blob's), as a PutBlob change carries it: a
// flags byte, the four properties as strings, and with a block list its length (uvarint)
// and each block's id (string) and size (uvarint).
func (side *sideProps) annex(dropsStaged bool) []byte {
	var flags byte
	if dropsStaged {
		flags |= annexDropsStaged
	}
	if side.blocks != nil {
		flags |= annexBlockList
	}
	buf := []byte{flags}
	for _, s := range []string{side.contentMD5, side.contentLanguage, side.contentDisposition, side.cacheControl} {
		buf = appendStr(buf, s)
	}
	if side.blocks != nil {
		buf = binary.AppendUvarint(buf, uint64(len(side.blocks)))
		for _, b := range side.blocks {
			buf = appendStr(buf, b.id)
			buf = binary.AppendUvarint(buf, uint64(b.size))
		}
	}
	return buf
}

// decodeAnnex is the inverse of annex.
func decodeAnnex(annex []byte) (side *sideProps, dropsStaged bool, err error) {
	d := &decoder{b: annex}
	flags := d.byte()
	side = &sideProps{contentMD5: d.string(), contentLanguage: d.string(), contentDisposition: d.string(), cacheControl: d.string()}
	if flags&annexBlockList != 0 {
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			return nil, false, errBadPayload
		}
		side.blocks = make([]committedBlock, n)
		for i := range side.blocks {
			side.blocks[i] = committedBlock{id: d.string(), size: int64(d.uvarint())}
		}
	}
	if d.bad || len(d.b) != 0 || flags&^(annexDropsStaged|annexBlockList) != 0 {
		return nil, false, errBadPayload
	}
	return side, flags&annexDropsStaged != 0, nil
}

// restore applies a logged change to what is kept beside the blobs, after the memory
// service applied it: a stored blob gets the side record its annex holds (or none), and
// loses its staged blocks when the write discarded them; a deleted blob or container loses
// what was kept for it; a staged block is staged again.
func (st *blobState) restore(c *journal.Change) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	k := blobKey{c.Container, c.Blob}
	switch c.Kind {
	case journal.DeleteContainer:
		st.dropContainer(c.Container)
	case journal.PutBlob:
		delete(st.side, k)
		if c.Annex == nil {
			return nil
		}
		side, drops, err := decodeAnnex(c.Annex)
		if err != nil {
			return err
		}
		side.etag = c.Props.ETag
		st.side[k] = side
		if drops {
			delete(st.staged, k)
		}
	case journal.DeleteBlob:
		delete(st.side, k)
		if c.Annex != nil {
			delete(st.staged, k)
		}
	case journal.StageBlock:
		raw, err := base64.StdEncoding.DecodeString(c.BlockID)
		if err != nil {
			return errors.New("the staged block's id is not base64")
		}
		s := st.staged[k]
		if s == nil {
			s = &stagedBlocks{idLen: len(raw), blocks: make(map[string][]byte)}
			st.staged[k] = s
		}
		if len(raw) != s.idLen {
			return fmt.Errorf("the staged block's id has %d bytes, the blob's others %d", len(raw), s.idLen)
		}
		if _, ok := s.blocks[c.BlockID]; !ok {
			s.order = append(s.order, c.BlockID)
		}
		s.blocks[c.BlockID] = c.Data
	}
	return nil
}

// dumpStaged calls emit with a StageBlock change for each staged block, each blob's in the
// order they were first staged, read at one moment.
func (st *blobState) dumpStaged(emit func(*journal.Change) error) error {
	var all []journal.Change
	st.mu.RLock()
	for k, s := range st.staged {
		for _, id := range s.order {
			all = append(all, journal.Change{Kind: journal.StageBlock, Container: k.container, Blob: k.name, BlockID: id, Data: s.blocks[id]})
		}
	}
	st.mu.RUnlock()
	for i := range all {
		if err := emit(&all[i]); err != nil {
			return err
		}
	}
	return nil
}

// stage logs a staged block and waits for it to be durable; without a data directory it
// does nothing. The caller holds st.mu.
func (a *account) stage(container, name, id string, data []byte) error {
	if a.store == nil {
		return nil
	}
	return a.store.Sync(a.store.Append(&journal.Change{Kind: journal.StageBlock, Container: container, Blob: name, BlockID: id, Data: data}))
}
