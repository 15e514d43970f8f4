package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/unified-data/gotables/tables/azservice"
	"github.com/unified-data/gotables/tables/azuritetest"
)

// longEnv, set to 1, runs the tests at the full sizes but for the bulk upserts (300 rows)
// instead of TinySizes: make bench sets it. Without it the whole package takes seconds.
const longEnv = "UNIFIED_TABLES_BENCH_LONG"

// testSizes are the sizes the tests run the workloads with.
func testSizes() Sizes {
	if os.Getenv(longEnv) == "1" {
		return Sizes{BulkRows: 300}.withDefaults()
	}
	return TinySizes
}

// workloadNames are the workloads both backends run.
func workloadNames(z Sizes) []string {
	return []string{
		"point read", "point read (cache on)", "insert", "upsert", "update (Strict)",
		z.queryName(), z.pageName(), z.batchName(), z.countName(),
	}
}

// TestFullSizeNames pins the names of the workloads at the full sizes: the published
// figures and the chart of the docs name them so.
func TestFullSizeNames(t *testing.T) {
	z := Sizes{}.withDefaults()
	got := append(workloadNames(z), z.largeName("write"), z.largeName("read"), z.hotRowName())
	want := []string{"point read", "point read (cache on)", "insert", "upsert", "update (Strict)",
		"query 1,000-row partition", "page of 100", "batch upsert 1,000 rows / 10 partitions", "count 10,000 rows",
		"write 1 MB text (split)", "read 1 MB text (split)", "hot row: 32x25 Mutate (floor: 800 read+update pairs)"}
	if !slices.Equal(got, want) {
		t.Errorf("names at the full sizes:\n got %q\nwant %q", got, want)
	}
	if z.BulkRows != 10_000 || z.ReadRows != 100 || z.HotWorkers*z.HotEach != 800 {
		t.Errorf("full sizes %+v", z)
	}
}

// TestTinySizesKeepEveryPath checks that the tests' sizes still reach what the full sizes
// reach: a large value with a continuation row, partitions of more than one page.
func TestTinySizesKeepEveryPath(t *testing.T) {
	z := TinySizes
	ents, err := rawLargeEntities("p", "r", largeValue(z.LargeChars))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) < 2 {
		t.Errorf("the tiny large value fills %d row, want a continuation row too", len(ents))
	}
	if z.ListRows < 2*z.PageRows || z.CountRows <= z.PageRows || z.BatchRows < 2*batchParts || z.BulkRows < 2*bulkParts || z.HotWorkers < 2 {
		t.Errorf("TinySizes %+v lose a path", z)
	}
	if err := z.check(); err != nil {
		t.Error(err)
	}
	if err := Run(context.Background(), Config{Sizes: Sizes{ListRows: 25, PageRows: 10}}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "multiple of PageRows") {
		t.Errorf("Run with 25 rows in pages of 10 = %v, want a refusal", err)
	}
}

// decode parses the JSON output and checks the fields every row must have.
func decode(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, out)
	}
	for _, r := range rows {
		for _, k := range []string{"workload", "backend", "library_median_ns", "raw_median_ns", "ratio", "library_allocs_per_op"} {
			if _, ok := r[k]; !ok {
				t.Errorf("row %v has no %q", r, k)
			}
		}
	}
	return rows
}

// byBackend returns the rows of one backend, by workload, checking every workload is there.
func byBackend(t *testing.T, rows []map[string]any, backend string, z Sizes) map[string]map[string]any {
	t.Helper()
	got := map[string]map[string]any{}
	for _, r := range rows {
		if r["backend"] == backend {
			got[r["workload"].(string)] = r
		}
	}
	for _, w := range workloadNames(z) {
		if got[w] == nil {
			t.Errorf("%s: no row for %q", backend, w)
		}
	}
	for w, r := range got {
		if r["status"] != StatusMeasured {
			t.Errorf("%s: %q is %v, want a measured row", backend, w, r)
		}
	}
	return got
}

func TestRunMemory(t *testing.T) {
	var out, progress bytes.Buffer
	if err := Run(context.Background(), Config{Ops: 4, JSON: true, Progress: &progress, Sizes: testSizes()}, &out); err != nil {
		t.Fatal(err)
	}
	rows := decode(t, out.Bytes())
	mem := byBackend(t, rows, BackendMemory, testSizes())
	for name, r := range mem {
		if ns, _ := r["library_median_ns"].(float64); ns <= 0 {
			t.Errorf("%s: library_median_ns = %v", name, r["library_median_ns"])
		}
		if r["raw_median_ns"] != nil || r["ratio"] != nil {
			t.Errorf("%s: the memory backend has no raw side, got %v", name, r)
		}
		if a, ok := r["library_allocs_per_op"].(float64); !ok || a <= 0 {
			t.Errorf("%s: library_allocs_per_op = %v", name, r["library_allocs_per_op"])
		}
	}
	if _, ok := mem["point read"]["target_met"].(bool); !ok {
		t.Errorf("memory point read has no verdict on its target: %v", mem["point read"])
	}
	if !strings.Contains(progress.String(), "bench: memory: point read") {
		t.Errorf("no progress lines:\n%s", progress.String())
	}
}

func TestRunTextOutput(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), Config{Ops: 2, Concurrency: 2, Sizes: testSizes()}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, w := range append(workloadNames(testSizes()), "library median", "allocs/op is only counted with concurrency 1") {
		if !strings.Contains(s, w) {
			t.Errorf("text output lacks %q:\n%s", w, s)
		}
	}
}

func TestRunRefusesBadConnectionString(t *testing.T) {
	err := Run(context.Background(), Config{ConnectionString: "this is not one", SkipMemory: true}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "connection string") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run = %v, want one line about the connection string", err)
	}
}

func TestRunUnreachableEndpoint(t *testing.T) {
	// Port 1 on the loopback interface refuses connections; the SDK would retry for long.
	conn := strings.Replace(DevelopmentConnectionString, "127.0.0.1:10002", "127.0.0.1:1", 1)
	start := time.Now()
	err := Run(context.Background(), Config{ConnectionString: conn, SkipMemory: true, ConnectTimeout: 2 * time.Second}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("Run succeeded against a closed port")
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("Run took %v to give up", time.Since(start))
	}
	t.Log(err)
}

// deletedTables returns the names in the "deleted table" progress lines.
func deletedTables(progress string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`deleted table (\w+)`).FindAllStringSubmatch(progress, -1) {
		names = append(names, m[1])
	}
	return names
}

// checkGone fails the test unless every named table is gone from the account.
func checkGone(t *testing.T, conn string, names []string) {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	svc, err := azservice.NewFromConnectionString(conn, &azservice.Options{
		ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if ok, err := svc.TableExists(context.Background(), n); err != nil || ok {
			t.Errorf("table %s still exists (%v)", n, err)
		}
	}
}

func TestRunAzurite(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	z := testSizes()
	var out, progress bytes.Buffer
	if err := Run(context.Background(), Config{ConnectionString: conn, Ops: 3, Sizes: z, JSON: true, SkipMemory: true, Progress: &progress}, &out); err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	az := byBackend(t, decode(t, out.Bytes()), BackendAzure, z)
	for name, r := range az {
		if name == z.hotRowName() || name == azcoreUpsertName {
			continue // no raw side; checked below
		}
		if ratio, _ := r["ratio"].(float64); ratio <= 0 {
			t.Errorf("%s: ratio = %v", name, r["ratio"])
		}
		if ns, _ := r["raw_median_ns"].(float64); ns <= 0 {
			t.Errorf("%s: raw_median_ns = %v", name, r["raw_median_ns"])
		}
	}
	// The single-row operations have the floor beside them, and their CPU time per operation.
	for _, name := range []string{"point read", "insert", "upsert", "update (Strict)"} {
		r := az[name]
		for _, k := range []string{"floor_median_ns", "library_floor_ratio", "raw_floor_ratio", "library_cpu_ns_per_op", "raw_cpu_ns_per_op",
			"floor_cpu_ns_per_op", "library_floor_cpu_ratio"} {
			if v, _ := r[k].(float64); v <= 0 {
				t.Errorf("%s: %s = %v", name, k, r[k])
			}
		}
		goal := floorWrite
		if name == "point read" {
			goal = floorRead
		}
		if _, ok := r["floor_target_met"].(bool); !ok || r["floor_target"] != goal.String() {
			t.Errorf("%s: no verdict on the floor target: %v", name, r)
		}
	}
	for _, name := range []string{z.largeName("write"), z.largeName("read")} {
		if az[name] == nil {
			t.Errorf("no row for %q", name)
		}
	}
	for _, d := range bulkDegrees {
		if name := fmt.Sprintf("batch upsert %s rows / %d partitions, degree %d", thousands(z.BulkRows), bulkParts, d); az[name] == nil {
			t.Errorf("no row for %q", name)
		}
	}
	for _, name := range []string{"insert, indexed (÷ unindexed)", "insert, indexed (÷ raw transaction of its two rows)", "update (Strict), indexed (÷ unindexed)", z.lookupName()} {
		if az[name] == nil {
			t.Errorf("no row for %q", name)
		}
	}
	// The floor's upsert through azcore's pipeline has the floor beside it, and no target.
	if r := az[azcoreUpsertName]; r == nil {
		t.Errorf("no row for %q", azcoreUpsertName)
	} else {
		for _, k := range []string{"floor_median_ns", "library_floor_ratio", "library_cpu_ns_per_op", "floor_cpu_ns_per_op", "library_floor_cpu_ratio"} {
			if v, _ := r[k].(float64); v <= 0 {
				t.Errorf("%s: %s = %v", azcoreUpsertName, k, r[k])
			}
		}
		if r["floor_target"] != nil || r["target"] != nil {
			t.Errorf("%s has a target: %v", azcoreUpsertName, r)
		}
	}
	if want := len(workloadNames(z)) + 2 + len(bulkDegrees) + 1 + 4 + 1; len(az) != want {
		t.Errorf("%d azure rows, want %d", len(az), want)
	}
	hot := az[z.hotRowName()]
	if hot == nil || hot["ops"] != float64(z.HotWorkers*z.HotEach) || hot["library_floor_ratio"] == nil || hot["floor_target_met"] == nil ||
		!strings.Contains(fmt.Sprint(hot["note"]), "ran out of attempts") {
		t.Errorf("the hot-row row: %v", hot)
	}
	names := deletedTables(progress.String())
	if len(names) != 2 { // the workloads' table and the index workloads'
		t.Fatalf("progress names %d deleted tables:\n%s", len(names), progress.String())
	}
	checkGone(t, conn, names)
}

// cancelAt is a progress writer that cancels a context when a line contains a marker.
type cancelAt struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelAt) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes.Contains(p, []byte(c.marker)) {
		c.cancel()
	}
	return c.buf.Write(p)
}

func TestRunAzuriteCancelledCleansUp(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &cancelAt{marker: "insert:", cancel: cancel}
	var out bytes.Buffer
	err := Run(ctx, Config{ConnectionString: conn, Ops: 50, Sizes: testSizes(), SkipMemory: true, Progress: progress}, &out)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	// The rows measured before the interrupt are printed.
	checkPartialTable(t, out.String(), BackendAzure, "it was interrupted", "point read", "point read (cache on)")
	names := deletedTables(progress.buf.String())
	if len(names) != 2 { // the workloads' table and the index workloads'
		t.Fatalf("progress names %d deleted tables:\n%s", len(names), progress.buf.String())
	}
	checkGone(t, conn, names)
}

// checkPartialTable checks the text table of a run stopped after the workloads want: a row
// of each on backend, no other row, and the line saying why it stopped.
func checkPartialTable(t *testing.T, table, backend, why string, want ...string) {
	t.Helper()
	var got []string
	lines := strings.Split(table, "\n")
	for _, line := range lines[1:] { // after the header
		if line == "" {
			break // the legend follows
		}
		name, rest, ok := strings.Cut(line, "  "+backend+" ")
		if !ok {
			t.Errorf("a row not of the %s backend: %q", backend, line)
			continue
		}
		if !strings.Contains(rest, "µs") && !strings.Contains(rest, "ms") && !strings.Contains(rest, "ns") {
			t.Errorf("a row without a median: %q", line)
		}
		got = append(got, strings.TrimSpace(name))
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q:\n%s", got, want, table)
	}
	last := fmt.Sprintf("incomplete: %s; the %d rows above were measured before, the workloads after them did not run.\n", why, len(want))
	if !strings.HasPrefix(table, "workload ") || !strings.HasSuffix(table, last) {
		t.Errorf("the table does not start with its header and end with %q:\n%s", last, table)
	}
}

// An interrupted run (udtables bench on SIGINT or SIGTERM) prints the rows it measured
// before the interrupt, and returns the cancellation.
func TestRunMemoryInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &cancelAt{marker: "memory: insert:", cancel: cancel}
	var out bytes.Buffer
	err := Run(ctx, Config{Ops: 4, Sizes: testSizes(), Progress: progress}, &out)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	checkPartialTable(t, out.String(), BackendMemory, "it was interrupted", "point read", "point read (cache on)")

	// As JSON: the array of the rows measured.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	progress = &cancelAt{marker: "memory: upsert:", cancel: cancel}
	out.Reset()
	err = Run(ctx, Config{Ops: 4, Sizes: testSizes(), Progress: progress, JSON: true}, &out)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	var names []string
	for _, r := range decode(t, out.Bytes()) {
		names = append(names, fmt.Sprint(r["workload"]))
	}
	if want := []string{"point read", "point read (cache on)", "insert"}; !slices.Equal(names, want) {
		t.Errorf("JSON rows %q, want %q", names, want)
	}
}

// A run cancelled before its first workload ends says so, with the table's header.
func TestRunInterruptedBeforeAnyRow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := Run(ctx, Config{Ops: 4, Sizes: testSizes()}, &out)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	checkPartialTable(t, out.String(), BackendMemory, "it was interrupted")
}

func TestStoppedSaysWhy(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	<-expired.Done()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{context.Background(), nil, ""},
		{expired, expired.Err(), "its deadline passed"},
		{context.Background(), errors.New("insert (library):\n 503 busy"), "a workload failed: insert (library): 503 busy"},
	} {
		if got := stopped(c.ctx, c.err); got != c.want {
			t.Errorf("stopped(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestOnlySelectsWorkloadsByName(t *testing.T) {
	all := Config{}
	some := Config{Only: []string{"indexed", "find by index"}}
	for _, c := range []struct {
		name      string
		all, some bool
	}{
		{"insert", true, false},
		{"insert, indexed (÷ unindexed)", true, true},
		{"find by index in 10,000 rows (÷ filtered scan)", true, true},
	} {
		if all.selected(c.name) != c.all || some.selected(c.name) != c.some {
			t.Errorf("%q: selected %v and %v, want %v and %v", c.name, all.selected(c.name), some.selected(c.name), c.all, c.some)
		}
	}
}
