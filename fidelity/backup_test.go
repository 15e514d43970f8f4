package fidelity

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/identity"
	"github.com/unified-data/gotables/identity/identitytables"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/service"
)

// The backup package's round trips, on both backends: every kind of row the library
// writes (and rows it did not write) backed up, verified, restored into another table and
// compared with the source cell by cell (ETag and Timestamp aside) and blob by blob.

type bkDoc struct {
	abstractions.Entity
	Title string
	Tags  []string // a JSON cell
	Long  string   // above one cell: gzip-compressed (OversizedCompress)
	Body  string   `table:",split=text"`
	Data  []byte   `table:",split=binary,offload=never"` // continuation rows, never a blob
	Scan  *abstractions.File
}

type bkEvent interface{ Seq() int }
type bkOpened struct{ Owner string }
type bkMoved struct{ N int64 }

func (*bkOpened) Seq() int { return 1 }
func (*bkMoved) Seq() int  { return 2 }

const bkContainer = "backuptest"

func bkAccount(h Harness) *tables.Account {
	return tables.NewAccountOver(h.Name(), h.Tables(), h.Blobs(), &tables.Options{
		Oversized: tables.OversizedCompress,
		// A threshold below the default keeps the offloaded value small (the test runs
		// under -race in make test); the split values stay below it.
		BlobOffload: &tables.BlobOffloadOptions{Container: bkContainer, CleanupGrace: -1, ThresholdBytes: 500_000},
		Logger:      discardLogger(),
	})
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func bkDocs() []*bkDoc {
	text := func(n int) string { return strings.ToValidUTF8(strings.Repeat("héllo wörld ", n/13+1)[:n], "") }
	return []*bkDoc{
		{Entity: abstractions.Entity{ID: "t1|plain"}, Title: "plain", Tags: []string{"a", "b"}, Scan: abstractions.FileFromBytes(nil, "application/pdf")},
		{Entity: abstractions.Entity{ID: "t1|split"}, Title: "split on the main row", Body: text(100_000)},
		{Entity: abstractions.Entity{ID: "t1|continued"}, Title: "continuation rows", Data: randomBytes(1_500_000)},
		{Entity: abstractions.Entity{ID: "t2|offloaded"}, Title: "offloaded", Body: text(600_000), Scan: abstractions.FileFromBytes([]byte("tiny file"), "text/plain")},
		{Entity: abstractions.Entity{ID: "t2|file"}, Title: "a big file", Long: text(40_000), Scan: abstractions.FileFromBytes(randomBytes(1_200_000), "application/octet-stream")},
	}
}

func TestBackupRoundTrip(t *testing.T) {
	for _, mk := range makers {
		h := mk(t)
		if h == nil {
			continue
		}
		t.Run(h.Name(), func(t *testing.T) { bkRoundTrip(t, h) })
	}
}

func bkRoundTrip(t *testing.T, h Harness) {
	ctx := context.Background()
	acct := bkAccount(h)
	sfx := randomSuffix()
	src, dst, dst2 := "BkDocs"+sfx, "BkDocsCopy"+sfx, "BkDocsCopyTwo"+sfx
	docs, err := tables.For[bkDoc](acct, &tables.StoreOptions{Table: src})
	if err != nil {
		t.Fatal(err)
	}
	want := bkDocs()
	for _, d := range want {
		if err := docs.Upsert(ctx, d); err != nil {
			t.Fatalf("upsert %s: %v", d.ID, err)
		}
	}
	// A row the library did not write: every EDM type, and a key of the reserved shape
	// without the layout's cells.
	g, _ := service.ParseGuid("5c3f2a1e-0b1d-4e5f-8a9b-0c1d2e3f4a5b")
	raw := service.Row{PartitionKey: "raw", RowKey: "x~0001", Properties: []service.Property{
		{Name: "S", Value: service.String("")}, {Name: "B", Value: service.Binary([]byte{0, 1, 2})},
		{Name: "T", Value: service.Bool(true)}, {Name: "I", Value: service.Int32(-7)},
		{Name: "L", Value: service.Int64(math.MaxInt64)}, {Name: "D", Value: service.Double(math.NaN())},
		{Name: "E", Value: service.Double(-0.1)}, {Name: "W", Value: service.DateTime(time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC))},
		{Name: "G", Value: g}, {Name: "_SplitParts", Value: service.String("not a count")},
	}}
	if _, err := acct.Tables().Write(ctx, src, service.Action{Op: service.OpUpsertReplace, Row: raw}); err != nil {
		t.Fatal(err)
	}

	var archive bytes.Buffer
	st, err := backup.Write(ctx, acct, src, &archive, &backup.Options{Parallel: 3})
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if st.Entities != int64(len(want))+1 || st.Blobs != 4 {
		t.Errorf("backup stats %+v: want %d entities and 4 blobs", st, len(want)+1)
	}
	var seq bytes.Buffer
	if _, err := backup.Write(ctx, acct, src, &seq, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(seq.Bytes(), archive.Bytes()) {
		t.Errorf("the archive of a parallel backup differs from a sequential one's")
	}
	vst, err := backup.Verify(ctx, bytes.NewReader(archive.Bytes()), nil)
	if err != nil || vst.Entities != st.Entities || vst.Rows != st.Rows {
		t.Fatalf("verify: %+v, %v (backup %+v)", vst, err, st)
	}
	rst, err := backup.Restore(ctx, acct, dst, bytes.NewReader(archive.Bytes()), nil)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if rst.Entities != st.Entities || rst.Rows != st.Rows {
		t.Errorf("restore stats %+v, backup %+v", rst, st)
	}
	bkCompare(t, acct, src, acct, dst)

	// A restore into a table that holds rows is refused, unless told what to do.
	if _, err := backup.Restore(ctx, acct, dst, bytes.NewReader(archive.Bytes()), nil); !errors.Is(err, backup.ErrNotEmpty) {
		t.Errorf("restore into a full table: %v, want ErrNotEmpty", err)
	}
	if s, err := backup.Restore(ctx, acct, dst, bytes.NewReader(archive.Bytes()), &backup.Options{Existing: backup.Skip}); err != nil || s.Skipped != st.Entities || s.Entities != 0 {
		t.Errorf("restore, skip: %+v, %v", s, err)
	}
	if s, err := backup.Restore(ctx, acct, dst, bytes.NewReader(archive.Bytes()), &backup.Options{Existing: backup.Replace}); err != nil || s.Replaced != st.Entities {
		t.Errorf("restore, replace: %+v, %v", s, err)
	}
	bkCompare(t, acct, src, acct, dst)

	// Copy, without an archive.
	if _, err := backup.Copy(ctx, acct, src, acct, dst2, &backup.Options{Parallel: 2}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	bkCompare(t, acct, src, acct, dst2)

	// The source's deletes and sweep never touch the copies' blobs.
	if err := acct.Tables().DeleteTable(ctx, src); err != nil {
		t.Fatal(err)
	}
	if _, err := docs.SweepOrphanBlobs(ctx, 0); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	time.Sleep(1100 * time.Millisecond) // a blob's age has one-second resolution
	if n, err := docs.SweepOrphanBlobs(ctx, 0); err != nil || n == 0 {
		t.Logf("second sweep of the source: %d, %v", n, err)
	}
	for _, table := range []string{dst, dst2} {
		copies, err := tables.For[bkDoc](acct, &tables.StoreOptions{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			got, err := copies.One(ctx, w.ID)
			if err != nil {
				t.Fatalf("%s: read %s after the source's sweep: %v", table, w.ID, err)
			}
			if got.Title != w.Title || got.Body != w.Body || !bytes.Equal(got.Data, w.Data) || got.Long != w.Long || strings.Join(got.Tags, ",") != strings.Join(w.Tags, ",") {
				t.Errorf("%s: %s reads back different values", table, w.ID)
			}
			if w.Scan != nil {
				bkCheckFile(ctx, t, table, w, got)
			}
		}
	}
}

func bkCheckFile(ctx context.Context, t *testing.T, table string, w, got *bkDoc) {
	t.Helper()
	if got.Scan == nil {
		t.Errorf("%s: %s lost its file", table, w.ID)
		return
	}
	r, err := got.Scan.Open(ctx)
	if err != nil {
		t.Errorf("%s: open the file of %s: %v", table, w.ID, err)
		return
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	wr, _ := w.Scan.Open(ctx)
	wb, _ := io.ReadAll(wr)
	wr.Close()
	if err != nil || !bytes.Equal(b, wb) || got.Scan.ContentType() != w.Scan.ContentType() {
		t.Errorf("%s: the file of %s reads back different bytes (%v)", table, w.ID, err)
	}
}

func TestBackupPolymorphicAndIdentity(t *testing.T) {
	for _, mk := range makers {
		h := mk(t)
		if h == nil {
			continue
		}
		t.Run(h.Name(), func(t *testing.T) {
			ctx := context.Background()
			acct := bkAccount(h)
			sfx := randomSuffix()
			var types abstractions.TypeRegistry
			if err := errors.Join(abstractions.RegisterType[bkOpened](&types, "opened"), abstractions.RegisterType[bkMoved](&types, "moved")); err != nil {
				t.Fatal(err)
			}
			events, err := tables.PolyFor[bkEvent](acct, &types, &tables.StoreOptions{Table: "BkEvents" + sfx})
			if err != nil {
				t.Fatal(err)
			}
			key := func(rk string) abstractions.TableKey {
				return abstractions.TableKey{PartitionKey: "acct-1", RowKey: rk}
			}
			err = events.UpsertBatch(ctx, []abstractions.PolyWrite[bkEvent]{
				{Key: key("0001"), Item: &bkOpened{Owner: "ann"}},
				{Key: key("0002"), Item: &bkMoved{N: 42}},
				abstractions.Marker[bkEvent](key("head"), map[string]any{"_Version": int64(2)}),
			})
			if err != nil {
				t.Fatal(err)
			}
			bkTableRoundTrip(ctx, t, acct, "BkEvents"+sfx, "BkEventsCopy"+sfx)

			it, err := identitytables.For(acct, &identitytables.Options{TableName: func(n string) string { return "Bk" + n + sfx }})
			if err != nil {
				t.Fatal(err)
			}
			users, err := identity.NewUserStore(it, nil)
			if err != nil {
				t.Fatal(err)
			}
			roles, err := identity.NewRoleStore(it, nil)
			if err != nil {
				t.Fatal(err)
			}
			u := &identity.User{UserName: "alice", Email: "alice@example.com"}
			if err := users.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			if err := roles.Create(ctx, &identity.Role{Name: "admin"}); err != nil {
				t.Fatal(err)
			}
			if err := users.AddToRole(ctx, u.UserId, identity.NormalizeName("admin")); err != nil {
				t.Fatal(err)
			}
			if err := users.AddClaims(ctx, u.UserId, identity.Claim{Type: "tier", Value: "gold"}); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"IdentityUserModel", "IdentityRoleModel", "IdentityUserRoleModel", "IdentityUserClaimModel"} {
				bkTableRoundTrip(ctx, t, acct, "Bk"+n+sfx, "BkCopy"+n+sfx)
			}
		})
	}
}

// bkTableRoundTrip backs a table up, restores it into another and compares the two.
func bkTableRoundTrip(ctx context.Context, t *testing.T, acct *tables.Account, src, dst string) {
	t.Helper()
	var archive bytes.Buffer
	st, err := backup.Write(ctx, acct, src, &archive, nil)
	if err != nil {
		t.Fatalf("backup %s: %v", src, err)
	}
	if st.Entities == 0 {
		t.Errorf("backup %s: no entities", src)
	}
	if _, err := backup.Restore(ctx, acct, dst, &archive, nil); err != nil {
		t.Fatalf("restore %s: %v", dst, err)
	}
	bkCompare(t, acct, src, acct, dst)
}

// bkCompare compares every row of two tables cell by cell, ETag and Timestamp aside, and
// each blob reference: the destination's names a blob of its own table with the same
// bytes.
func bkCompare(t *testing.T, sa *tables.Account, src string, da *tables.Account, dst string) {
	t.Helper()
	ctx := context.Background()
	a, err := allRows(ctx, sa.Tables(), src, service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := allRows(ctx, da.Tables(), dst, service.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("%s has %d rows, %s %d", src, len(a), dst, len(b))
	}
	for i := range a {
		ra, rb := a[i], b[i]
		if ra.PartitionKey != rb.PartitionKey || ra.RowKey != rb.RowKey {
			t.Fatalf("row %d: (%q, %q) against (%q, %q)", i, ra.PartitionKey, ra.RowKey, rb.PartitionKey, rb.RowKey)
		}
		pa, pb := sortedProps(ra.Properties), sortedProps(rb.Properties)
		if len(pa) != len(pb) {
			t.Errorf("row (%q, %q): %d cells against %d", ra.PartitionKey, ra.RowKey, len(pa), len(pb))
			continue
		}
		for j := range pa {
			if pa[j].Name != pb[j].Name {
				t.Errorf("row (%q, %q): cell %q against %q", ra.PartitionKey, ra.RowKey, pa[j].Name, pb[j].Name)
				continue
			}
			if strings.HasSuffix(pa[j].Name, "__blob") {
				bkCompareBlob(ctx, t, sa, da, dst, &ra, pa[j], pb[j])
				continue
			}
			if !bkSameValue(pa[j].Value, pb[j].Value) {
				t.Errorf("row (%q, %q) cell %s: %v against %v", ra.PartitionKey, ra.RowKey, pa[j].Name, pa[j].Value, pb[j].Value)
			}
		}
	}
}

func bkSameValue(a, b service.Value) bool {
	if a.Kind() == service.KindDouble && b.Kind() == service.KindDouble && math.IsNaN(a.Float()) && math.IsNaN(b.Float()) {
		return true
	}
	return a.Equal(b)
}

func sortedProps(p []service.Property) []service.Property {
	out := append([]service.Property(nil), p...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type bkRef struct {
	Path, SHA256, ContentType, Encoding string
	Length                              int64
}

func parseRef(t *testing.T, v service.Value) bkRef {
	t.Helper()
	var r bkRef
	if err := json.Unmarshal([]byte(v.Str()), &r); err != nil {
		t.Fatalf("blob reference %q: %v", v.Str(), err)
	}
	return r
}

func bkCompareBlob(ctx context.Context, t *testing.T, sa, da *tables.Account, dst string, row *service.Row, a, b service.Property) {
	t.Helper()
	ra, rb := parseRef(t, a.Value), parseRef(t, b.Value)
	if ra.SHA256 != rb.SHA256 || ra.Length != rb.Length || ra.ContentType != rb.ContentType || ra.Encoding != rb.Encoding {
		t.Errorf("row (%q, %q) %s: reference %+v against %+v", row.PartitionKey, row.RowKey, a.Name, ra, rb)
	}
	if !strings.HasPrefix(rb.Path, dst+"/") || ra.Path == rb.Path {
		t.Errorf("row (%q, %q) %s: the copy's blob %s is not its own", row.PartitionKey, row.RowKey, a.Name, rb.Path)
	}
	read := func(acct *tables.Account, path string) []byte {
		blob, err := acct.Blobs().Download(ctx, bkContainer, path, service.Conditions{})
		if err != nil {
			t.Fatalf("download %s: %v", path, err)
		}
		defer blob.Body.Close()
		data, err := io.ReadAll(blob.Body)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if !bytes.Equal(read(sa, ra.Path), read(da, rb.Path)) {
		t.Errorf("row (%q, %q) %s: the blobs differ", row.PartitionKey, row.RowKey, a.Name)
	}
}
