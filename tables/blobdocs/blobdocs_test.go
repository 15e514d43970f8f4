package blobdocs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The behaviour against the real services (conditions, missing containers, races) is in
// the fidelity module's blob-document scenarios, which run on Azurite and on the memory
// service. These tests cover what this package decides on its own, over a scripted
// service that records what it was sent.

type invoice struct {
	Number string
	Lines  []string
	Total  float64
}

type stored struct {
	data  []byte
	props service.BlobProperties
	md    map[string]string
}

// script is a blob service for unit tests: it keeps uploaded blobs in a map, applies the
// upload and delete conditions as the service does (a conditional delete of a missing blob
// answers 404, as on Azure), counts calls, and answers with the error its hooks return, if
// any.
type script struct {
	service.Blobs // not scripted: calling anything else panics

	mu       sync.Mutex
	blobs    map[string]stored
	seq      int
	calls    int
	last     service.UploadOptions
	lastCond service.Conditions
	upload   func(opts service.UploadOptions) error
	download func() error
	del      func(cond service.Conditions) error
}

func newScript() *script { return &script{blobs: map[string]stored{}} }

func (s *script) Upload(_ context.Context, c, name string, data []byte, opts service.UploadOptions) (service.BlobProperties, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.last = opts
	if s.upload != nil {
		if err := s.upload(opts); err != nil {
			return service.BlobProperties{}, err
		}
	}
	old, exists := s.blobs[c+"/"+name]
	switch {
	case opts.Mode == service.UploadCreate && exists:
		return service.BlobProperties{}, &abstractions.StatusError{StatusCode: 409, ErrorCode: "BlobAlreadyExists", Message: "The specified blob already exists."}
	case opts.Mode == service.UploadIfMatch && (!exists || old.props.ETag != opts.IfMatch):
		return service.BlobProperties{}, &abstractions.StatusError{StatusCode: 412, ErrorCode: "ConditionNotMet", Message: "The condition is not met."}
	}
	s.seq++
	p := service.BlobProperties{ETag: fmt.Sprintf(`"v%d"`, s.seq), ContentLength: int64(len(data)),
		ContentType: opts.ContentType, ContentEncoding: opts.ContentEncoding}
	s.blobs[c+"/"+name] = stored{bytes.Clone(data), p, maps.Clone(opts.Metadata)}
	return p, nil
}

func (s *script) Download(_ context.Context, c, name string, cond service.Conditions) (*service.Blob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.download != nil {
		if err := s.download(); err != nil {
			return nil, err
		}
	}
	b, ok := s.blobs[c+"/"+name]
	if !ok {
		return nil, &abstractions.StatusError{StatusCode: 404, ErrorCode: "BlobNotFound", Message: "The specified blob does not exist."}
	}
	return &service.Blob{Properties: b.props, Metadata: maps.Clone(b.md), Body: io.NopCloser(bytes.NewReader(b.data))}, nil
}

func (s *script) DeleteBlob(_ context.Context, c, name string, cond service.Conditions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.lastCond = cond
	if s.del != nil {
		if err := s.del(cond); err != nil {
			return err
		}
	}
	b, ok := s.blobs[c+"/"+name]
	if !ok {
		return &abstractions.StatusError{StatusCode: 404, ErrorCode: "BlobNotFound", Message: "The specified blob does not exist."}
	}
	if cond.IfMatch != "" && cond.IfMatch != b.props.ETag {
		return &abstractions.StatusError{StatusCode: 412, ErrorCode: "ConditionNotMet", Message: "The condition is not met."}
	}
	delete(s.blobs, c+"/"+name)
	return nil
}

func (s *script) put(c, name string, data []byte, enc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.blobs[c+"/"+name] = stored{data, service.BlobProperties{ETag: fmt.Sprintf(`"v%d"`, s.seq), ContentLength: int64(len(data)), ContentEncoding: enc}, nil}
}

func (s *script) raw(c, name string) stored {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blobs[c+"/"+name]
}

func (s *script) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func byID(c NameContext) string { return c.Tenant + "/" + c.ID + ".json" }

func newRegistry(t *testing.T, s *script, opts *Options) *Registry {
	t.Helper()
	r, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		blobs service.Blobs
		opts  *Options
	}{
		{"nil service", nil, nil},
		{"negative max size", newScript(), &Options{MaxSize: -1}},
	} {
		if _, err := New(tc.blobs, tc.opts); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("%s: got %v, want ErrInvalidArgument", tc.name, err)
		}
	}
}

func TestRegisterRefuses(t *testing.T) {
	r := newRegistry(t, newScript(), nil)
	if _, err := Register[invoice](r, Registration{Container: "docs", BlobName: byID}); err != nil {
		t.Fatal(err)
	}
	type other struct{ N int }
	for _, tc := range []struct {
		name string
		reg  func() error
		want string
	}{
		{"nil registry", func() error {
			_, err := Register[other](nil, Registration{Container: "docs", BlobName: byID})
			return err
		}, "registry is nil"},
		{"no container", func() error { _, err := Register[other](r, Registration{BlobName: byID}); return err }, "both Container and BlobName"},
		{"no blob name", func() error { _, err := RegisterState[other](r, Registration{Container: "docs"}); return err }, "both Container and BlobName"},
		{"upper-case container", func() error {
			_, err := Register[other](r, Registration{Container: "Docs", BlobName: byID})
			return err
		}, `"Docs" is not valid`},
		{"short container", func() error { _, err := Register[other](r, Registration{Container: "ab", BlobName: byID}); return err }, "is not valid"},
		{"double hyphen", func() error {
			_, err := Register[other](r, Registration{Container: "a--b", BlobName: byID})
			return err
		}, "is not valid"},
		{"trailing hyphen", func() error {
			_, err := Register[other](r, Registration{Container: "abc-", BlobName: byID})
			return err
		}, "is not valid"},
		{"unknown compression", func() error {
			_, err := Register[other](r, Registration{Container: "docs", BlobName: byID, Compression: "zstd"})
			return err
		}, `unknown Compression "zstd"`},
		{"twice as a document", func() error {
			_, err := Register[invoice](r, Registration{Container: "docs2", BlobName: byID})
			return err
		}, "already registered as a document"},
		{"a document as a state", func() error {
			_, err := RegisterState[invoice](r, Registration{Container: "docs2", BlobName: byID})
			return err
		}, "already registered as a document"},
	} {
		err := tc.reg()
		if !errors.Is(err, abstractions.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("%s: got %v, want ErrInvalidArgument saying %q", tc.name, err, tc.want)
		}
	}
	// A refused registration registers nothing: the type can still be registered.
	if _, err := RegisterState[other](r, Registration{Container: "docs", BlobName: byID}); err != nil {
		t.Fatalf("registering after refusals: %v", err)
	}
	if _, err := Register[other](r, Registration{Container: "docs", BlobName: byID}); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Fatalf("a state type registered as a document: got %v", err)
	}
	// Another registry is another set.
	if _, err := Register[invoice](newRegistry(t, newScript(), nil), Registration{Container: "docs", BlobName: byID}); err != nil {
		t.Fatalf("the same type in another registry: %v", err)
	}
}

func TestRegisterConcurrently(t *testing.T) {
	r := newRegistry(t, newScript(), nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 8 {
		wg.Go(func() {
			if _, err := Register[invoice](r, Registration{Container: "docs", BlobName: byID}); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ok != 1 {
		t.Fatalf("%d of 8 concurrent registrations of one type succeeded, want 1", ok)
	}
}

func TestBlobNames(t *testing.T) {
	s := newScript()
	r := newRegistry(t, s, nil)
	var seen NameContext
	names := map[string]string{"long": strings.Repeat("x", 1025), "deep": strings.Repeat("a/", 254) + "z", "bad": "\xff", "empty": "",
		"254 segments": strings.Repeat("a/", 253) + "z", "1024 characters": strings.Repeat("é", 1024)}
	docs, err := Register[invoice](r, Registration{Container: "docs", BlobName: func(c NameContext) string {
		seen = c
		if n, ok := names[c.ID]; ok {
			return n
		}
		return "inv/" + c.Tenant + "/" + c.ID
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tenant, id, want string }{{"", "a1", "inv//a1"}, {"acme", "a1", "inv/acme/a1"}} {
		got, err := docs.WithTenant(tc.tenant).BlobName(tc.id)
		if err != nil || got != tc.want {
			t.Errorf("BlobName(%q) for tenant %q = %q, %v; want %q", tc.id, tc.tenant, got, err, tc.want)
		}
		want := NameContext{Type: reflect.TypeFor[invoice](), ID: tc.id, Tenant: tc.tenant}
		if seen != want {
			t.Errorf("the name function saw %+v, want %+v", seen, want)
		}
	}
	for _, id := range []string{"254 segments", "1024 characters"} {
		if _, err := docs.BlobName(id); err != nil {
			t.Errorf("a name of %s: %v", id, err)
		}
	}
	for _, id := range []string{"", "\xfe", "long", "deep", "bad", "empty"} {
		if _, err := docs.BlobName(id); !errors.Is(err, abstractions.ErrInvalidKey) {
			t.Errorf("BlobName(%q): got %v, want ErrInvalidKey", id, err)
		}
		if err := docs.Put(context.Background(), id, &invoice{}); !errors.Is(err, abstractions.ErrInvalidKey) {
			t.Errorf("Put(%q): got %v, want ErrInvalidKey", id, err)
		}
	}
	if n := s.callCount(); n != 0 {
		t.Fatalf("refused calls sent %d requests", n)
	}
}

func TestRoundTripAndContentEncoding(t *testing.T) {
	ctx := context.Background()
	v := &invoice{Number: "A-1", Lines: []string{"tea", "cake"}, Total: 4.5}
	plain, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		comp  Compression
		magic []byte
	}{{NoCompression, []byte(`{"Number"`)}, {Gzip, []byte{0x1f, 0x8b}}, {Brotli, nil}} {
		t.Run(string(tc.comp)+"-", func(t *testing.T) {
			s := newScript()
			docs, err := Register[invoice](newRegistry(t, s, nil), Registration{Container: "docs", BlobName: byID, Compression: tc.comp})
			if err != nil {
				t.Fatal(err)
			}
			if err := docs.Put(ctx, "a1", v); err != nil {
				t.Fatal(err)
			}
			raw := s.raw("docs", "/a1.json")
			if raw.props.ContentEncoding != string(tc.comp) || raw.props.ContentType != "application/json" {
				t.Errorf("stored with encoding %q type %q, want %q application/json", raw.props.ContentEncoding, raw.props.ContentType, tc.comp)
			}
			inflated, err := inflate(raw.data, string(tc.comp), 1<<20)
			if err != nil || !bytes.Equal(inflated, plain) || !bytes.HasPrefix(raw.data, tc.magic) ||
				tc.comp != NoCompression && bytes.Equal(raw.data, plain) {
				t.Errorf("stored bytes %x are not %q encoded as %q (%v)", raw.data, plain, tc.comp, err)
			}
			got, err := docs.One(ctx, "a1")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, v) {
				t.Errorf("read back %+v, want %+v", got, v)
			}
		})
	}
}

// A read honours the blob's Content-Encoding, whatever the registration writes.
func TestReadHonoursContentEncoding(t *testing.T) {
	ctx := context.Background()
	plain := []byte(`{"Number":"B-2","Total":1}`)
	gz, err := Gzip.compress(plain)
	if err != nil {
		t.Fatal(err)
	}
	br, err := Brotli.compress(plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, enc string
		data      []byte
		want      error
	}{
		{"none", "", plain, nil},
		{"identity", "identity", plain, nil},
		{"gzip", "gzip", gz, nil},
		{"x-gzip upper case", " X-GZIP ", gz, nil},
		{"br", "br", br, nil},
		{"deflate", "deflate", plain, abstractions.ErrNotSupported},
		{"a list", "gzip, br", gz, abstractions.ErrNotSupported},
		{"not gzip", "gzip", plain, abstractions.ErrIntegrity},
		{"truncated gzip", "gzip", gz[:len(gz)-6], abstractions.ErrIntegrity},
		{"not brotli", "br", plain, abstractions.ErrIntegrity},
		{"not json", "", []byte("<xml/>"), abstractions.ErrIntegrity},
		{"json null", "", []byte(" null\n"), abstractions.ErrNotFound},
	} {
		s := newScript()
		docs, err := Register[invoice](newRegistry(t, s, nil), Registration{Container: "docs", BlobName: byID, Compression: Brotli})
		if err != nil {
			t.Fatal(err)
		}
		s.put("docs", "/b2.json", tc.data, tc.enc)
		got, err := docs.One(ctx, "b2")
		switch {
		case tc.want == nil && (err != nil || got.Number != "B-2"):
			t.Errorf("%s: got %+v, %v", tc.name, got, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		var de *Error
		if tc.want != nil && (!errors.As(err, &de) || de.Container != "docs" || de.Blob != "/b2.json") {
			t.Errorf("%s: the error does not name the blob: %#v", tc.name, err)
		}
	}
}

func TestMaxSize(t *testing.T) {
	ctx := context.Background()
	s := newScript()
	docs, err := Register[invoice](newRegistry(t, s, &Options{MaxSize: 64}), Registration{Container: "docs", BlobName: byID, Compression: Gzip})
	if err != nil {
		t.Fatal(err)
	}
	if err := docs.Put(ctx, "big", &invoice{Number: strings.Repeat("n", 64)}); !errors.Is(err, abstractions.ErrOversizedValue) {
		t.Fatalf("put above the limit: %v", err)
	}
	if n := s.callCount(); n != 0 {
		t.Fatalf("the refused put sent %d requests", n)
	}
	// A small gzip blob that inflates far beyond the limit is refused while inflating.
	bomb, err := Gzip.compress(bytes.Repeat([]byte(" "), 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	s.put("docs", "/bomb.json", bomb, "gzip")
	roomy, err := Register[invoice](newRegistry(t, s, &Options{MaxSize: 4096}), Registration{Container: "docs", BlobName: byID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := roomy.One(ctx, "bomb"); len(bomb) > 4096 || !errors.Is(err, abstractions.ErrOversizedValue) ||
		!strings.Contains(err.Error(), "the document is more than 4096 bytes once inflated, the registry's limit (Options.MaxSize)") {
		t.Fatalf("reading a gzip bomb of %d bytes: %v", len(bomb), err)
	}
	if _, err := docs.One(ctx, "bomb"); !errors.Is(err, abstractions.ErrOversizedValue) || !strings.Contains(err.Error(), "the stored blob is 1") {
		t.Fatalf("reading a compressed blob above the limit: %v", err)
	}
	s.put("docs", "/large.json", bytes.Repeat([]byte(" "), 65), "")
	if _, err := docs.One(ctx, "large"); !errors.Is(err, abstractions.ErrOversizedValue) || !strings.Contains(err.Error(), "the stored blob is 65 bytes, more than 64, the registry's limit") {
		t.Fatalf("reading a blob above the limit: %v", err)
	}
	// A blob whose length the service did not report is cut off at the limit.
	s.put("docs", "/unsized.json", bytes.Repeat([]byte(" "), 65), "")
	unsized := s.blobs["docs//unsized.json"]
	unsized.props.ContentLength = 0
	s.blobs["docs//unsized.json"] = unsized
	if _, err := docs.One(ctx, "unsized"); !errors.Is(err, abstractions.ErrOversizedValue) || !strings.Contains(err.Error(), "the stored blob is more than 64 bytes, the registry's limit") {
		t.Fatalf("reading an unsized blob above the limit: %v", err)
	}
}

func TestTranslate(t *testing.T) {
	deadline, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-deadline.Done()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"missing container", &abstractions.StatusError{StatusCode: 404, ErrorCode: "ContainerNotFound", Message: ""}, ErrContainerNotFound},
		{"missing blob", &abstractions.StatusError{StatusCode: 404, ErrorCode: "BlobNotFound", Message: ""}, abstractions.ErrNotFound},
		{"exists", &abstractions.StatusError{StatusCode: 409, ErrorCode: "BlobAlreadyExists", Message: ""}, abstractions.ErrConcurrencyConflict},
		{"condition", &abstractions.StatusError{StatusCode: 412, ErrorCode: "ConditionNotMet", Message: ""}, abstractions.ErrConcurrencyConflict},
		{"server", &abstractions.StatusError{StatusCode: 503, ErrorCode: "ServerBusy", Message: ""}, abstractions.ErrUnavailable},
		{"refused", &abstractions.StatusError{StatusCode: 403, ErrorCode: "AuthorizationFailure", Message: ""}, nil},
		{"bad request", &abstractions.StatusError{StatusCode: 400, ErrorCode: "InvalidUri", Message: ""}, nil},
		{"cancelled", fmt.Errorf("upload: %w", context.Canceled), context.Canceled},
		{"deadline", fmt.Errorf("upload: %w", deadline.Err()), abstractions.ErrUnavailable},
		{"transport", errors.New("dial tcp: connection refused"), abstractions.ErrUnavailable},
	} {
		for _, r := range []callerr.Request{callerr.Read, callerr.Write} {
			err := translate(r, "get", "docs", "a.json", tc.err)
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("%s: got %#v, want kind %v wrapping the cause", tc.name, err, tc.want)
				continue
			}
			if tc.want == ErrContainerNotFound && (errors.Is(err, abstractions.ErrNotFound) || !strings.Contains(err.Error(), `"docs" does not exist`)) {
				t.Errorf("%s: %v must name the container and not read as a missing document", tc.name, err)
			}
			// Only a write left without an answer may have been applied.
			unknown := r == callerr.Write && (tc.want == abstractions.ErrUnavailable || tc.want == context.Canceled)
			if says := strings.Contains(e.Message, "may or may not have been applied"); says != unknown {
				t.Errorf("%s (write %v): the message %q says the request may have been applied: %v, want %v", tc.name, r, e.Message, says, unknown)
			}
		}
	}
	if translate(callerr.Read, "get", "docs", "a", nil) != nil {
		t.Error("translate(nil) is not nil")
	}
}

func TestDocumentsCalls(t *testing.T) {
	ctx := context.Background()
	s := newScript()
	docs, err := Register[invoice](newRegistry(t, s, nil), Registration{Container: "docs", BlobName: byID})
	if err != nil {
		t.Fatal(err)
	}
	if err := docs.Put(ctx, "a", nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("put nil: %v", err)
	}
	if err := docs.Put(ctx, "a", &invoice{Number: "1"}); err != nil || s.last.Mode != service.UploadOverwrite {
		t.Errorf("put: %v, mode %v; want an unconditional upload", err, s.last.Mode)
	}
	if _, err := docs.One(ctx, "missing"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Errorf("get missing: %v", err)
	}
	for range 2 {
		if err := docs.Delete(ctx, "a"); err != nil || s.lastCond != (service.Conditions{}) {
			t.Errorf("delete: %v, conditions %+v; want an unconditional, idempotent delete", err, s.lastCond)
		}
	}
	s.download = func() error {
		return &abstractions.StatusError{StatusCode: 404, ErrorCode: "ContainerNotFound", Message: ""}
	}
	s.del = func(service.Conditions) error {
		return &abstractions.StatusError{StatusCode: 404, ErrorCode: "ContainerNotFound", Message: ""}
	}
	if _, err := docs.One(ctx, "a"); !errors.Is(err, ErrContainerNotFound) || errors.Is(err, abstractions.ErrNotFound) {
		t.Errorf("get in a missing container: %v", err)
	}
	if err := docs.Delete(ctx, "a"); !errors.Is(err, ErrContainerNotFound) {
		t.Errorf("delete in a missing container: %v", err)
	}
}

func TestStateCalls(t *testing.T) {
	ctx := context.Background()
	s := newScript()
	states, err := RegisterState[invoice](newRegistry(t, s, nil), Registration{Container: "sagas", BlobName: byID})
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"", "*", "v1", `"v1`} {
		if _, err := states.Update(ctx, "a", &invoice{}, version); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("update with version %q: %v", version, err)
		}
		if err := states.Delete(ctx, "a", version); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("delete with version %q: %v", version, err)
		}
	}
	if _, err := states.Create(ctx, "a", nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("create nil: %v", err)
	}
	if _, err := states.Update(ctx, "a", nil, `"v1"`); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("update nil: %v", err)
	}
	if n := s.callCount(); n != 0 {
		t.Fatalf("refused calls sent %d requests", n)
	}

	v1, err := states.Create(ctx, "a", &invoice{Number: "1"})
	if err != nil || s.last.Mode != service.UploadCreate {
		t.Fatalf("create: %v, mode %v", err, s.last.Mode)
	}
	got, version, err := states.One(ctx, "a")
	if err != nil || version != v1 || got.Number != "1" {
		t.Fatalf("get: %+v %q %v, want version %q", got, version, err, v1)
	}
	if _, err := states.Update(ctx, "a", got, version); err != nil || s.last.Mode != service.UploadIfMatch || s.last.IfMatch != v1 {
		t.Fatalf("update: %v, sent %+v", err, s.last)
	}
	// Azure answers a conditional delete of a missing blob with 404: a lost race all the same.
	if err := states.Delete(ctx, "gone", `"v9"`); !errors.Is(err, abstractions.ErrConcurrencyConflict) || s.lastCond.IfMatch != `"v9"` {
		t.Errorf("delete of a missing document: %v (sent %+v)", err, s.lastCond)
	}
	s.del = func(service.Conditions) error {
		return &abstractions.StatusError{StatusCode: 412, ErrorCode: "ConditionNotMet", Message: ""}
	}
	if err := states.Delete(ctx, "a", v1); !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		t.Errorf("delete of a changed document: %v", err)
	}
	s.upload = func(service.UploadOptions) error {
		return &abstractions.StatusError{StatusCode: 409, ErrorCode: "BlobAlreadyExists", Message: ""}
	}
	if _, err := states.Create(ctx, "a", got); !errors.Is(err, abstractions.ErrConcurrencyConflict) {
		t.Errorf("create over an existing document: %v", err)
	}
}

func TestMutate(t *testing.T) {
	ctx := context.Background()
	noWait := &abstractions.RetryOptions{Attempts: 4, Backoff: -1}
	bump := func(v *invoice) error { v.Total++; return nil }
	newInv := func() *invoice { return &invoice{Number: "new"} }

	t.Run("applies and writes on condition", func(t *testing.T) {
		s := newScript()
		states, _ := RegisterState[invoice](newRegistry(t, s, nil), Registration{Container: "sagas", BlobName: byID})
		v1, _ := states.Create(ctx, "a", &invoice{Total: 1})
		got, version, err := states.Mutate(ctx, "a", bump, nil)
		if err != nil || got.Total != 2 || version == v1 || s.last.IfMatch != v1 {
			t.Fatalf("mutate: %+v %q %v (sent %+v)", got, version, err, s.last)
		}
	})
	t.Run("missing", func(t *testing.T) {
		states, _ := RegisterState[invoice](newRegistry(t, newScript(), nil), Registration{Container: "sagas", BlobName: byID})
		if _, _, err := states.Mutate(ctx, "a", bump, nil); !errors.Is(err, abstractions.ErrNotFound) {
			t.Fatalf("mutate of a missing document: %v", err)
		}
	})
	t.Run("every attempt lost", func(t *testing.T) {
		s := newScript()
		states, _ := RegisterState[invoice](newRegistry(t, s, nil), Registration{Container: "sagas", BlobName: byID})
		states.Create(ctx, "a", &invoice{})
		var applied int
		s.upload = func(service.UploadOptions) error {
			return &abstractions.StatusError{StatusCode: 412, ErrorCode: "ConditionNotMet", Message: ""}
		}
		_, _, err := states.Mutate(ctx, "a", func(v *invoice) error { applied++; return nil }, noWait)
		if !errors.Is(err, abstractions.ErrConcurrencyConflict) || applied != 4 || !strings.Contains(err.Error(), "4 attempts") {
			t.Fatalf("mutate losing every race: %v after %d applications", err, applied)
		}
	})
	t.Run("mutate error ends the call", func(t *testing.T) {
		s := newScript()
		states, _ := RegisterState[invoice](newRegistry(t, s, nil), Registration{Container: "sagas", BlobName: byID})
		states.Create(ctx, "a", &invoice{})
		before := s.callCount()
		stop := errors.New("not now")
		if _, _, err := states.Mutate(ctx, "a", func(*invoice) error { return stop }, nil); err != stop {
			t.Fatalf("got %v, want the mutate function's error", err)
		}
		if s.callCount() != before+1 {
			t.Fatalf("a refused change sent %d requests, want only the read", s.callCount()-before)
		}
	})
	t.Run("create, losing once to another creator", func(t *testing.T) {
		s := newScript()
		states, _ := RegisterState[invoice](newRegistry(t, s, nil), Registration{Container: "sagas", BlobName: byID})
		s.upload = func(o service.UploadOptions) error {
			s.upload = nil
			s.seq++
			s.blobs["sagas//a.json"] = stored{[]byte(`{"Number":"theirs","Total":10}`), service.BlobProperties{ETag: fmt.Sprintf(`"v%d"`, s.seq)}, nil}
			return &abstractions.StatusError{StatusCode: 409, ErrorCode: "BlobAlreadyExists"}
		}
		got, _, err := states.MutateOrCreate(ctx, "a", newInv, bump, noWait)
		if err != nil || got.Number != "theirs" || got.Total != 11 {
			t.Fatalf("mutate or create: %+v, %v; want the change applied to the winner's document", got, err)
		}
		got, _, err = states.MutateOrCreate(ctx, "b", newInv, bump, noWait)
		if err != nil || got.Number != "new" || got.Total != 1 || s.last.Mode != service.UploadCreate {
			t.Fatalf("mutate or create of a new document: %+v, %v (sent %+v)", got, err, s.last)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		states, _ := RegisterState[invoice](newRegistry(t, newScript(), nil), Registration{Container: "sagas", BlobName: byID})
		for name, call := range map[string]func() error{
			"nil mutate": func() error { _, _, err := states.Mutate(ctx, "a", nil, nil); return err },
			"nil create": func() error { _, _, err := states.MutateOrCreate(ctx, "a", nil, bump, nil); return err },
			"create returns nil": func() error {
				_, _, err := states.MutateOrCreate(ctx, "a", func() *invoice { return nil }, bump, nil)
				return err
			},
		} {
			if err := call(); !errors.Is(err, abstractions.ErrInvalidArgument) {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
	t.Run("context ends the backoff", func(t *testing.T) {
		s := newScript()
		states, _ := RegisterState[invoice](newRegistry(t, s, nil), Registration{Container: "sagas", BlobName: byID})
		states.Create(ctx, "a", &invoice{})
		cctx, cancel := context.WithCancel(ctx)
		s.upload = func(service.UploadOptions) error {
			cancel()
			return &abstractions.StatusError{StatusCode: 412, ErrorCode: "ConditionNotMet", Message: ""}
		}
		if _, _, err := states.Mutate(cctx, "a", bump, &abstractions.RetryOptions{Attempts: 3, Backoff: 1 << 40}); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
}

// A custom serializer replaces JSON, compression stays around it, and its ErrNotFound is a
// missing document.
type upper struct{}

func (upper) ContentType() string { return "text/plain" }
func (upper) Marshal(v any) ([]byte, error) {
	return []byte(strings.ToUpper(v.(*invoice).Number)), nil
}
func (upper) Unmarshal(data []byte, v any) error {
	if string(data) == "TOMBSTONE" {
		return fmt.Errorf("deleted: %w", abstractions.ErrNotFound)
	}
	v.(*invoice).Number = string(data)
	return nil
}

func TestCustomSerializer(t *testing.T) {
	ctx := context.Background()
	s := newScript()
	r := newRegistry(t, s, &Options{Serializer: upper{}})
	docs, err := Register[invoice](r, Registration{Container: "docs", BlobName: byID, Compression: Gzip})
	if err != nil {
		t.Fatal(err)
	}
	if err := docs.Put(ctx, "a", &invoice{Number: "abc"}); err != nil {
		t.Fatal(err)
	}
	if got, err := docs.One(ctx, "a"); err != nil || got.Number != "ABC" || s.raw("docs", "/a.json").props.ContentType != "text/plain" {
		t.Fatalf("round trip through the registry's serializer: %+v %v", got, err)
	}
	s.put("docs", "/t.json", []byte("TOMBSTONE"), "")
	if _, err := docs.One(ctx, "t"); !errors.Is(err, abstractions.ErrNotFound) {
		t.Fatalf("a serializer's not-found: %v", err)
	}
	type other struct{ N chan int }
	odocs, err := Register[other](r, Registration{Container: "docs", BlobName: byID, Serializer: JSON{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := odocs.Put(ctx, "o", &other{}); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Fatalf("a document JSON cannot encode: %v", err)
	}
}
