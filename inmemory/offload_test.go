package inmemory_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/service"
)

// Report is the entity of the offload tests.
type Report struct {
	abstractions.Entity
	Body string `table:",split=text"`
	File *abstractions.File
}

// serviceClock is a settable clock for the memory service.
type serviceClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *serviceClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *serviceClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func offloadStore(t *testing.T, grace time.Duration) (*tables.Store[Report], *memservice.Service, *serviceClock) {
	t.Helper()
	clk := &serviceClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc := memservice.New(memservice.WithClock(clk.now))
	acct := inmemory.NewAccountOver(svc, svc, &tables.Options{
		BlobOffload: &tables.BlobOffloadOptions{Container: "values", ThresholdBytes: 1000, CleanupGrace: grace}})
	s, err := tables.For[Report](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, svc, clk
}

func blobCount(t *testing.T, svc *memservice.Service) int {
	t.Helper()
	page, err := svc.List(context.Background(), "values", service.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Blobs)
}

func TestBlobOffloadOptionsChecked(t *testing.T) {
	for _, o := range []*tables.BlobOffloadOptions{
		{ThresholdBytes: -1},
		{ThresholdBytes: 4_194_305},
		{Container: "Bad_Name"},
	} {
		acct := inmemory.NewAccount(&tables.Options{BlobOffload: o})
		if _, err := tables.For[Report](acct, nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("%+v: For = %v, want ErrInvalidArgument", o, err)
		}
	}
	acct := inmemory.NewAccountOver(memservice.New(), nil, &tables.Options{BlobOffload: &tables.BlobOffloadOptions{}})
	if _, err := tables.For[Report](acct, nil); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("offload without a blob service: For = %v, want ErrInvalidArgument", err)
	}
}

// The cleanup grace is measured on the service's clock: a released blob younger than the
// grace stays for the sweep, an older one is deleted at once.
func TestCleanupGraceOnServiceClock(t *testing.T) {
	ctx := context.Background()
	s, svc, clk := offloadStore(t, time.Minute)
	write := func(body string) {
		t.Helper()
		if err := s.Upsert(ctx, &Report{Entity: abstractions.Entity{ID: "p|r"}, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	write(strings.Repeat("a", 70_000))
	clk.add(30 * time.Second)
	write(strings.Repeat("b", 70_000))
	if n := blobCount(t, svc); n != 2 {
		t.Fatalf("after a replace within the grace: %d blobs, want 2", n)
	}
	clk.add(2 * time.Minute)
	write(strings.Repeat("c", 70_000))
	if n := blobCount(t, svc); n != 2 {
		t.Fatalf("after a replace past the grace: %d blobs, want 2 (the first one's released younger blob stays)", n)
	}
	n, err := s.SweepOrphanBlobs(ctx, time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v; want 1", n, err)
	}
	got, err := s.One(ctx, "p|r")
	if err != nil || got.Body != strings.Repeat("c", 70_000) {
		t.Fatalf("read after the sweep: %v", err)
	}
}

func TestSweepRefusals(t *testing.T) {
	ctx := context.Background()
	plain, err := tables.For[Report](inmemory.NewAccount(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.SweepOrphanBlobs(ctx, time.Hour); !errors.Is(err, abstractions.ErrNotSupported) {
		t.Errorf("sweep without offload = %v, want ErrNotSupported", err)
	}
	s, _, _ := offloadStore(t, time.Minute)
	if _, err := s.SweepOrphanBlobs(ctx, -time.Second, "p"); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("negative age = %v, want ErrInvalidArgument", err)
	}
	if n, err := s.SweepOrphanBlobs(ctx, time.Hour); err != nil || n != 0 {
		t.Errorf("sweep of an empty table = %d, %v", n, err)
	}
}

// countingBlobs counts the blob requests a store sends.
type countingBlobs struct {
	*memservice.Service
	n *atomic.Int64
}

func (c countingBlobs) Now(ctx context.Context) (time.Time, error) {
	c.n.Add(1)
	return c.Service.Now(ctx)
}

func (c countingBlobs) List(ctx context.Context, container string, o service.ListOptions) (service.BlobPage, error) {
	c.n.Add(1)
	return c.Service.List(ctx, container, o)
}

func (c countingBlobs) DeleteBlob(ctx context.Context, container, name string, cond service.Conditions) error {
	c.n.Add(1)
	return c.Service.DeleteBlob(ctx, container, name, cond)
}

// The sweep of one partition takes the partition as List does: the partition of the ids
// that start with it ("Acme " is "acme-", not tenant acme's "acme"), and a partition that is
// empty, empty once normalised, or holds "|" is refused with ErrInvalidKey, sending nothing.
func TestSweepPartitionIsThePartitionOfItsIDs(t *testing.T) {
	ctx := context.Background()
	clk := &serviceClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc := memservice.New(memservice.WithClock(clk.now))
	n := &atomic.Int64{}
	acct := inmemory.NewAccountOver(svc, countingBlobs{svc, n}, &tables.Options{
		BlobOffload: &tables.BlobOffloadOptions{Container: "values", CleanupGrace: tables.NoCleanup}})
	s, err := tables.For[Report](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Acme |a", "acme|a"} {
		for _, v := range []string{"one", "two"} { // the second write leaves the first's blob an orphan
			if err := s.Upsert(ctx, &Report{Entity: abstractions.Entity{ID: id}, File: abstractions.FileFromBytes([]byte(v), "")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	clk.add(time.Hour)
	for _, p := range []string{"", " ", "\u00a0\t", "acme|x", "acme\xff", "a/b"} {
		n.Store(0)
		_, err := s.SweepOrphanBlobs(ctx, time.Minute, p)
		if !errors.Is(err, abstractions.ErrInvalidKey) || n.Load() != 0 {
			t.Errorf("SweepOrphanBlobs(%q) = %v after %d blob requests; want ErrInvalidKey and none", p, err, n.Load())
		}
	}
	if got := blobCount(t, svc); got != 4 {
		t.Fatalf("the refused sweeps left %d blobs, want 4", got)
	}
	deleted, err := s.SweepOrphanBlobs(ctx, time.Minute, "Acme ")
	if err != nil || deleted != 1 {
		t.Fatalf("SweepOrphanBlobs(\"Acme \") = %d, %v; want the one orphan of partition acme-", deleted, err)
	}
	page, err := svc.List(ctx, "values", service.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perPartition := map[string]int{}
	for _, b := range page.Blobs {
		perPartition[strings.Split(b.Name, "/")[1]]++
	}
	if perPartition["acme-"] != 1 || perPartition["acme"] != 2 {
		t.Errorf("after sweeping \"Acme \", blobs per partition %v; want acme- 1 (its row's), acme 2 (untouched)", perPartition)
	}
}

// failingBlobs makes every blob delete fail, to see a sweep aggregate its failures.
type failingBlobs struct {
	*memservice.Service
}

var errDenied = errors.New("denied")

func (f failingBlobs) DeleteBlob(context.Context, string, string, service.Conditions) error {
	return &abstractions.StatusError{StatusCode: 403, ErrorCode: "AuthorizationPermissionMismatch", Err: errDenied}
}

func TestSweepAggregatesFailures(t *testing.T) {
	ctx := context.Background()
	clk := &serviceClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc := memservice.New(memservice.WithClock(clk.now))
	acct := inmemory.NewAccountOver(svc, failingBlobs{svc}, &tables.Options{
		BlobOffload: &tables.BlobOffloadOptions{Container: "values", CleanupGrace: tables.NoCleanup}})
	s, err := tables.For[Report](acct, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"p|a", "q|b"} {
		for _, v := range []string{"one", "two"} {
			if err := s.Upsert(ctx, &Report{Entity: abstractions.Entity{ID: id}, File: abstractions.FileFromBytes([]byte(v), "")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	clk.add(time.Hour)
	n, err := s.SweepOrphanBlobs(ctx, time.Minute)
	joined, ok := err.(interface{ Unwrap() []error })
	if n != 0 || !ok || len(joined.Unwrap()) != 2 || !errors.Is(err, errDenied) {
		t.Fatalf("sweep = %d, %v; want the two failed partitions' errors joined", n, err)
	}
	for _, p := range []string{`"p"`, `"q"`} {
		if !strings.Contains(err.Error(), "partition "+p) {
			t.Errorf("message %q does not name partition %s", err, p)
		}
	}
}

// RunOrphanSweep sweeps on its schedule, starts no goroutine, and returns when its context
// ends (TestMain checks for leaks with goleak).
func TestRunOrphanSweep(t *testing.T) {
	s, svc, clk := offloadStore(t, tables.NoCleanup)
	ctx := context.Background()
	for _, v := range []string{"one", "two"} {
		if err := s.Upsert(ctx, &Report{Entity: abstractions.Entity{ID: "p|a"}, File: abstractions.FileFromBytes([]byte(v), "")}); err != nil {
			t.Fatal(err)
		}
	}
	clk.add(2 * time.Hour)
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	plain, err := tables.For[Customer](inmemory.NewAccount(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- tables.RunOrphanSweep(rctx, &tables.SweepOptions{Interval: time.Millisecond, InitialDelay: -1, Logger: log}, s, plain)
	}()
	// One pass sweeps s and then skips plain: wait for both, since the orphan may be gone
	// before the skip is logged.
	skipped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), "skips a store")
	}
	for blobCount(t, svc) != 1 || !skipped() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("RunOrphanSweep returned %v, want context.Canceled", err)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if strings.Count(out, "skips a store") != 1 {
		t.Errorf("the store without blobs is not skipped once:\n%s", out)
	}
	if err := tables.RunOrphanSweep(ctx, &tables.SweepOptions{Interval: -1}); !errors.Is(err, abstractions.ErrInvalidArgument) {
		t.Errorf("negative interval = %v", err)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A blob reference is read through an account with offload and refused through one without;
// only the account without offload logs the blobs a replace leaves behind, since the one
// with offload deletes them itself (here at once: no grace).
func TestBlobReferencesWithAndWithoutOffload(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	clk := &serviceClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc := memservice.New(memservice.WithClock(clk.now))
	off, err := tables.For[Report](inmemory.NewAccountOver(svc, svc, &tables.Options{Logger: log,
		BlobOffload: &tables.BlobOffloadOptions{Container: "values", ThresholdBytes: 1000, CleanupGrace: -1}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := tables.For[Report](inmemory.NewAccountOver(svc, svc, &tables.Options{Logger: log}), nil)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("a", 70_000)
	for _, id := range []string{"p|a", "p|b"} {
		if err := off.Create(ctx, &Report{Entity: abstractions.Entity{ID: id}, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := off.One(ctx, "p|a"); err != nil || got.Body != body {
		t.Fatalf("read with offload: %v", err)
	}
	if _, err := plain.One(ctx, "p|a"); !errors.Is(err, abstractions.ErrBlobOffloadNotConfigured) {
		t.Fatalf("read without offload = %v, want ErrBlobOffloadNotConfigured", err)
	}
	clk.add(2 * time.Second)
	if err := off.Upsert(ctx, &Report{Entity: abstractions.Entity{ID: "p|a"}, Body: "short"}); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 || blobCount(t, svc) != 1 {
		t.Fatalf("a replace with offload: logged %q, %d blobs left (want nothing logged, 1 blob)", logs.String(), blobCount(t, svc))
	}
	if err := plain.Upsert(ctx, &Report{Entity: abstractions.Entity{ID: "p|b"}, Body: "short"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "columns=[Body]") || blobCount(t, svc) != 1 {
		t.Fatalf("a replace without offload: logged %q, %d blobs left (want the column logged, its blob kept)", logs.String(), blobCount(t, svc))
	}
}
