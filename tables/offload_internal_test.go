package tables

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/tables/internal/engine"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/service"
)

func TestCutoff(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 10, 300_000_000, time.UTC)
	tests := []struct {
		name      string
		olderThan time.Duration
		want      time.Time
	}{
		// A blob written in the second of at is not older than a zero grace.
		{"zero", 0, time.Date(2026, 3, 1, 12, 0, 9, 0, time.UTC)},
		{"whole seconds", 5 * time.Second, time.Date(2026, 3, 1, 12, 0, 4, 0, time.UTC)},
		{"fractions round down to the older second", 1500 * time.Millisecond, time.Date(2026, 3, 1, 12, 0, 8, 0, time.UTC)},
		{"a minute", time.Minute, time.Date(2026, 3, 1, 11, 59, 9, 0, time.UTC)},
	}
	for _, tc := range tests {
		if got := engine.Cutoff(at, tc.olderThan); !got.Equal(tc.want) {
			t.Errorf("%s: cutoff = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOvertime(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	octx, stop := engine.Overtime(ctx, 20*time.Millisecond)
	defer stop()
	cancel()
	if octx.Err() != nil {
		t.Fatal("the overtime context ended with its parent")
	}
	<-octx.Done()
	if !errors.Is(octx.Err(), context.Canceled) {
		t.Errorf("overtime ended with %v", octx.Err())
	}
	// Stopping it before its parent ends leaves nothing running (goleak checks).
	_, stop2 := engine.Overtime(context.Background(), time.Hour)
	stop2()
}

func TestBlobOffloadOptionsCheck(t *testing.T) {
	for _, o := range []*BlobOffloadOptions{nil, {}, {ThresholdBytes: 1}, {ThresholdBytes: 4_194_304, Container: "a-b1"}} {
		if err := o.check(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, o := range []*BlobOffloadOptions{{ThresholdBytes: -1}, {ThresholdBytes: 4_194_305}, {Container: "ab"}, {Container: "a--b"}, {Container: "A-b"}} {
		if err := o.check(); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("%+v: %v, want ErrInvalidArgument", o, err)
		}
	}
	if c := newOffload(&BlobOffloadOptions{}); c.Container != "unified-tables-values" || c.Threshold != 3_145_728 || c.Grace != defaultCleanupGrace || !c.Cleanup {
		t.Errorf("defaults: %+v", c)
	}
	if c := newOffload(&BlobOffloadOptions{CleanupGrace: -1}); c.Grace != 0 || !c.Cleanup {
		t.Errorf("negative grace: %+v", c)
	}
	if c := newOffload(&BlobOffloadOptions{CleanupGrace: NoCleanup}); c.Cleanup {
		t.Errorf("NoCleanup: %+v", c)
	}
}

// brokenStreamBlobs answers a download whose body fails after a few bytes with err.
type brokenStreamBlobs struct {
	service.Blobs // nil: only Download is called
	err           error
}

func (b brokenStreamBlobs) Download(context.Context, string, string, service.Conditions) (*service.Blob, error) {
	return &service.Blob{Body: io.NopCloser(io.MultiReader(strings.NewReader("some"), errReader{b.err}))}, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// A file's stream that fails after it began is reported as every blob call is (translate):
// its deadline is ErrUnavailable with the deadline in the chain, a broken connection
// ErrUnavailable; a vanished blob stays damage.
func TestFileStreamFailuresAreClassified(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
		kind  error
	}{
		{"deadline", fmt.Errorf("read body: %w", context.DeadlineExceeded), abstractions.ErrUnavailable},
		{"reset", errors.New("read tcp: connection reset by peer"), abstractions.ErrUnavailable},
		{"cancelled", fmt.Errorf("read body: %w", context.Canceled), context.Canceled},
		{"deleted", &abstractions.StatusError{StatusCode: 404, ErrorCode: "BlobNotFound", Message: "gone"}, abstractions.ErrIntegrity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &engine.StoreBlob{Blobs: brokenStreamBlobs{err: tc.cause}, Container: "c", Path: "t/p/r/File/x"}
			rc, err := b.OpenBlob(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			_, err = io.ReadAll(rc)
			var se *abstractions.StoreError
			if !errors.Is(err, tc.kind) || !errors.Is(err, tc.cause) || !errors.As(err, &se) || se.Op != "read file" {
				t.Fatalf("got %v, want a read-file StoreError matching %v with the cause in the chain", err, tc.kind)
			}
			if strings.Contains(err.Error(), "may or may not have been applied") {
				t.Errorf("a read's error says it may have been applied: %v", err)
			}
		})
	}
}

// TestBlobOffloadReadsBackAsGiven checks that BlobOffload's settings, given to another
// account, configure the same cleanup: a negative grace (none) once read back as 0, the
// five-minute default.
func TestBlobOffloadReadsBackAsGiven(t *testing.T) {
	for _, grace := range []time.Duration{-1, 0, time.Second, NoCleanup} {
		first := &Account{e: &engine.Account{Off: newOffload(&BlobOffloadOptions{CleanupGrace: grace})}}
		again := newOffload(first.BlobOffload())
		want := first.e.Off
		if again.Container != want.Container || again.Threshold != want.Threshold || again.Grace != want.Grace || again.Cleanup != want.Cleanup {
			t.Errorf("grace %v: read back as %+v, which configures grace %v (cleanup %v); want %v (%v)",
				grace, first.BlobOffload(), again.Grace, again.Cleanup, want.Grace, want.Cleanup)
		}
	}
}
