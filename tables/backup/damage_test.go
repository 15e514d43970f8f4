package backup

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azblobs"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/faults"
	"github.com/unified-data/gotables/tables/service"
)

// synthArchive writes an archive of n one-row entities over parts partitions with the
// package's own writer, as Write does, a member every per entities; no account needed.
func synthArchive(t *testing.T, n, parts, per int) []byte {
	t.Helper()
	old := memberEntities
	memberEntities = per
	defer func() { memberEntities = old }()
	var buf bytes.Buffer
	aw := newArchiveWriter(&buf, 0, true)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(aw.record(headerRec{Type: recHeader, Format: formatName, Version: Version, Table: "Synth"}))
	must(aw.endMember())
	var rows int64
	for i := range n {
		row := service.Row{PartitionKey: fmt.Sprintf("p%d", i%parts), RowKey: fmt.Sprintf("r%04d", i), Properties: []service.Property{
			{Name: "N", Value: service.Int64(int64(i))}, {Name: "Text", Value: service.String(strings.Repeat("t", i%40))},
		}}
		must(aw.record(entityRec{Type: recEntity, PK: row.PartitionKey, Rows: []rowRec{rowToRec(&row)}}))
		rows++
		aw.entities++
		if aw.full() {
			must(aw.endMember())
		}
	}
	must(aw.endMember())
	must(aw.record(endRec{Type: recEnd, Entities: int64(n), Rows: rows}))
	must(aw.endMember())
	return buf.Bytes()
}

// members returns the offsets at which the archive's gzip members start.
func members(t *testing.T, archive []byte) []int {
	t.Helper()
	br := bytes.NewReader(archive)
	var starts []int
	zr, err := gzip.NewReader(br)
	for err == nil {
		starts = append(starts, len(archive)-br.Len()-10) // the header read so far is 10 bytes
		zr.Multistream(false)
		if _, err = io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
		err = zr.Reset(br)
	}
	if err != io.EOF {
		t.Fatal(err)
	}
	return starts
}

// TestMemberReaderHandsOnOnlyVerifiedBytes flips bits in every member of an archive and
// reads it through the member reader: it yields every byte of the members before the
// damaged one, none of the damaged one, and then an error that names it.
func TestMemberReaderHandsOnOnlyVerifiedBytes(t *testing.T) {
	archive := synthArchive(t, 50, 3, 10)
	starts := members(t, archive)
	if len(starts) != 7 { // header, 5 of 10 entities, trailer
		t.Fatalf("%d members, want 7", len(starts))
	}
	plain := func(b []byte) []byte {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole := plain(archive)
	for m := range starts {
		end := len(archive)
		if m+1 < len(starts) {
			end = starts[m+1]
		}
		var before []byte
		if m > 0 {
			before = plain(archive[:starts[m]])
		}
		for _, off := range []int{starts[m] + 12, (starts[m] + end) / 2, end - 6} {
			damaged := bytes.Clone(archive)
			damaged[off] ^= 0x10
			mr := &memberReader{src: bufioReader(damaged), consumed: func() int64 { return 0 }}
			got, err := io.ReadAll(mr)
			mr.close()
			var d *damage
			if !errors.As(err, &d) {
				t.Fatalf("member %d, byte %d flipped: %v, want damage", m, off, err)
			}
			if !bytes.Equal(got, before) {
				t.Fatalf("member %d, byte %d flipped: %d bytes handed on, want the %d of the members before it", m, off, len(got), len(before))
			}
		}
	}
	// Unharmed, it reads every byte, through a temporary file for members above the limit.
	old := memberSpill
	memberSpill = 100
	defer func() { memberSpill = old }()
	mr := &memberReader{src: bufioReader(archive), consumed: func() int64 { return 0 }}
	got, err := io.ReadAll(mr)
	spilled := mr.file != nil
	mr.close()
	if err != nil || !bytes.Equal(got, whole) || !spilled {
		t.Fatalf("the whole archive: %d of %d bytes, spilled %v, %v", len(got), len(whole), spilled, err)
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// TestVerifyCountsWholeEntitiesBeforeDamage flips a bit in each entity member and checks
// the count of entities Verify reports before the damage: the members before it.
func TestVerifyCountsWholeEntitiesBeforeDamage(t *testing.T) {
	archive := synthArchive(t, 50, 3, 10)
	starts := members(t, archive)
	ctx := context.Background()
	for m := 1; m <= 5; m++ {
		damaged := bytes.Clone(archive)
		damaged[(starts[m]+starts[m+1])/2] ^= 0x01
		st, err := Verify(ctx, bytes.NewReader(damaged), nil)
		want := int64(10 * (m - 1))
		if !errors.Is(err, abstractions.ErrIntegrity) || st.Entities != want ||
			!strings.Contains(err.Error(), fmt.Sprintf("after %d whole entities", want)) {
			t.Errorf("member %d damaged: %d entities, %v; want %d and ErrIntegrity", m, st.Entities, err, want)
		}
	}
}

// TestCutArchives cuts an archive at every length and checks that Verify says what is
// wrong: the last 3 bytes missing is a cut member, not records after the trailer.
func TestCutArchives(t *testing.T) {
	archive := synthArchive(t, 30, 2, 10)
	ctx := context.Background()
	for n := 1; n < len(archive); n++ {
		st, err := Verify(ctx, bytes.NewReader(archive[:n]), nil)
		if !errors.Is(err, abstractions.ErrIntegrity) {
			t.Fatalf("cut to %d of %d bytes: %+v, %v; want ErrIntegrity", n, len(archive), st, err)
		}
		if strings.Contains(err.Error(), "follow the trailer") {
			t.Fatalf("cut to %d bytes: %v", n, err)
		}
	}
	_, err := Verify(ctx, bytes.NewReader(archive[:len(archive)-3]), nil)
	if err == nil || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), "after 30 whole entities") {
		t.Errorf("the last 3 bytes missing: %v", err)
	}
	_, err = Verify(ctx, bytes.NewReader(append(bytes.Clone(archive), "half a gzip member"...)), nil)
	if !errors.Is(err, abstractions.ErrIntegrity) || !strings.Contains(err.Error(), "not a gzip member") {
		t.Errorf("bytes after the last member: %v", err)
	}
	if _, err := Verify(ctx, bytes.NewReader(archive), nil); err != nil {
		t.Errorf("the whole archive: %v", err)
	}
}

// TestArchiveVersion checks the one sentinel of an archive of another format version,
// compressed or not: ErrNotSupported, not ErrIntegrity.
func TestArchiveVersion(t *testing.T) {
	var buf bytes.Buffer
	aw := newArchiveWriter(&buf, 0, true)
	if err := aw.record(headerRec{Type: recHeader, Format: formatName, Version: Version + 1, Table: "Synth"}); err != nil {
		t.Fatal(err)
	}
	_ = aw.endMember()
	plain := fmt.Sprintf(`{"type":"header","format":%q,"version":%d,"table":"Synth"}`+"\n", formatName, Version+1)
	for name, archive := range map[string][]byte{"compressed": buf.Bytes(), "plain": []byte(plain)} {
		_, err := Verify(context.Background(), bytes.NewReader(archive), nil)
		if !errors.Is(err, abstractions.ErrNotSupported) || errors.Is(err, abstractions.ErrIntegrity) {
			t.Errorf("%s: %v, want ErrNotSupported only", name, err)
		}
	}
}

// nilTables is a table service no test calls.
type nilTables struct{ service.Tables }

func TestNilArguments(t *testing.T) {
	ctx := context.Background()
	acct := tables.NewAccountOver("nothing", nilTables{}, nil, nil)
	var nilAcct *tables.Account
	archive := synthArchive(t, 1, 1, 10)
	checks := map[string]func() error{
		"Write nil writer":       func() error { _, err := Write(ctx, acct, "Table1", nil, nil); return err },
		"Write nil account":      func() error { _, err := Write(ctx, nilAcct, "Table1", io.Discard, nil); return err },
		"Restore nil reader":     func() error { _, err := Restore(ctx, acct, "Table1", nil, nil); return err },
		"Restore nil account":    func() error { _, err := Restore(ctx, nil, "Table1", bytes.NewReader(archive), nil); return err },
		"Verify nil reader":      func() error { _, err := Verify(ctx, nil, nil); return err },
		"Copy nil destination":   func() error { _, err := Copy(ctx, acct, "Table1", nil, "Table2", nil); return err },
		"Copy nil source":        func() error { _, err := Copy(ctx, nil, "Table1", acct, "Table2", nil); return err },
		"Copy no table":          func() error { _, err := Copy(ctx, acct, "Table1", acct, "", nil); return err },
		"WriteFile nil account":  func() error { _, err := WriteFile(ctx, nil, "Table1", t.TempDir()+"/a", nil); return err },
		"Restore bad table name": func() error { _, err := Restore(ctx, acct, "no", bytes.NewReader(archive), nil); return err },
	}
	for name, f := range checks {
		if err := f(); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}

// faultyAccount is an Azurite account whose requests pass through a fault injector.
func faultyAccount(t *testing.T) (*tables.Account, *faults.Transport) {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	opts := azuritetest.ClientOptions(t)
	next := opts.Transport
	if next == nil {
		next = http.DefaultClient
	}
	tr := faults.NewTransport(next)
	opts.Transport = tr
	acct, err := tables.NewAccount(conn, &tables.Options{
		ClientOptions: opts,
		Blobs:         azblobs.Connect,
		BlobOffload:   &tables.BlobOffloadOptions{Container: "backuppkgtest", CleanupGrace: -1},
		Logger:        quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return acct, tr
}

// TestLostTransactionAnswer restores and copies through a transport that breaks the
// connection in the middle of a transaction's answer, after Azurite applied it (the SDK
// does not resend a batch then): the restore settles it by reading the rows back and
// succeeds, with every entity written once.
func TestLostTransactionAnswer(t *testing.T) {
	acct := azuriteAccount(t)
	faulty, tr := faultyAccount(t)
	ctx := context.Background()
	src, dst, cp := tableName("BackupLostSrc"), tableName("BackupLostDst"), tableName("BackupLostCopy")
	for _, tb := range []string{src, dst, cp} {
		dropTable(t, acct, tb)
	}
	fill(t, acct, src, 120, false)
	var archive bytes.Buffer
	if _, err := Write(ctx, acct, src, &archive, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []faults.Fault{faults.ResetMidBody, faults.LoseResponse} {
		tr.Inject(f, faults.Transactions, 2)
		st, err := Restore(ctx, faulty, dst, bytes.NewReader(archive.Bytes()), &Options{Logger: quiet(), Existing: Replace})
		if err != nil || st.Entities != 120 {
			t.Fatalf("%v: restore: %+v, %v", f, st, err)
		}
		if n := countRows(t, acct, dst); n != 120 {
			t.Fatalf("%v: %d rows restored, want 120", f, n)
		}
		if n := tr.Injected(f); n != 2 {
			t.Errorf("%v injected %d times", f, n)
		}
	}
	tr.Inject(faults.ResetMidBody, faults.Transactions, 1)
	st, err := Copy(ctx, acct, src, faulty, cp, &Options{Logger: quiet()})
	if err != nil || st.Entities != 120 || countRows(t, acct, cp) != 120 {
		t.Fatalf("copy: %+v, %v", st, err)
	}
}

// countRows counts the rows of a table.
func countRows(t *testing.T, acct *tables.Account, table string) int {
	t.Helper()
	n := 0
	q := service.Query{Select: []string{"N"}}
	for {
		page, err := acct.Tables().Query(context.Background(), table, q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Rows)
		if page.Next == nil {
			return n
		}
		q.Continuation = page.Next
	}
}

// TestCopyReportsTheDestinationsError checks that a copy whose destination fails returns
// the destination's error, classified, not the reading side's stop.
func TestCopyReportsTheDestinationsError(t *testing.T) {
	acct := azuriteAccount(t)
	faulty, tr := faultyAccount(t)
	old := backoffPause
	backoffPause = func(int) time.Duration { return time.Millisecond }
	t.Cleanup(func() { backoffPause = old })
	ctx := context.Background()
	src, cp := tableName("BackupCopyErrSrc"), tableName("BackupCopyErr")
	dropTable(t, acct, src)
	dropTable(t, acct, cp)
	fill(t, acct, src, 30, false)
	// Every request to the destination is refused as busy: the copy gives up with
	// ErrUnavailable and says nothing of a writer.
	tr.Inject(faults.ServerBusy, faults.AllCalls, 1000)
	_, err := Copy(ctx, acct, src, faulty, cp, &Options{Logger: quiet()})
	tr.Clear()
	if !errors.Is(err, abstractions.ErrUnavailable) || strings.Contains(err.Error(), "writ") && strings.Contains(err.Error(), "stopped") {
		t.Errorf("a busy destination: %v", err)
	}
	// A destination that holds rows is refused with its own error.
	if _, err := Copy(ctx, acct, src, acct, src+"x", nil); err != nil {
		t.Fatal(err)
	}
	dropTable(t, acct, src+"x")
	if _, err := Copy(ctx, acct, src, acct, src+"x", nil); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("a destination that holds rows: %v", err)
	}
}

// TestTransactionOutcomes restores through faults.Tables over Azurite's service, so that
// both the transactions and the reads that settle them can fail: a transaction that was
// never received is sent again; one that was applied but whose rows cannot be read back
// either, until the attempts run out, is the one failure that says it may or may not have
// been applied, and matches ErrUnavailable.
func TestTransactionOutcomes(t *testing.T) {
	acct := azuriteAccount(t)
	old := backoffPause
	backoffPause = func(int) time.Duration { return time.Millisecond }
	t.Cleanup(func() { backoffPause = old })
	ctx := context.Background()
	src := tableName("BackupOutcomeSrc")
	dropTable(t, acct, src)
	fill(t, acct, src, 40, false)
	var archive bytes.Buffer
	if _, err := Write(ctx, acct, src, &archive, nil); err != nil {
		t.Fatal(err)
	}
	svc := faults.NewTables(acct.Tables())
	faulty := tables.NewAccountOver("faulty", svc, acct.Blobs(), &tables.Options{Logger: quiet()})

	// Never received, in every try of the first call (the SDK's four): the rows read back
	// unwritten, the restore sends the transaction again.
	dst := tableName("BackupOutcomeResent")
	dropTable(t, acct, dst)
	svc.Inject(faults.ResetMidRequest, faults.Transactions, 4)
	st, err := Restore(ctx, faulty, dst, bytes.NewReader(archive.Bytes()), &Options{Logger: quiet()})
	if err != nil || st.Entities != 40 || st.Retries == 0 {
		t.Fatalf("a transaction never received: %+v, %v", st, err)
	}

	// Applied, its answer lost, and every read back fails too.
	dst = tableName("BackupOutcomeUnknown")
	dropTable(t, acct, dst)
	svc.Inject(faults.ResetMidBody, faults.Transactions, maxAttempts)
	svc.Inject(faults.ResetMidRequest, faults.Reads, 4*maxAttempts)
	_, err = Restore(ctx, faulty, dst, bytes.NewReader(archive.Bytes()), &Options{Logger: quiet()})
	svc.Clear()
	var se *abstractions.StoreError
	if !errors.Is(err, abstractions.ErrUnavailable) || !strings.Contains(err.Error(), "may or may not have been applied") || !errors.As(err, &se) {
		t.Fatalf("an applied transaction that cannot be read back: %v", err)
	}
	var fe *faults.Error
	if !errors.As(err, &fe) {
		t.Errorf("the chain lost the network's error: %v", err)
	}

	// A transaction the service keeps failing with 500 is read back after each failure and
	// sent again; when the attempts run out, the error says it was not applied.
	dst = tableName("BackupOutcomeRefused")
	dropTable(t, acct, dst)
	svc.Inject(faults.InternalError, faults.Transactions, 4*maxAttempts)
	_, err = Restore(ctx, faulty, dst, bytes.NewReader(archive.Bytes()), &Options{Logger: quiet()})
	svc.Clear()
	if !errors.Is(err, abstractions.ErrUnavailable) || strings.Contains(err.Error(), "may or may not") || !strings.Contains(err.Error(), "not applied") {
		t.Fatalf("a transaction the service keeps failing with 500, not applied: %v", err)
	}
	t.Logf("the errors say:\n%v", err)
}
