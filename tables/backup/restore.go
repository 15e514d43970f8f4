package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/internal/engine"
	"github.com/unified-data/gotables/tables/internal/largevalue"
	"github.com/unified-data/gotables/tables/service"
)

// Restore writes the entities of the archive r into a table of acct (created when
// missing) and returns what it did. r may be compressed (as Write writes it) or plain JSON
// Lines.
//
// Nothing is written from bytes that are not verified. A compressed archive is read a gzip
// member at a time, each checked whole (its CRC-32 and length) before any of its records is
// used; every record is then checked before it is used: each blob's bytes against its
// SHA-256 and length, each split value's chunks against its manifest and the archive's
// record of it. Each entity is written with its continuation rows in one entity-group
// transaction, after its blobs are uploaded; its blob references are rewritten to blobs of
// the destination table ({table}/{pk}/{rk}/{column}/{sha256} in the account's offload
// container), so the restored rows share no blob with the source. Several entities of a
// partition share a transaction. A destination that holds rows is refused (ErrNotEmpty)
// unless Options.Existing says Skip or Replace.
//
// An archive that is damaged, cut or ends before its trailer, or whose counts do not match
// it, fails with an error matching abstractions.ErrIntegrity once every entity read whole
// before the damage is written: the entities Verify counts before it, no fewer, and no row
// of a member that fails its checksum or is cut. An archive of another format version fails with
// abstractions.ErrNotSupported before anything is written. Run Verify first to check
// without writing.
//
// A transaction whose answer is lost is settled by reading its rows back, as the stores do
// for their writes: applied, it counts as written; not applied, it is sent again. A
// failure of the destination is an *abstractions.StoreError matching its sentinel
// (ErrUnavailable for a service that cannot be reached or stays busy, context.Canceled,
// …); only when a transaction's rows cannot be read back either does the error say that
// it may or may not have been applied. A nil acct or r is refused with
// abstractions.ErrInvalidArgument.
func Restore(ctx context.Context, acct *tables.Account, table string, r io.Reader, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	if acct == nil || acct.Tables() == nil {
		return Stats{}, fmt.Errorf("%w: restore needs an account with a table service", abstractions.ErrInvalidArgument)
	}
	if r == nil {
		return Stats{}, fmt.Errorf("%w: restore needs a reader of the archive, not nil", abstractions.ErrInvalidArgument)
	}
	if err := service.CheckTableName(table); err != nil {
		return Stats{}, err
	}
	container := largevalue.DefaultContainer
	if o := acct.BlobOffload(); o != nil {
		container = o.Container
	}
	rs := &restorer{
		tbl: acct.Tables(), blobs: acct.Blobs(), container: container, table: table,
		existing: opts.Existing, r: newRetrier(opts.logger()),
		product: acct.Service(), maxWire: largevalue.WireBudget(acct.Service().MaxBodySize()),
	}
	return rs.run(ctx, r, opts)
}

// Verify reads the archive r and checks it without writing anything: its format and
// version, every gzip member's checksum, every blob's bytes, every split value, the entity
// and row counts and the trailer that says the archive is complete. It returns the
// archive's counts; on failure, Stats.Entities counts the entities read whole before the
// damage, which are the ones a restore of the archive writes. A nil r is refused with
// abstractions.ErrInvalidArgument.
func Verify(ctx context.Context, r io.Reader, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	if r == nil {
		return Stats{}, fmt.Errorf("%w: verify needs a reader of the archive, not nil", abstractions.ErrInvalidArgument)
	}
	rs := &restorer{verifyOnly: true, r: newRetrier(opts.logger())}
	return rs.run(ctx, r, opts)
}

// errCopyStopped ends the reading side of a copy whose writing side returned.
var errCopyStopped = errors.New("backup: the copy's writing side stopped")

// Copy copies a table of src to a table of dst, entity by entity, as a backup restored
// at once would, without an archive: dst's rows get blobs of their own. opts.Partitions
// and Parallel apply to the reading, Existing to the writing. The two tables must differ.
// A failure is the failing side's own error: the source's (as Write reports it) or the
// destination's (as Restore reports it). A nil account is refused with
// abstractions.ErrInvalidArgument.
func Copy(ctx context.Context, src *tables.Account, srcTable string, dst *tables.Account, dstTable string, opts *Options) (Stats, error) {
	opts = opts.orDefault()
	if dst == nil || dst.Tables() == nil {
		return Stats{}, fmt.Errorf("%w: copy needs a destination account with a table service", abstractions.ErrInvalidArgument)
	}
	if err := service.CheckTableName(dstTable); err != nil {
		return Stats{}, fmt.Errorf("copy: the destination table: %w", err)
	}
	if src == dst && strings.EqualFold(srcTable, dstTable) {
		return Stats{}, fmt.Errorf("%w: copy of table %s onto itself", abstractions.ErrInvalidArgument, srcTable)
	}
	b, err := newBackup(src, srcTable, &Options{Partitions: opts.Partitions, Parallel: opts.Parallel, Logger: opts.Logger})
	if err != nil {
		return Stats{}, err
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	var wst Stats
	go func() {
		var err error
		wst, err = b.run(ctx, newArchiveWriter(pw, 0, false), position{}, Stats{}, nil, true)
		pw.CloseWithError(err)
		done <- err
	}()
	st, err := Restore(ctx, dst, dstTable, pr, opts)
	pr.CloseWithError(errCopyStopped)
	cancel()
	werr := <-done
	st.Retries += wst.Retries
	if err != nil {
		if werr != nil && errors.Is(err, werr) {
			return st, werr // the reading side failed: Restore met its error in the pipe
		}
		return st, err
	}
	return st, nil
}

// restorer reads an archive and, unless verifyOnly, writes it.
type restorer struct {
	tbl        service.Tables
	blobs      service.Blobs
	container  string
	table      string
	existing   Existing
	verifyOnly bool
	r          *retrier
	// product is the destination's service, and maxWire the request bytes of its
	// transactions the packs are planned within (2 MB of body on Cosmos DB for Table).
	product service.Product
	maxWire int

	containerMade bool
	pending       map[string]pendingBlob // the blobs announced for the next entity, by column
	pack          []unit                 // entities waiting for their transaction, one partition
	packSize      int                    // their actions' body size
	packActions   int
	read          int64     // entities read
	last          [2]string // the keys of the last entity read
	st            Stats

	// The committer (commit.go) writes packs in order while the reader goes on.
	queue    chan []unit
	mu       sync.Mutex
	err      error
	written  int64
	skipped  int64
	replaced int64
}

type pendingBlob struct {
	rec blobRec
	ref largevalue.BlobRef // the reference in the destination
}

// unit is one entity's rows as they will be written.
type unit struct {
	pk, rk string
	rows   []service.Row
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: backup archive: %s", abstractions.ErrIntegrity, fmt.Sprintf(format, args...))
}

// archiveFailure reports a failure of the archive (damaged, cut, of another version, or
// its reader failing), as opposed to one of the destination or the context.
func archiveFailure(err error) bool {
	var se *sourceError
	return errors.Is(err, abstractions.ErrIntegrity) || errors.Is(err, abstractions.ErrNotSupported) || errors.As(err, &se)
}

func (rs *restorer) run(ctx context.Context, r io.Reader, opts *Options) (Stats, error) {
	prog := newProgress(opts.Progress)
	cr := &countingReader{r: r}
	sync := func() {
		rs.st.Bytes = cr.n
		rs.st.Retries = rs.r.retries.Load()
		if rs.verifyOnly {
			rs.st.Entities = rs.read
			return
		}
		rs.mu.Lock()
		rs.st.Entities, rs.st.Skipped, rs.st.Replaced = rs.written, rs.skipped, rs.replaced
		rs.mu.Unlock()
	}
	finish := func() error { return nil }
	started := false // whether the committer runs
	stopped := false // whether it was stopped (finish ran): nothing more can be queued
	fail := func(err error) (Stats, error) {
		// The entities read whole before the archive failed are written before the failure
		// is reported (the queued pack included): what Verify counts before the damage is
		// what a restore leaves.
		archive := archiveFailure(err)
		var se *sourceError
		if errors.As(err, &se) {
			err = fmt.Errorf("backup: reading the archive after %d whole entities: %w", rs.read, se.err)
		}
		if started && !stopped && archive && rs.commitErr() == nil && ctx.Err() == nil {
			werr := rs.flush(ctx)
			if werr == nil {
				werr = finish()
			}
			if werr != nil {
				err = fmt.Errorf("%w; writing the entities before it failed too: %w", err, werr)
			}
		}
		sync()
		prog.report(&rs.st, true)
		return rs.st, err
	}
	in, closeIn := openArchive(cr)
	defer closeIn()
	dec := json.NewDecoder(in)
	next := func() (*anyRec, error) {
		var rec anyRec
		err := dec.Decode(&rec)
		if err == nil {
			return &rec, nil
		}
		var d *damage
		var se *sourceError
		var te *spillError
		switch {
		case errors.Is(err, io.EOF):
			return nil, io.EOF
		case errors.As(err, &d):
			return nil, corrupt("%s, after %d whole entities", d.what, rs.read)
		case errors.As(err, &se), errors.As(err, &te):
			return nil, err
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, corrupt("incomplete: it ends inside a record, after %d whole entities", rs.read)
		}
		return nil, corrupt("unreadable record after %d whole entities: %v", rs.read, err)
	}

	rec, err := next()
	if err == io.EOF {
		return fail(corrupt("empty: no header"))
	}
	if err != nil {
		return fail(err)
	}
	if rec.Type != recHeader || rec.Format != formatName {
		return fail(corrupt("it does not start with a %s header", formatName))
	}
	if rec.Version != Version {
		return fail(fmt.Errorf("%w: backup archive of format version %d; this library reads version %d (a newer release of it may read this one)",
			abstractions.ErrNotSupported, rec.Version, Version))
	}
	if !rs.verifyOnly {
		if err := rs.prepareTable(ctx); err != nil {
			return fail(err)
		}
		stop := rs.startCommitter(ctx)
		started = true
		defer func() {
			if !stopped {
				_ = stop()
			}
		}()
		finish = func() error {
			stopped = true
			return stop()
		}
	}
	rs.pending = map[string]pendingBlob{}
	for {
		if err := rs.commitErr(); err != nil {
			return fail(err)
		}
		if err := ctx.Err(); err != nil {
			if !rs.verifyOnly {
				// As the committer reports it when the end finds it sending: a StoreError
				// that names the table (and the partition being queued).
				pk := ""
				if len(rs.pack) > 0 {
					pk = rs.pack[0].pk
				}
				err = serviceError("restore: writing", rs.table, pk, callerr.Write, err)
			}
			return fail(err)
		}
		rec, err := next()
		if err == io.EOF {
			return fail(corrupt("incomplete: it ends after %d whole entities without its trailer", rs.read))
		}
		if err != nil {
			return fail(err)
		}
		switch rec.Type {
		case recBlob:
			if err := rs.blob(ctx, rec, next); err != nil {
				return fail(err)
			}
		case recEntity:
			if err := rs.entity(ctx, rec); err != nil {
				return fail(err)
			}
		case recEnd:
			if len(rs.pending) > 0 {
				return fail(corrupt("a blob before the trailer belongs to no entity"))
			}
			if err := rs.flush(ctx); err != nil {
				return fail(err)
			}
			if err := finish(); err != nil {
				return fail(err)
			}
			got := rs.read
			if rec.Entities != got || rec.RowCount != rs.st.Rows || rec.Blobs != rs.st.Blobs || rec.BlobBytes != rs.st.BlobBytes {
				return fail(corrupt("the trailer counts %d entities, %d rows, %d blobs of %d bytes; the archive holds %d, %d, %d, %d",
					rec.Entities, rec.RowCount, rec.Blobs, rec.BlobBytes, got, rs.st.Rows, rs.st.Blobs, rs.st.BlobBytes))
			}
			switch _, err := next(); {
			case err == nil:
				return fail(corrupt("records follow the trailer"))
			case err != io.EOF:
				return fail(err)
			}
			sync()
			prog.report(&rs.st, true)
			return rs.st, nil
		default:
			return fail(corrupt("unexpected record type %q after %d whole entities", rec.Type, rs.read))
		}
		sync()
		prog.report(&rs.st, false)
	}
}

// prepareTable creates the destination table when missing and, under Refuse, checks that
// it is empty.
func (rs *restorer) prepareTable(ctx context.Context) error {
	err := rs.r.do(ctx, "create table", func() error { return rs.tbl.CreateTable(ctx, rs.table) })
	if err != nil && !abstractions.HasStatus(err, http.StatusConflict, "TableAlreadyExists") {
		return serviceError("restore: creating", rs.table, "", callerr.Write, err)
	}
	if err == nil || rs.existing != Refuse {
		return nil
	}
	var page service.Page
	q := service.Query{Top: 1, Select: []string{largevalue.OfColumn}}
	for {
		err := rs.r.do(ctx, "query", func() (err error) {
			page, err = rs.tbl.Query(ctx, rs.table, q)
			return err
		})
		if err != nil {
			return serviceError("restore: reading", rs.table, "", callerr.Read, err)
		}
		if len(page.Rows) > 0 {
			return fmt.Errorf("%w: table %s holds rows; restore with Existing Skip or Replace (--existing skip|replace) to say what to do with them", ErrNotEmpty, rs.table)
		}
		if page.Next == nil {
			return nil
		}
		q.Continuation = page.Next
	}
}

// blob reads a blob record and its chunks, checks them and (unless verifying) uploads the
// bytes as a blob of the destination.
func (rs *restorer) blob(ctx context.Context, rec *anyRec, next func() (*anyRec, error)) error {
	if rec.Chunks != chunkCount(rec.Length) || rec.Length < 0 || rec.Column == "" {
		return corrupt("blob record of row (%q, %q) column %q is malformed", rec.PK, rec.RK, rec.Column)
	}
	s := newSpool()
	defer s.close()
	for i := 0; i < rec.Chunks; i++ {
		c, err := next()
		if err == io.EOF {
			return corrupt("incomplete: it ends inside blob %s of row (%q, %q)", rec.Column, rec.PK, rec.RK)
		}
		if err != nil {
			return err
		}
		if c.Type != recChunk {
			return corrupt("blob %s of row (%q, %q) has %d of its %d chunks", rec.Column, rec.PK, rec.RK, i, rec.Chunks)
		}
		if _, err := s.Write(c.Data); err != nil {
			return err
		}
	}
	if err := s.check(strings.ToLower(rec.SHA256), rec.Length); err != nil {
		return corrupt("blob %s of row (%q, %q): %v", rec.Column, rec.PK, rec.RK, err)
	}
	br := blobRec{PK: rec.PK, RK: rec.RK, Column: rec.Column, SHA256: s.sum(), Length: rec.Length, ContentType: rec.ContentType, Encoding: rec.Encoding}
	ref := largevalue.BlobRef{Path: largevalue.BlobName(rs.table, rec.PK, rec.RK, rec.Column, br.SHA256),
		SHA256: br.SHA256, Length: br.Length, ContentType: br.ContentType, Encoding: br.Encoding}
	if _, ok := largevalue.ParseBlobRef(ref.Value()); !ok {
		return corrupt("blob %s of row (%q, %q) has encoding %q", rec.Column, rec.PK, rec.RK, rec.Encoding)
	}
	if _, dup := rs.pending[rec.Column]; dup {
		return corrupt("two blobs for column %s of row (%q, %q)", rec.Column, rec.PK, rec.RK)
	}
	rs.pending[rec.Column] = pendingBlob{rec: br, ref: ref}
	if rs.verifyOnly {
		return nil
	}
	return rs.upload(ctx, ref, s)
}

// upload stores a blob create-only; one that exists has the same name, so the same bytes,
// and is touched instead (its age starts again, as the library's writes do).
func (rs *restorer) upload(ctx context.Context, ref largevalue.BlobRef, s *spool) error {
	if rs.blobs == nil {
		return fmt.Errorf("%w: restore: the archive holds blobs and the destination account has no blob service (set Options.Blobs)", abstractions.ErrBlobOffloadNotConfigured)
	}
	if !rs.containerMade {
		err := rs.r.do(ctx, "create container", func() error { return rs.blobs.CreateContainer(ctx, rs.container) })
		if err != nil && !abstractions.HasStatus(err, http.StatusConflict, "ContainerAlreadyExists") {
			return serviceError("restore: creating blob container "+rs.container+" for", rs.table, "", callerr.Write, err)
		}
		rs.containerMade = true
	}
	uo := service.UploadOptions{Mode: service.UploadCreate, ContentType: ref.ContentType}
	if ref.Encoding == largevalue.EncGzip {
		uo.ContentEncoding = "gzip"
	}
	err := rs.r.do(ctx, "blob upload", func() error {
		var err error
		if data, ok := s.small(); ok {
			_, err = rs.blobs.Upload(ctx, rs.container, ref.Path, data, uo)
		} else {
			var body io.Reader
			if body, err = s.reader(); err == nil {
				_, err = rs.blobs.UploadStream(ctx, rs.container, ref.Path, body, uo)
			}
		}
		if abstractions.HasStatus(err, http.StatusConflict, "BlobAlreadyExists") {
			_, err = rs.blobs.Touch(ctx, rs.container, ref.Path)
		}
		return err
	})
	if err != nil {
		return serviceError("restore: uploading blob "+ref.Path+" of", rs.table, "", callerr.Write, err)
	}
	return nil
}

// entity checks an entity record and queues its rows for a transaction.
func (rs *restorer) entity(ctx context.Context, rec *anyRec) error {
	if len(rec.Rows) == 0 {
		return corrupt("an entity of partition %q has no rows", rec.PK)
	}
	rows := make([]service.Row, len(rec.Rows))
	for i := range rec.Rows {
		rows[i] = recToRow(rec.PK, &rec.Rows[i])
	}
	main := &rows[0]
	for i := 1; i < len(rows); i++ {
		if _, ok := largevalue.BelongsTo(&rows[i], main.RowKey); !ok {
			return corrupt("row %q is not a continuation row of entity (%q, %q)", rows[i].RowKey, rec.PK, main.RowKey)
		}
	}
	// What the service would refuse, or take as something else, is refused before the
	// restore writes anything of the entity (an edited archive may hold it): keys and
	// property names the service forbids, and an entity twice in a row.
	if err := checkRows(rows); err != nil {
		return corrupt("entity (%q, %q): %v", rec.PK, main.RowKey, err)
	}
	k := [2]string{rec.PK, main.RowKey}
	if rs.read > 0 && k == rs.last {
		return corrupt("entity (%q, %q) appears twice in a row", rec.PK, main.RowKey)
	}
	rs.last = k
	splits, err := splitValues(rows)
	if err != nil {
		return corrupt("entity (%q, %q): %v", rec.PK, main.RowKey, err)
	}
	// The record's values must be exactly the split values found and the blobs announced.
	want := map[string]valueRec{}
	for _, v := range rec.Values {
		want[v.Form+"/"+v.Column] = v
	}
	for _, v := range splits {
		if w, ok := want["split/"+v.Column]; !ok || !strings.EqualFold(w.SHA256, v.SHA256) || w.Length != v.Length {
			return corrupt("split value %s of entity (%q, %q) does not match the archive's record of it", v.Column, rec.PK, main.RowKey)
		}
		delete(want, "split/"+v.Column)
	}
	refs := blobRefsOf(main)
	for _, nr := range refs {
		pb, ok := rs.pending[nr.Column]
		w, ok2 := want["blob/"+nr.Column]
		if !ok || !ok2 || pb.rec.PK != rec.PK || pb.rec.RK != main.RowKey || pb.rec.SHA256 != nr.Ref.SHA256 ||
			!strings.EqualFold(w.SHA256, nr.Ref.SHA256) || pb.rec.Length != nr.Ref.Length {
			return corrupt("blob %s of entity (%q, %q) is missing from the archive or does not match its reference", nr.Column, rec.PK, main.RowKey)
		}
		delete(want, "blob/"+nr.Column)
		delete(rs.pending, nr.Column)
		// The destination's own blob.
		for i := range main.Properties {
			if main.Properties[i].Name == nr.Column+largevalue.BlobSuffix {
				main.Properties[i].Value = pb.ref.Value()
			}
		}
		rs.st.Blobs++
		rs.st.BlobBytes += nr.Ref.Length
	}
	if len(want) > 0 || len(rs.pending) > 0 {
		return corrupt("entity (%q, %q) lists values or blobs its rows do not hold", rec.PK, main.RowKey)
	}
	rs.st.Rows += int64(len(rows))
	u := unit{pk: rec.PK, rk: main.RowKey, rows: rows}
	rs.read++
	if rs.verifyOnly {
		return nil
	}
	size := 0
	for i := range rows {
		a := service.Action{Op: service.OpUpsertReplace, Row: rows[i]}
		size += service.ActionBodySize(&a)
	}
	if service.TransactionEnvelopeSize+size > rs.maxWire {
		// An entity's rows go in one transaction, and restore writes the rows as archived.
		return &abstractions.StoreError{Kind: abstractions.ErrOversizedValue, Op: "restore", Table: rs.table, PartitionKey: rec.PK, RowKey: main.RowKey,
			Message: fmt.Sprintf("the entity's rows are about %d bytes, written in one transaction, and %s takes %d: "+
				"store its large value in a blob on the source (blob offload) and copy it again; the entities before it were written, none of its rows was sent (a blob it references may have been: an orphan the orphan sweep removes)",
				service.TransactionEnvelopeSize+size, rs.product, rs.maxWire)}
	}
	if len(rs.pack) > 0 && (rs.pack[0].pk != u.pk || rs.packActions+len(rows) > service.MaxTransactionActions ||
		service.TransactionEnvelopeSize+rs.packSize+size > rs.maxWire) {
		if err := rs.flush(ctx); err != nil {
			return err
		}
	}
	rs.pack = append(rs.pack, u)
	rs.packActions += len(rows)
	rs.packSize += size
	return nil
}

// checkRows checks an archived entity's rows against the service's rules for keys (an
// empty key is the service's to take, as other clients write them) and property names.
func checkRows(rows []service.Row) error {
	for i := range rows {
		r := &rows[i]
		for which, k := range [2]string{r.PartitionKey, r.RowKey} {
			if k == "" {
				continue
			}
			if why := engine.CheckKey(k); why != "" {
				return fmt.Errorf("the %s %q %s", [2]string{"PartitionKey", "RowKey"}[which], k, why)
			}
		}
		for _, p := range r.Properties {
			if !propertyName.MatchString(p.Name) {
				return fmt.Errorf("row %q: %q is not a property name the service accepts", r.RowKey, p.Name)
			}
		}
	}
	return nil
}
