package fidelity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// offDoc is the entity of the blob offload scenarios: large values that may go to blobs, one
// that may not, and a file.
type offDoc struct {
	abstractions.Entity
	Title      string
	Body       string `table:",split=text"`
	Data       []byte `table:",split=binary"`
	Notes      string `table:",split=gzip,offload=never"`
	Raw        []byte `table:",split=binary,offload=never"`
	Attachment *abstractions.File
}

// offLegacy is a type with offloaded values as it was before a rename: a large value under
// the column Old and a file under OldScan.
type offLegacy struct {
	abstractions.Entity
	Old     string `table:",split=text"`
	OldScan *abstractions.File
}

// offRenamed is offLegacy after renaming Old to Body and OldScan to Scan: the aliases read
// the blob references stored under the old names.
type offRenamed struct {
	abstractions.Entity
	Body string             `table:",split=text,alias=Old"`
	Scan *abstractions.File `table:",alias=OldScan"`
}

// offThreshold is the offload threshold of most scenarios: small, so the boundaries are
// cheap to reach.
const offThreshold = 100_000

// offStore returns the store of offDoc with blob offload in a container of the run's own.
// grace is the cleanup grace (see tables.BlobOffloadOptions); the container is returned too.
func offStore(e *Env, grace time.Duration) (*tables.Store[offDoc], string) {
	e.t.Helper()
	container := e.Name("off")
	return storeOf[offDoc](e, &tables.Options{BlobOffload: &tables.BlobOffloadOptions{
		Container: container, ThresholdBytes: offThreshold, CleanupGrace: grace}}), container
}

// noGrace deletes released blobs at once (once they are a second old).
const noGrace = -1

// normalize replaces the run's table name in a blob name or reference.
func (e *Env) normalize(s string) string { return strings.ReplaceAll(s, e.Table, "TABLE") }

// observeOffRows records the table's rows as digests, each blob reference as its parts.
func (e *Env) observeOffRows(ctx context.Context, step string) []service.Row {
	e.t.Helper()
	rows, err := storedRows(ctx, e.Tables, e.Table, service.Query{})
	if err != nil {
		e.Fatalf("%s: %v", step, err)
	}
	shown := make([]service.Row, len(rows))
	for i, r := range rows {
		shown[i] = r.Clone()
		for j, p := range shown[i].Properties {
			if ref, ok := parseBlobRef(p.Value); ok && strings.HasSuffix(p.Name, blobSuffix) {
				shown[i].Properties[j].Value = service.String(fmt.Sprintf("ref(%s %d %s %s)",
					e.normalize(ref.Path[:len(ref.Path)-56]), ref.Length, ref.ContentType, ref.Encoding))
			}
		}
	}
	e.Observe(step, digestRows(shown))
	return rows
}

// observeBlobs records the container's blobs: name, length, headers and content digest.
func (e *Env) observeBlobs(ctx context.Context, container, step string) []string {
	e.t.Helper()
	var out []string
	marker := ""
	for {
		page, err := e.Blobs.List(ctx, container, service.ListOptions{Marker: marker})
		if abstractions.HasStatus(err, 404, "ContainerNotFound") {
			break
		}
		if err != nil {
			e.Fatalf("%s: %v", step, err)
		}
		for _, it := range page.Blobs {
			b, err := e.Blobs.Download(ctx, container, it.Name, service.Conditions{})
			if err != nil {
				e.Fatalf("%s: %v", step, err)
			}
			data, err := io.ReadAll(b.Body)
			b.Body.Close()
			if err != nil {
				e.Fatalf("%s: %v", step, err)
			}
			sum := sha256.Sum256(data)
			out = append(out, fmt.Sprintf("%s len=%d type=%q enc=%q sha=%s", e.normalize(it.Name), len(data),
				b.Properties.ContentType, b.Properties.ContentEncoding, hex.EncodeToString(sum[:4])))
		}
		if page.NextMarker == "" {
			break
		}
		marker = page.NextMarker
	}
	e.Observe(step, out)
	return out
}

// blobNames returns the names of the container's blobs.
func (e *Env) blobNames(ctx context.Context, container string) []string {
	e.t.Helper()
	page, err := e.Blobs.List(ctx, container, service.ListOptions{})
	if err != nil && !abstractions.HasStatus(err, 404, "ContainerNotFound") {
		e.Fatalf("list: %v", err)
	}
	var out []string
	for _, it := range page.Blobs {
		out = append(out, it.Name)
	}
	return out
}

// nextSecond waits until the blob service's clock has passed the current second, so that
// every blob written so far is older than a zero grace.
func (e *Env) nextSecond(ctx context.Context) {
	e.t.Helper()
	t0, err := e.Blobs.Now(ctx)
	if err != nil {
		e.Fatalf("now: %v", err)
	}
	for {
		time.Sleep(100 * time.Millisecond)
		t, err := e.Blobs.Now(ctx)
		if err != nil {
			e.Fatalf("now: %v", err)
		}
		if t.After(t0) {
			return
		}
	}
}

// readFile opens and reads a file whole.
func readFile(ctx context.Context, f *abstractions.File) ([]byte, error) {
	if f == nil {
		return nil, fmt.Errorf("no file")
	}
	rc, err := f.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// streamOnly hides every method of a reader but Read: a reader that cannot seek.
type streamOnly struct {
	r     io.Reader
	reads int // bytes delivered
}

func (s *streamOnly) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.reads += n
	return n, err
}

// describeFile renders what a read returned of a file.
func describeFile(f *abstractions.File) string {
	if f == nil {
		return "no file"
	}
	n, okN := f.Length()
	sum, okS := f.SHA256()
	if len(sum) > 8 {
		sum = sum[:8]
	}
	return fmt.Sprintf("file(len=%d/%v sha=%s/%v type=%q)", n, okN, sum, okS, f.ContentType())
}

// failingReader delivers some bytes, then fails.
type failingReader struct{ left int }

var errBody = errors.New("the body broke")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, errBody
	}
	n := min(len(p), f.left)
	clear(p[:n])
	f.left -= n
	return n, nil
}

func offloadScenarios() []Scenario {
	return []Scenario{
		{
			Name:      "offload/service-upload-stream-and-touch",
			Container: true,
			Run: func(ctx context.Context, e *Env) {
				create := service.UploadOptions{Mode: service.UploadCreate, ContentType: "text/plain", ContentEncoding: "gzip"}
				p1, err := e.Blobs.UploadStream(ctx, e.Container, "small", strings.NewReader("hello"), create)
				e.OK("a small stream", err)
				e.Observe("its properties", p1)
				_, err = e.Blobs.UploadStream(ctx, e.Container, "small", strings.NewReader("again"), create)
				e.Status("create-only over an existing blob", err, 409, "BlobAlreadyExists")
				big := pattern(9<<20+123, 12)
				pb, err := e.Blobs.UploadStream(ctx, e.Container, "big", bytes.NewReader(big), service.UploadOptions{Mode: service.UploadCreate})
				e.OK("a stream of several blocks", err)
				e.Observe("its properties", pb)
				b, err := e.Blobs.Download(ctx, e.Container, "big", service.Conditions{})
				e.OK("download", err)
				got, err := io.ReadAll(b.Body)
				b.Body.Close()
				e.OK("read", err)
				e.Equal("the content", bytes.Equal(got, big), true)
				_, err = e.Blobs.UploadStream(ctx, e.Container, "big", bytes.NewReader(big), service.UploadOptions{Mode: service.UploadCreate})
				e.Status("create-only over an existing large blob", err, 409, "BlobAlreadyExists")
				_, err = e.Blobs.UploadStream(ctx, e.Container, "broken", &failingReader{left: 5 << 20}, service.UploadOptions{Mode: service.UploadCreate})
				e.Equal("a body that fails fails the upload with its own error", errors.Is(err, errBody), true)
				_, err = e.Blobs.Download(ctx, e.Container, "broken", service.Conditions{})
				e.Status("and stores nothing", err, 404, "BlobNotFound")
				e.OK("delete the large blob", e.Blobs.DeleteBlob(ctx, e.Container, "big", service.Conditions{}))

				e.nextSecond(ctx)
				pt, err := e.Blobs.Touch(ctx, e.Container, "small")
				e.OK("touch", err)
				e.Observe("its properties", pt)
				e.Equal("a new ETag", pt.ETag != p1.ETag, true)
				e.Equal("a later LastModified", pt.LastModified.After(p1.LastModified), true)
				_, err = e.Blobs.Touch(ctx, e.Container, "missing")
				e.Status("touch a missing blob", err, 404, "BlobNotFound")
			},
		},
		{
			Name: "offload/threshold-boundaries",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, tables.NoCleanup)
				cases := []struct {
					id   string
					doc  offDoc
					step string
				}{
					{"p|inline", offDoc{Data: pattern(60_000, 1)}, "60,000 bytes above the threshold fit a cell: inline"},
					{"p|at", offDoc{Data: pattern(offThreshold, 2)}, "exactly the threshold: split"},
					{"p|above", offDoc{Data: pattern(offThreshold+1, 3)}, "one byte above: a blob"},
					{"p|text", offDoc{Body: strings.Repeat("é", offThreshold/2+1)}, "text of threshold+2 UTF-8 bytes: a blob"},
					{"p|big", offDoc{Data: pattern(3_500_000, 4)}, "3,500,000 bytes: a blob"},
				}
				for _, tc := range cases {
					d := tc.doc
					d.ID = tc.id
					want := d
					e.OK(tc.step+": create", s.Create(ctx, &d))
					got, err := s.One(ctx, tc.id)
					e.OK(tc.step+": read", err)
					e.Equal(tc.step+": read back whole", got.Body == want.Body && bytes.Equal(got.Data, want.Data), true)
				}
				list, err := s.List(ctx, "p")
				e.OK("list", err)
				e.Equal("list reads every value", len(list), len(cases))
				e.observeOffRows(ctx, "rows")
				e.observeBlobs(ctx, c, "blobs")
				e.clearTable(ctx)
			},
		},
		{
			Name: "offload/forbidden-and-not-configured",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, tables.NoCleanup)
				notes := hex.EncodeToString(pattern(150_000, 5)) // gzips to more than the threshold
				e.OK("offload=never keeps a value above the threshold split", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|never"}, Notes: notes}))
				got, err := s.One(ctx, "p|never")
				e.OK("read", err)
				e.Equal("read back whole", got.Notes == notes, true)
				err = s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|huge"}, Raw: pattern(3_000_000, 6)})
				e.Is("offload=never and no transaction holds it", err, abstractions.ErrOversizedValue)

				// An account without offload.
				plain := storeOf[offDoc](e, nil)
				err = plain.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|x"}, Data: pattern(3_000_000, 7)})
				e.Is("no offload: a value that needs a blob", err, abstractions.ErrOversizedValue)
				err = plain.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|f"}, Attachment: abstractions.FileFromBytes([]byte("x"), "")})
				e.Is("no offload: a file", err, abstractions.ErrOversizedValue)
				e.OK("with offload", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|blob"}, Data: pattern(200_000, 8),
					Attachment: abstractions.FileFromBytes([]byte("hello"), "text/plain")}))
				_, err = plain.One(ctx, "p|blob")
				e.Is("no offload: reading a blob reference", err, abstractions.ErrBlobOffloadNotConfigured)
				e.OK("no offload: a row whose only blob is a file reads", plain.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|small"}}))
				e.OK("file only", s.Upsert(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|small"}, Attachment: abstractions.FileFromBytes([]byte("hi"), "")}))
				d, err := plain.One(ctx, "p|small")
				e.OK("read through the plain account", err)
				_, err = readFile(ctx, d.Attachment)
				e.Is("opening its file", err, abstractions.ErrBlobOffloadNotConfigured)
				e.observeOffRows(ctx, "rows")
				e.observeBlobs(ctx, c, "blobs")
				e.clearTable(ctx)
			},
		},
		{
			Name: "offload/files",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, tables.NoCleanup)
				content := pattern(300_000, 9)

				// From bytes.
				f := abstractions.FileFromBytes(content, "application/pdf")
				e.OK("from bytes", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|bytes"}, Title: "b", Attachment: f}))
				got, err := s.One(ctx, "p|bytes")
				e.OK("read", err)
				e.Observe("the file a read returns", describeFile(got.Attachment))
				data, err := readFile(ctx, got.Attachment)
				e.OK("open", err)
				e.Equal("its content", bytes.Equal(data, content), true)

				// From a seekable reader, read from where it stands and put back there.
				src := bytes.NewReader(append([]byte("skip"), content...))
				_, _ = src.Seek(4, io.SeekStart)
				e.OK("from a seekable reader", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|seek"}, Attachment: abstractions.FileFromReader(src, "application/pdf")}))
				pos, _ := src.Seek(0, io.SeekCurrent)
				e.Equal("the reader is put back where the content started", pos, int64(4))
				got, err = s.One(ctx, "p|seek")
				e.OK("read", err)
				data, err = readFile(ctx, got.Attachment)
				e.OK("open", err)
				e.Equal("its content", bytes.Equal(data, content), true)

				// From a reader that cannot seek: copied to a temporary file, read once.
				stream := &streamOnly{r: bytes.NewReader(content)}
				sf := abstractions.FileFromReader(stream, "application/pdf")
				e.OK("from a non-seekable reader", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|stream"}, Attachment: sf}))
				e.Equal("read once", stream.reads, len(content))
				e.Observe("the written file knows its digest", describeFile(sf))
				data, err = readFile(ctx, sf)
				e.OK("the written file streams its blob", err)
				e.Equal("its content", bytes.Equal(data, content), true)
				err = s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|again"}, Attachment: abstractions.FileFromReader(stream, "")})
				e.Is("a new file over the consumed reader, which delivers nothing", err, abstractions.ErrInvalidArgument)
				stream.r = bytes.NewReader([]byte("a new payload"))
				e.OK("the same reader with a new payload", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|again"}, Attachment: abstractions.FileFromReader(stream, "")}))

				// An empty file, and a file copied from another row.
				e.OK("an empty file", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|empty"}, Attachment: abstractions.FileFromBytes(nil, "text/plain")}))
				got, err = s.One(ctx, "p|empty")
				e.OK("read", err)
				data, err = readFile(ctx, got.Attachment)
				e.OK("open", err)
				e.Equal("empty", len(data), 0)
				from, err := s.One(ctx, "p|stream")
				e.OK("read the source", err)
				copyDoc := &offDoc{Entity: abstractions.Entity{ID: "p|copy"}, Attachment: from.Attachment}
				e.OK("a file of another row", s.Create(ctx, copyDoc))
				e.Equal("the written entity gets a file of its own row", copyDoc.Attachment != from.Attachment, true)
				data, err = readFile(ctx, copyDoc.Attachment)
				e.OK("open the copy", err)
				e.Equal("its content", bytes.Equal(data, content), true)
				e.observeOffRows(ctx, "rows")
				e.observeBlobs(ctx, c, "blobs")
				e.clearTable(ctx)
			},
		},
		{
			Name: "offload/integrity",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, noGrace)
				e.OK("create", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|a"}, Data: pattern(200_000, 10),
					Attachment: abstractions.FileFromBytes([]byte("version one"), "text/plain")}))
				old, err := s.One(ctx, "p|a")
				e.OK("read", err)
				e.nextSecond(ctx)
				e.OK("replace the file", s.Upsert(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|a"}, Data: pattern(200_000, 10),
					Attachment: abstractions.FileFromBytes([]byte("version two"), "text/plain")}))
				_, err = readFile(ctx, old.Attachment)
				e.Is("opening the file of the replaced version", err, abstractions.ErrIntegrity)
				cur, err := s.One(ctx, "p|a")
				e.OK("read again", err)
				data, err := readFile(ctx, cur.Attachment)
				e.OK("open the current file", err)
				e.Equal("its content", string(data), "version two")

				// Tamper with the blobs.
				for _, name := range e.blobNames(ctx, c) {
					_, err := e.Blobs.Upload(ctx, c, name, []byte("tampered"), service.UploadOptions{})
					e.OK("tamper", err)
				}
				_, err = s.One(ctx, "p|a")
				e.Is("a read of a tampered value", err, abstractions.ErrIntegrity)
				_, err = readFile(ctx, cur.Attachment)
				e.Is("reading a tampered file", err, abstractions.ErrIntegrity)
				e.Deleted("a damaged entity stays deletable", true)(s.Delete(ctx, "p|a", ""))
				e.observeOffRows(ctx, "rows")
			},
		},
		{
			Name: "offload/cleanup",
			Run: func(ctx context.Context, e *Env) {
				for _, tc := range []struct {
					name  string
					grace time.Duration
				}{{"no grace", noGrace}, {"an hour's grace", time.Hour}} {
					s, c := offStore(e, tc.grace)
					doc := func(v byte) *offDoc {
						return &offDoc{Entity: abstractions.Entity{ID: "p|doc"}, Body: strings.Repeat(string('a'+rune(v)), 150_000),
							Attachment: abstractions.FileFromBytes([]byte{v}, "")}
					}
					first := doc(1)
					e.OK(tc.name+": create", s.Create(ctx, first))
					e.OK(tc.name+": upsert the same values touches the blobs", s.Upsert(ctx, doc(1)))
					e.Equal(tc.name+": blobs after rewriting identical values", len(e.blobNames(ctx, c)), 2)
					e.nextSecond(ctx)
					second := doc(2)
					e.OK(tc.name+": replace", s.Upsert(ctx, second))
					e.observeBlobs(ctx, c, tc.name+": blobs after the replace")
					e.nextSecond(ctx)
					deleted, err := s.Delete(ctx, "p|doc", first.ETag)
					e.Is(tc.name+": delete at a stale version", err, abstractions.ErrConcurrencyConflict)
					e.Equal(tc.name+": a stale delete deletes nothing", deleted, false)
					e.observeBlobs(ctx, c, tc.name+": blobs after the stale delete")
					e.Deleted(tc.name+": delete", true)(s.Delete(ctx, "p|doc", second.ETag))
					e.observeBlobs(ctx, c, tc.name+": blobs after the delete")
				}
			},
		},
		{
			Name: "offload/sweep",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, tables.NoCleanup)
				doc := func(id string, v byte) *offDoc {
					return &offDoc{Entity: abstractions.Entity{ID: id}, Attachment: abstractions.FileFromBytes([]byte{v}, "")}
				}
				e.OK("write", s.Create(ctx, doc("p|a", 1)))
				e.OK("replace: the old blob is an orphan", s.Upsert(ctx, doc("p|a", 2)))
				e.OK("write another partition", s.Create(ctx, doc("q|b", 3)))
				e.Deleted("delete it: its blob is an orphan", true)(s.Delete(ctx, "q|b", ""))
				foreign := tableBlobPrefix(e.Table) + "p/a/notes.txt"
				_, err := e.Blobs.Upload(ctx, c, foreign, []byte("not ours"), service.UploadOptions{})
				e.OK("a blob of another shape under the table's prefix", err)
				n, err := s.SweepOrphanBlobs(ctx, time.Hour, "p")
				e.OK("sweep with an hour's age", err)
				e.Equal("young orphans stay", n, 0)
				e.nextSecond(ctx)
				n, err = s.SweepOrphanBlobs(ctx, 0, "p")
				e.OK("sweep the partition", err)
				e.Equal("deleted in p", n, 1)
				e.observeBlobs(ctx, c, "after the partition sweep")
				n, err = s.SweepOrphanBlobs(ctx, 0)
				e.OK("sweep the table", err)
				e.Equal("deleted in the table", n, 1)
				e.observeBlobs(ctx, c, "after the table sweep")
				got, err := s.One(ctx, "p|a")
				e.OK("the referenced file is still there", err)
				data, err := readFile(ctx, got.Attachment)
				e.OK("open", err)
				e.Equal("content", data, []byte{2})
				e.clearTable(ctx)
			},
		},
		{
			// The sweep of one partition takes it as List does: the partition the ids that
			// start with it are stored in, and one that is empty (once normalised too) or
			// holds "|" is refused before any request.
			Name: "offload/sweep-partition-of-the-ids",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, tables.NoCleanup)
				for _, id := range []string{"Acme |a", "acme|a"} {
					for _, v := range []byte{1, 2} { // the second write leaves the first's blob an orphan
						doc := &offDoc{Entity: abstractions.Entity{ID: id}, Attachment: abstractions.FileFromBytes([]byte{v}, "")}
						e.OK(fmt.Sprintf("write %q, version %d", id, v), s.Upsert(ctx, doc))
					}
				}
				e.nextSecond(ctx)
				for _, p := range []string{"", " ", "\u00a0\u3000", "acme|a", "acme\xff"} {
					_, err := s.SweepOrphanBlobs(ctx, 0, p)
					e.Is(fmt.Sprintf("sweep %q", p), err, abstractions.ErrInvalidKey)
				}
				e.observeBlobs(ctx, c, "the refused sweeps deleted nothing")
				n, err := s.SweepOrphanBlobs(ctx, 0, "Acme ")
				e.OK("sweep \"Acme \"", err)
				e.Equal("it swept partition acme- alone", n, 1)
				perPartition := map[string]int{}
				for _, name := range e.blobNames(ctx, c) {
					perPartition[strings.Split(name, "/")[1]]++
				}
				e.Equal("blobs per partition: acme- keeps its row's, acme keeps its orphan", perPartition, map[string]int{"acme-": 1, "acme": 2})
				e.observeBlobs(ctx, c, "after the sweep")
				e.clearTable(ctx)
			},
		},
		{
			Name: "offload/batches-and-partition-delete",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, noGrace)
				shared := abstractions.FileFromReader(&streamOnly{r: bytes.NewReader(pattern(50_000, 13))}, "image/png")
				batch := func(v byte) []*offDoc {
					return []*offDoc{
						{Entity: abstractions.Entity{ID: "p|a"}, Data: pattern(120_000, uint64(v)), Attachment: shared},
						{Entity: abstractions.Entity{ID: "p|b"}, Attachment: abstractions.FileFromBytes([]byte{v}, "")},
						{Entity: abstractions.Entity{ID: "p|c"}, Attachment: shared},
					}
				}
				e.OK("create batch: one file in two rows", s.CreateBatch(ctx, batch(1)))
				e.observeBlobs(ctx, c, "blobs after the create")
				e.nextSecond(ctx)
				n, err := s.UpsertBatch(ctx, batch(2))
				e.OK("upsert batch", err)
				e.Equal("written", n, 3)
				e.observeBlobs(ctx, c, "released blobs are deleted after the batch")
				list, err := s.List(ctx, "p")
				e.OK("list", err)
				for _, d := range list {
					data, err := readFile(ctx, d.Attachment)
					e.OK("open "+d.ID, err)
					e.Observe("file of "+d.ID, len(data))
				}
				e.nextSecond(ctx)
				n, err = s.DeletePartition(ctx, "p")
				e.OK("delete the partition", err)
				e.Equal("entities deleted", n, 3)
				e.observeBlobs(ctx, c, "the partition's blobs are deleted with it")
			},
		},
		{
			// Blob references under the old names of renamed fields are read (a value's blob
			// downloaded, a file bound); the column's own value wins; the next write releases
			// the old blobs as any replaced blob.
			Name: "offload/aliases",
			Run: func(ctx context.Context, e *Env) {
				c := e.Name("off")
				opts := &tables.Options{BlobOffload: &tables.BlobOffloadOptions{Container: c, ThresholdBytes: offThreshold, CleanupGrace: noGrace}}
				legacy := storeOf[offLegacy](e, opts)
				renamed := storeOf[offRenamed](e, opts)
				body, scan := cyrillic(150_000), pattern(20_000, 17)
				e.OK("write under the old names", legacy.Create(ctx, &offLegacy{Entity: abstractions.Entity{ID: "p|a"}, Old: body,
					OldScan: abstractions.FileFromBytes(scan, "application/pdf")}))
				rows := e.observeOffRows(ctx, "rows under the old names")
				e.observeBlobs(ctx, c, "blobs under the old names")
				got, err := renamed.One(ctx, "p|a")
				e.OK("read through the aliases", err)
				e.Equal("the value is read from its blob", err == nil && got.Body == body, true)
				data, err := readFile(ctx, got.Scan)
				e.OK("open the file through its alias", err)
				e.Equal("the file is whole", bytes.Equal(data, scan), true)
				list, err := renamed.List(ctx, "p")
				e.OK("list through the aliases", err)
				e.Equal("listed whole", len(list) == 1 && list[0].Body == body, true)

				e.nextSecond(ctx)
				got.Body = "short"
				got.Scan = abstractions.FileFromBytes([]byte("new scan"), "text/plain")
				e.OK("strict update through the new type", renamed.Update(ctx, got, abstractions.Strict))
				e.observeOffRows(ctx, "rewritten under the new names")
				e.observeBlobs(ctx, c, "the old names' blobs released")

				// The column's own value wins over an old reference, whose blob is gone: it
				// is not even downloaded.
				var oldRef service.Value
				if len(rows) == 1 {
					oldRef, _ = rows[0].Get("Old" + blobSuffix)
				}
				_, err = e.Tables.Write(ctx, e.Table, service.Action{Op: service.OpMerge, IfMatch: "*",
					Row: row("p", "a", "Old"+blobSuffix, oldRef)})
				e.OK("an old reference beside the new value", err)
				got, err = renamed.One(ctx, "p|a")
				e.OK("read", err)
				e.Equal("the column's own value wins", err == nil && got.Body == "short", true)
				e.clearTable(ctx)
			},
		},
		{
			Name: "offload/retries",
			Run: func(ctx context.Context, e *Env) {
				s, c := offStore(e, noGrace)
				content := pattern(150_000, 11)
				e.OK("a row in the way", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|dup"}}))
				stream := &streamOnly{r: bytes.NewReader(content)}
				f := abstractions.FileFromReader(stream, "")
				err := s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|dup"}, Attachment: f})
				e.Is("a create that fails after its upload", err, abstractions.ErrDuplicateKey)
				e.Equal("a failed write leaves its blob", len(e.blobNames(ctx, c)), 1)
				e.OK("the retry stores the same file", s.Upsert(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|dup"}, Attachment: f}))
				e.Equal("the reader was read once", stream.reads, len(content))
				e.Equal("the retry reused the blob", len(e.blobNames(ctx, c)), 1)

				// A Mutate whose function sets a file and runs twice.
				e.OK("create", s.Create(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|m"}, Title: "v1"}))
				stream2 := &streamOnly{r: bytes.NewReader(content)}
				mf := abstractions.FileFromReader(stream2, "application/octet-stream")
				runs := 0
				_, err = abstractions.Mutate(ctx, s, "p|m", func(d *offDoc) error {
					runs++
					if runs == 1 {
						// Another writer changes the row: this attempt loses the race.
						if err := s.Upsert(ctx, &offDoc{Entity: abstractions.Entity{ID: "p|m"}, Title: "v2"}); err != nil {
							return err
						}
					}
					d.Attachment = mf
					return nil
				}, nil)
				e.OK("mutate", err)
				e.Equal("the function ran twice", runs, 2)
				e.Equal("the reader was read once", stream2.reads, len(content))
				got, err := s.One(ctx, "p|m")
				e.OK("read", err)
				data, err := readFile(ctx, got.Attachment)
				e.OK("open", err)
				e.Equal("the file is whole", bytes.Equal(data, content), true)
				e.Equal("the other writer's change is kept", got.Title, "v2")
				e.observeOffRows(ctx, "rows")
				e.observeBlobs(ctx, c, "blobs")
				e.clearTable(ctx)
			},
		},
	}
}

// The offload layout as the library documents it, written out here rather than taken from
// the library, so that the scenarios check the layout instead of restating it.

// blobSuffix ends the name of the column that holds a value's blob reference.
const blobSuffix = "__blob"

// blobRef is the JSON of a blob reference cell.
type blobRef struct {
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Length      int64  `json:"length"`
	ContentType string `json:"contentType"`
	Encoding    string `json:"encoding"`
}

// value is the reference's cell.
func (r blobRef) value() service.Value {
	b, _ := json.Marshal(r) // strings and an int: it does not fail
	return service.String(string(b))
}

// parseBlobRef decodes a blob reference cell; ok is false for any other value.
func parseBlobRef(v service.Value) (r blobRef, ok bool) {
	if v.Kind() != service.KindString || json.Unmarshal([]byte(v.Str()), &r) != nil {
		return blobRef{}, false
	}
	return r, r.Path != "" && len(r.SHA256) == 64
}

// tableBlobPrefix is the prefix of a table's blobs in the offload container: the table
// name, escaped as a path segment (table names are letters and digits, which need no
// escaping), and "/".
func tableBlobPrefix(table string) string { return table + "/" }
