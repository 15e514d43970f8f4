package bench

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/backup"
)

// BackupConfig says what RunBackup measures.
type BackupConfig struct {
	// ConnectionString names the account (Azurite or Azure).
	ConnectionString string
	// Rows is the number of rows of the table backed up and restored (default 100,000),
	// over 10 partitions.
	Rows int
	// Dir is where the archives are written (default os.TempDir()).
	Dir string
}

// BackupResult is one side's figures: the time of the backup and of the restore, the most
// the heap grew above its level before each, and the rows the restore left in its tables
// (counted after each restore, outside the timings).
type BackupResult struct {
	Side                        string
	Backup, Restore             time.Duration
	BackupHeap, RestoreHeap     uint64
	ArchiveBytes                int64
	BackupRowsPS, RestoreRowsPS float64
	RestoredRows                int64
}

// RunBackup backs up and restores a table of cfg.Rows rows twice, a partition at a time:
// with package backup and with hand-written aztables code doing the same work (the list pager writing gzip-compressed
// JSON Lines; reading them back into entity-group transactions of 100 rows). It prints a
// table with the ratio of the library's time to the hand-written code's (below 1 is faster)
// and returns both sides' results.
func RunBackup(ctx context.Context, cfg BackupConfig, out io.Writer) ([]BackupResult, error) {
	if cfg.Rows == 0 {
		cfg.Rows = 100_000
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	cs := rawConnectionString(cfg.ConnectionString)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	defer tr.CloseIdleConnections()
	client := azcore.ClientOptions{Transport: &http.Client{Transport: tr}}
	svc, err := aztables.NewServiceClientFromConnectionString(cs, &aztables.ClientOptions{ClientOptions: client})
	if err != nil {
		return nil, err
	}
	acct, err := tables.NewAccount(cs, &tables.Options{ClientOptions: client})
	if err != nil {
		return nil, err
	}
	sfx := fmt.Sprint(rand.Uint32())
	src := "BenchBackup" + sfx
	defer func() { _, _ = svc.DeleteTable(context.WithoutCancel(ctx), src, nil) }()
	if err := seedBackupTable(ctx, svc.NewClient(src), cfg.Rows); err != nil {
		return nil, fmt.Errorf("seeding %d rows: %w", cfg.Rows, err)
	}
	// One untimed pass over the table first, so that neither side pays for a cold emulator.
	warm := svc.NewClient(src).NewListEntitiesPager(nil)
	for warm.More() {
		if _, err := warm.NextPage(ctx); err != nil {
			return nil, err
		}
	}

	// The work is done a partition at a time, the two sides alternating (which goes first
	// alternates too), so that a change of the emulator's speed during the run (its tables
	// growing, other clients) weighs on both alike.
	var lib, raw BackupResult
	lib.Side, raw.Side = "library (tables/backup)", "hand-written aztables"
	path := func(side string, p int) string {
		return filepath.Join(cfg.Dir, fmt.Sprintf("bench-%s-%s-%02d", side, sfx, p))
	}
	add := func(r *BackupResult, backupStep bool, d time.Duration, heap uint64) {
		if backupStep {
			r.Backup += d
			r.BackupHeap = max(r.BackupHeap, heap)
		} else {
			r.Restore += d
			r.RestoreHeap = max(r.RestoreHeap, heap)
		}
	}
	for _, backupStep := range []bool{true, false} {
		for p := range benchPartitions {
			pk := fmt.Sprintf("p%02d", p)
			steps := []struct {
				r   *BackupResult
				run func() error
			}{
				{&raw, func() error {
					if backupStep {
						return rawBackup(ctx, svc.NewClient(src), pk, path("raw", p))
					}
					return rawRestore(ctx, svc, fmt.Sprintf("BenchRaw%s%02d", sfx, p), path("raw", p))
				}},
				{&lib, func() error {
					if backupStep {
						return libBackup(ctx, acct, src, pk, path("lib", p))
					}
					f, err := os.Open(path("lib", p))
					if err != nil {
						return err
					}
					defer f.Close()
					_, err = backup.Restore(ctx, acct, fmt.Sprintf("BenchLib%s%02d", sfx, p), f, nil)
					return err
				}},
			}
			if p%2 == 1 {
				steps[0], steps[1] = steps[1], steps[0]
			}
			for _, st := range steps {
				d, heap, err := measureHeap(st.run)
				if err != nil {
					return nil, fmt.Errorf("%s, partition %s: %w", st.r.Side, pk, err)
				}
				add(st.r, backupStep, d, heap)
			}
			if !backupStep {
				// Each side's restored rows are counted, then the tables are dropped at once:
				// the emulator holds the same data for both.
				for r, n := range map[*BackupResult]string{&raw: fmt.Sprintf("BenchRaw%s%02d", sfx, p), &lib: fmt.Sprintf("BenchLib%s%02d", sfx, p)} {
					rows, err := countTableRows(ctx, svc.NewClient(n))
					if err != nil {
						return nil, fmt.Errorf("%s, partition %s: counting the restored rows: %w", r.Side, pk, err)
					}
					r.RestoredRows += rows
					_, _ = svc.DeleteTable(context.WithoutCancel(ctx), n, nil)
				}
				for _, side := range []string{"raw", "lib"} {
					if fi, err := os.Stat(path(side, p)); err == nil {
						if side == "raw" {
							raw.ArchiveBytes += fi.Size()
						} else {
							lib.ArchiveBytes += fi.Size()
						}
					}
					os.Remove(path(side, p))
				}
			}
		}
	}
	for _, r := range []*BackupResult{&lib, &raw} {
		r.BackupRowsPS = float64(cfg.Rows) / r.Backup.Seconds()
		r.RestoreRowsPS = float64(cfg.Rows) / r.Restore.Seconds()
	}
	fmt.Fprintf(out, "backup and restore of %s rows (10 partitions, ~200 bytes a row)\n", thousands(cfg.Rows))
	fmt.Fprintf(out, "%-26s %12s %12s %12s %14s %14s %12s %9s\n", "side", "backup", "restore", "restore rate", "backup heap", "restore heap", "archive", "restored")
	for _, r := range []BackupResult{lib, raw} {
		fmt.Fprintf(out, "%-26s %12v %12v %8.0f r/s %11.1f MiB %11.1f MiB %8.1f MiB %9s\n", r.Side, r.Backup.Round(time.Millisecond), r.Restore.Round(time.Millisecond),
			r.RestoreRowsPS, float64(r.BackupHeap)/(1<<20), float64(r.RestoreHeap)/(1<<20), float64(r.ArchiveBytes)/(1<<20), thousands(int(r.RestoredRows)))
	}
	fmt.Fprintf(out, "ratio library / hand-written: backup %.2f, restore %.2f (target at most 1.0)\n",
		lib.Backup.Seconds()/raw.Backup.Seconds(), lib.Restore.Seconds()/raw.Restore.Seconds())
	return []BackupResult{lib, raw}, nil
}

// countTableRows counts a table's rows with a keys-only scan.
func countTableRows(ctx context.Context, c *aztables.Client) (int64, error) {
	var n int64
	p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: ptr("RowKey")})
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, err
		}
		n += int64(len(page.Entities))
	}
	return n, nil
}

// measureHeap runs f and returns its time and the most the heap in use grew above its level
// before (sampled every 10 ms).
func measureHeap(f func() error) (time.Duration, uint64, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > base && m.HeapInuse-base > peak {
				peak = m.HeapInuse - base
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	err := f()
	d := time.Since(start)
	close(stop)
	wg.Wait()
	return d, peak, err
}

// seedBackupTable writes rows rows over 10 partitions, in transactions of 100.
func seedBackupTable(ctx context.Context, c *aztables.Client, rows int) error {
	if _, err := c.CreateTable(ctx, nil); err != nil {
		return err
	}
	per := (rows + benchPartitions - 1) / benchPartitions
	for p := range benchPartitions {
		tx := rawBatch{c: c}
		for i := p * per; i < min(rows, (p+1)*per); i++ {
			e := aztables.EDMEntity{
				Entity: aztables.Entity{PartitionKey: fmt.Sprintf("p%02d", p), RowKey: rowKey(i)},
				Properties: map[string]any{
					"Name": fmt.Sprintf("customer %d", i), "Email": fmt.Sprintf("c%d@example.com", i),
					"Count": int32(i), "Total": aztables.EDMInt64(int64(i) * 1000), "Ratio": float64(i) / 7,
					"Active": i%2 == 0, "Since": aztables.EDMDateTime(time.Date(2026, 1, 1, 0, 0, i%60, 0, time.UTC)),
					"Note": strings.Repeat("n", 40),
				},
			}
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			tx.add(b)
			if len(tx.acts) == 100 {
				if err := tx.flush(ctx); err != nil {
					return err
				}
			}
		}
		if err := tx.flush(ctx); err != nil {
			return err
		}
	}
	return nil
}

// rawBatch collects upserts of one partition for one SubmitTransaction, as hand-written
// aztables code does.
type rawBatch struct {
	c    *aztables.Client
	acts []aztables.TransactionAction
}

func (r *rawBatch) add(entity []byte) {
	r.acts = append(r.acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: entity})
}

// flush submits what was added, if anything, and starts a new transaction.
func (r *rawBatch) flush(ctx context.Context) error {
	if len(r.acts) == 0 {
		return nil
	}
	_, err := r.c.SubmitTransaction(ctx, r.acts, nil)
	r.acts = r.acts[:0]
	return err
}

// benchPartitions is the number of partitions of the benchmark's table.
const benchPartitions = 10

// libBackup backs up one partition with package backup.
func libBackup(ctx context.Context, acct *tables.Account, table, pk, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := backup.Write(ctx, acct, table, bw, &backup.Options{Partitions: []string{pk}}); err != nil {
		return err
	}
	return bw.Flush()
}

// rawBackup is the hand-written backup of one partition: the list pager, each entity's JSON
// (with its type annotations, as the SDK returns it under full metadata) one line of a gzip
// stream.
func rawBackup(ctx context.Context, c *aztables.Client, pk, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	bw := bufio.NewWriterSize(gz, 1<<20)
	filter := "PartitionKey eq '" + pk + "'"
	p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Format: ptr(aztables.MetadataFormatFull)})
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, e := range page.Entities {
			bw.Write(e)
			bw.WriteByte('\n')
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return gz.Close()
}

// rawRestore is the hand-written restore: each line an upsert, in transactions of 100 rows
// of one partition.
func rawRestore(ctx context.Context, svc *aztables.ServiceClient, table, path string) error {
	c := svc.NewClient(table)
	if _, err := c.CreateTable(ctx, nil); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	tx := rawBatch{c: c}
	pk := ""
	for sc.Scan() {
		line := sc.Bytes()
		var keys struct{ PartitionKey string }
		if err := json.Unmarshal(line, &keys); err != nil {
			return err
		}
		// Drop the metadata the service returned; keep the type annotations.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		for k := range m {
			if k == "Timestamp" || k == "odata.etag" || k == "odata.metadata" || k == "odata.type" || k == "odata.id" || k == "odata.editLink" || k == "Timestamp@odata.type" {
				delete(m, k)
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if keys.PartitionKey != pk || len(tx.acts) == 100 {
			if err := tx.flush(ctx); err != nil {
				return err
			}
			pk = keys.PartitionKey
		}
		tx.add(b)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := tx.flush(ctx); err != nil {
		return err
	}
	if pk == "" {
		return errors.New("the archive held no rows")
	}
	return nil
}
