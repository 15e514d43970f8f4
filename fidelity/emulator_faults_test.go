package fidelity

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/tables"
)

// faultyTable starts an emulator with the fault rules spec, creates table Faults before the
// rules apply to anything, and returns an aztables client of it with the SDK's own retry
// policy: short delays, but a MaxRetryDelay above the emulator's Retry-After of 1 second
// (the SDK does not retry when Retry-After asks for longer than MaxRetryDelay).
func faultyTable(t *testing.T, spec string) *aztables.Client {
	t.Helper()
	rules, err := emulator.ParseFaults(spec)
	if err != nil {
		t.Fatal(err)
	}
	h, err := emulator.New(&emulator.Options{Faults: rules})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cred, err := aztables.NewSharedKeyCredential(emulator.DevelopmentAccount, emulator.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry:     policy.RetryOptions{MaxRetries: 3, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 2 * time.Second},
	}}
	svc, err := aztables.NewServiceClientWithSharedKey(srv.URL+"/"+emulator.DevelopmentAccount, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "Faults", nil); err != nil {
		t.Fatal(err)
	}
	return svc.NewClient("Faults")
}

// TestEmulatorFaultServerBusyRetried: the SDK retries a 503 ServerBusy and succeeds.
func TestEmulatorFaultServerBusyRetried(t *testing.T) {
	c := faultyTable(t, "503:write:first=2")
	if _, err := c.AddEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"1"}`), nil); err != nil {
		t.Fatalf("the SDK did not get past two 503s: %v", err)
	}
}

// TestEmulatorFaultLostInsert: the emulator applies an insert and loses its answer; the
// SDK resends it and gets 409 EntityAlreadyExists for its own write.
func TestEmulatorFaultLostInsert(t *testing.T) {
	c := faultyTable(t, "lose:write:first=1")
	_, err := c.AddEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"1"}`), nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 409 || re.ErrorCode != "EntityAlreadyExists" {
		t.Fatalf("a lost insert, retried by the SDK: %v, want 409 EntityAlreadyExists", err)
	}
	if _, err := c.GetEntity(context.Background(), "p", "1", nil); err != nil {
		t.Errorf("the lost insert is not there: %v", err)
	}
}

// TestEmulatorFaultLostInsertLibrary: the library, over the emulator by a connection string
// as an application reaches Azure, meets an insert the emulator applies and whose answer it
// loses. The SDK sends it again and gets 409 EntityAlreadyExists; Create recognises its
// own write in the row that is there and reports success, and the row is the one it wrote.
func TestEmulatorFaultLostInsertLibrary(t *testing.T) {
	rules, err := emulator.ParseFaults("lose:write:first=1")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	h, err := emulator.New(&emulator.Options{Faults: rules, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	conn := "DefaultEndpointsProtocol=http;AccountName=" + emulator.DevelopmentAccount + ";AccountKey=" + emulator.DevelopmentKey +
		";TableEndpoint=" + srv.URL + "/" + emulator.DevelopmentAccount + ";"
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry:     policy.RetryOptions{MaxRetries: 3, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 2 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tables.For[counterRow](acct, &tables.StoreOptions{Table: "LostInserts"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "p|a"}, N: 1}); err != nil {
		t.Fatalf("the first insert (its answer lost, then sent again): %v, want success", err)
	}
	if n := strings.Count(logs.String(), "fault=LoseResponse"); n != 1 {
		t.Fatalf("%d answers lost, want 1:\n%s", n, logs.String())
	}
	v, err := s.One(ctx, "p|a")
	if err != nil || v.N != 1 {
		t.Fatalf("the row after the lost insert: %+v, %v", v, err)
	}
	// The rule lost one answer: the next insert is answered, and one of a row that is
	// there is refused as a conflict, not taken for an own write.
	if err := s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "p|b"}, N: 2}); err != nil {
		t.Fatalf("the second insert: %v", err)
	}
	if err := s.Create(ctx, &counterRow{Entity: abstractions.Entity{ID: "p|a"}, N: 3}); !errors.Is(err, abstractions.ErrDuplicateKey) {
		t.Errorf("an insert of a row that is there: %v, want ErrDuplicateKey", err)
	}
}

// TestEmulatorFaultBlobs: the azblob SDK, with its own retry policy, over the emulator's
// blob endpoint with fault rules on uploads to two containers. In "busy" the first two
// uploads get 503 ServerBusy: the SDK waits the Retry-After and its third try succeeds. In
// "lost" the first upload is applied and its answer lost: the SDK sends it again, which
// overwrites the blob with the same bytes, and reports success. An upload with
// If-None-Match: * whose answer is lost meets, when sent again, its own blob: 409
// BlobAlreadyExists, the blob being there.
func TestEmulatorFaultBlobs(t *testing.T) {
	rules, err := emulator.ParseFaults("503:blob-write:busy:first=2,lose:blob-write:lost:first=1,lose:blob-write:once:first=1")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	h, err := emulator.New(&emulator.Options{Faults: rules, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.Blobs())
	t.Cleanup(srv.Close)
	cred, err := azblob.NewSharedKeyCredential(emulator.DevelopmentAccount, emulator.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := azblob.NewClientWithSharedKeyCredential(srv.URL+"/"+emulator.DevelopmentAccount, cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry:     policy.RetryOptions{MaxRetries: 3, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 2 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"busy", "lost", "once"} {
		if _, err := c.CreateContainer(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	content := []byte("hello, faults")
	read := func(container string) string {
		t.Helper()
		r, err := c.DownloadStream(ctx, container, "b", nil)
		if err != nil {
			t.Fatalf("download from %s: %v", container, err)
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	if _, err := c.UploadBuffer(ctx, "busy", "b", content, nil); err != nil {
		t.Fatalf("the SDK did not get past two 503s: %v", err)
	}
	if got := read("busy"); got != string(content) {
		t.Errorf("after the 503s: %q", got)
	}
	if _, err := c.UploadBuffer(ctx, "lost", "b", content, nil); err != nil {
		t.Fatalf("an upload whose answer was lost, sent again by the SDK: %v", err)
	}
	if got := read("lost"); got != string(content) {
		t.Errorf("after the lost upload: %q", got)
	}
	_, err = c.ServiceClient().NewContainerClient("once").NewBlockBlobClient("b").Upload(ctx, streamOf(content), &blockblob.UploadOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}},
	})
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict || re.ErrorCode != "BlobAlreadyExists" {
		t.Fatalf("a lost upload with If-None-Match: *, sent again: %v, want 409 BlobAlreadyExists", err)
	}
	if got := read("once"); got != string(content) {
		t.Errorf("the lost conditional upload: %q", got)
	}
	// Each request is logged after its answer (or its hang-up): wait for the last faulted one.
	for deadline := time.Now().Add(5 * time.Second); strings.Count(logs.String(), "fault=LoseResponse") < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(logs.String(), "fault=ServerBusy"); n != 2 {
		t.Errorf("%d uploads answered 503, want 2:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "fault=LoseResponse"); n != 2 {
		t.Errorf("%d answers lost, want 2:\n%s", n, logs.String())
	}
}
