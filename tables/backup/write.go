package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Write backs up a table of acct to w, entity by entity, and returns what it wrote. The
// archive is complete when Write returns nil: its last record is the trailer. An error
// leaves w holding a partial archive that Restore and Verify refuse; use WriteFile to
// resume an interrupted backup instead of starting again. A nil acct or w is refused with
// abstractions.ErrInvalidArgument.
//
// Each entity is read whole (its main row, its continuation rows, its blobs, each verified
// against the main row; an entity that changed meanwhile is read again). The table is not
// a snapshot: rows written while the backup runs may or may not be in the archive, and an
// entity deleted meanwhile is left out.
func Write(ctx context.Context, acct *tables.Account, table string, w io.Writer, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	if w == nil {
		return Stats{}, fmt.Errorf("%w: backup needs a writer for the archive, not nil", abstractions.ErrInvalidArgument)
	}
	b, err := newBackup(acct, table, opts)
	if err != nil {
		return Stats{}, err
	}
	aw := newArchiveWriter(w, 0, true)
	return b.run(ctx, aw, position{}, Stats{}, nil, true)
}

// checkpoint is the content of a checkpoint file: where the archive may be cut and the
// backup resumed.
type checkpoint struct {
	Format     string   `json:"format"`
	Version    int      `json:"version"`
	Table      string   `json:"table"`
	Partitions []string `json:"partitions,omitempty"`
	Offset     int64    `json:"offset"`
	After      position `json:"after"`
	Stats      Stats    `json:"stats"`
}

// WriteFile backs up a table of acct to the file at path and keeps a checkpoint file
// (Options.Checkpoint) beside it while it runs. When the checkpoint of an earlier,
// interrupted run of the same backup exists, WriteFile resumes it: it cuts the archive at
// the checkpoint's offset and goes on after the last entity written, and the archive it
// completes is byte for byte the one an uninterrupted run writes (from an unchanged
// table). The checkpoint is removed once the archive is complete.
func WriteFile(ctx context.Context, acct *tables.Account, table, path string, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	b, err := newBackup(acct, table, opts)
	if err != nil {
		return Stats{}, err
	}
	cpPath := opts.Checkpoint
	if cpPath == "" {
		cpPath = path + ".checkpoint"
	}
	var cp checkpoint
	resume := false
	if data, err := os.ReadFile(cpPath); err == nil {
		if b.src.unordered {
			// The checkpoint names the last entity written, and the rest of the table is what
			// follows it in key order: Cosmos DB lists rows in no key order, so a resumed
			// backup would miss rows.
			return Stats{}, fmt.Errorf("%w: backup: checkpoint %s names a place in key order, and Azure Cosmos DB for Table lists rows in no key order, "+
				"so a backup of one of its tables cannot resume; remove the checkpoint to start again; nothing was read", abstractions.ErrNotSupported, cpPath)
		}
		if err := json.Unmarshal(data, &cp); err != nil {
			return Stats{}, fmt.Errorf("backup: checkpoint %s is not readable (remove it to start again): %w", cpPath, err)
		}
		if cp.Format != formatName || cp.Version != Version || cp.Table != table || !slices.Equal(cp.Partitions, b.parts) {
			return Stats{}, fmt.Errorf("backup: checkpoint %s belongs to another backup (table %s, partitions %q); remove it to start again", cpPath, cp.Table, cp.Partitions)
		}
		resume = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return Stats{}, fmt.Errorf("backup: %w", err)
	}
	flag := os.O_RDWR | os.O_CREATE
	if !resume {
		flag |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return Stats{}, fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	start := Stats{}
	if resume {
		fi, err := f.Stat()
		if err != nil {
			return Stats{}, fmt.Errorf("backup: %w", err)
		}
		if fi.Size() < cp.Offset {
			return Stats{}, fmt.Errorf("backup: archive %s is shorter (%d bytes) than its checkpoint says (%d); remove the checkpoint to start again", path, fi.Size(), cp.Offset)
		}
		if err := f.Truncate(cp.Offset); err != nil {
			return Stats{}, fmt.Errorf("backup: %w", err)
		}
		if _, err := f.Seek(cp.Offset, io.SeekStart); err != nil {
			return Stats{}, fmt.Errorf("backup: %w", err)
		}
		start = cp.Stats
		start.Elapsed, start.Retries = 0, 0
	}
	save := func(offset int64, after position, st Stats) error {
		if err := f.Sync(); err != nil {
			return err
		}
		c := checkpoint{Format: formatName, Version: Version, Table: table, Partitions: b.parts, Offset: offset, After: after, Stats: st}
		data, _ := json.Marshal(c)
		tmp := cpPath + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, cpPath)
	}
	if b.src.unordered {
		save = nil // no place to resume from: an interrupted backup starts again
	}
	aw := newArchiveWriter(f, cp.Offset, true)
	st, err := b.run(ctx, aw, cp.After, start, save, !resume)
	if err != nil {
		return st, err
	}
	if err := f.Sync(); err != nil {
		return st, fmt.Errorf("backup: %w", err)
	}
	if err := os.Remove(cpPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("backup: %w", err)
	}
	return st, nil
}

// backupRun is one backup's configuration.
type backupRun struct {
	src       *source
	blobs     service.Blobs
	container string
	parts     []string
	opts      *Options
}

func newBackup(acct *tables.Account, table string, opts *Options) (*backupRun, error) {
	if acct == nil || acct.Tables() == nil {
		return nil, fmt.Errorf("%w: backup needs an account with a table service", abstractions.ErrInvalidArgument)
	}
	if err := service.CheckTableName(table); err != nil {
		return nil, err
	}
	var parts []string
	if opts.Partitions != nil {
		parts = append([]string{}, opts.Partitions...)
		sort.Slice(parts, func(i, j int) bool { return service.CompareUTF16(parts[i], parts[j]) < 0 })
		parts = slices.Compact(parts)
	}
	container := largevalue.DefaultContainer
	if o := acct.BlobOffload(); o != nil {
		container = o.Container
	}
	return &backupRun{
		src:       &source{tbl: acct.Tables(), table: table, r: newRetrier(opts.logger()), unordered: acct.Service() == service.Cosmos},
		blobs:     acct.Blobs(),
		container: container,
		parts:     parts,
		opts:      opts,
	}, nil
}

// run writes the archive: the header unless resuming, every entity after from, the
// trailer. save, when not nil, records a checkpoint at each member boundary.
func (b *backupRun) run(ctx context.Context, aw *archiveWriter, from position, st Stats, save func(int64, position, Stats) error, header bool) (Stats, error) {
	prog := newProgress(b.opts.Progress)
	base := st.Retries
	sync := func() {
		st.Bytes = aw.offset()
		st.Retries = base + b.src.r.retries.Load()
	}
	fail := func(err error) (Stats, error) {
		sync()
		prog.report(&st, true)
		return st, err
	}
	boundary := func(after position) error {
		if err := aw.endMember(); err != nil {
			return err
		}
		sync()
		if save != nil {
			return save(aw.offset(), after, st)
		}
		return nil
	}
	if header {
		if err := aw.record(headerRec{Type: recHeader, Format: formatName, Version: Version, Table: b.src.table, Partitions: b.parts}); err != nil {
			return fail(err)
		}
		if err := boundary(position{}); err != nil {
			return fail(err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	segs, wait := b.src.produce(ctx, b.parts, b.opts.Parallel, from)
	defer wait()
	defer cancel()

	after := from
	for ch := range segs {
		for ent := range ch {
			if ent.err != nil {
				return fail(ent.err)
			}
			written, err := b.writeEntity(ctx, aw, &ent)
			if err != nil {
				return fail(err)
			}
			if !written {
				continue
			}
			main := &ent.rows[0]
			after = position{PK: main.PartitionKey, RK: main.RowKey, Set: true}
			st.Entities++
			st.Rows += int64(len(ent.rows))
			st.Blobs += int64(blobCount(ent))
			st.BlobBytes += blobBytes(ent)
			aw.entities++
			if aw.full() {
				if err := boundary(after); err != nil {
					return fail(err)
				}
			}
			sync()
			prog.report(&st, false)
		}
		// A segment's channel ends early only once ctx has ended: never go on to the next.
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if err := boundary(after); err != nil {
		return fail(err)
	}
	if err := aw.record(endRec{Type: recEnd, Entities: st.Entities, Rows: st.Rows, Blobs: st.Blobs, BlobBytes: st.BlobBytes}); err != nil {
		return fail(err)
	}
	if err := aw.endMember(); err != nil {
		return fail(err)
	}
	sync()
	prog.report(&st, true)
	return st, nil
}

func blobCount(e entity) int {
	n := 0
	for _, v := range e.values {
		if v.Form == "blob" {
			n++
		}
	}
	return n
}

func blobBytes(e entity) int64 {
	var n int64
	for _, v := range e.values {
		if v.Form == "blob" {
			n += v.Length
		}
	}
	return n
}

// writeEntity writes an entity's blobs and then its record. A blob that is gone or does
// not match its reference means the entity changed: it is read again (false when it is
// gone). ent.values gains the entity's blobs.
func (b *backupRun) writeEntity(ctx context.Context, aw *archiveWriter, ent *entity) (bool, error) {
	for attempt := 0; ; attempt++ {
		refs := blobRefsOf(&ent.rows[0])
		spools, err := b.fetchBlobs(ctx, &ent.rows[0], refs)
		if err == nil {
			err = b.emit(aw, ent, refs, spools)
			for _, s := range spools {
				s.close()
			}
			return err == nil, err
		}
		for _, s := range spools {
			s.close()
		}
		if !errors.Is(err, errBlobChanged) || attempt == rereads {
			return false, err
		}
		main := ent.rows[0]
		row, ok, rerr := b.src.reread(ctx, main.PartitionKey, main.RowKey)
		if rerr != nil || !ok {
			return false, rerr
		}
		fresh, ok, rerr := b.src.complete(ctx, row)
		if rerr != nil || !ok {
			return false, rerr
		}
		*ent = fresh
	}
}

var errBlobChanged = errors.New("blob changed")

// fetchBlobs downloads and verifies each referenced blob.
func (b *backupRun) fetchBlobs(ctx context.Context, main *service.Row, refs []namedRef) ([]*spool, error) {
	if len(refs) > 0 && b.blobs == nil {
		return nil, fmt.Errorf("%w: backup: row (%q, %q) references a blob (column %s) and the account has no blob service (set Options.Blobs)",
			abstractions.ErrBlobOffloadNotConfigured, main.PartitionKey, main.RowKey, refs[0].Column)
	}
	var spools []*spool
	for _, nr := range refs {
		s := newSpool()
		spools = append(spools, s)
		err := b.src.r.do(ctx, "blob download", func() error {
			s.close()
			*s = *newSpool()
			blob, err := b.blobs.Download(ctx, b.container, nr.Ref.Path, service.Conditions{})
			if err != nil {
				return err
			}
			defer blob.Body.Close()
			_, err = io.Copy(s, blob.Body)
			return err
		})
		if abstractions.HasStatus(err, http.StatusNotFound, "") {
			return spools, fmt.Errorf("%w: blob %s of row (%q, %q) column %s is gone: %v", errBlobChanged, nr.Ref.Path, main.PartitionKey, main.RowKey, nr.Column, err)
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return spools, fmt.Errorf("backup: the temporary file of blob %s of row (%q, %q): %w", nr.Ref.Path, main.PartitionKey, main.RowKey, err)
		}
		if err != nil {
			return spools, serviceError("backup: downloading blob "+nr.Ref.Path+" of", b.src.table, main.PartitionKey, callerr.Read, err)
		}
		if err := s.check(nr.Ref.SHA256, nr.Ref.Length); err != nil {
			return spools, fmt.Errorf("%w: blob %s of row (%q, %q) column %s: %v", errBlobChanged, nr.Ref.Path, main.PartitionKey, main.RowKey, nr.Column, err)
		}
	}
	return spools, nil
}

// emit writes the blob records, their chunks and the entity record.
func (b *backupRun) emit(aw *archiveWriter, ent *entity, refs []namedRef, spools []*spool) error {
	main := &ent.rows[0]
	for i, nr := range refs {
		rec := blobRec{Type: recBlob, PK: main.PartitionKey, RK: main.RowKey, Column: nr.Column, SHA256: nr.Ref.SHA256,
			Length: nr.Ref.Length, ContentType: nr.Ref.ContentType, Encoding: nr.Ref.Encoding, Chunks: chunkCount(nr.Ref.Length)}
		if err := aw.record(rec); err != nil {
			return err
		}
		if err := spools[i].chunks(func(p []byte) error { return aw.record(chunkRec{Type: recChunk, Data: p}) }); err != nil {
			return err
		}
		ent.values = append(ent.values, valueRec{Column: nr.Column, Form: "blob", SHA256: nr.Ref.SHA256, Length: nr.Ref.Length})
	}
	rec := entityRec{Type: recEntity, PK: main.PartitionKey, Values: ent.values}
	rec.Rows = make([]rowRec, len(ent.rows))
	for i := range ent.rows {
		rec.Rows[i] = rowToRec(&ent.rows[i])
	}
	return aw.record(rec)
}
