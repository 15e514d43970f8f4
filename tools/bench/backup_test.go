package bench

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/unified-data/gotables/tables/azuritetest"
)

// backupRowsEnv sets the rows of the backup benchmark (default 2,000 here; make
// backup-bench runs 100,000).
const backupRowsEnv = "UNIFIED_TABLES_BACKUP_BENCH_ROWS"

func TestBackupBenchmark(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	rows := 2000
	if s := os.Getenv(backupRowsEnv); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	var out bytes.Buffer
	res, err := RunBackup(context.Background(), BackupConfig{ConnectionString: conn, Rows: rows, Dir: t.TempDir()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(res) != 2 || res[0].Backup <= 0 || res[1].Restore <= 0 {
		t.Fatalf("results %+v", res)
	}
	for _, r := range res {
		if r.RestoredRows != int64(rows) {
			t.Errorf("%s restored %d rows of %d", r.Side, r.RestoredRows, rows)
		}
	}
}
