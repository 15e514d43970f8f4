package fidelity

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/andybalholm/brotli"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/blobdocs"
	"github.com/unified-data/gotables/tables/service"
)

// blobInvoice is the document type of the blob-document scenarios.
type blobInvoice struct {
	Number string
	Lines  []string
	Total  float64
}

// orderState is the state-document type of the blob-document scenarios.
type orderState struct {
	Status  string
	Writer  int
	Applied int
}

// docName lays blobs out by type, tenant and id, so the blobs left behind show all three.
func docName(c blobdocs.NameContext) string {
	tenant := c.Tenant
	if tenant == "" {
		tenant = "-"
	}
	return strings.ToLower(c.Type.Name()) + "/" + tenant + "/" + c.ID + ".json"
}

// docsOf registers T as a document of a new registry over the run's blob service.
func docsOf[T any](e *Env, container string, comp blobdocs.Compression) *blobdocs.Documents[T] {
	e.t.Helper()
	r, err := blobdocs.New(e.Blobs, nil)
	if err != nil {
		e.Fatalf("registry: %v", err)
	}
	d, err := blobdocs.Register[T](r, blobdocs.Registration{Container: container, BlobName: docName, Compression: comp})
	if err != nil {
		e.Fatalf("register: %v", err)
	}
	return d
}

// statesOf registers T as a state document of a new registry over the run's blob service.
func statesOf[T any](e *Env, container string) *blobdocs.StateDocuments[T] {
	e.t.Helper()
	r, err := blobdocs.New(e.Blobs, nil)
	if err != nil {
		e.Fatalf("registry: %v", err)
	}
	s, err := blobdocs.RegisterState[T](r, blobdocs.Registration{Container: container, BlobName: docName})
	if err != nil {
		e.Fatalf("register: %v", err)
	}
	return s
}

// docErr renders a blob-document error: the harness's description plus the sentinels of
// this package, and whether the message names the container.
func docErr(err error, container string) string {
	if err == nil {
		return "ok"
	}
	s := describeError(err)
	if errors.Is(err, blobdocs.ErrContainerNotFound) {
		s += " is=container-not-found"
	}
	var de *blobdocs.Error
	if errors.As(err, &de) {
		s += fmt.Sprintf(" op=%s names-container=%v", de.Op, strings.Contains(err.Error(), `"`+container+`"`))
	}
	return s
}

// docIs records err under step and checks that it matches want (nil: no error).
func docIs(e *Env, step string, err error, want error, container string) {
	e.t.Helper()
	e.Observe(step, docErr(err, container))
	if (want == nil) != (err == nil) || want != nil && !errors.Is(err, want) {
		e.Errorf("%s: got %v, want %v", step, err, want)
	}
}

// rawBlob downloads a blob as stored.
func rawBlob(ctx context.Context, e *Env, container, name string) ([]byte, service.BlobProperties, error) {
	b, err := e.Blobs.Download(ctx, container, name, service.Conditions{})
	if err != nil {
		return nil, service.BlobProperties{}, err
	}
	defer b.Body.Close()
	data, err := io.ReadAll(b.Body)
	return data, b.Properties, err
}

func gzipped(data []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func brotlied(data []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// inflated returns a blob's content decoded by its Content-Encoding, as any HTTP client
// would, without this library.
func inflated(data []byte, encoding string) ([]byte, error) {
	switch encoding {
	case "":
		return data, nil
	case "gzip":
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	case "br":
		return io.ReadAll(brotli.NewReader(bytes.NewReader(data)))
	}
	return nil, fmt.Errorf("unexpected encoding %q", encoding)
}

var sampleInvoice = blobInvoice{Number: "INV-7", Lines: []string{"tea", "cake", "ünïcode"}, Total: 12.5}

// blobDocScenarios are the scenarios of package blobdocs: typed documents and conditional
// state documents over the blob service.
func blobDocScenarios() []Scenario {
	return []Scenario{
		{
			// Everything the state documents promise rests on the service honouring
			// If-None-Match: * and If-Match on uploads; check that first, on the raw service.
			Name: "blobdocs/service-honours-conditions", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				p1, err := upload(ctx, e, "s.json", "v1", service.UploadOptions{Mode: service.UploadCreate})
				e.OK("create", err)
				_, err = upload(ctx, e, "s.json", "v1bis", service.UploadOptions{Mode: service.UploadCreate})
				e.Status("create again", err, 409, "BlobAlreadyExists")
				p2, err := upload(ctx, e, "s.json", "v2", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p1.ETag})
				e.OK("update at the version read", err)
				e.Equal("a new version", p1.ETag != p2.ETag, true)
				_, err = upload(ctx, e, "s.json", "v3", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p1.ETag})
				e.Status("update at a stale version", err, 412, "ConditionNotMet")
				e.OK("delete", e.Blobs.DeleteBlob(ctx, e.Container, "s.json", service.Conditions{}))
				_, err = upload(ctx, e, "s.json", "v4", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p2.ETag})
				e.Status("update of a deleted blob", err, 412, "ConditionNotMet")
				_, _, err = read(ctx, e, "s.json", service.Conditions{})
				e.Status("the refused update wrote nothing", err, 404, "BlobNotFound")
				p5, err := upload(ctx, e, "s.json", "v5", service.UploadOptions{Mode: service.UploadCreate})
				e.OK("create after delete", err)
				_, err = upload(ctx, e, "s.json", "v6", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p2.ETag})
				e.Status("update at the version before the delete", err, 412, "ConditionNotMet")
				data, _, err := read(ctx, e, "s.json", service.Conditions{IfMatch: p5.ETag})
				e.OK("read", err)
				e.Equal("content", data, "v5")
			},
		},
		{
			// Azurite creates a missing blob on If-Match: *; the library never sends it.
			Name: "blobdocs/update-refuses-any-version", NoTable: true, Container: true, Deviation: "blob-ifmatch-any-missing",
			Run: func(ctx context.Context, e *Env) {
				_, err := upload(ctx, e, "raw.json", "{}", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: service.ETagAny})
				e.AcceptedByAzurite("raw upload with * to a missing blob", err, 412, "ConditionNotMet")
				s := statesOf[orderState](e, e.Container)
				for _, v := range []string{service.ETagAny, ""} {
					_, err = s.Update(ctx, "o1", &orderState{Status: "paid"}, v)
					docIs(e, fmt.Sprintf("update with version %q", v), err, abstractions.ErrInvalidArgument, e.Container)
				}
				_, _, err = s.One(ctx, "o1")
				docIs(e, "nothing was written", err, abstractions.ErrNotFound, e.Container)
			},
		},
		{
			Name: "blobdocs/round-trip", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				plain, err := json.Marshal(sampleInvoice)
				if err != nil {
					e.Fatalf("marshal: %v", err)
				}
				for _, comp := range []blobdocs.Compression{blobdocs.NoCompression, blobdocs.Gzip, blobdocs.Brotli} {
					step := "compression " + string(comp)
					d := docsOf[blobInvoice](e, e.Container, comp)
					id := "inv-" + string(comp)
					if comp == blobdocs.NoCompression {
						id = "inv-plain"
					}
					v := sampleInvoice
					e.OK(step+": put", d.Put(ctx, id, &v))
					name, err := d.BlobName(id)
					e.OK(step+": name", err)
					data, props, err := rawBlob(ctx, e, e.Container, name)
					e.OK(step+": raw download", err)
					e.Observe(step+": raw properties", props)
					e.Equal(step+": content encoding", props.ContentEncoding, string(comp))
					e.Equal(step+": content type", props.ContentType, "application/json")
					content, err := inflated(data, props.ContentEncoding)
					e.OK(step+": inflate as any client would", err)
					e.Equal(step+": the JSON document", string(content), string(plain))
					e.Equal(step+": compressed bytes differ from the JSON", comp == blobdocs.NoCompression || !bytes.Equal(data, plain), true)
					got, err := d.One(ctx, id)
					e.OK(step+": get", err)
					e.Equal(step+": read back", fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", sampleInvoice))
				}
			},
		},
		{
			Name: "blobdocs/written-compressed-by-another-client", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				plain, err := json.Marshal(sampleInvoice)
				if err != nil {
					e.Fatalf("marshal: %v", err)
				}
				d := docsOf[blobInvoice](e, e.Container, blobdocs.NoCompression)
				for _, tc := range []struct {
					id, encoding string
					data         []byte
					want         error
				}{
					{"by-gzip", "gzip", gzipped(plain), nil},
					{"by-brotli", "br", brotlied(plain), nil},
					{"by-deflate", "deflate", plain, abstractions.ErrNotSupported},
					{"lying-gzip", "gzip", plain, abstractions.ErrIntegrity},
				} {
					name, err := d.BlobName(tc.id)
					e.OK(tc.id+": name", err)
					_, err = e.Blobs.Upload(ctx, e.Container, name, tc.data, service.UploadOptions{ContentType: "application/json", ContentEncoding: tc.encoding})
					e.OK(tc.id+": raw upload", err)
					got, err := d.One(ctx, tc.id)
					docIs(e, tc.id+": get", err, tc.want, e.Container)
					if err == nil {
						e.Equal(tc.id+": read back", fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", sampleInvoice))
					}
				}
			},
		},
		{
			Name: "blobdocs/missing-blob-vs-missing-container", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				d := docsOf[blobInvoice](e, e.Container, blobdocs.NoCompression)
				_, err := d.One(ctx, "never-written")
				docIs(e, "get a missing blob", err, abstractions.ErrNotFound, e.Container)
				docIs(e, "delete a missing blob", d.Delete(ctx, "never-written"), nil, e.Container)
				s := statesOf[orderState](e, e.Container)
				_, _, err = s.One(ctx, "never-written")
				docIs(e, "get a missing state", err, abstractions.ErrNotFound, e.Container)

				missing := "missing-" + e.Suffix
				md := docsOf[blobInvoice](e, missing, blobdocs.Gzip)
				_, err = md.One(ctx, "a")
				docIs(e, "get in a missing container", err, blobdocs.ErrContainerNotFound, missing)
				e.Equal("which is not a missing document", errors.Is(err, abstractions.ErrNotFound), false)
				v := sampleInvoice
				docIs(e, "put in a missing container", md.Put(ctx, "a", &v), blobdocs.ErrContainerNotFound, missing)
				docIs(e, "delete in a missing container", md.Delete(ctx, "a"), blobdocs.ErrContainerNotFound, missing)
				ms := statesOf[orderState](e, missing)
				_, _, err = ms.One(ctx, "a")
				docIs(e, "get a state in a missing container", err, blobdocs.ErrContainerNotFound, missing)
				_, err = ms.Create(ctx, "a", &orderState{})
				docIs(e, "create a state in a missing container", err, blobdocs.ErrContainerNotFound, missing)
			},
		},
		{
			Name: "blobdocs/last-writer-wins", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				d := docsOf[blobInvoice](e, e.Container, blobdocs.Gzip)
				e.OK("put", d.Put(ctx, "a", &blobInvoice{Number: "first"}))
				e.OK("put over it", d.Put(ctx, "a", &blobInvoice{Number: "second"}))
				got, err := d.One(ctx, "a")
				e.OK("get", err)
				e.Equal("the last write", got.Number, "second")

				const writers = 16
				hammer(e, writers, func(i int) error {
					return d.Put(ctx, "b", &blobInvoice{Number: fmt.Sprint("writer-", i)})
				})
				e.Observe("16 concurrent puts", "all ok")
				got, err = d.One(ctx, "b")
				e.OK("get after the race", err)
				var n int
				_, scanErr := fmt.Sscanf(got.Number, "writer-%d", &n)
				e.Equal("one writer's whole document", scanErr == nil && n >= 0 && n < writers, true)
				e.OK("put the winner again", d.Put(ctx, "b", &blobInvoice{Number: "final"}))

				e.OK("delete", d.Delete(ctx, "a"))
				e.OK("delete again", d.Delete(ctx, "a"))
				_, err = d.One(ctx, "a")
				docIs(e, "get after delete", err, abstractions.ErrNotFound, e.Container)

				t := d.WithTenant("acme")
				e.OK("put for a tenant", t.Put(ctx, "b", &blobInvoice{Number: "acme's"}))
				got, err = d.One(ctx, "b")
				e.OK("get without tenant", err)
				e.Equal("tenants do not share documents", got.Number, "final")
			},
		},
		{
			Name: "blobdocs/state-create-twice", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				s := statesOf[orderState](e, e.Container)
				v1, err := s.Create(ctx, "o1", &orderState{Status: "placed", Writer: 1})
				e.OK("create", err)
				_, err = s.Create(ctx, "o1", &orderState{Status: "placed", Writer: 2})
				docIs(e, "create again", err, abstractions.ErrConcurrencyConflict, e.Container)
				got, version, err := s.One(ctx, "o1")
				e.OK("get", err)
				e.Equal("the first create stands", got.Writer, 1)
				e.Equal("at its version", version == v1, true)
			},
		},
		{
			Name: "blobdocs/state-update-race-16", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				s := statesOf[orderState](e, e.Container)
				_, err := s.Create(ctx, "o1", &orderState{Status: "placed", Writer: -1})
				e.OK("create", err)
				const racers = 16
				var last string
				for round := 1; round <= 3; round++ {
					step := fmt.Sprint("round ", round)
					_, version, err := s.One(ctx, "o1")
					e.OK(step+": get", err)
					var won, lost atomic.Int64
					var mu sync.Mutex
					winner := -1
					hammer(e, racers, func(i int) error {
						_, err := s.Update(ctx, "o1", &orderState{Status: "paid", Writer: i, Applied: round}, version)
						switch {
						case err == nil:
							won.Add(1)
							mu.Lock()
							winner = i
							mu.Unlock()
							return nil
						case errors.Is(err, abstractions.ErrConcurrencyConflict):
							lost.Add(1)
							return nil
						}
						return err
					})
					e.Equal(step+": winners", won.Load(), int64(1))
					e.Equal(step+": conflicts", lost.Load(), int64(racers-1))
					got, now, err := s.One(ctx, "o1")
					e.OK(step+": get after", err)
					e.Equal(step+": the winner's document is stored", got.Writer == winner && got.Applied == round, true)
					e.Equal(step+": at a new version", now != version, true)
					last = now
				}
				// Which racer won differs from run to run; settle the blob left behind.
				_, err = s.Update(ctx, "o1", &orderState{Status: "settled"}, last)
				e.OK("settle", err)
			},
		},
		{
			Name: "blobdocs/state-mutate-16", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				s := statesOf[orderState](e, e.Container)
				const workers = 16
				var retried atomic.Int64
				hammer(e, workers, func(int) error {
					for {
						_, _, err := s.MutateOrCreate(ctx, "counter", func() *orderState { return &orderState{Status: "counting"} },
							func(o *orderState) error { o.Applied++; return nil }, nil)
						if errors.Is(err, abstractions.ErrConcurrencyConflict) {
							retried.Add(1)
							continue
						}
						return err
					}
				})
				got, _, err := s.One(ctx, "counter")
				e.OK("get", err)
				e.Equal("every change applied once", got.Applied, workers)
				_, _, err = s.Mutate(ctx, "absent", func(o *orderState) error { o.Applied++; return nil }, nil)
				docIs(e, "mutate a missing document", err, abstractions.ErrNotFound, e.Container)
				e.t.Logf("[%s] 16 MutateOrCreate: the attempt budget ran out %d times", e.Backend, retried.Load())
			},
		},
		{
			Name: "blobdocs/state-update-after-delete", NoTable: true, Container: true,
			Run: func(ctx context.Context, e *Env) {
				s := statesOf[orderState](e, e.Container)
				_, err := s.Create(ctx, "o1", &orderState{Status: "placed"})
				e.OK("create", err)
				got, version, err := s.One(ctx, "o1")
				e.OK("get", err)
				e.OK("another writer completes it", s.Delete(ctx, "o1", version))
				got.Status = "paid"
				_, err = s.Update(ctx, "o1", got, version)
				docIs(e, "update after delete", err, abstractions.ErrConcurrencyConflict, e.Container)
				_, _, err = s.One(ctx, "o1")
				docIs(e, "not resurrected", err, abstractions.ErrNotFound, e.Container)

				_, err = s.Create(ctx, "o2", &orderState{Status: "placed"})
				e.OK("create o2", err)
				_, v2, err := s.One(ctx, "o2")
				e.OK("get o2", err)
				_, err = s.Update(ctx, "o2", &orderState{Status: "paid"}, v2)
				e.OK("update o2", err)
				docIs(e, "delete at a stale version", s.Delete(ctx, "o2", v2), abstractions.ErrConcurrencyConflict, e.Container)
			},
		},
		{
			// Completing a saga twice: the second conditional delete finds no blob. Azure
			// answers 404 BlobNotFound, Azurite 412; both are a lost race to the caller.
			Name: "blobdocs/state-delete-twice", NoTable: true, Container: true, Deviation: "blob-conditional-missing",
			Run: func(ctx context.Context, e *Env) {
				s := statesOf[orderState](e, e.Container)
				_, err := s.Create(ctx, "o1", &orderState{Status: "shipped"})
				e.OK("create", err)
				_, version, err := s.One(ctx, "o1")
				e.OK("get", err)
				e.OK("complete", s.Delete(ctx, "o1", version))
				err = s.Delete(ctx, "o1", version)
				status, code := 404, "BlobNotFound"
				if e.OnAzurite() {
					status, code = 412, "ConditionNotMet"
				}
				e.Status("complete again: the service's answer", err, status, code)
				docIs(e, "complete again", err, abstractions.ErrConcurrencyConflict, e.Container)
			},
		},
	}
}
