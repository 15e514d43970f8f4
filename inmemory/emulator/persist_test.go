package emulator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/service"
)

// state renders every table and row of svc, with ETags and Timestamps, in a stable order.
func state(t *testing.T, svc *memservice.Service) string {
	t.Helper()
	var tables []string
	err := journal.Dump(svc, func(c *journal.Change) error {
		if c.Kind == journal.CreateTable {
			tables = append(tables, "table "+c.Table+"\n")
			return nil
		}
		for _, rc := range c.Rows {
			r := rc.Row
			props := make([]string, len(r.Properties))
			for i, p := range r.Properties {
				props[i] = p.Name + "=" + p.Value.String()
			}
			tables[len(tables)-1] += fmt.Sprintf("  %q %q %s %s %v\n", r.PartitionKey, r.RowKey, r.ETag,
				r.Timestamp.Format(time.RFC3339Nano), props)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(tables)
	return strings.Join(tables, "")
}

// copyDir copies the files of dir (one level of account directories) to a new directory, as
// a crash would leave them.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	accts, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accts {
		files, err := os.ReadDir(filepath.Join(dir, a.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(out, a.Name()), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, a.Name(), f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, a.Name(), f.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// persistent starts an emulator over a data directory, with the development account's
// service returned for inspection.
func persistent(t *testing.T, dir string, every int) (*Handler, *memservice.Service) {
	t.Helper()
	svc := memservice.New()
	h, err := New(&Options{DataDir: dir, SnapshotEvery: every, Service: func(a string) *memservice.Service {
		if a == DevelopmentAccount {
			return svc
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return h, svc
}

// Tables, rows of every type, transactions, merges and deletes written over HTTP come back
// after a clean restart and after a crash (the directory as the process left it) with the
// same ETags and Timestamps, and an ETag read before the restart still conditions a write.
func TestPersistRestart(t *testing.T) {
	dir := t.TempDir()
	h, svc := persistent(t, dir, 0)
	srv := httptestServer(t, h)
	c := devClient(t, srv)
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"Kept"}`), 201)
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"gone"}`), 201)
	wantStatus(t, "insert", c.do("POST", "gone", `{"PartitionKey":"p","RowKey":"r"}`), 201)
	wantStatus(t, "delete table", c.do("DELETE", "Tables('gone')", ""), 204)
	wantStatus(t, "insert", c.do("POST", "Kept", `{"PartitionKey":"p","RowKey":"1","S":"ü\u2028","B@odata.type":"Edm.Binary","B":"AAEC",`+
		`"I":-7,"L@odata.type":"Edm.Int64","L":"-9223372036854775808","D":-0.0,"N@odata.type":"Edm.Double","N":"NaN","T":true,`+
		`"W@odata.type":"Edm.DateTime","W":"1601-01-01T00:00:00.0000001Z","G@odata.type":"Edm.Guid","G":"00112233-4455-6677-8899-AABBCCDDEEFF"}`), 201)
	wantStatus(t, "insert", c.do("POST", "Kept", `{"PartitionKey":"p","RowKey":"2","V":1}`), 201)
	wantStatus(t, "merge", c.do("MERGE", "Kept(PartitionKey='p',RowKey='2')", `{"W":2}`, "If-Match", "*"), 204)
	wantStatus(t, "insert", c.do("POST", "Kept", `{"PartitionKey":"p","RowKey":"3"}`), 201)
	wantStatus(t, "delete", c.do("DELETE", "Kept(PartitionKey='p',RowKey='3')", "", "If-Match", "*"), 204)
	ct, body := batchBody(srv.URL+"/"+DevelopmentAccount,
		"POST BASE/Kept HTTP/1.1\r\nContent-Type: application/json\r\n\r\n"+`{"PartitionKey":"q","RowKey":"a","X":1}`,
		"PUT BASE/Kept(PartitionKey='q',RowKey='b') HTTP/1.1\r\nContent-Type: application/json\r\n\r\n"+`{"X":2}`,
	)
	wantStatus(t, "batch", c.do("POST", "$batch", body, "Content-Type", ct), 202)
	etag := c.do("GET", "Kept(PartitionKey='p',RowKey='2')", "").header.Get("ETag")
	want := state(t, svc)
	if !strings.Contains(want, `"q" "b"`) || strings.Contains(want, "gone") || strings.Contains(want, `"p" "3"`) {
		t.Fatalf("the state before the restart:\n%s", want)
	}

	// A crash: the files as they are now, the log not folded into a snapshot.
	crashed := copyDir(t, dir)
	h2, svc2 := persistent(t, crashed, 0)
	if got := state(t, svc2); got != want {
		t.Errorf("after a crash:\n%s\nwant:\n%s", got, want)
	}
	if err := h2.Close(); err != nil {
		t.Fatal(err)
	}

	srv.Close()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, DevelopmentAccount, oldLogName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a clean stop left %s: %v", oldLogName, err)
	}
	h3, svc3 := persistent(t, dir, 0)
	defer h3.Close()
	if got := state(t, svc3); got != want {
		t.Errorf("after a clean stop:\n%s\nwant:\n%s", got, want)
	}
	c3 := devClient(t, httptestServer(t, h3))
	wantStatus(t, "replace with the ETag read before the restart",
		c3.do("PUT", "Kept(PartitionKey='p',RowKey='2')", `{"V":3}`, "If-Match", etag), 204)
	if etag2 := c3.do("GET", "Kept(PartitionKey='p',RowKey='2')", "").header.Get("ETag"); etag2 <= etag {
		t.Errorf("the ETag after the restart, %s, is not later than %s", etag2, etag)
	}
}

// httptestServer serves h on a loopback port for the test.
func httptestServer(t *testing.T, h *Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Many goroutines write the same rows, in transactions too, and create and delete tables
// while snapshots are written every few changes: the directory, copied as a crash would
// leave it and after a clean stop, loads to exactly the state the service holds, so the log
// orders conflicting changes as the service applied them.
func TestPersistConcurrent(t *testing.T) {
	for _, every := range []int{0, 37} {
		t.Run(fmt.Sprint("snapshot every ", every), func(t *testing.T) { concurrentLoad(t, every) })
	}
}

func concurrentLoad(t *testing.T, every int) {
	dir := t.TempDir()
	h, svc := persistent(t, dir, every)
	ctx := context.Background()
	if err := svc.CreateTable(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
	const workers, each = 12, 150
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				pk := fmt.Sprint("p", i%3)
				rk := fmt.Sprint("r", (w+i)%5)
				row := service.Row{PartitionKey: pk, RowKey: rk, Properties: []service.Property{
					{Name: "W", Value: service.Int32(int32(w))}, {Name: "I", Value: service.Int32(int32(i))}}}
				// Every worker writes one hot row: the last write wins, in the log too.
				hot := service.Row{PartitionKey: "hot", RowKey: "hot", Properties: row.Properties}
				_, _ = svc.Write(ctx, "shared", service.Action{Op: service.OpUpsertReplace, Row: hot})
				switch i % 6 {
				case 0, 1:
					_, _ = svc.Write(ctx, "shared", service.Action{Op: service.OpUpsertReplace, Row: row})
				case 2:
					_, _ = svc.Write(ctx, "shared", service.Action{Op: service.OpUpsertMerge, Row: row})
				case 3:
					_, _ = svc.Write(ctx, "shared", service.Action{Op: service.OpDelete, Row: row, IfMatch: "*"})
				case 4:
					other := row
					other.RowKey = fmt.Sprint("r", (w+i+1)%5)
					_, _ = svc.Transact(ctx, "shared", []service.Action{
						{Op: service.OpUpsertMerge, Row: row}, {Op: service.OpUpsertReplace, Row: other}})
				case 5:
					name := fmt.Sprint("t", w%4)
					_ = svc.CreateTable(ctx, name)
					_, _ = svc.Write(ctx, name, service.Action{Op: service.OpUpsertReplace, Row: row})
					if w%2 == 0 {
						_ = svc.DeleteTable(ctx, name)
					}
				}
			}
		}()
	}
	wg.Wait()
	want := state(t, svc)
	if every == 0 {
		checkLogOrder(t, filepath.Join(dir, DevelopmentAccount, logName))
	}

	st := h.stores[0]
	st.snapMu.Lock() // no snapshot half written in the copy
	crashed := copyDir(t, dir)
	st.snapMu.Unlock()
	h2, svc2 := persistent(t, crashed, 0)
	if got := state(t, svc2); got != want {
		t.Errorf("after a crash:\n%s\nwant:\n%s", got, want)
	}
	if err := h2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h3, svc3 := persistent(t, dir, 0)
	defer h3.Close()
	if got := state(t, svc3); got != want {
		t.Errorf("after a clean stop:\n%s\nwant:\n%s", got, want)
	}
}

// checkLogOrder checks that the rows of each partition are logged in the order the service
// stamped them, which is the order it applied them in.
func checkLogOrder(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := make(map[string]time.Time)
	n := 0
	for off := len(logMagic); off < len(data); {
		size := int(binary.LittleEndian.Uint32(data[off:]))
		c, err := decodeChange(data[off+frameHeader : off+frameHeader+size])
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		off += frameHeader + size
		for _, rc := range c.Rows {
			if rc.Delete {
				continue
			}
			n++
			k := c.Table + "/" + rc.Row.PartitionKey
			if !rc.Row.Timestamp.After(last[k]) {
				t.Fatalf("partition %s: a row stamped %v is logged after one stamped %v", k, rc.Row.Timestamp, last[k])
			}
			last[k] = rc.Row.Timestamp
		}
	}
	if n < 1000 {
		t.Fatalf("the log holds %d row writes", n)
	}
}

// A torn last record (the file ends inside it, or in zeros, or its checksum fails at the
// end of the file) was never acknowledged: it is dropped and the log cut before it. Any
// other damage refuses to start with a *CorruptError naming the file and the offset.
func TestPersistDamage(t *testing.T) {
	dir := t.TempDir()
	h, svc := persistent(t, dir, 0)
	ctx := context.Background()
	if err := svc.CreateTable(ctx, "tab"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		row := service.Row{PartitionKey: "p", RowKey: fmt.Sprint(i)}
		if _, err := svc.Write(ctx, "tab", service.Action{Op: service.OpInsert, Row: row}); err != nil {
			t.Fatal(err)
		}
	}
	full := state(t, svc)
	crashed := copyDir(t, dir)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(crashed, DevelopmentAccount, logName)
	good, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The offset of the last record: walk the frames.
	offsets := []int{}
	for off := len(logMagic); off < len(good); off += frameHeader + int(binary.LittleEndian.Uint32(good[off:])) {
		offsets = append(offsets, off)
	}
	flip := func(b []byte, at int) []byte {
		b = slices.Clone(b)
		b[at] ^= 0x40
		return b
	}
	for _, tc := range []struct {
		name   string
		log    []byte
		rows   int   // rows after the start; -1: refused
		offset int64 // of a refusal
	}{
		{"intact", good, 3, 0},
		{"header cut short", append(slices.Clone(good), 5, 0, 0), 3, 0},
		{"payload cut short", good[:len(good)-2], 2, 0},
		{"zeros after the last record", append(slices.Clone(good), make([]byte, 4096)...), 3, 0},
		{"the last record damaged", flip(good, len(good)-1), 2, 0},
		{"a record damaged before the last", flip(good, offsets[1]+frameHeader+2), -1, int64(offsets[1])},
		{"a length damaged before the last", flip(good, offsets[0]), -1, int64(offsets[0])},
		{"not a log", []byte("something else entirely"), -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := copyDir(t, crashed)
			path := filepath.Join(d, DevelopmentAccount, logName)
			if err := os.WriteFile(path, tc.log, 0o644); err != nil {
				t.Fatal(err)
			}
			svc := memservice.New()
			h, err := New(&Options{DataDir: d, Service: func(string) *memservice.Service { return svc }})
			if tc.rows < 0 {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.File != path || ce.Offset != tc.offset {
					t.Fatalf("New: %v, want a *CorruptError at %s offset %d", err, path, tc.offset)
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("the error does not name the file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			got := state(t, svc)
			if n := strings.Count(got, `"p"`); n != tc.rows {
				t.Errorf("%d rows after the start, want %d:\n%s", n, tc.rows, got)
			}
			if tc.rows == 3 && got != full {
				t.Errorf("state:\n%s\nwant:\n%s", got, full)
			}
		})
	}

	// A snapshot must end with its end record.
	d := copyDir(t, dir) // after the clean stop: a snapshot and an empty log
	snap := filepath.Join(d, DevelopmentAccount, snapName)
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap, b[:len(b)-frameHeader-len(snapEnd)], 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := New(&Options{DataDir: d}); !errors.As(err, &ce) || ce.File != snap {
		t.Errorf("a snapshot without its end: %v", err)
	}
}

// A write whose log cannot be written is answered with 500 InternalError, and so is every
// later one; none of them is there after a restart. An account the directory cannot be
// named after is refused.
func TestPersistWriteFailure(t *testing.T) {
	dir := t.TempDir()
	h, _ := persistent(t, dir, 0)
	c := devClient(t, httptestServer(t, h))
	wantStatus(t, "create", c.do("POST", "Tables", `{"TableName":"tab"}`), 201)
	st := h.stores[0]
	st.syncMu.Lock()
	_ = st.log.Close() // every later write to it fails
	st.syncMu.Unlock()
	wantError(t, "an insert", c.do("POST", "tab", `{"PartitionKey":"p","RowKey":"a"}`), 500, "InternalError")
	wantError(t, "a table", c.do("POST", "Tables", `{"TableName":"other"}`), 500, "InternalError")
	_ = h.Close() // its log is closed already

	h2, svc := persistent(t, dir, 0)
	defer h2.Close()
	if got, want := state(t, svc), "table tab\n"; got != want {
		t.Errorf("after a restart:\n%s\nwant:\n%s", got, want)
	}

	if _, err := New(&Options{DataDir: t.TempDir(), Accounts: []Account{{Name: "../up", Key: []byte("k")}}}); err == nil {
		t.Error("an account named ../up was given a directory")
	}
}
