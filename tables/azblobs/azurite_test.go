package azblobs

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/attempt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveBlobs returns a Service for the test account (azuritetest.ConnectionString: it skips
// without one, unless the emulator is required), on an HTTP transport of its own whose idle
// connections are closed when the test ends, so the leak check at exit sees no connection
// goroutines.
func liveBlobs(t *testing.T) *Service {
	t.Helper()
	s, err := NewFromConnectionString(azuritetest.ConnectionString(t), &Options{ClientOptions: azuritetest.ClientOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func uniqueName(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:12])
}

func wantStatus(t *testing.T, err error, status int, code string) {
	t.Helper()
	var se *abstractions.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a StatusError %d %s", err, err, status, code)
	}
	if se.StatusCode != status || se.ErrorCode != code {
		t.Fatalf("err = %d %s %q, want %d %s", se.StatusCode, se.ErrorCode, se.Message, status, code)
	}
}

func TestAzuriteBlobs(t *testing.T) {
	s := liveBlobs(t)
	ctx := context.Background()
	c := uniqueName("az")
	if err := s.CreateContainer(ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.DeleteContainer(context.Background(), c); err != nil {
			t.Errorf("delete container: %v", err)
		}
	})
	wantStatus(t, s.CreateContainer(ctx, c), http.StatusConflict, "ContainerAlreadyExists")

	data := []byte("hello, blob")
	p1, err := s.Upload(ctx, c, "dir/a.txt", data, service.UploadOptions{Mode: service.UploadCreate, ContentType: "text/plain", ContentEncoding: "identity"})
	if err != nil {
		t.Fatal(err)
	}
	if p1.ETag == "" || p1.LastModified.IsZero() || p1.ContentLength != int64(len(data)) {
		t.Fatalf("upload reported %+v", p1)
	}
	_, err = s.Upload(ctx, c, "dir/a.txt", data, service.UploadOptions{Mode: service.UploadCreate})
	wantStatus(t, err, http.StatusConflict, "BlobAlreadyExists")
	_, err = s.Upload(ctx, c, "dir/a.txt", data, service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: `"0x1"`})
	wantStatus(t, err, http.StatusPreconditionFailed, "ConditionNotMet")

	b, err := s.Download(ctx, c, "dir/a.txt", service.Conditions{IfMatch: p1.ETag})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(b.Body)
	if cerr := b.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil || string(got) != string(data) {
		t.Fatalf("download = %q, %v", got, err)
	}
	if b.Properties != p1 {
		t.Errorf("download properties %+v, upload reported %+v", b.Properties, p1)
	}
	_, err = s.Download(ctx, c, "dir/a.txt", service.Conditions{IfMatch: `"0x1"`})
	wantStatus(t, err, http.StatusPreconditionFailed, "ConditionNotMet")
	_, err = s.Download(ctx, c, "dir/a.txt", service.Conditions{IfUnmodifiedSince: p1.LastModified.Add(-time.Hour)})
	wantStatus(t, err, http.StatusPreconditionFailed, "ConditionNotMet")
	_, err = s.Download(ctx, c, "missing", service.Conditions{})
	wantStatus(t, err, http.StatusNotFound, "BlobNotFound")

	// Overwrite under the current ETag; no content type reads back as the default.
	p2, err := s.Upload(ctx, c, "dir/a.txt", []byte("v2"), service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p1.ETag})
	if err != nil {
		t.Fatal(err)
	}
	b, err = s.Download(ctx, c, "dir/a.txt", service.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Body.Close()
	if b.Properties != p2 || p2.ContentType != defaultContentType || p2.ContentEncoding != "" || p2.ETag == p1.ETag {
		t.Errorf("after overwrite: download %+v, upload %+v", b.Properties, p2)
	}

	for _, name := range []string{"dir/b.txt", "dir/sub/c.txt", "e.txt"} {
		if _, err := s.Upload(ctx, c, name, []byte(name), service.UploadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(items []service.BlobItem) []string {
		var n []string
		for _, it := range items {
			n = append(n, it.Name)
		}
		return n
	}
	page, err := s.List(ctx, c, service.ListOptions{})
	if err != nil || !slices.Equal(names(page.Blobs), []string{"dir/a.txt", "dir/b.txt", "dir/sub/c.txt", "e.txt"}) || page.NextMarker != "" {
		t.Fatalf("flat list = %v, %q, %v", names(page.Blobs), page.NextMarker, err)
	}
	if page.Blobs[0].Properties != p2 {
		t.Errorf("listed properties %+v, want %+v", page.Blobs[0].Properties, p2)
	}
	page, err = s.List(ctx, c, service.ListOptions{Prefix: "dir/", Delimiter: "/"})
	if err != nil || !slices.Equal(names(page.Blobs), []string{"dir/a.txt", "dir/b.txt"}) || !slices.Equal(page.Prefixes, []string{"dir/sub/"}) {
		t.Fatalf("hierarchical list = %v %v, %v", names(page.Blobs), page.Prefixes, err)
	}
	var all []string
	opts := service.ListOptions{MaxResults: 3}
	for {
		page, err := s.List(ctx, c, opts)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, names(page.Blobs)...)
		if page.NextMarker == "" {
			break
		}
		opts.Marker = page.NextMarker
	}
	if len(all) != 4 {
		t.Errorf("paged list = %v", all)
	}

	// Conditional delete.
	wantStatus(t, s.DeleteBlob(ctx, c, "e.txt", service.Conditions{IfMatch: `"0x1"`}), http.StatusPreconditionFailed, "ConditionNotMet")
	wantStatus(t, s.DeleteBlob(ctx, c, "e.txt", service.Conditions{IfUnmodifiedSince: time.Now().Add(-24 * time.Hour)}), http.StatusPreconditionFailed, "ConditionNotMet")
	if err := s.DeleteBlob(ctx, c, "e.txt", service.Conditions{IfUnmodifiedSince: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.DeleteBlob(ctx, c, "e.txt", service.Conditions{}), http.StatusNotFound, "BlobNotFound")

	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(now); d < -time.Minute || d > time.Minute {
		t.Errorf("service clock %v is far from ours", now)
	}
	wantStatus(t, s.DeleteContainer(ctx, uniqueName("missing")), http.StatusNotFound, "ContainerNotFound")
	_, err = s.Upload(ctx, uniqueName("missing"), "x", nil, service.UploadOptions{})
	wantStatus(t, err, http.StatusNotFound, "ContainerNotFound")
}

func TestAzuriteUploadHonoursContext(t *testing.T) {
	s := liveBlobs(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Upload(ctx, "c", "b", nil, service.UploadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Upload: err = %v", err)
	}
}

// Every try the SDK sends is counted in the call's attempt.Attempts: a create-only upload
// whose response is lost is resent, and the resend meets the blob its first try stored.
func TestAzuriteCountsTries(t *testing.T) {
	opts := azuritetest.ClientOptions(t)
	tr := faults.NewTransport(opts.Transport)
	opts.Transport = tr
	opts.Retry = policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond}
	s, err := NewFromConnectionString(azuritetest.ConnectionString(t), &Options{ClientOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := uniqueName("tries")
	if err := s.CreateContainer(ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DeleteContainer(context.Background(), c) })

	tctx, tries := attempt.WithAttempts(ctx)
	if _, err := s.Upload(tctx, c, "b", []byte("x"), service.UploadOptions{}); err != nil || tries.Count() != 1 || tries.Retried() {
		t.Fatalf("a plain upload: %v, %d tries", err, tries.Count())
	}
	tr.Inject(faults.LoseResponse, faults.Writes, 1)
	tctx, tries = attempt.WithAttempts(ctx)
	_, err = s.Upload(tctx, c, "new", []byte("x"), service.UploadOptions{Mode: service.UploadCreate, Metadata: map[string]string{"Token": "t1"}})
	wantStatus(t, err, http.StatusConflict, "BlobAlreadyExists")
	if tries.Count() != 2 || !tries.Retried() {
		t.Fatalf("a lost create: %d tries counted, want 2", tries.Count())
	}
	b, err := s.Download(ctx, c, "new", service.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Body.Close()
	if b.Metadata["token"] != "t1" {
		t.Fatalf("the first try's blob carries metadata %v", b.Metadata)
	}
}
