package memservice

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

func newContainer(t *testing.T) (*Service, *clock) {
	t.Helper()
	c := &clock{t: t0}
	s := New(WithClock(c.now))
	if err := s.CreateContainer(context.Background(), "box"); err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestContainerNames(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		ok   bool
	}{
		{"abc", true},
		{"a-b-c", true},
		{"123", true},
		{strings.Repeat("a", 63), true},
		{"ab", false},
		{strings.Repeat("a", 64), false},
		{"Abc", false},
		{"a--b", false},
		{"-ab", false},
		{"ab-", false},
		{"a_b", false},
		{"a.b", false},
		{"", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			err := s.CreateContainer(ctx, tc.name)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantStatus(t, err, http.StatusBadRequest, "InvalidResourceName")
		})
	}
}

func TestContainers(t *testing.T) {
	ctx := context.Background()
	s, _ := newContainer(t)
	wantStatus(t, s.CreateContainer(ctx, "box"), http.StatusConflict, "ContainerAlreadyExists")
	if _, err := s.Upload(ctx, "box", "a", []byte("x"), service.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteContainer(ctx, "box"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.DeleteContainer(ctx, "box"), http.StatusNotFound, "ContainerNotFound")
	_, err := s.Upload(ctx, "box", "a", nil, service.UploadOptions{})
	wantStatus(t, err, http.StatusNotFound, "ContainerNotFound")
	_, err = s.Download(ctx, "box", "a", service.Conditions{})
	wantStatus(t, err, http.StatusNotFound, "ContainerNotFound")
	wantStatus(t, s.DeleteBlob(ctx, "box", "a", service.Conditions{}), http.StatusNotFound, "ContainerNotFound")
	_, err = s.List(ctx, "box", service.ListOptions{})
	wantStatus(t, err, http.StatusNotFound, "ContainerNotFound")
	// The blobs went with the container.
	if err := s.CreateContainer(ctx, "box"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Download(ctx, "box", "a", service.Conditions{})
	wantStatus(t, err, http.StatusNotFound, "BlobNotFound")
}

func read(t *testing.T, s *Service, name string, cond service.Conditions) (string, service.BlobProperties, error) {
	t.Helper()
	b, err := s.Download(context.Background(), "box", name, cond)
	if err != nil {
		return "", service.BlobProperties{}, err
	}
	defer b.Body.Close()
	data, err := io.ReadAll(b.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), b.Properties, nil
}

var blobETagShape = regexp.MustCompile(`^"0x[0-9A-F]{15}"$`)

func TestUploadDownload(t *testing.T) {
	ctx := context.Background()
	s, c := newContainer(t)
	data := []byte("hello")
	p1, err := s.Upload(ctx, "box", "b", data, service.UploadOptions{ContentType: "text/plain", ContentEncoding: "gzip"})
	if err != nil {
		t.Fatal(err)
	}
	data[0] = 'j'
	if !blobETagShape.MatchString(p1.ETag) {
		t.Fatalf("ETag %s does not look like the service's", p1.ETag)
	}
	want := service.BlobProperties{ETag: p1.ETag, LastModified: t0.Truncate(time.Second), ContentLength: 5, ContentType: "text/plain", ContentEncoding: "gzip"}
	if p1 != want {
		t.Fatalf("properties = %+v, want %+v", p1, want)
	}
	got, props, err := read(t, s, "b", service.Conditions{})
	if err != nil || got != "hello" || props != p1 {
		t.Fatalf("Download = %q %+v %v", got, props, err)
	}

	// Writes in the same second share LastModified and get new ETags.
	p2, err := s.Upload(ctx, "box", "b", nil, service.UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p2.ETag == p1.ETag || !p2.LastModified.Equal(p1.LastModified) || p2.ContentType != "application/octet-stream" || p2.ContentLength != 0 {
		t.Fatalf("second upload: %+v after %+v", p2, p1)
	}
	got, _, err = read(t, s, "b", service.Conditions{})
	if err != nil || got != "" {
		t.Fatalf("empty blob: %q, %v", got, err)
	}

	c.set(t0.Add(3 * time.Second))
	if now, err := s.Now(ctx); err != nil || !now.Equal(t0.Add(3*time.Second).Truncate(time.Second)) {
		t.Fatalf("Now = %v, %v", now, err)
	}
}

func TestUploadConditions(t *testing.T) {
	ctx := context.Background()
	s, _ := newContainer(t)
	create := service.UploadOptions{Mode: service.UploadCreate}
	p, err := s.Upload(ctx, "box", "b", []byte("1"), create)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Upload(ctx, "box", "b", []byte("2"), create)
	wantStatus(t, err, http.StatusConflict, "BlobAlreadyExists")

	ifMatch := func(etag string) service.UploadOptions {
		return service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: etag}
	}
	// If-Match on a missing blob fails, even with "*" (Azurite 3.35 creates it).
	for _, etag := range []string{"*", "", p.ETag} {
		_, err = s.Upload(ctx, "box", "missing", []byte("x"), ifMatch(etag))
		wantStatus(t, err, http.StatusPreconditionFailed, "ConditionNotMet")
	}
	p2, err := s.Upload(ctx, "box", "b", []byte("2"), ifMatch(p.ETag))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Upload(ctx, "box", "b", []byte("3"), ifMatch(p.ETag))
	wantStatus(t, err, http.StatusPreconditionFailed, "ConditionNotMet")
	if _, err := s.Upload(ctx, "box", "b", []byte("3"), ifMatch("*")); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := read(t, s, "b", service.Conditions{}); got != "3" {
		t.Fatalf("content = %q after failed and successful conditional uploads, want 3", got)
	}
	_ = p2
	_, err = s.Upload(ctx, "box", "b", nil, service.UploadOptions{Mode: 9})
	wantStatus(t, err, http.StatusBadRequest, "InvalidInput")
}

func TestReadDeleteConditions(t *testing.T) {
	ctx := context.Background()
	s, c := newContainer(t)
	c.set(t0.Add(10 * time.Second))
	p, err := s.Upload(ctx, "box", "b", []byte("x"), service.UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	modified := p.LastModified // t0+10s truncated to the second

	tests := []struct {
		name string
		cond service.Conditions
		ok   bool
	}{
		{"none", service.Conditions{}, true},
		{"any", service.Conditions{IfMatch: "*"}, true},
		{"current ETag", service.Conditions{IfMatch: p.ETag}, true},
		{"current ETag without quotes", service.Conditions{IfMatch: strings.Trim(p.ETag, `"`)}, true},
		{"other ETag", service.Conditions{IfMatch: `"0x8DC000000000999"`}, false},
		{"unmodified since then", service.Conditions{IfUnmodifiedSince: modified}, true},
		{"unmodified since later in that second", service.Conditions{IfUnmodifiedSince: modified.Add(999 * time.Millisecond)}, true},
		{"unmodified since just before", service.Conditions{IfUnmodifiedSince: modified.Add(-time.Millisecond)}, false},
		{"unmodified since long ago", service.Conditions{IfUnmodifiedSince: t0}, false},
		{"both, one failing", service.Conditions{IfMatch: p.ETag, IfUnmodifiedSince: t0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(t, s, "b", tc.cond)
			if tc.ok {
				if err != nil {
					t.Fatalf("Download: %v", err)
				}
				return
			}
			wantStatus(t, err, http.StatusPreconditionFailed, "ConditionNotMet")
			wantStatus(t, s.DeleteBlob(ctx, "box", "b", tc.cond), http.StatusPreconditionFailed, "ConditionNotMet")
			if _, _, err := read(t, s, "b", service.Conditions{}); err != nil {
				t.Fatalf("a failed delete removed the blob: %v", err)
			}
		})
	}

	if err := s.DeleteBlob(ctx, "box", "b", service.Conditions{IfMatch: p.ETag}); err != nil {
		t.Fatal(err)
	}
	// A missing blob is 404 whatever the conditions (the real service).
	for _, cond := range []service.Conditions{{}, {IfMatch: "*"}, {IfMatch: p.ETag}, {IfUnmodifiedSince: t0}} {
		_, _, err := read(t, s, "b", cond)
		wantStatus(t, err, http.StatusNotFound, "BlobNotFound")
		wantStatus(t, s.DeleteBlob(ctx, "box", "b", cond), http.StatusNotFound, "BlobNotFound")
	}
}

func TestDownloadIsACopy(t *testing.T) {
	ctx := context.Background()
	s, _ := newContainer(t)
	if _, err := s.Upload(ctx, "box", "b", []byte("abc"), service.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := s.Download(ctx, "box", "b", service.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upload(ctx, "box", "b", []byte("xyz"), service.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(b.Body)
	b.Body.Close()
	if string(data) != "abc" {
		t.Fatalf("an open download read %q, want the content it was opened on", data)
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	s, _ := newContainer(t)
	names := []string{"a/1", "a/2", "a/b/3", "b", "c/1", "c/2", "d", "｡", "😀", "B"}
	for _, n := range names {
		if _, err := s.Upload(ctx, "box", n, []byte(n), service.UploadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		blobs, prefixes []string
		next            string
	}
	list := func(opts service.ListOptions) result {
		t.Helper()
		page, err := s.List(ctx, "box", opts)
		if err != nil {
			t.Fatal(err)
		}
		var r result
		for _, b := range page.Blobs {
			r.blobs = append(r.blobs, b.Name)
			if b.Properties.ContentLength != int64(len(b.Name)) {
				t.Fatalf("%s: properties %+v", b.Name, b.Properties)
			}
		}
		r.prefixes = page.Prefixes
		r.next = page.NextMarker
		return r
	}
	tests := []struct {
		name string
		opts service.ListOptions
		want result
	}{
		{"all, UTF-16 order", service.ListOptions{}, result{blobs: []string{"B", "a/1", "a/2", "a/b/3", "b", "c/1", "c/2", "d", "😀", "｡"}}},
		{"prefix", service.ListOptions{Prefix: "a/"}, result{blobs: []string{"a/1", "a/2", "a/b/3"}}},
		{"delimiter", service.ListOptions{Delimiter: "/"}, result{blobs: []string{"B", "b", "d", "😀", "｡"}, prefixes: []string{"a/", "c/"}}},
		{"prefix and delimiter", service.ListOptions{Prefix: "a/", Delimiter: "/"}, result{blobs: []string{"a/1", "a/2"}, prefixes: []string{"a/b/"}}},
		{"first page", service.ListOptions{MaxResults: 3}, result{blobs: []string{"B", "a/1", "a/2"}, next: "a/b/3"}},
		{"second page", service.ListOptions{MaxResults: 3, Marker: "a/b/3"}, result{blobs: []string{"a/b/3", "b", "c/1"}, next: "c/2"}},
		{"folded page", service.ListOptions{MaxResults: 2, Delimiter: "/"}, result{blobs: []string{"B"}, prefixes: []string{"a/"}, next: "b"}},
		{"page ending before a prefix", service.ListOptions{MaxResults: 2, Delimiter: "/", Marker: "b"}, result{blobs: []string{"b"}, prefixes: []string{"c/"}, next: "d"}},
		{"prefix as the next entry", service.ListOptions{MaxResults: 1, Delimiter: "/"}, result{blobs: []string{"B"}, next: "a/"}},
		{"from a prefix marker", service.ListOptions{MaxResults: 1, Delimiter: "/", Marker: "a/"}, result{prefixes: []string{"a/"}, next: "b"}},
		{"no match", service.ListOptions{Prefix: "zzz"}, result{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := list(tc.opts)
			if strings.Join(got.blobs, ",") != strings.Join(tc.want.blobs, ",") ||
				strings.Join(got.prefixes, ",") != strings.Join(tc.want.prefixes, ",") || got.next != tc.want.next {
				t.Fatalf("List(%+v) = %+v, want %+v", tc.opts, got, tc.want)
			}
		})
	}
	_, err := s.List(ctx, "box", service.ListOptions{MaxResults: -1})
	wantStatus(t, err, http.StatusBadRequest, "OutOfRangeInput")

	// Following NextMarker visits every name once.
	var seen []string
	opts := service.ListOptions{MaxResults: 4}
	for {
		page, err := s.List(ctx, "box", opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Blobs {
			seen = append(seen, b.Name)
		}
		if page.NextMarker == "" {
			break
		}
		opts.Marker = page.NextMarker
	}
	if len(seen) != len(names) {
		t.Fatalf("listed %v", seen)
	}
}

// brokenBody delivers some bytes, then fails.
type brokenBody struct{ n int }

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	k := min(b.n, len(p))
	b.n -= k
	return k, nil
}

func TestUploadStream(t *testing.T) {
	s, _ := newContainer(t)
	ctx := context.Background()
	create := service.UploadOptions{Mode: service.UploadCreate, ContentType: "text/plain"}
	p, err := s.UploadStream(ctx, "box", "b", strings.NewReader("streamed"), create)
	if err != nil || p.ContentLength != 8 || p.ContentType != "text/plain" {
		t.Fatalf("UploadStream = %+v, %v", p, err)
	}
	// The condition is checked before the body is read.
	body := &brokenBody{n: 1}
	_, err = s.UploadStream(ctx, "box", "b", body, create)
	wantStatus(t, err, http.StatusConflict, "BlobAlreadyExists")
	if body.n != 1 {
		t.Error("a refused upload read its body")
	}
	// A failing body stores nothing.
	if _, err := s.UploadStream(ctx, "box", "c", &brokenBody{n: 3}, create); err != io.ErrUnexpectedEOF {
		t.Fatalf("broken body = %v", err)
	}
	_, err = s.Download(ctx, "box", "c", service.Conditions{})
	wantStatus(t, err, http.StatusNotFound, "BlobNotFound")
	_, err = s.UploadStream(ctx, "missing", "c", strings.NewReader("x"), create)
	wantStatus(t, err, http.StatusNotFound, "ContainerNotFound")
}

func TestTouch(t *testing.T) {
	s, c := newContainer(t)
	ctx := context.Background()
	p1, err := s.Upload(ctx, "box", "b", []byte("abc"), service.UploadOptions{ContentType: "text/plain", ContentEncoding: "gzip"})
	if err != nil {
		t.Fatal(err)
	}
	c.set(t0.Add(3 * time.Second))
	p2, err := s.Touch(ctx, "box", "b")
	if err != nil {
		t.Fatal(err)
	}
	if p2.ETag == p1.ETag || !p2.LastModified.Equal(p1.LastModified.Add(3*time.Second)) ||
		p2.ContentType != p1.ContentType || p2.ContentEncoding != p1.ContentEncoding || p2.ContentLength != 3 {
		t.Errorf("touch: %+v, was %+v", p2, p1)
	}
	b, err := s.Download(ctx, "box", "b", service.Conditions{IfMatch: p2.ETag})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(b.Body)
	if string(data) != "abc" {
		t.Errorf("content after touch = %q", data)
	}
	_, err = s.Touch(ctx, "box", "missing")
	wantStatus(t, err, http.StatusNotFound, "BlobNotFound")
}

// Metadata is stored with names in lower case, kept by Touch, replaced by the next upload,
// and copied out, so a caller cannot change what is stored.
func TestMetadata(t *testing.T) {
	s, _ := newContainer(t)
	ctx := context.Background()
	md := func() map[string]string {
		b, err := s.Download(ctx, "box", "b", service.Conditions{})
		if err != nil {
			t.Fatal(err)
		}
		b.Body.Close()
		return b.Metadata
	}
	if _, err := s.Upload(ctx, "box", "b", []byte("abc"), service.UploadOptions{Metadata: map[string]string{"Write_Token": "T1", "n2": ""}}); err != nil {
		t.Fatal(err)
	}
	got := md()
	if got["write_token"] != "T1" || len(got) != 2 {
		t.Fatalf("download metadata %v", got)
	}
	got["write_token"] = "changed"
	if _, err := s.Touch(ctx, "box", "b"); err != nil {
		t.Fatal(err)
	}
	if got := md(); got["write_token"] != "T1" {
		t.Fatalf("metadata after a touch, and a caller's change of a copy: %v", got)
	}
	if _, err := s.Upload(ctx, "box", "b", []byte("abc"), service.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := md(); got != nil {
		t.Fatalf("an upload without metadata left %v", got)
	}
	for _, bad := range []map[string]string{{"bad-name": "x"}, {"1abc": "x"}, {"": "x"}, {"a": "1", "A": "2"}} {
		_, err := s.Upload(ctx, "box", "b", []byte("x"), service.UploadOptions{Metadata: bad})
		wantStatus(t, err, http.StatusBadRequest, "InvalidMetadata")
	}
}

func TestContainerProperties(t *testing.T) {
	ctx := context.Background()
	s, c := newContainer(t)
	c.set(t0.Add(90 * time.Second))
	for _, name := range []string{"cat", "bat", "cow"} {
		if err := s.CreateContainer(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	box, err := s.Container(ctx, "box")
	if err != nil || box.Name != "box" || !box.LastModified.Equal(t0.Truncate(time.Second)) || !strings.HasPrefix(box.ETag, `"0x`) {
		t.Errorf("box: %+v, %v", box, err)
	}
	cat, err := s.Container(ctx, "cat")
	if err != nil || cat.ETag == box.ETag || !cat.LastModified.Equal(t0.Add(90*time.Second).Truncate(time.Second)) {
		t.Errorf("cat: %+v, %v", cat, err)
	}
	_, err = s.Container(ctx, "dog")
	wantStatus(t, err, http.StatusNotFound, "ContainerNotFound")
	_, err = s.Container(ctx, "Dog")
	wantStatus(t, err, http.StatusBadRequest, "InvalidResourceName")
	var names []string
	all, err := s.Containers(ctx, "c")
	for _, p := range all {
		names = append(names, p.Name)
	}
	if err != nil || strings.Join(names, ",") != "cat,cow" {
		t.Errorf("containers starting with c: %q, %v", names, err)
	}
	if err := s.DeleteContainer(ctx, "cat"); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.Containers(ctx, ""); len(all) != 3 {
		t.Errorf("after a delete: %+v", all)
	}
}
