package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/backup"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// The restore of damaged archives and of transactions whose answer is lost, on the
// in-memory backend (the tables module cannot import it; these tests are the command's
// library's, run where both are at hand).

// flipsEnv, set to "all", flips every bit of the larger archives too (minutes).
const flipsEnv = "UNIFIED_TABLES_BACKUP_FLIPS"

type flipDoc struct {
	abstractions.Entity
	N    int
	Text string
	Data []byte `table:",split=binary"`
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// offloadAbove is the size above which the test accounts store a value in a blob.
const offloadAbove = 100_000

// memAccount is an in-memory account with blob offload above offloadAbove bytes.
func memAccount() *tables.Account {
	return inmemory.NewAccount(&tables.Options{
		BlobOffload: &tables.BlobOffloadOptions{Container: "restoretest", ThresholdBytes: offloadAbove},
		Logger:      quietLog(),
	})
}

// sourceArchive fills a table of a new in-memory account with n entities over parts
// partitions and returns its archive. With large, one value is split into cells (70 KB)
// and one offloaded to a blob (120 KB); a tiny archive has neither, since every flip
// decodes them again.
func sourceArchive(t *testing.T, n, parts int, large bool) []byte {
	t.Helper()
	ctx := context.Background()
	acct := memAccount()
	docs, err := tables.For[flipDoc](acct, &tables.StoreOptions{Table: "Source"})
	if err != nil {
		t.Fatal(err)
	}
	var batch []*flipDoc
	for i := range n {
		d := &flipDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%05d", i%parts, i)}, N: i, Text: strings.Repeat("t", i%23)}
		if large && i == 1 {
			d.Data = bytes.Repeat([]byte{1, 2, 3}, 23_000) // split into cells
		}
		if large && i == 2 {
			d.Data = bytes.Repeat([]byte{4, 5}, 60_000) // offloaded
		}
		batch = append(batch, d)
		if len(batch) == 100 || i == n-1 {
			if _, err := docs.UpsertBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	var buf bytes.Buffer
	if _, err := backup.Write(ctx, acct, "Source", &buf, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rowsOf reads every row of a table, by "pk|rk".
func rowsOf(t *testing.T, acct *tables.Account, table string) map[string]service.Row {
	t.Helper()
	out := map[string]service.Row{}
	q := service.Query{}
	for {
		page, err := acct.Tables().Query(context.Background(), table, q)
		if abstractions.HasStatus(err, 404, "TableNotFound") {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			out[r.PartitionKey+"|"+r.RowKey] = r
		}
		if page.Next == nil {
			return out
		}
		q.Continuation = page.Next
	}
}

// sameRow reports whether two rows hold the same cells.
func sameRow(a, b service.Row) bool {
	if len(a.Properties) != len(b.Properties) {
		return false
	}
	for _, p := range a.Properties {
		v, ok := b.Get(p.Name)
		if !ok || !v.Equal(p.Value) {
			return false
		}
	}
	return true
}

// gzipMembers returns the offsets at which an archive's gzip members start, and its length.
func gzipMembers(t *testing.T, archive []byte) []int {
	t.Helper()
	br := bytes.NewReader(archive)
	var starts []int
	zr, err := gzip.NewReader(br)
	for err == nil {
		starts = append(starts, len(archive)-br.Len()-10) // a header of 10 bytes was read
		zr.Multistream(false)
		if _, err = io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
		err = zr.Reset(br)
	}
	if err != io.EOF {
		t.Fatal(err)
	}
	return append(starts, len(archive))
}

// flipChecker restores archives with one bit flipped and checks what each leaves.
type flipChecker struct {
	t       *testing.T
	archive []byte
	ref     map[string]service.Row // an intact restore's rows
	mu      sync.Mutex
	flips   int // flips checked
	failed  int // flips that failed the restore
}

func newFlipChecker(t *testing.T, archive []byte) *flipChecker {
	ctx := context.Background()
	acct := memAccount()
	st, err := backup.Restore(ctx, acct, "Flip", bytes.NewReader(archive), &backup.Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	ref := rowsOf(t, acct, "Flip")
	if len(ref) < int(st.Entities) {
		t.Fatalf("the intact archive restores %d rows for %d entities", len(ref), st.Entities)
	}
	return &flipChecker{t: t, archive: archive, ref: ref}
}

// check flips bit (of byte off) and restores: a failed restore leaves only rows equal to
// an intact restore's, as many entities as Verify counts before the damage, and says what
// Verify says; a restore that succeeds (a flip in a field gzip does not check) leaves
// every row.
func (f *flipChecker) check(off int, bit uint) {
	t := f.t
	ctx := context.Background()
	damaged := bytes.Clone(f.archive)
	damaged[off] ^= 1 << bit
	vst, verr := backup.Verify(ctx, bytes.NewReader(damaged), nil)
	acct := memAccount()
	rst, rerr := backup.Restore(ctx, acct, "Flip", bytes.NewReader(damaged), &backup.Options{Logger: quietLog()})
	got := rowsOf(t, acct, "Flip")
	where := fmt.Sprintf("byte %d bit %d", off, bit)
	if (verr == nil) != (rerr == nil) {
		t.Errorf("%s: Verify says %v, Restore %v", where, verr, rerr)
		return
	}
	entities := int64(0)
	for key, row := range got {
		ref, ok := f.ref[key]
		if !ok {
			t.Errorf("%s: the restore wrote row %q, which the archive does not hold (%v)", where, key, rerr)
			continue
		}
		if !sameRow(row, ref) {
			t.Errorf("%s: the restore wrote row %q altered (%v)", where, key, rerr)
		}
		if !strings.Contains(row.RowKey, "~") {
			entities++
		}
	}
	if rerr == nil {
		if len(got) != len(f.ref) {
			t.Errorf("%s: a restore that succeeds wrote %d rows of %d", where, len(got), len(f.ref))
		}
		return
	}
	f.mu.Lock()
	f.failed++
	f.mu.Unlock()
	if !errors.Is(rerr, abstractions.ErrIntegrity) && !errors.Is(rerr, abstractions.ErrNotSupported) {
		t.Errorf("%s: %v, want ErrIntegrity", where, rerr)
	}
	if rerr.Error() != verr.Error() || rst.Entities != vst.Entities || entities != rst.Entities {
		t.Errorf("%s: Restore wrote %d entities (%d found) and says %q; Verify counts %d and says %q",
			where, rst.Entities, entities, rerr, vst.Entities, verr)
	}
}

// run checks each offset of offs over two goroutines: the bit of bits at the same index,
// or every bit when bits is nil.
func (f *flipChecker) run(offs []int, bits []uint) {
	type flip struct {
		off  int
		bits []uint
	}
	var wg sync.WaitGroup
	next := make(chan flip)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for fl := range next {
				for _, bit := range fl.bits {
					f.check(fl.off, bit)
				}
			}
		}()
	}
	every := []uint{0, 1, 2, 3, 4, 5, 6, 7}
	for i, off := range offs {
		if f.t.Failed() {
			break
		}
		fl := flip{off: off, bits: every}
		if bits != nil {
			fl.bits = bits[i : i+1]
		}
		f.mu.Lock()
		f.flips += len(fl.bits)
		f.mu.Unlock()
		next <- fl
	}
	close(next)
	wg.Wait()
}

// TestRestoreFlippedBits restores archives with one bit flipped, on the in-memory backend:
// every bit of a small archive (12 entities), and bits in each member of an archive of
// several members (1,100 entities, a split value and a blob among them): each member's
// first compressed byte, its middle and its checksum. With
// UNIFIED_TABLES_BACKUP_FLIPS=all, every bit of both (minutes). No restore ever writes a
// row the archive does not hold as it holds it: a damaged member's entities are never
// written, the ones before it always are, as many as Verify counts before the damage.
func TestRestoreFlippedBits(t *testing.T) {
	all := os.Getenv(flipsEnv) == "all"
	t.Run("small, every bit", func(t *testing.T) {
		archive := sourceArchive(t, 12, 3, all)
		f := newFlipChecker(t, archive)
		offs := make([]int, len(archive))
		for i := range offs {
			offs[i] = i
		}
		f.run(offs, nil)
		t.Logf("%d bits of a %d-byte archive in %d members flipped: %d restores failed, the rest succeeded whole",
			8*len(archive), len(archive), len(gzipMembers(t, archive))-1, f.failed)
	})
	t.Run("several members", func(t *testing.T) {
		archive := sourceArchive(t, 1100, 3, true)
		members := gzipMembers(t, archive)
		if len(members) != 5 {
			t.Fatalf("%d members, want 4", len(members)-1)
		}
		f := newFlipChecker(t, archive)
		var offs []int
		var bits []uint
		if all {
			for i := range archive {
				offs = append(offs, i)
			}
		} else {
			for m := 0; m+1 < len(members); m++ {
				start, end := members[m], members[m+1]
				for i, off := range []int{start + 10, (start + end) / 2, end - 7} {
					offs = append(offs, off)
					bits = append(bits, uint(m+i)%8)
				}
			}
		}
		f.run(offs, bits)
		t.Logf("%d bits of a %d-byte archive in %d members flipped: %d restores failed", f.flips, len(archive), len(members)-1, f.failed)
	})
}

// faultyMemAccount is an in-memory account whose table service injects faults, and
// retries as the Azure SDK does (faults.Tables); values above offload bytes go to blobs (0:
// the default, 3 MiB).
func faultyMemAccount(offload int) (*tables.Account, *faults.Tables) {
	mem := memservice.New()
	svc := faults.NewTables(mem)
	return inmemory.NewAccountOver(svc, mem, &tables.Options{
		BlobOffload: &tables.BlobOffloadOptions{Container: "restoretest", ThresholdBytes: offload},
		Logger:      quietLog(),
	}), svc
}

// TestRestoreSettlesLostAnswers restores through faults that lose the answer of an applied
// transaction, on the in-memory backend: the restore reads the rows back, counts an applied
// transaction as written and sends one that was not again, and ends with every entity
// written once.
func TestRestoreSettlesLostAnswers(t *testing.T) {
	ctx := context.Background()
	archive := sourceArchive(t, 300, 3, true)
	ref := newFlipChecker(t, archive).ref
	for _, tc := range []struct {
		name  string
		fault faults.Fault
		times int
	}{
		// Applied, then the connection breaks in the answer's body: the SDK does not send a
		// batch (a POST) again.
		{"reset mid-body", faults.ResetMidBody, 3},
		// Applied, the answer lost, sent again by the SDK: the resend's answer is the call's.
		{"lost answer", faults.LoseResponse, 3},
		// Never received, four tries in a row: the call fails; the rows read back unwritten,
		// so the restore sends it again after a pause.
		{"reset mid-request", faults.ResetMidRequest, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acct, svc := faultyMemAccount(offloadAbove)
			svc.Inject(tc.fault, faults.Transactions, tc.times)
			st, err := backup.Restore(ctx, acct, "Flip", bytes.NewReader(archive), &backup.Options{Logger: quietLog()})
			if err != nil || st.Entities != 300 {
				t.Fatalf("restore: %+v, %v", st, err)
			}
			if svc.Pending() != 0 {
				t.Errorf("%d faults not injected", svc.Pending())
			}
			got := rowsOf(t, acct, "Flip")
			for key, row := range ref {
				if g, ok := got[key]; !ok || !sameRow(g, row) {
					t.Fatalf("row %s: restored %v, want it as the archive holds it", key, ok)
				}
			}
			if len(got) != len(ref) {
				t.Errorf("%d rows, want %d", len(got), len(ref))
			}
		})
	}
	// Replace over entities whose stored versions have continuation rows the archive's do
	// not: a transaction deletes them. Its answer lost, the SDK sends it again, and the
	// resend is refused (404: the first try deleted the rows); read back, it was applied.
	t.Run("lost answer of a transaction with deletes", func(t *testing.T) {
		acct, svc := faultyMemAccount(0)
		docs, err := tables.For[flipDoc](acct, &tables.StoreOptions{Table: "Flip"})
		if err != nil {
			t.Fatal(err)
		}
		// Under the offload threshold, but more than a row holds: continuation rows.
		big := &flipDoc{Entity: abstractions.Entity{ID: "p0|r00000"}, Data: bytes.Repeat([]byte("x"), 1_500_000)}
		if err := docs.Upsert(ctx, big); err != nil {
			t.Fatal(err)
		}
		if n := len(rowsOf(t, acct, "Flip")); n < 2 {
			t.Fatalf("the big entity has %d rows, want continuation rows", n)
		}
		svc.Inject(faults.LoseResponse, faults.Transactions, 1)
		st, err := backup.Restore(ctx, acct, "Flip", bytes.NewReader(archive), &backup.Options{Logger: quietLog(), Existing: backup.Replace})
		if err != nil || st.Entities != 300 || st.Replaced != 1 {
			t.Fatalf("restore: %+v, %v", st, err)
		}
		if got := rowsOf(t, acct, "Flip"); len(got) != len(ref) {
			t.Errorf("%d rows, want %d", len(got), len(ref))
		}
	})
}

// TestCopyOnMemory copies between in-memory accounts with a lost answer on the
// destination, and checks the errors of a copy to a nil account or an empty table name.
func TestCopyOnMemory(t *testing.T) {
	ctx := context.Background()
	src := memAccount()
	docs, err := tables.For[flipDoc](src, &tables.StoreOptions{Table: "Source"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		if err := docs.Upsert(ctx, &flipDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|r%03d", i%2, i)}, N: i}); err != nil {
			t.Fatal(err)
		}
	}
	dst, svc := faultyMemAccount(offloadAbove)
	svc.Inject(faults.ResetMidBody, faults.Transactions, 2)
	st, err := backup.Copy(ctx, src, "Source", dst, "Copied", &backup.Options{Logger: quietLog()})
	if err != nil || st.Entities != 150 || len(rowsOf(t, dst, "Copied")) != 150 {
		t.Fatalf("copy: %+v, %v", st, err)
	}
	for name, f := range map[string]func() error{
		"nil destination":  func() error { _, err := backup.Copy(ctx, src, "Source", nil, "Copied", nil); return err },
		"empty table name": func() error { _, err := backup.Copy(ctx, src, "Source", dst, "", nil); return err },
	} {
		err := f()
		if !errors.Is(err, abstractions.ErrInvalidArgument) || strings.Contains(err.Error(), "stopped") {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	// A destination that refuses the rows: its own error, not the reading side's stop.
	full, _ := faultyMemAccount(offloadAbove)
	if _, err := backup.Copy(ctx, src, "Source", full, "Copied", nil); err != nil {
		t.Fatal(err)
	}
	_, err = backup.Copy(ctx, src, "Source", full, "Copied", nil)
	if !errors.Is(err, backup.ErrNotEmpty) {
		t.Errorf("copy into a table that holds rows: %v", err)
	}
}

// azuriteTable fills a new table on Azurite with n cliDoc entities over three partitions
// and returns the connection string, the account and the table's name; the table is
// dropped when the test ends.
func azuriteTable(t *testing.T, n int) (string, *tables.Account, string) {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	acct, closeAcct, err := openAccount(conn, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAcct)
	ctx := context.Background()
	table := "CliRestore" + fmt.Sprint(rand.Uint32())
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), table) })
	docs, err := tables.For[cliDoc](acct, &tables.StoreOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	var batch []*cliDoc
	for i := range n {
		batch = append(batch, &cliDoc{Entity: abstractions.Entity{ID: fmt.Sprintf("p%d|d%05d", i%3, i)}, N: i, Body: strings.Repeat("b", i%100)})
		if len(batch) == 100 || i == n-1 {
			if _, err := docs.UpsertBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return conn, acct, table
}

// TestRestoreCommandCutArchive cuts an archive of three members of entities (1,000, 1,000
// and 400) at two thirds, inside the second: restore --verify and restore say the same,
// and the restore wrote the 1,000 entities they count.
func TestRestoreCommandCutArchive(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	acct, closeAcct, err := openAccount(conn, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAcct) // after the table is dropped
	ctx := context.Background()
	dst := "CliCut" + fmt.Sprint(rand.Uint32())
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), dst) })
	data := sourceArchive(t, 2400, 3, false) // backed up in memory: only the restore needs Azurite
	archive := filepath.Join(t.TempDir(), "cut.udtb")
	if err := os.WriteFile(archive, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	said := map[string]string{}
	for name, args := range map[string][]string{
		"verify":  {"restore", "--verify", "--archive", archive, "--progress", "none"},
		"restore": {"restore", "--table", dst, "--archive", archive, "--connection-string", conn, "--progress", "none"},
	} {
		var out, errb bytes.Buffer
		if code := run(ctx, args, &out, &errb); code != 1 {
			t.Fatalf("%s of a cut archive: exit %d: %s%s", name, code, out.String(), errb.String())
		}
		msg := errb.String()
		i := strings.Index(msg, "backup archive:")
		if i < 0 || !strings.Contains(msg, "cut short") {
			t.Fatalf("%s of a cut archive says: %s", name, msg)
		}
		said[name] = msg[i:]
	}
	if said["verify"] != said["restore"] || !strings.Contains(said["restore"], "after 1000 whole entities") {
		t.Errorf("restore --verify says %q, restore %q; want both after 1000 entities", said["verify"], said["restore"])
	}
	if n := len(rowsOf(t, acct, dst)); n != 1000 { // an entity is one row here
		t.Errorf("the restore of the cut archive wrote %d entities, want 1000", n)
	}
}

// TestRestoreCommandLostAnswers runs restore through a transport that breaks the
// connection in the middle of two transactions' answers, after Azurite applied them: the
// command settles them and succeeds.
func TestRestoreCommandLostAnswers(t *testing.T) {
	conn, acct, src := azuriteTable(t, 250)
	ctx := context.Background()
	dst := src + "Lost"
	t.Cleanup(func() { _ = acct.Tables().DeleteTable(context.Background(), dst) })
	archive := filepath.Join(t.TempDir(), "lost.udtb")
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"backup", "--table", src, "--archive", archive, "--connection-string", conn, "--progress", "none"}, &out, &errb); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errb.String())
	}
	var injector *faults.Transport
	old := transportOf
	transportOf = func(tr *http.Transport) policy.Transporter {
		injector = faults.NewTransport(&http.Client{Transport: tr})
		injector.Inject(faults.ResetMidBody, faults.Transactions, 2)
		return injector
	}
	defer func() { transportOf = old }()
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"restore", "--table", dst, "--archive", archive, "--connection-string", conn, "--progress", "none"}, &out, &errb); code != 0 {
		t.Fatalf("restore with lost answers: exit %d: %s", code, errb.String())
	}
	if injector.Injected(faults.ResetMidBody) != 2 || !strings.Contains(out.String(), "250 entities") {
		t.Errorf("%d faults injected; restore printed %s", injector.Injected(faults.ResetMidBody), out.String())
	}
}
