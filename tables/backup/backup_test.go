package backup

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/service"
)

// rowsEnv sets the number of rows of the interruption test (default 600); make
// backup-long sets 20,000.
const rowsEnv = "UNIFIED_TABLES_BACKUP_ROWS"

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func azuriteAccount(t *testing.T) *tables.Account {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	acct, err := tables.NewAccount(conn, &tables.Options{
		ClientOptions: azuritetest.ClientOptions(t),
		Blobs:         azblobs.Connect,
		BlobOffload:   &tables.BlobOffloadOptions{Container: "backuppkgtest", CleanupGrace: -1},
		Logger:        quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return acct
}

func tableName(base string) string {
	return base + strconv.FormatUint(rand.Uint64()%1e10, 10)
}

func dropTable(t *testing.T, acct *tables.Account, table string) {
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), table) })
}

func TestCellRoundTrip(t *testing.T) {
	g, _ := service.ParseGuid("5c3f2a1e-0b1d-4e5f-8a9b-0c1d2e3f4a5b")
	vals := []service.Value{
		service.String(""), service.String("a \"quoted\" ünïcode \u2028 line"), service.Binary(nil), service.Binary([]byte{0, 255}),
		service.Bool(false), service.Bool(true), service.Int32(math.MinInt32), service.Int64(math.MaxInt64), service.Int64(math.MinInt64),
		service.Double(0.1), service.Double(math.Copysign(0, -1)), service.Double(math.MaxFloat64), service.Double(math.SmallestNonzeroFloat64),
		service.Double(math.Inf(1)), service.Double(math.Inf(-1)), service.Double(math.NaN()),
		service.DateTime(time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC)), service.DateTime(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)), g,
	}
	for _, v := range vals {
		b, err := json.Marshal(cell{Name: "c", Value: v})
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		var c cell
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		same := c.Value.Equal(v) || (v.Kind() == service.KindDouble && math.IsNaN(v.Float()) && math.IsNaN(c.Value.Float()))
		if v.Kind() == service.KindDouble && !math.IsNaN(v.Float()) {
			same = same && math.Float64bits(c.Value.Float()) == math.Float64bits(v.Float())
		}
		if !same || c.Value.Kind() != v.Kind() {
			t.Errorf("%s reads back as %v (%v), want %v", b, c.Value, c.Value.Kind(), v)
		}
	}
}

type doc struct {
	abstractions.Entity
	N    int
	Text string `table:",split=text"`
	Data []byte `table:",split=binary"`
}

// fill writes n entities over several partitions; with large, every 97th of the first
// thousand holds a value split across continuation rows, every 211th an offloaded one.
func fill(t *testing.T, acct *tables.Account, table string, n int, large bool) {
	t.Helper()
	ctx := context.Background()
	docs, err := tables.For[doc](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	var batch []*doc
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if _, err := docs.UpsertBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := range n {
		d := &doc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%02d|r%06d", i%7, i)}, N: i, Text: strings.Repeat("x", i%50)}
		switch {
		case !large || i >= 1000: // a few large values, whatever the size of the table
		case i%211 == 5:
			d.Data = bytes.Repeat([]byte{byte(i)}, 3_200_000)
		case i%97 == 3:
			d.Data = bytes.Repeat([]byte{byte(i), 1, 2}, 400_000)
		}
		batch = append(batch, d)
		if len(batch) == 100 {
			flush()
		}
	}
	flush()
}

func TestInterruptAndResume(t *testing.T) {
	acct := azuriteAccount(t)
	n := 300 // the long form: make backup-long (BACKUP_ROWS rows)
	if s := os.Getenv(rowsEnv); s != "" {
		n, _ = strconv.Atoi(s)
	}
	old := memberEntities
	memberEntities = max(n/40, 10)
	t.Cleanup(func() { memberEntities = old })
	table := tableName("BackupResume")
	dropTable(t, acct, table)
	fill(t, acct, table, n, true)

	ctx := context.Background()
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.udtb")
	st, err := WriteFile(ctx, acct, table, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entities != int64(n) {
		t.Fatalf("%d entities backed up, want %d", st.Entities, n)
	}
	want, _ := os.ReadFile(ref)
	if _, err := os.Stat(ref + ".checkpoint"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the checkpoint of a complete backup is still there: %v", err)
	}

	for _, parallel := range []int{1, 4} {
		path := filepath.Join(dir, fmt.Sprintf("resumed-%d.udtb", parallel))
		interrupts := 0
		for run := 0; ; run++ {
			rctx, cancel := context.WithCancel(ctx)
			// Cancel after a random number of entities of this run, or at a random time
			// (inside a request, between two); after 30 interruptions, let it finish.
			stopAt := int64(rand.IntN(n/4 + 1))
			first := int64(-1)
			opts := &Options{Parallel: parallel, Progress: func(s Stats) {
				if first < 0 {
					first = s.Entities
				}
				if run < 30 && s.Entities-first >= stopAt {
					cancel()
				}
			}}
			timer := time.AfterFunc(time.Duration(50+rand.IntN(1000))*time.Millisecond, func() {
				if run < 30 && run%3 == 0 {
					cancel()
				}
			})
			_, err := WriteFile(rctx, acct, table, path, opts)
			timer.Stop()
			cancel()
			if err == nil {
				break
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("run %d: %v", run, err)
			}
			interrupts++
			if run%2 == 1 {
				// A killed process leaves bytes after the last checkpoint: a resumed run cuts them.
				f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				f.Write([]byte("half a gzip member"))
				f.Close()
			}
			if run > 60 {
				t.Fatal("the backup never completes")
			}
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, want) {
			t.Errorf("parallel %d, %d interruptions: the resumed archive (%d bytes) differs from an uninterrupted run's (%d)", parallel, interrupts, len(got), len(want))
		}
		t.Logf("parallel %d: %d interruptions, archives identical", parallel, interrupts)
		f, _ := os.Open(path)
		vs, err := Verify(ctx, f, nil)
		f.Close()
		if err != nil || vs.Entities != int64(n) {
			t.Errorf("verify the resumed archive: %+v, %v", vs, err)
		}
	}
}

// TestRawSDKRows backs up rows written with aztables alone and restores them: plain rows
// are plain rows.
func TestRawSDKRows(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	acct := azuriteAccount(t)
	ctx := context.Background()
	src, dst := tableName("BackupRaw"), tableName("BackupRawCopy")
	dropTable(t, acct, src)
	dropTable(t, acct, dst)
	opts := azuritetest.ClientOptions(t)
	svc, err := aztables.NewServiceClientFromConnectionString(conn, &aztables.ClientOptions{ClientOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient(src)
	if _, err := client.CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		e := aztables.EDMEntity{
			Entity: aztables.Entity{PartitionKey: "pk" + strconv.Itoa(i%3), RowKey: fmt.Sprintf("row~%04d", i)},
			Properties: map[string]any{
				"Name": fmt.Sprintf("n%d", i), "Count": int32(i), "Big": aztables.EDMInt64(int64(i) << 40),
				"Ratio": float64(i) / 3, "When": aztables.EDMDateTime(time.Date(2026, 5, i%28+1, 0, 0, 0, 0, time.UTC)),
				"Id": aztables.EDMGUID("00000000-0000-0000-0000-0000000000" + fmt.Sprintf("%02d", i)), "Blob": aztables.EDMBinary([]byte{byte(i)}),
				"Flag": i%2 == 0, "_SplitOf": "not the layout",
			},
		}
		b, _ := json.Marshal(e)
		if _, err := client.UpsertEntity(ctx, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	var archive bytes.Buffer
	if _, err := Write(ctx, acct, src, &archive, nil); err != nil {
		t.Fatal(err)
	}
	st, err := Restore(ctx, acct, dst, &archive, nil)
	if err != nil || st.Entities != 30 {
		t.Fatalf("restore: %+v, %v", st, err)
	}
	// Read both with the SDK and compare the JSON it returns, keys and values, without the
	// service's timestamp and etag.
	read := func(table string) []map[string]any {
		var out []map[string]any
		p := svc.NewClient(table).NewListEntitiesPager(nil)
		for p.More() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range page.Entities {
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				for k, v := range m {
					if strings.HasPrefix(k, "odata.") || k == "Timestamp" {
						delete(m, k)
					}
					// The emulator echoes a time as it was sent: compare instants.
					if m[k+"@odata.type"] == "Edm.DateTime" {
						tm, _ := time.Parse(time.RFC3339Nano, v.(string))
						m[k] = tm.UTC().Format(time.RFC3339Nano)
					}
				}
				out = append(out, m)
			}
		}
		return out
	}
	a, b := read(src), read(dst)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if len(a) != 30 || !bytes.Equal(ja, jb) {
		t.Errorf("the restored rows differ from the SDK's:\n%.2000s\n%.2000s", ja, jb)
	}
}

// flaky answers every third query and transaction with 503 ServerBusy.
type flaky struct {
	service.Tables
	n atomic.Int64
}

func (f *flaky) busy() error {
	if f.n.Add(1)%3 == 0 {
		return &abstractions.StatusError{StatusCode: 503, ErrorCode: "ServerBusy", Message: "throttled by the test"}
	}
	return nil
}

func (f *flaky) Query(ctx context.Context, table string, q service.Query) (service.Page, error) {
	if err := f.busy(); err != nil {
		return service.Page{}, err
	}
	return f.Tables.Query(ctx, table, q)
}

func (f *flaky) Transact(ctx context.Context, table string, a []service.Action) ([]service.Written, error) {
	if err := f.busy(); err != nil {
		return nil, err
	}
	return f.Tables.Transact(ctx, table, a)
}

func TestThrottlingBacksOffAndGoesOn(t *testing.T) {
	acct := azuriteAccount(t)
	old := backoffPause
	backoffPause = func(int) time.Duration { return time.Millisecond }
	t.Cleanup(func() { backoffPause = old })
	table, dst := tableName("BackupBusy"), tableName("BackupBusyCopy")
	dropTable(t, acct, table)
	dropTable(t, acct, dst)
	fill(t, acct, table, 250, false)
	busy := tables.NewAccountOver("busy", &flaky{Tables: acct.Tables()}, acct.Blobs(), &tables.Options{
		BlobOffload: &tables.BlobOffloadOptions{Container: "backuppkgtest"}, Logger: quiet(),
	})
	ctx := context.Background()
	var archive bytes.Buffer
	st, err := Write(ctx, busy, table, &archive, &Options{Logger: quiet(), Parallel: 3})
	if err != nil || st.Entities != 250 || st.Retries == 0 {
		t.Fatalf("backup: %+v, %v", st, err)
	}
	rst, err := Restore(ctx, busy, dst, &archive, &Options{Logger: quiet()})
	if err != nil || rst.Entities != 250 || rst.Retries == 0 {
		t.Fatalf("restore: %+v, %v", rst, err)
	}
}

// TestDamagedArchives checks that Verify and Restore refuse an archive that was cut or
// changed anywhere that matters.
func TestDamagedArchives(t *testing.T) {
	acct := azuriteAccount(t)
	ctx := context.Background()
	table := tableName("BackupDamage")
	dropTable(t, acct, table)
	fill(t, acct, table, 12, true) // entity 3 is split across continuation rows, entity 5 offloaded
	var archive bytes.Buffer
	if _, err := Write(ctx, acct, table, &archive, nil); err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(&archive)
	plain, _ := io.ReadAll(zr)
	lines := strings.Split(strings.TrimSuffix(string(plain), "\n"), "\n")
	if _, err := Verify(ctx, strings.NewReader(string(plain)), nil); err != nil {
		t.Fatalf("the uncompressed archive: %v", err)
	}
	join := func(ls []string) string { return strings.Join(ls, "\n") + "\n" }
	edit := func(match, from, to string) string {
		out := append([]string(nil), lines...)
		for i, l := range out {
			if strings.Contains(l, match) {
				out[i] = strings.Replace(l, from, to, 1)
				return join(out)
			}
		}
		t.Fatalf("no line holds %q", match)
		return ""
	}
	chunkLine := func() string {
		for _, l := range lines {
			if strings.HasPrefix(l, `{"type":"chunk"`) {
				return l
			}
		}
		t.Fatal("no chunk")
		return ""
	}()
	damaged := map[string]string{
		"no trailer":       join(lines[:len(lines)-1]),
		"cut in a blob":    join(lines[:3]),
		"wrong count":      edit(`"type":"end"`, `"entities":12`, `"entities":11`),
		"blob bytes":       edit(chunkLine, `"data":"`, `"data":"AAAA`),
		"split chunk":      edit(`Data__c1`, `"Edm.Binary","`, `"Edm.Binary","AAAA`),
		"dropped row":      editDropRow(t, lines),
		"newer version":    edit(`"type":"header"`, `"version":1`, `"version":2`),
		"not an archive":   "{\"hello\":1}\n",
		"trailing garbage": join(append(append([]string(nil), lines...), `{"type":"entity"}`)),
	}
	// Edits the service would refuse, or take as something else, that the checksums do not
	// see in a plain archive (one edited with jq): a key it forbids, a property name it
	// forbids, an entity twice in a row (the trailer counting it).
	entityLine := func() int {
		for i, l := range lines {
			if strings.Contains(l, `"rk":"r000010"`) {
				return i
			}
		}
		t.Fatal("no entity r000010")
		return 0
	}()
	damaged["a forbidden key"] = edit(`"rk":"r000010"`, `"rk":"r000010"`, `"rk":"r0/0010"`)
	damaged["a forbidden property name"] = edit(`"rk":"r000010"`, `"Text"`, `"Te-xt"`)
	twice := append(append(append([]string(nil), lines[:entityLine+1]...), lines[entityLine]), lines[entityLine+1:]...)
	var end map[string]any
	if err := json.Unmarshal([]byte(twice[len(twice)-1]), &end); err != nil {
		t.Fatal(err)
	}
	end["entities"], end["rows"] = end["entities"].(float64)+1, end["rows"].(float64)+1
	b, _ := json.Marshal(end)
	twice[len(twice)-1] = string(b)
	damaged["an entity twice"] = join(twice)
	// The compressed archive twice over (a script that appends instead of writing), and
	// followed by zero bytes (the padding some copies add).
	whole := archive.Bytes()
	damaged["compressed, twice"] = string(whole) + string(whole)
	damaged["compressed, padded"] = string(whole) + string(make([]byte, 512))
	for name, text := range damaged {
		vst, err := Verify(ctx, strings.NewReader(text), nil)
		if err == nil {
			t.Errorf("%s: Verify accepts it", name)
			continue
		}
		if name != "newer version" && !errors.Is(err, abstractions.ErrIntegrity) {
			t.Errorf("%s: %v, want ErrIntegrity", name, err)
		}
		// Restore fails the same way (it once panicked when the damage came after the
		// trailer), having written the whole entities Verify counts before the damage.
		dst := tableName("BackupDamageTo")
		dropTable(t, acct, dst)
		rst, rerr := Restore(ctx, acct, dst, strings.NewReader(text), nil)
		switch {
		case rerr == nil:
			t.Errorf("%s: Restore accepts it", name)
		case name != "newer version" && !errors.Is(rerr, abstractions.ErrIntegrity):
			t.Errorf("%s: Restore: %v, want ErrIntegrity", name, rerr)
		case rst.Entities != vst.Entities:
			t.Errorf("%s: Restore wrote %d entities, Verify counts %d whole ones before the damage", name, rst.Entities, vst.Entities)
		}
	}
}

// editDropRow removes the last continuation row of the entity that has them.
func editDropRow(t *testing.T, lines []string) string {
	out := append([]string(nil), lines...)
	for i, l := range out {
		if !strings.Contains(l, `"_SplitOf"`) {
			continue
		}
		var rec map[string]any
		_ = json.Unmarshal([]byte(l), &rec)
		rows := rec["rows"].([]any)
		rec["rows"] = rows[:len(rows)-1]
		b, _ := json.Marshal(rec)
		out[i] = string(b)
		return strings.Join(out, "\n") + "\n"
	}
	t.Fatal("no entity with continuation rows")
	return ""
}

// TestResumePartitions interrupts a backup of some partitions once, at each possible
// member, and resumes it.
func TestResumePartitions(t *testing.T) {
	acct := azuriteAccount(t)
	old := memberEntities
	memberEntities = 10
	t.Cleanup(func() { memberEntities = old })
	table := tableName("BackupParts")
	dropTable(t, acct, table)
	fill(t, acct, table, 140, false)
	ctx := context.Background()
	parts := []string{"p03", "p01", "p03"} // in any order, repeated: p01 then p03
	var want bytes.Buffer
	st, err := Write(ctx, acct, table, &want, &Options{Partitions: parts})
	if err != nil || st.Entities != 40 {
		t.Fatalf("%+v, %v", st, err)
	}
	path := filepath.Join(t.TempDir(), "parts.udtb")
	for stop := int64(5); ; stop += 7 {
		rctx, cancel := context.WithCancel(ctx)
		_, err := WriteFile(rctx, acct, table, path, &Options{Partitions: parts, Progress: func(s Stats) {
			if s.Entities >= stop {
				cancel()
			}
		}})
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		// Another backup's checkpoint is refused.
		if _, err := WriteFile(ctx, acct, table, path, nil); err == nil || !strings.Contains(err.Error(), "another backup") {
			t.Fatalf("a backup of the whole table over this checkpoint: %v", err)
		}
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the resumed archive differs from Write's")
	}
}

// TestRestoreQuotedKeys backs up and restores keys holding single quotes, which a restore's
// transactions upsert (Azure's adapter doubles the quote in each action's URL).
func TestRestoreQuotedKeys(t *testing.T) {
	acct := azuriteAccount(t)
	ctx := context.Background()
	src, dst := tableName("BackupQuotes"), tableName("BackupQuotesTo")
	dropTable(t, acct, src)
	dropTable(t, acct, dst)
	docs, err := tables.For[doc](acct, &tables.StoreOptions{Table: src})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"customers|Adams", "customers|O'Brien", "it's|''"}
	for i, id := range ids {
		if err := docs.Upsert(ctx, &doc{Entity: abstractions.Entity{ID: id}, N: i}); err != nil {
			t.Fatal(err)
		}
	}
	var archive bytes.Buffer
	if _, err := Write(ctx, acct, src, &archive, nil); err != nil {
		t.Fatal(err)
	}
	st, err := Restore(ctx, acct, dst, &archive, nil)
	if err != nil || st.Entities != int64(len(ids)) {
		t.Fatalf("restore: %+v, %v", st, err)
	}
	restored, _ := tables.For[doc](acct, &tables.StoreOptions{Table: dst})
	for i, id := range ids {
		if got, err := restored.One(ctx, id); err != nil || got.N != i {
			t.Errorf("%s: %+v, %v", id, got, err)
		}
	}
}

// cancellingReader cancels a context once n bytes have been read through it.
type cancellingReader struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	if len(p) > 64 {
		p = p[:64]
	}
	k, err := c.r.Read(p)
	if c.n -= k; c.n <= 0 {
		c.cancel()
	}
	return k, err
}

// TestRestoreCancelledNamesTheTable cancels a restore while it reads the archive: however
// the end is seen, the error is a StoreError naming the table that matches
// context.Canceled, and the table holds what Stats counts.
func TestRestoreCancelledNamesTheTable(t *testing.T) {
	acct := azuriteAccount(t)
	src, dst := tableName("BackupCancel"), tableName("BackupCancelTo")
	dropTable(t, acct, src)
	dropTable(t, acct, dst)
	fill(t, acct, src, 300, false)
	var archive bytes.Buffer
	if _, err := Write(context.Background(), acct, src, &archive, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := Restore(ctx, acct, dst, &cancellingReader{r: &archive, n: archive.Len() / 2, cancel: cancel}, nil)
	var se *abstractions.StoreError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || se.Table != dst {
		t.Fatalf("a cancelled restore: %v (%+v)", err, st)
	}
	docs, _ := tables.For[doc](acct, &tables.StoreOptions{Table: dst})
	if n, err := docs.CountAll(context.Background()); err != nil || int64(n) != st.Entities {
		t.Errorf("the table holds %d entities (%v); Stats says %d", n, err, st.Entities)
	}
}
