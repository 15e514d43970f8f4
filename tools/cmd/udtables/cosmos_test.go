package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
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

// TestCopyCommandStorageToCosmosEmulatorAndBack runs `udtables copy` from a table on Azurite
// to the table emulator serving the memory service's Cosmos DB for Table profile, named
// Cosmos DB with --to-cosmos (its endpoint does not say so), and back with --cosmos. The
// Cosmos DB account's blobs are Azurite's (Cosmos DB has none), where the copy puts its own
// copy of an offloaded value. Two values of 1.2 MB in one partition, one transaction on
// Table Storage, take one each on Cosmos DB. Every entity arrives whole both ways. The same
// copy without --to-cosmos plans for Table Storage and fails on the profile's 2 MB limit, and
// an entity whose split value needs more than 2 MB is refused before any of its rows is sent.
func TestCopyCommandStorageToCosmosEmulatorAndBack(t *testing.T) {
	azConn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	var cosmos *memservice.Service
	h, err := emulator.New(&emulator.Options{Service: func(string) *memservice.Service {
		cosmos = memservice.New(memservice.Cosmos())
		return cosmos
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	// The development account and key, the emulator's table endpoint, Azurite's blobs.
	cosConn := strings.Replace(azConn, "TableEndpoint="+tableEndpoint(t, azConn), "TableEndpoint="+srv.URL+"/devstoreaccount1", 1)

	az, closeAz, err := openAccount(azConn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAz()
	sfx := fmt.Sprint(rand.Uint32())
	src, big, back := "CosSrc"+sfx, "CosBig"+sfx, "CosBack"+sfx
	for _, tb := range []string{src, big, back} {
		defer az.Tables().DeleteTable(ctx, tb) //nolint:errcheck
	}
	docs, err := tables.For[flipDoc](az, &tables.StoreOptions{Table: src})
	if err != nil {
		t.Fatal(err)
	}
	var batch []*flipDoc
	for i := range 60 {
		d := &flipDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%03d", i%3, i)}, N: i, Text: strings.Repeat("é", i%23)}
		switch i {
		case 1:
			d.Data = bytes.Repeat([]byte{1, 2, 3}, 23_000) // split into cells
		case 2, 5:
			d.Data = bytes.Repeat([]byte{byte(i), 7}, 600_000) // 1.2 MB, split over rows
		case 3:
			d.Data = bytes.Repeat([]byte{4, 5, 6, 7}, 900_000) // 3.6 MB, offloaded
		}
		batch = append(batch, d)
	}
	if _, err := docs.UpsertBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	want := flipDocs(t, az, src)

	copyCmd := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"copy", "--progress", "none"}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := copyCmd("--table", src, "--connection-string", azConn, "--to-connection-string", cosConn, "--to-cosmos", "--to-table", "Copied"); code != 0 {
		t.Fatalf("copy to Cosmos DB: exit %d: %s", code, out)
	}
	cos, closeCos, err := openAccountOf(cosConn, "", service.Cosmos)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCos()
	if d := docsDiff(want, flipDocs(t, cos, "Copied")); d != "" {
		t.Fatalf("on Cosmos DB (-source +copy):\n%s", d)
	}
	if code, out := copyCmd("--table", "Copied", "--connection-string", cosConn, "--cosmos", "--to-connection-string", azConn, "--to-table", back); code != 0 {
		t.Fatalf("copy back: exit %d: %s", code, out)
	}
	if d := docsDiff(want, flipDocs(t, az, back)); d != "" {
		t.Fatalf("back on Table Storage (-source +copy):\n%s", d)
	}

	// Without --to-cosmos the copy plans for Table Storage's 4 MiB: the profile refuses.
	code, out := copyCmd("--table", src, "--connection-string", azConn, "--to-connection-string", cosConn, "--to-table", "Unmarked")
	if code == 0 || !strings.Contains(out, "RequestBodyTooLarge") {
		t.Fatalf("a copy to Cosmos DB planned for Table Storage: exit %d: %s", code, out)
	}

	// A split value whose rows need more than 2 MB cannot be copied as it is stored.
	bigs, err := tables.For[flipDoc](az, &tables.StoreOptions{Table: big})
	if err != nil {
		t.Fatal(err)
	}
	if err := bigs.Create(ctx, &flipDoc{Entity: abstractions.Entity{ID: "p|big"}, Data: bytes.Repeat([]byte{9, 8}, 1_250_000)}); err != nil {
		t.Fatal(err)
	}
	code, out = copyCmd("--table", big, "--connection-string", azConn, "--to-connection-string", cosConn, "--to-cosmos", "--to-table", "Big")
	if code == 0 || !strings.Contains(out, "blob offload") || !strings.Contains(out, "none of its rows was sent") {
		t.Fatalf("a copy of a 2.5 MB split value to Cosmos DB: exit %d: %s", code, out)
	}
	if page, err := cosmos.Query(ctx, "Big", service.Query{}); err == nil && len(page.Rows) != 0 {
		t.Fatalf("the refused entity left %d rows on Cosmos DB", len(page.Rows))
	}
}

// tableEndpoint returns the TableEndpoint of a connection string.
func tableEndpoint(t *testing.T, conn string) string {
	t.Helper()
	for _, kv := range strings.Split(conn, ";") {
		if v, ok := strings.CutPrefix(kv, "TableEndpoint="); ok {
			return v
		}
	}
	t.Fatalf("the connection string names no TableEndpoint")
	return ""
}

// TestCopyCommandToCosmosWithoutBlobs: a Cosmos DB connection string names no blob endpoint
// (Cosmos DB has no blob service), and the library makes none up. udtables copy opens such an
// account without blobs: rows are copied, and a copy of a table whose archive holds blobs
// is refused, naming the missing blob service.
func TestCopyCommandToCosmosWithoutBlobs(t *testing.T) {
	azConn := azuritetest.ConnectionString(t)
	ctx := context.Background()
	h, err := emulator.New(&emulator.Options{Service: func(string) *memservice.Service { return memservice.New(memservice.Cosmos()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	// As the portal gives it, less the protocol that would derive endpoints: a table endpoint
	// alone.
	cosConn := "AccountName=" + emulator.DevelopmentAccount + ";AccountKey=" + emulator.DevelopmentKey +
		";TableEndpoint=" + srv.URL + "/" + emulator.DevelopmentAccount + ";"
	az, closeAz, err := openAccount(azConn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAz()
	src := fmt.Sprint("CosNoBlobs", rand.Uint32())
	defer az.Tables().DeleteTable(ctx, src) //nolint:errcheck
	docs, err := tables.For[flipDoc](az, &tables.StoreOptions{Table: src})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := docs.Create(ctx, &flipDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p|r%d", i)}, N: i, Text: "ä"}); err != nil {
			t.Fatal(err)
		}
	}
	copyCmd := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"copy", "--progress", "none", "--connection-string", azConn, "--to-connection-string", cosConn, "--to-cosmos"}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := copyCmd("--table", src, "--to-table", "NoBlobs"); code != 0 {
		t.Fatalf("copy to Cosmos DB without blobs: exit %d: %s", code, out)
	}
	cos, closeCos, err := openAccountOf(cosConn, "", service.Cosmos)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCos()
	if cos.Blobs() != nil {
		t.Error("an account of a connection string without a blob endpoint has blobs")
	}
	if d := docsDiff(flipDocs(t, az, src), flipDocs(t, cos, "NoBlobs")); d != "" {
		t.Fatalf("on Cosmos DB (-source +copy):\n%s", d)
	}
	// A value stored in a blob cannot go where there are no blobs.
	if err := docs.Create(ctx, &flipDoc{Entity: abstractions.Entity{ID: "q|big"}, Data: bytes.Repeat([]byte{4, 5, 6, 7}, 900_000)}); err != nil {
		t.Fatal(err)
	}
	code, out := copyCmd("--table", src, "--to-table", "NoBlobs2")
	if code == 0 || !strings.Contains(out, "no blob service") {
		t.Fatalf("copy of an offloaded value to Cosmos DB without blobs: exit %d: %s", code, out)
	}
}

// TestDemoOnCosmosProfile: the demo's walkthrough runs to its end on an account that talks to
// Azure Cosmos DB for Table (the emulator serving the Cosmos profile), as docs/cosmos.md says
// it does with a Cosmos DB connection string.
func TestDemoOnCosmosProfile(t *testing.T) {
	h, err := emulator.New(&emulator.Options{Service: func(string) *memservice.Service { return memservice.New(memservice.Cosmos()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	conn := "AccountName=" + emulator.DevelopmentAccount + ";AccountKey=" + emulator.DevelopmentKey +
		";TableEndpoint=" + srv.URL + "/" + emulator.DevelopmentAccount + ";"
	acct, err := tables.NewAccount(conn, &tables.Options{Service: service.Cosmos})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := demoOnAccount(context.Background(), &out, acct); err != nil {
		t.Fatalf("the demo on Cosmos DB: %v\n%s", err, out.String())
	}
}
