package fidelity

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/unified-data/gotables/tables/service"
)

func upload(ctx context.Context, e *Env, name, data string, opts service.UploadOptions) (service.BlobProperties, error) {
	return e.Blobs.Upload(ctx, e.Container, name, []byte(data), opts)
}

func read(ctx context.Context, e *Env, name string, cond service.Conditions) (string, service.BlobProperties, error) {
	b, err := e.Blobs.Download(ctx, e.Container, name, cond)
	if err != nil {
		return "", service.BlobProperties{}, err
	}
	defer b.Body.Close()
	data, err := io.ReadAll(b.Body)
	return string(data), b.Properties, err
}

var blobScenarios = []Scenario{
	{
		Name: "blob/create-only", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			p, err := upload(ctx, e, "a.json", "one", service.UploadOptions{Mode: service.UploadCreate, ContentType: "application/json"})
			e.OK("create", err)
			e.Observe("created", p)
			_, err = upload(ctx, e, "a.json", "two", service.UploadOptions{Mode: service.UploadCreate})
			e.Status("create again", err, 409, "BlobAlreadyExists")
		},
	},
	{
		Name: "blob/if-match", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			p1, err := upload(ctx, e, "doc", "v1", service.UploadOptions{})
			e.OK("write", err)
			p2, err := upload(ctx, e, "doc", "v2", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p1.ETag})
			e.OK("write with the current etag", err)
			e.Equal("etag changed", p1.ETag != p2.ETag, true)
			_, err = upload(ctx, e, "doc", "v3", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p1.ETag})
			e.Status("write with the stale etag", err, 412, "ConditionNotMet")
			_, err = upload(ctx, e, "doc", "v4", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: service.ETagAny})
			e.OK("write with * over an existing blob", err)
			_, err = upload(ctx, e, "other", "x", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p1.ETag})
			e.Status("write with an etag to a missing blob", err, 412, "ConditionNotMet")
		},
	},
	{
		Name: "blob/if-match-any-on-missing", NoTable: true, Container: true, Deviation: "blob-ifmatch-any-missing",
		Run: func(ctx context.Context, e *Env) {
			_, err := upload(ctx, e, "missing", "x", service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: service.ETagAny})
			e.AcceptedByAzurite("write with * to a missing blob", err, 412, "ConditionNotMet")
		},
	},
	{
		Name: "blob/download-properties", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			p, err := upload(ctx, e, "dir/file.gz", "compressed?", service.UploadOptions{ContentType: "application/json", ContentEncoding: "gzip"})
			e.OK("upload", err)
			data, got, err := read(ctx, e, "dir/file.gz", service.Conditions{})
			e.OK("download", err)
			e.Equal("content", data, "compressed?")
			e.Observe("properties", got)
			e.Equal("same etag", got.ETag == p.ETag, true)
			_, _, err = read(ctx, e, "dir/file.gz", service.Conditions{IfMatch: p.ETag})
			e.OK("download if-match current", err)
			_, err = upload(ctx, e, "dir/file.gz", "changed", service.UploadOptions{})
			e.OK("overwrite", err)
			_, _, err = read(ctx, e, "dir/file.gz", service.Conditions{IfMatch: p.ETag})
			e.Status("download if-match stale", err, 412, "ConditionNotMet")
		},
	},
	{
		// Metadata names come back in lower case, whatever case they were sent in; a touch
		// keeps the metadata, the next upload replaces it; a name that is not an identifier
		// is refused.
		Name: "blob/metadata", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			metadata := func(step string) {
				b, err := e.Blobs.Download(ctx, e.Container, "doc", service.Conditions{})
				if e.ObserveErr(step, err) != nil {
					return
				}
				b.Body.Close()
				e.Observe(step, b.Metadata)
			}
			_, err := upload(ctx, e, "doc", "v1", service.UploadOptions{Metadata: map[string]string{"Write_Token": "T1", "n2": ""}})
			e.OK("upload with metadata", err)
			metadata("metadata")
			_, err = e.Blobs.Touch(ctx, e.Container, "doc")
			e.OK("touch", err)
			metadata("metadata after a touch")
			_, err = e.Blobs.UploadStream(ctx, e.Container, "doc", strings.NewReader("v2"), service.UploadOptions{Metadata: map[string]string{"other": "x"}})
			e.OK("stream upload with other metadata", err)
			metadata("metadata after the stream upload")
			_, err = upload(ctx, e, "doc", "v3", service.UploadOptions{})
			e.OK("upload without metadata", err)
			metadata("metadata after an upload without")
			for _, name := range []string{"bad-name", "1abc"} {
				_, err = upload(ctx, e, "doc", "v4", service.UploadOptions{Metadata: map[string]string{name: "x"}})
				e.Status("upload with the metadata name "+name, err, 400, "InvalidMetadata")
			}
		},
	},
	{
		Name: "blob/missing", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			_, _, err := read(ctx, e, "nope", service.Conditions{})
			e.Status("download", err, 404, "BlobNotFound")
			e.Status("delete", e.Blobs.DeleteBlob(ctx, e.Container, "nope", service.Conditions{}), 404, "BlobNotFound")
		},
	},
	{
		Name: "blob/conditional-on-missing", NoTable: true, Container: true, Deviation: "blob-conditional-missing",
		Run: func(ctx context.Context, e *Env) {
			p, err := upload(ctx, e, "gone", "x", service.UploadOptions{})
			e.OK("upload", err)
			e.OK("delete", e.Blobs.DeleteBlob(ctx, e.Container, "gone", service.Conditions{}))
			status, code := 404, "BlobNotFound"
			if e.OnAzurite() {
				status, code = 412, "ConditionNotMet"
			}
			_, _, err = read(ctx, e, "gone", service.Conditions{IfMatch: p.ETag})
			e.Status("download with if-match", err, status, code)
			e.Status("delete with if-match", e.Blobs.DeleteBlob(ctx, e.Container, "gone", service.Conditions{IfMatch: p.ETag}), status, code)
		},
	},
	{
		Name: "blob/conditional-delete", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			p1, err := upload(ctx, e, "doc", "v1", service.UploadOptions{})
			e.OK("write", err)
			p2, err := upload(ctx, e, "doc", "v2", service.UploadOptions{})
			e.OK("touch", err)
			e.Status("delete with the stale etag", e.Blobs.DeleteBlob(ctx, e.Container, "doc", service.Conditions{IfMatch: p1.ETag}), 412, "ConditionNotMet")
			past := p2.LastModified.Add(-time.Hour)
			e.Status("delete if unmodified since an hour before", e.Blobs.DeleteBlob(ctx, e.Container, "doc", service.Conditions{IfUnmodifiedSince: past}), 412, "ConditionNotMet")
			e.OK("delete if unmodified since its last write", e.Blobs.DeleteBlob(ctx, e.Container, "doc", service.Conditions{IfUnmodifiedSince: p2.LastModified}))
			_, err = upload(ctx, e, "doc2", "v1", service.UploadOptions{})
			e.OK("write doc2", err)
			_, p, err := read(ctx, e, "doc2", service.Conditions{})
			e.OK("read doc2", err)
			e.OK("delete with the current etag", e.Blobs.DeleteBlob(ctx, e.Container, "doc2", service.Conditions{IfMatch: p.ETag}))
		},
	},
	{
		Name: "blob/list-delimiter", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			for _, n := range []string{"a/1", "a/2", "a/b/3", "b/1", "c", "ab"} {
				_, err := upload(ctx, e, n, n, service.UploadOptions{})
				e.OK("upload "+n, err)
			}
			for _, o := range []service.ListOptions{
				{Delimiter: "/"},
				{Prefix: "a/", Delimiter: "/"},
				{Prefix: "a"},
				{Prefix: "zzz"},
			} {
				page, err := e.Blobs.List(ctx, e.Container, o)
				e.OK("list "+o.Prefix+" "+o.Delimiter, err)
				e.Observe("list "+o.Prefix+" "+o.Delimiter, page)
			}
		},
	},
	{
		Name: "blob/list-pages", NoTable: true, Container: true,
		Run: func(ctx context.Context, e *Env) {
			for _, n := range []string{"e", "d", "c", "b", "a"} {
				_, err := upload(ctx, e, n, n, service.UploadOptions{})
				e.OK("upload "+n, err)
			}
			var names []string
			o := service.ListOptions{MaxResults: 2}
			for pages := 0; pages < 10; pages++ {
				page, err := e.Blobs.List(ctx, e.Container, o)
				e.OK("page", err)
				for _, b := range page.Blobs {
					names = append(names, b.Name)
				}
				if page.NextMarker == "" {
					break
				}
				o.Marker = page.NextMarker
			}
			e.Equal("names", names, []string{"a", "b", "c", "d", "e"})
		},
	},
	{
		Name: "blob/containers", NoTable: true,
		Run: func(ctx context.Context, e *Env) {
			name := e.Name("ctr")
			e.OK("create", e.Blobs.CreateContainer(ctx, name))
			e.Status("create again", e.Blobs.CreateContainer(ctx, name), 409, "ContainerAlreadyExists")
			_, err := e.Blobs.Upload(ctx, "missing"+e.Suffix, "x", []byte("x"), service.UploadOptions{})
			e.Status("upload to a missing container", err, 404, "ContainerNotFound")
			_, err = e.Blobs.List(ctx, "missing"+e.Suffix, service.ListOptions{})
			e.Status("list a missing container", err, 404, "ContainerNotFound")
			e.OK("delete", e.Blobs.DeleteContainer(ctx, name))
			e.Status("delete again", e.Blobs.DeleteContainer(ctx, name), 404, "ContainerNotFound")
		},
	},
	{
		Name: "blob/service-clock", NoTable: true,
		Run: func(ctx context.Context, e *Env) {
			now, err := e.Blobs.Now(ctx)
			e.OK("now", err)
			drift := time.Since(now)
			e.Equal("within a minute of this machine", drift < time.Minute && drift > -time.Minute, true)
			e.Equal("whole seconds", now.Nanosecond(), 0)
		},
	},
}
