package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/service"
)

// cosmosMemAccount is memAccount on the memory service's Cosmos DB for Table profile.
func cosmosMemAccount(t *testing.T) *tables.Account {
	t.Helper()
	acct := inmemory.NewAccount(&tables.Options{
		Service:     service.Cosmos,
		BlobOffload: &tables.BlobOffloadOptions{Container: "restoretest", ThresholdBytes: offloadAbove},
		Logger:      quietLog(),
	})
	if acct.Service() != service.Cosmos {
		t.Fatal("not a Cosmos DB account")
	}
	return acct
}

// flipDocs reads every entity of table through a store, in key order, with its id.
func flipDocs(t *testing.T, acct *tables.Account, table string) []flipDoc {
	t.Helper()
	s, err := tables.For[flipDoc](acct, &tables.StoreOptions{Table: table, TableScans: tables.AllowTableScans})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.ListAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]flipDoc, len(vs))
	for i, v := range vs {
		out[i] = *v
		out[i].ETag, out[i].Timestamp = "", time.Time{} // the service's version of each write: not copied
	}
	return out
}

// docsDiff describes the first difference between two lists of entities ("" when equal).
func docsDiff(want, got []flipDoc) string {
	for i := range min(len(want), len(got)) {
		if !reflect.DeepEqual(want[i], got[i]) {
			w, g := want[i], got[i]
			w.Data, g.Data = nil, nil
			return fmt.Sprintf("entity %d: %+v (%d bytes of data), want %+v (%d bytes)", i, g, len(got[i].Data), w, len(want[i].Data))
		}
	}
	if len(want) != len(got) {
		return fmt.Sprintf("%d entities, want %d", len(got), len(want))
	}
	return ""
}

// TestCopyStorageToCosmosAndBack copies a table of a Table Storage account, with a value
// split over continuation rows and one offloaded to a blob, to a Cosmos DB account of the
// memory service's Cosmos profile and back, as `udtables copy` does: every entity arrives
// whole, and the table that comes back holds what the first one held.
func TestCopyStorageToCosmosAndBack(t *testing.T) {
	ctx := context.Background()
	src := memAccount()
	docs, err := tables.For[flipDoc](src, &tables.StoreOptions{Table: "Source"})
	if err != nil {
		t.Fatal(err)
	}
	var batch []*flipDoc
	for i := range 240 {
		d := &flipDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%05d", i%3, i)}, N: i, Text: strings.Repeat("é", i%23)}
		switch i {
		case 1:
			d.Data = bytes.Repeat([]byte{1, 2, 3}, 23_000) // split into cells
		case 2:
			d.Data = bytes.Repeat([]byte{4, 5}, 60_000) // offloaded
		case 4:
			d.Data = bytes.Repeat([]byte{6, 7, 8, 9}, 20_000) // split over cells of the main row
		}
		batch = append(batch, d)
	}
	if _, err := docs.UpsertBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	want := flipDocs(t, src, "Source")

	cos := cosmosMemAccount(t)
	for _, parallel := range []int{1, 4} {
		table := fmt.Sprintf("Copied%d", parallel)
		st, err := backup.Copy(ctx, src, "Source", cos, table, &backup.Options{Logger: quietLog(), Parallel: parallel})
		if err != nil || st.Entities != 240 {
			t.Fatalf("copy to Cosmos DB, parallel %d: %+v, %v", parallel, st, err)
		}
		if d := docsDiff(want, flipDocs(t, cos, table)); d != "" {
			t.Fatalf("on Cosmos DB, parallel %d (-source +copy):\n%s", parallel, d)
		}
		// Back: the Cosmos DB table is read in one scan whatever Parallel says.
		back := memAccount()
		st, err = backup.Copy(ctx, cos, table, back, "Back", &backup.Options{Logger: quietLog(), Parallel: parallel})
		if err != nil || st.Entities != 240 {
			t.Fatalf("copy back, parallel %d: %+v, %v", parallel, st, err)
		}
		if d := docsDiff(want, flipDocs(t, back, "Back")); d != "" {
			t.Fatalf("back on Table Storage, parallel %d (-source +copy):\n%s", parallel, d)
		}
	}
}

// TestBackupOfCosmosDoesNotResume checks that WriteFile of a Cosmos DB table that finds a
// checkpoint fails with ErrNotSupported before reading anything, and that a backup (which
// keeps no checkpoint there) restores every entity.
func TestBackupOfCosmosDoesNotResume(t *testing.T) {
	ctx := context.Background()
	cos := cosmosMemAccount(t)
	docs, err := tables.For[flipDoc](cos, &tables.StoreOptions{Table: "Docs"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := docs.Create(ctx, &flipDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%02d", i%4, i)}, N: i}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "docs.udtb")
	if err := os.WriteFile(path+".checkpoint", []byte(`{"format":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = backup.WriteFile(ctx, cos, "Docs", path, nil)
	if !errors.Is(err, abstractions.ErrNotSupported) || !strings.Contains(err.Error(), "Cosmos DB") || !strings.Contains(err.Error(), "nothing was read") {
		t.Fatalf("resume on Cosmos DB: %v, want ErrNotSupported", err)
	}
	if err := os.Remove(path + ".checkpoint"); err != nil {
		t.Fatal(err)
	}
	if st, err := backup.WriteFile(ctx, cos, "Docs", path, &backup.Options{Parallel: 3}); err != nil || st.Entities != 30 {
		t.Fatalf("backup: %+v, %v", st, err)
	}
	if _, err := os.Stat(path + ".checkpoint"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a checkpoint is left: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dst := memAccount()
	if st, err := backup.Restore(ctx, dst, "Docs", f, &backup.Options{Logger: quietLog()}); err != nil || st.Entities != 30 {
		t.Fatalf("restore: %+v, %v", st, err)
	}
	if d := docsDiff(flipDocs(t, cos, "Docs"), flipDocs(t, dst, "Docs")); d != "" {
		t.Fatalf("restored (-Cosmos DB +Table Storage):\n%s", d)
	}
}
