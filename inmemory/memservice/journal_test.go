package memservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/tables/service"
)

// A log that keeps the changes it is given, and fails Sync when told to.
type memLog struct {
	mu      sync.Mutex
	changes []journal.Change
	fail    error
}

func (l *memLog) Append(c *journal.Change) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	cp := *c
	cp.Rows = slices.Clone(c.Rows)
	l.changes = append(l.changes, cp)
	return uint64(len(l.changes))
}

func (l *memLog) Sync(uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fail
}

// Every committed change reaches the log, one record per write, transaction and table
// change, with the ETag and Timestamp the caller was given; replaying the log into a new
// service, or restoring a dump, gives the same rows, whose ETags still condition writes; a
// failed Sync fails the call.
func TestJournal(t *testing.T) {
	ctx := context.Background()
	s, clk := newTable(t)
	log := &memLog{}
	journal.Attach(s, log)
	row := func(rk string, n int32) service.Row {
		return service.Row{PartitionKey: "p", RowKey: rk, Properties: []service.Property{{Name: "N", Value: service.Int32(n)}}}
	}
	w1, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpInsert, Row: row("a", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpInsert, Row: row("a", 9)}); err == nil {
		t.Fatal("a second insert succeeded")
	}
	if _, err := s.Transact(ctx, "Tab1", []service.Action{
		{Op: service.OpInsert, Row: row("b", 2)}, {Op: service.OpMerge, Row: row("a", 3), IfMatch: w1.ETag}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpDelete, Row: row("b", 0), IfMatch: "*"}); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.CreateTable(ctx, "Gone"), s.DeleteTable(ctx, "gone"), s.CreateTable(ctx, "Tab2")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := len(log.changes); got != 6 {
		t.Fatalf("%d changes logged, want 6 (a refused write logs nothing)", got)
	}
	if c := log.changes[1]; c.Kind != journal.Rows || len(c.Rows) != 2 || c.Rows[1].Row.ETag == w1.ETag {
		t.Errorf("the transaction is logged as %+v", c)
	}

	want, _ := s.GetRow(ctx, "Tab1", "p", "a", nil)
	replayed := New(WithClock(clk.now))
	if err := replayed.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	for i := range log.changes {
		journal.Restore(replayed, &log.changes[i])
	}
	restored := New(WithClock(clk.now))
	if err := journal.Dump(s, func(c *journal.Change) error { journal.Restore(restored, c); return nil }); err != nil {
		t.Fatal(err)
	}
	for name, svc := range map[string]*Service{"replayed": replayed, "restored": restored} {
		got, err := svc.GetRow(ctx, "Tab1", "p", "a", nil)
		if err != nil {
			t.Fatal(name, err)
		}
		same := got.ETag == want.ETag && got.Timestamp.Equal(want.Timestamp) && len(got.Properties) == len(want.Properties)
		for i := 0; same && i < len(got.Properties); i++ {
			same = got.Properties[i].Name == want.Properties[i].Name && got.Properties[i].Value.Equal(want.Properties[i].Value)
		}
		if !same {
			t.Errorf("%s row %+v, want %+v", name, got, want)
		}
		if _, err := svc.GetRow(ctx, "Tab1", "p", "b", nil); err == nil {
			t.Errorf("%s: the deleted row is back", name)
		}
		names, _ := svc.TableNames(ctx)
		if !slices.Equal(names, []string{"Tab1", "Tab2"}) {
			t.Errorf("%s tables %q", name, names)
		}
		// The clock has not moved: a new write is stamped after the restored rows all the same.
		w, err := svc.Write(ctx, "Tab1", service.Action{Op: service.OpReplace, Row: row("a", 4), IfMatch: want.ETag})
		if err != nil || !w.Timestamp.After(want.Timestamp) {
			t.Errorf("%s: a write with the restored ETag: %v %v", name, w, err)
		}
	}

	log.fail = errors.New("disk full")
	if _, err := s.Write(ctx, "Tab1", service.Action{Op: service.OpUpsertReplace, Row: row("c", 5)}); !errors.Is(err, log.fail) {
		t.Errorf("a write whose log fails: %v", err)
	}
	if err := s.CreateTable(ctx, "Tab3"); !errors.Is(err, log.fail) {
		t.Errorf("a table whose log fails: %v", err)
	}
}

// blobState renders every container and blob of s (properties, metadata, content) in name
// order.
func blobState(t *testing.T, s *Service) string {
	t.Helper()
	ctx := context.Background()
	cs, err := s.Containers(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&out, "container %s %s %s\n", c.Name, c.ETag, c.LastModified.Format(time.RFC3339))
		page, err := s.List(ctx, c.Name, service.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Blobs {
			b, err := s.Download(ctx, c.Name, it.Name, service.Conditions{})
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(b.Body)
			b.Body.Close()
			fmt.Fprintf(&out, "  %s %+v %v %q\n", it.Name, b.Properties, b.Metadata, data)
		}
	}
	return out.String()
}

// Every blob change reaches the log as the state it sets: a container with its ETag and
// time, a blob with its content, properties, metadata and annex, a deletion; a refused
// write logs nothing. Replaying the log, or restoring a dump, gives the same containers and
// blobs, whose ETags still condition writes and are not handed out again; a failed Sync
// fails the call.
func TestJournalBlobs(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: t0}
	s := New(WithClock(clk.now))
	log := &memLog{}
	journal.Attach(s, log)
	annex := []byte("beside")
	for _, err := range []error{s.CreateContainer(ctx, "kept"), s.CreateContainer(ctx, "gone")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	p1, err := s.Upload(journal.WithAnnex(ctx, annex), "kept", "a", []byte("one"),
		service.UploadOptions{ContentType: "text/plain", ContentEncoding: "gzip", Metadata: map[string]string{"Key": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upload(ctx, "kept", "a", []byte("no"), service.UploadOptions{Mode: service.UploadCreate}); err == nil {
		t.Fatal("a second create succeeded")
	}
	clk.set(t0.Add(3 * time.Second))
	if _, err := s.Upload(ctx, "kept", "b", nil, service.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UploadStream(ctx, "gone", "x", strings.NewReader("x"), service.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upload(ctx, "kept", "c", []byte("three"), service.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Touch(ctx, "kept", "b"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		s.DeleteBlob(journal.WithAnnex(ctx, []byte{}), "kept", "c", service.Conditions{}),
		s.DeleteContainer(ctx, "gone"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	kinds := make([]journal.Kind, len(log.changes))
	for i, c := range log.changes {
		kinds[i] = c.Kind
	}
	if want := []journal.Kind{journal.CreateContainer, journal.CreateContainer, journal.PutBlob, journal.PutBlob,
		journal.PutBlob, journal.PutBlob, journal.PutBlob, journal.DeleteBlob, journal.DeleteContainer}; !slices.Equal(kinds, want) {
		t.Fatalf("logged kinds %v, want %v (a refused write logs nothing)", kinds, want)
	}
	if c := log.changes[2]; c.Container != "kept" || c.Blob != "a" || c.Props != p1 || string(c.Data) != "one" ||
		c.Metadata["key"] != "v" || !bytes.Equal(c.Annex, annex) {
		t.Errorf("the first upload is logged as %+v", c)
	}
	if c := log.changes[3]; c.Annex != nil {
		t.Errorf("an upload without an annex logs one: %q", c.Annex)
	}
	if c := log.changes[7]; c.Blob != "c" || c.Annex == nil {
		t.Errorf("the deletion is logged as %+v", c)
	}

	want := blobState(t, s)
	if !strings.Contains(want, "container kept") || strings.Contains(want, "gone") || strings.Contains(want, " c ") {
		t.Fatalf("the state:\n%s", want)
	}
	replayed := New(WithClock(clk.now))
	for i := range log.changes {
		journal.Restore(replayed, &log.changes[i])
	}
	restored := New(WithClock(clk.now))
	var dumped []journal.Change
	if err := journal.Dump(s, func(c *journal.Change) error {
		dumped = append(dumped, *c)
		journal.Restore(restored, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range dumped {
		if c.Kind == journal.PutBlob && c.Blob == "a" && !bytes.Equal(c.Annex, annex) {
			t.Errorf("the dump drops the annex: %+v", c)
		}
	}
	for name, svc := range map[string]*Service{"replayed": replayed, "restored": restored} {
		if got := blobState(t, svc); got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
		}
		p, err := svc.Upload(ctx, "kept", "a", []byte("four"), service.UploadOptions{Mode: service.UploadIfMatch, IfMatch: p1.ETag})
		if err != nil {
			t.Fatalf("%s: an upload with the restored ETag: %v", name, err)
		}
		for _, c := range log.changes {
			if c.Props.ETag == p.ETag {
				t.Errorf("%s hands out the ETag %s again", name, p.ETag)
			}
		}
	}

	log.fail = errors.New("disk full")
	if _, err := s.Upload(ctx, "kept", "d", []byte("x"), service.UploadOptions{}); !errors.Is(err, log.fail) {
		t.Errorf("an upload whose log fails: %v", err)
	}
	if err := s.DeleteBlob(ctx, "kept", "a", service.Conditions{}); !errors.Is(err, log.fail) {
		t.Errorf("a deletion whose log fails: %v", err)
	}
	if err := s.CreateContainer(ctx, "more"); !errors.Is(err, log.fail) {
		t.Errorf("a container whose log fails: %v", err)
	}
}
