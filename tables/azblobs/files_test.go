package azblobs_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azuritetest"
)

// These tests write a large file through the library and read it back, against Azurite,
// and check that the content never sits in memory. FILES_TEST_MB sets the size (20 MB by
// default, so "make test" stays quick; "make files-bench" runs 200 MB).

// Attachment is the entity of the file tests.
type Attachment struct {
	abstractions.Entity
	Name string
	File *abstractions.File
}

// heapBound is the most the heap may grow while a file is written and read back.
const heapBound = 32 << 20

func fileSize(t testing.TB) int64 {
	mb := 20
	if s := os.Getenv("FILES_TEST_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("FILES_TEST_MB=%q is not a positive number of megabytes", s)
		}
		mb = n
	}
	return int64(mb) * 1_000_000
}

// clientOptions give each test a transport of its own, closed when it ends (goleak), and,
// unlike azuritetest.ClientOptions, the SDK's default retries, as a program moving large
// files would keep them.
func clientOptions(t testing.TB) azcore.ClientOptions {
	o := azuritetest.ClientOptions(t)
	o.Retry = policy.RetryOptions{}
	return o
}

// generator is a deterministic io.ReadSeeker of n bytes that holds none of them: it
// copies from a table of 1 MiB at an offset its seed moves, so reading it costs little
// more than a copy (as reading a file from the page cache would).
type generator struct {
	n, off int64
	seed   uint64
}

var pattern = func() []byte {
	b := make([]byte, 1<<20+4096)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}()

func (g *generator) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.n-g.off)]
	done := 0
	for done < len(p) {
		// Each MiB of the content starts at an offset of the table its index and the seed
		// choose, so two seeds give two contents.
		pos := g.off + int64(done)
		mib := uint64(pos >> 20)
		start := int((mib*2654435761 + g.seed*40503) % 4096)
		in := int(pos & (1<<20 - 1))
		done += copy(p[done:], pattern[start+in:start+1<<20])
	}
	g.off += int64(len(p))
	return len(p), nil
}

func (g *generator) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += g.off
	case io.SeekEnd:
		off += g.n
	}
	if off < 0 {
		return 0, errors.New("negative position")
	}
	g.off = off
	return off, nil
}

// streamOnly hides Seek: a reader the library copies to a temporary file.
type streamOnly struct{ r io.Reader }

func (s *streamOnly) Read(p []byte) (int, error) { return s.r.Read(p) }

// growth is how much the process grew while a function ran.
type growth struct {
	// heap is the peak of runtime.MemStats.HeapAlloc above its value before (after a
	// collection).
	heap uint64
	// rss is the peak resident set size above its value before, from /proc/self/statm
	// (0 where there is none). It also counts memory outside the Go heap, such as the
	// memory-mapped block buffers of the SDK's staged uploads.
	rss uint64
}

// measure samples the heap and the resident set every 10 ms while fn runs.
func measure(fn func()) growth {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, baseRSS := ms.HeapAlloc, rss()
	peakHeap, peakRSS := baseHeap, baseRSS
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				peakHeap = max(peakHeap, m.HeapAlloc)
				peakRSS = max(peakRSS, rss())
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	runtime.ReadMemStats(&ms)
	peakHeap = max(peakHeap, ms.HeapAlloc)
	return growth{heap: peakHeap - baseHeap, rss: peakRSS - baseRSS}
}

// rss returns the resident set size, or 0 where /proc/self/statm is missing.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

func fileStore(t testing.TB) *tables.Store[Attachment] {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	container := "files-" + strings.ToLower(rand.Text()[:12])
	acct, err := tables.NewAccount(conn, &tables.Options{
		ClientOptions: clientOptions(t),
		Blobs:         azblobs.Connect,
		// Replaced blobs are deleted at once, so the emulator does not keep them all.
		BlobOffload: &tables.BlobOffloadOptions{Container: container, CleanupGrace: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acct.Blobs().DeleteContainer(context.Background(), container) })
	s, err := tables.For[Attachment](acct, &tables.StoreOptions{Table: "FilesTest"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// roundTrip writes a file of n bytes from src and reads it back through the library.
func roundTrip(t testing.TB, s *tables.Store[Attachment], id string, src io.Reader, n int64) {
	t.Helper()
	timedRoundTrip(t, s, id, src, n)
}

func TestFileHeapBound(t *testing.T) {
	s := fileStore(t)
	n := fileSize(t)
	ctx := context.Background()
	t.Cleanup(func() {
		_, _ = s.Delete(context.Background(), "heap|seekable", "")
		_, _ = s.Delete(context.Background(), "heap|stream", "")
	})
	for _, tc := range []struct {
		name string
		src  func(seed uint64) io.Reader
	}{
		{"seekable", func(seed uint64) io.Reader { return &generator{n: n, seed: seed} }},
		{"stream", func(seed uint64) io.Reader { return &streamOnly{&generator{n: n, seed: seed}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Warm up: the clients, the table and the container exist before measuring. The
			// measured write has other content, so it uploads a new blob.
			roundTrip(t, s, "heap|"+tc.name, tc.src(1), n)
			g := measure(func() { roundTrip(t, s, "heap|"+tc.name, tc.src(2), n) })
			t.Logf("%s: %d MB written and read back; the Go heap grew by at most %.1f MiB, the resident set by %.1f MiB",
				tc.name, n/1_000_000, float64(g.heap)/(1<<20), float64(g.rss)/(1<<20))
			if g.heap >= heapBound {
				t.Errorf("the heap grew by %d bytes, more than %d", g.heap, heapBound)
			}
			if g.rss >= heapBound {
				t.Errorf("the resident set grew by %d bytes, more than %d", g.rss, heapBound)
			}
		})
	}
	_ = ctx
}

// BenchmarkFileRoundTrip writes and reads back files of FILES_TEST_MB megabytes, through the
// library and with azblob directly (UploadStream at the SDK's defaults, then DownloadStream
// and its retry reader), on the same emulator. Each iteration is one round trip of each,
// every time with new content, the order alternating from one iteration to the next, so
// that both see the same conditions however the emulator's speed drifts during the run
// ("make files-bench" runs FILES_BENCH_ROUNDS of them, 7 by default). It reports the median
// of each side's round trip, upload and download in seconds, and the ratio of the medians
// (library/azblob); the log lists every round.
func BenchmarkFileRoundTrip(b *testing.B) {
	n := fileSize(b)
	s := fileStore(b)
	c, err := azblob.NewClientFromConnectionString(azuritetest.ConnectionString(b), &azblob.ClientOptions{ClientOptions: clientOptions(b)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	container := "files-raw-" + strings.ToLower(rand.Text()[:12])
	if _, err := c.CreateContainer(ctx, container, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = c.DeleteContainer(context.Background(), container, nil)
		_, _ = s.Delete(context.Background(), "bench|lib", "")
	})
	var lib, raw []roundTimes
	seed := uint64(time.Now().UnixNano())
	library := func() {
		// New content each time: identical content would reuse its blob.
		seed++
		lib = append(lib, timedRoundTrip(b, s, "bench|lib", &generator{n: n, seed: seed}, n))
	}
	direct := func() {
		seed++
		raw = append(raw, rawRoundTrip(b, c, container, &generator{n: n, seed: seed}, n))
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			library()
			direct()
		} else {
			direct()
			library()
		}
	}
	b.StopTimer()
	for i := range lib {
		b.Logf("round %d: library %.2f s (up %.2f, down %.2f), azblob %.2f s (up %.2f, down %.2f)", i+1,
			lib[i].total().Seconds(), lib[i].up.Seconds(), lib[i].down.Seconds(),
			raw[i].total().Seconds(), raw[i].up.Seconds(), raw[i].down.Seconds())
	}
	l, r := medianTimes(lib), medianTimes(raw)
	b.Logf("%d MB, median of %d rounds: library %.2f s (up %.2f, down %.2f), azblob defaults %.2f s (up %.2f, down %.2f); library/azblob %.2f (up %.2f, down %.2f)",
		n/1_000_000, len(lib), l.total.Seconds(), l.up.Seconds(), l.down.Seconds(), r.total.Seconds(), r.up.Seconds(), r.down.Seconds(),
		l.total.Seconds()/r.total.Seconds(), l.up.Seconds()/r.up.Seconds(), l.down.Seconds()/r.down.Seconds())
	b.ReportMetric(l.total.Seconds(), "lib-s")
	b.ReportMetric(r.total.Seconds(), "azblob-s")
	b.ReportMetric(l.total.Seconds()/r.total.Seconds(), "lib/azblob")
	b.ReportMetric(l.up.Seconds()/r.up.Seconds(), "up-lib/azblob")
	b.ReportMetric(l.down.Seconds()/r.down.Seconds(), "down-lib/azblob")
}

// roundTimes are the two halves of one round trip.
type roundTimes struct{ up, down time.Duration }

func (t roundTimes) total() time.Duration { return t.up + t.down }

// medians are the medians of each measure of a list of round trips, taken one by one.
type medians struct{ total, up, down time.Duration }

func medianTimes(ts []roundTimes) medians {
	median := func(f func(roundTimes) time.Duration) time.Duration {
		d := make([]time.Duration, len(ts))
		for i, t := range ts {
			d[i] = f(t)
		}
		slices.Sort(d)
		if len(d)%2 == 1 {
			return d[len(d)/2]
		}
		return (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	return medians{
		total: median(roundTimes.total),
		up:    median(func(t roundTimes) time.Duration { return t.up }),
		down:  median(func(t roundTimes) time.Duration { return t.down }),
	}
}

// timedRoundTrip is roundTrip, timed: the upload is the Upsert (hashing, upload and row),
// the download the read of the entity and of its whole file.
func timedRoundTrip(t testing.TB, s *tables.Store[Attachment], id string, src io.Reader, n int64) roundTimes {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	if err := s.Upsert(ctx, &Attachment{Entity: abstractions.Entity{ID: id}, File: abstractions.FileFromReader(src, "application/octet-stream")}); err != nil {
		t.Fatal(err)
	}
	up := time.Since(start)
	start = time.Now()
	got, err := s.One(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := got.File.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil || m != n {
		t.Fatalf("read back %d of %d bytes: %v", m, n, err)
	}
	return roundTimes{up: up, down: time.Since(start)}
}

// rawRoundTrip writes src with azblob's UploadStream at its defaults and reads it back with
// DownloadStream and its retry reader.
func rawRoundTrip(t testing.TB, c *azblob.Client, container string, src io.Reader, n int64) roundTimes {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	if _, err := c.UploadStream(ctx, container, "raw", src, nil); err != nil {
		t.Fatal(err)
	}
	up := time.Since(start)
	start = time.Now()
	resp, err := c.DownloadStream(ctx, container, "raw", nil)
	if err != nil {
		t.Fatal(err)
	}
	body := resp.NewRetryReader(ctx, nil)
	m, err := io.Copy(io.Discard, body)
	body.Close()
	if err != nil || m != n {
		t.Fatalf("read back %d of %d bytes: %v", m, n, err)
	}
	return roundTimes{up: up, down: time.Since(start)}
}
