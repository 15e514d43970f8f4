package emulator

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/unified-data/gotables/inmemory/internal/journal"
	"github.com/unified-data/gotables/inmemory/memservice"
	"github.com/unified-data/gotables/tables/service"
)

// blobView renders what a client sees of every container and blob of h's development
// account: a container's ETag and time; a blob's content, the headers a read answers with
// (ETag, Last-Modified, the content headers, Content-MD5, metadata) and its block lists,
// committed and staged. svc and the blocks staged in h list the names.
func blobView(t *testing.T, h *Handler, svc *memservice.Service) string {
	t.Helper()
	srv := httptest.NewServer(h.Blobs())
	defer srv.Close()
	c := devBlobClient(t, srv)
	ctx := context.Background()
	cs, err := svc.Containers(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, ct := range cs {
		r := c.do(http.MethodGet, ct.Name+"?restype=container", "")
		fmt.Fprintf(&out, "container %s %d %s %s\n", ct.Name, r.status, r.header.Get("ETag"), r.header.Get("Last-Modified"))
		page, err := svc.List(ctx, ct.Name, service.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range page.Blobs {
			names = append(names, b.Name)
		}
		// Blobs with blocks staged only.
		st := h.accounts[DevelopmentAccount].blobs
		st.mu.RLock()
		for k := range st.staged {
			if k.container == ct.Name && !slices.Contains(names, k.name) {
				names = append(names, k.name)
			}
		}
		st.mu.RUnlock()
		slices.Sort(names)
		for _, name := range names {
			r := c.do(http.MethodHead, ct.Name+"/"+name, "")
			g := c.do(http.MethodGet, ct.Name+"/"+name, "")
			var hdrs []string
			for _, h := range []string{"ETag", "Last-Modified", "Content-Type", "Content-Encoding", "Content-Language",
				"Content-Disposition", "Cache-Control", "Content-MD5", "Content-Length"} {
				hdrs = append(hdrs, h+"="+r.header.Get(h))
			}
			for h, v := range r.header {
				if strings.HasPrefix(strings.ToLower(h), "x-ms-meta-") {
					hdrs = append(hdrs, strings.ToLower(h)+"="+strings.Join(v, ","))
				}
			}
			slices.Sort(hdrs[9:])
			bl := c.do(http.MethodGet, ct.Name+"/"+name+"?comp=blocklist&blocklisttype=all", "")
			if g.status != http.StatusOK { // an error body names its request
				g.body = ""
			}
			if bl.status != http.StatusOK {
				bl.body = ""
			}
			fmt.Fprintf(&out, "  %s %d %q %v\n    blocks %d %s\n", name, r.status, g.body, hdrs, bl.status, bl.body)
		}
	}
	return out.String()
}

// blobLoad writes containers and blobs over HTTP the ways a client can: Put Blob with every
// property header and metadata, staged blocks committed, staged blocks left uncommitted,
// staged blocks discarded by a Put Blob, properties and metadata set, a blob and a container
// (with a blob and staged blocks) deleted.
func blobLoad(t *testing.T, c *blobClient) {
	t.Helper()
	id := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, ct := range []string{"kept", "gone"} {
		wantStatus(t, "container", c.do(http.MethodPut, ct+"?restype=container", ""), http.StatusCreated)
	}
	wantStatus(t, "put", c.do(http.MethodPut, "kept/whole", "ü content\x00\xff", "x-ms-blob-type", "BlockBlob",
		"Content-Type", "text/plain", "Content-Encoding", "identity", "Content-Language", "de",
		"x-ms-blob-content-disposition", "attachment", "Cache-Control", "no-cache", "x-ms-meta-Key", "v", "x-ms-meta-other", "w"), http.StatusCreated)
	wantStatus(t, "put empty", c.do(http.MethodPut, "kept/empty", "", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	for _, b := range []string{"aa", "bb"} {
		wantStatus(t, "block "+b, c.do(http.MethodPut, "kept/blocks?comp=block&blockid="+id(b), strings.Repeat(b, 3)), http.StatusCreated)
	}
	wantStatus(t, "commit", c.do(http.MethodPut, "kept/blocks?comp=blocklist",
		"<BlockList><Latest>"+id("bb")+"</Latest><Latest>"+id("aa")+"</Latest></BlockList>", "x-ms-blob-cache-control", "max-age=1"), http.StatusCreated)
	wantStatus(t, "block for later", c.do(http.MethodPut, "kept/blocks?comp=block&blockid="+id("cc"), "ccc"), http.StatusCreated)
	for _, b := range []string{"x1", "x2"} {
		wantStatus(t, "staged only", c.do(http.MethodPut, "kept/staged?comp=block&blockid="+id(b), b), http.StatusCreated)
	}
	wantStatus(t, "block then put", c.do(http.MethodPut, "kept/replaced?comp=block&blockid="+id("dd"), "ddd"), http.StatusCreated)
	wantStatus(t, "put over staged", c.do(http.MethodPut, "kept/replaced", "new", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	wantStatus(t, "properties", c.do(http.MethodPut, "kept/whole?comp=properties", "", "x-ms-blob-content-type", "text/csv",
		"x-ms-blob-content-language", "fr"), http.StatusOK)
	wantStatus(t, "metadata", c.do(http.MethodPut, "kept/blocks?comp=metadata", "", "x-ms-meta-m", "1"), http.StatusOK)
	wantStatus(t, "put to delete", c.do(http.MethodPut, "kept/deleted", "x", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	wantStatus(t, "block to delete", c.do(http.MethodPut, "kept/deleted?comp=block&blockid="+id("ee"), "e"), http.StatusCreated)
	wantStatus(t, "delete", c.do(http.MethodDelete, "kept/deleted", ""), http.StatusAccepted)
	wantStatus(t, "put in gone", c.do(http.MethodPut, "gone/x", "x", "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	wantStatus(t, "block in gone", c.do(http.MethodPut, "gone/staged?comp=block&blockid="+id("ff"), "f"), http.StatusCreated)
	wantStatus(t, "delete container", c.do(http.MethodDelete, "gone?restype=container", ""), http.StatusAccepted)
	wantStatus(t, "container again", c.do(http.MethodPut, "gone?restype=container", ""), http.StatusCreated)
}

// Containers and blobs written over HTTP come back after a crash (the directory as the
// process left it) and after a clean stop, with snapshots written every few changes or
// not, exactly as a client saw them: content, properties, metadata, ETags, Last-Modified,
// committed and staged blocks (staged blocks discarded by a write or a deletion stay
// discarded). An ETag read before the restart still conditions a write, and the next
// ETag is new.
func TestPersistBlobs(t *testing.T) {
	for _, every := range []int{0, 3} {
		t.Run(fmt.Sprint("snapshot every ", every), func(t *testing.T) {
			dir := t.TempDir()
			h, svc := persistent(t, dir, every)
			srv := httptest.NewServer(h.Blobs())
			c := devBlobClient(t, srv)
			blobLoad(t, c)
			want := blobView(t, h, svc)
			for _, s := range []string{`whole 200 "ü content\x00\xff"`, "Content-Language=fr", "x-ms-meta-key=v",
				"max-age=1", "x-ms-meta-m=1", "  staged 404", "<Name>" + base64.StdEncoding.EncodeToString([]byte("x2")) + "</Name>", "replaced 200"} {
				if !strings.Contains(want, s) {
					t.Fatalf("the state lacks %s:\n%s", s, want)
				}
			}
			for _, s := range []string{"deleted 200", `"new"` + " [ETag=\"\"", "<Size>1</Size>"} {
				if strings.Contains(want, s) {
					t.Fatalf("the state holds %s:\n%s", s, want)
				}
			}
			etag := c.do(http.MethodHead, "kept/whole", "").header.Get("ETag")

			st := h.stores[0]
			st.snapMu.Lock() // no snapshot half written in the copy (one may run in the background)
			crashed := copyDir(t, dir)
			st.snapMu.Unlock()
			h2, svc2 := persistent(t, crashed, every)
			if got := blobView(t, h2, svc2); got != want {
				t.Errorf("after a crash:\n%s\nwant:\n%s", got, want)
			}
			if err := h2.Close(); err != nil {
				t.Fatal(err)
			}

			srv.Close()
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			h3, svc3 := persistent(t, dir, every)
			defer h3.Close()
			if got := blobView(t, h3, svc3); got != want {
				t.Errorf("after a clean stop:\n%s\nwant:\n%s", got, want)
			}
			c3 := devBlobClient(t, httptestBlobServer(t, h3))
			r := c3.do(http.MethodPut, "kept/whole", "next", "x-ms-blob-type", "BlockBlob", "If-Match", etag)
			wantStatus(t, "a put with the ETag read before the restart", r, http.StatusCreated)
			if strings.Contains(want, r.header.Get("ETag")) {
				t.Errorf("the ETag after the restart, %s, was handed out before", r.header.Get("ETag"))
			}
		})
	}
}

// httptestBlobServer serves h's blob endpoint on a loopback port for the test.
func httptestBlobServer(t *testing.T, h *Handler) *httptest.Server {
	srv := httptest.NewServer(h.Blobs())
	t.Cleanup(srv.Close)
	return srv
}

// The damage rules of the log hold for blob records: a torn last one (never acknowledged)
// is cut, a damaged one before the last, or one whose content does not decode (an annex
// among them), stops the start at its offset.
func TestPersistBlobDamage(t *testing.T) {
	dir := t.TempDir()
	h, svc := persistent(t, dir, 0)
	c := devBlobClient(t, httptestBlobServer(t, h))
	wantStatus(t, "container", c.do(http.MethodPut, "ctr?restype=container", ""), http.StatusCreated)
	for _, b := range []string{"a", "b"} {
		wantStatus(t, "put "+b, c.do(http.MethodPut, "ctr/"+b, strings.Repeat(b, 100), "x-ms-blob-type", "BlockBlob"), http.StatusCreated)
	}
	full := blobView(t, h, svc)
	crashed := copyDir(t, dir)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(crashed, DevelopmentAccount, logName)
	good, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var offsets []int
	for off := len(logMagic); off < len(good); off += frameHeader + int(binary.LittleEndian.Uint32(good[off:])) {
		offsets = append(offsets, off)
	}
	if len(offsets) != 3 {
		t.Fatalf("%d records, want 3", len(offsets))
	}
	flip := func(b []byte, at int) []byte {
		b = slices.Clone(b)
		b[at] ^= 0x40
		return b
	}
	badAnnex := appendFrame(slices.Clone(good[:offsets[2]]), &journal.Change{Kind: journal.PutBlob, Container: "ctr", Blob: "b", Annex: []byte{0x80}})
	badAnnex = append(badAnnex, good[offsets[2]:]...)
	for _, tc := range []struct {
		name   string
		log    []byte
		blobs  int   // blobs after the start; -1: refused
		offset int64 // of a refusal
	}{
		{"intact", good, 2, 0},
		{"the last blob cut short", good[:len(good)-5], 1, 0},
		{"the last blob damaged", flip(good, len(good)-7), 1, 0},
		{"a blob damaged before the last", flip(good, offsets[1]+frameHeader+30), -1, int64(offsets[1])},
		{"an annex that does not decode", badAnnex, -1, int64(offsets[2])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := copyDir(t, crashed)
			path := filepath.Join(d, DevelopmentAccount, logName)
			if err := os.WriteFile(path, tc.log, 0o644); err != nil {
				t.Fatal(err)
			}
			svc := memservice.New()
			h, err := New(&Options{DataDir: d, Service: func(string) *memservice.Service { return svc }})
			if tc.blobs < 0 {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.File != path || ce.Offset != tc.offset {
					t.Fatalf("New: %v, want a *CorruptError at %s offset %d", err, path, tc.offset)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			page, err := svc.List(context.Background(), "ctr", service.ListOptions{})
			if err != nil || len(page.Blobs) != tc.blobs {
				t.Fatalf("%d blobs after the start (%v), want %d", len(page.Blobs), err, tc.blobs)
			}
			if got := blobView(t, h, svc); tc.blobs == 2 && got != full {
				t.Errorf("state:\n%s\nwant:\n%s", got, full)
			}
		})
	}
}

// Many connections write the same blobs (puts, staged blocks and commits, metadata,
// deletes) and create and delete containers, while snapshots are written every few changes
// or not at all: the directory, copied as a crash would leave it and after a clean stop,
// loads to exactly what clients see, so the log orders conflicting blob changes as they
// were applied.
func TestPersistBlobsConcurrent(t *testing.T) {
	for _, every := range []int{0, 7} {
		t.Run(fmt.Sprint("snapshot every ", every), func(t *testing.T) {
			dir := t.TempDir()
			h, svc := persistent(t, dir, every)
			c := devBlobClient(t, httptestBlobServer(t, h))
			wantStatus(t, "container", c.do(http.MethodPut, "shared?restype=container", ""), http.StatusCreated)
			const workers, each = 6, 40
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						name := fmt.Sprint("shared/b", (w+i)%4)
						id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%02d%02d", w, i))
						switch i % 6 {
						case 0:
							c.do(http.MethodPut, name, fmt.Sprint(w, "/", i), "x-ms-blob-type", "BlockBlob", "Cache-Control", fmt.Sprint(w))
						case 1:
							c.do(http.MethodPut, name+"?comp=block&blockid="+url.QueryEscape(id), fmt.Sprint("block ", w, "/", i))
						case 2:
							c.do(http.MethodPut, name+"?comp=block&blockid="+url.QueryEscape(id), fmt.Sprint("block ", w, "/", i))
							c.do(http.MethodPut, name+"?comp=blocklist", "<BlockList><Latest>"+id+"</Latest></BlockList>", "x-ms-meta-w", fmt.Sprint(w))
						case 3:
							c.do(http.MethodPut, name+"?comp=metadata", "", "x-ms-meta-i", fmt.Sprint(i))
						case 4:
							c.do(http.MethodDelete, name, "")
						case 5:
							ct := fmt.Sprint("other", w%3)
							c.do(http.MethodPut, ct+"?restype=container", "")
							c.do(http.MethodPut, ct+"/x", "x", "x-ms-blob-type", "BlockBlob")
							c.do(http.MethodPut, ct+"/y?comp=block&blockid="+url.QueryEscape(id), "y")
							if w%2 == 0 && i < each-6 { // the last round keeps them
								c.do(http.MethodDelete, ct+"?restype=container", "")
							}
						}
					}
				}()
			}
			wg.Wait()
			want := blobView(t, h, svc)
			if !strings.Contains(want, "container shared") || !strings.Contains(want, "  y 404") {
				t.Fatalf("the state:\n%s", want)
			}
			st := h.stores[0]
			st.snapMu.Lock() // no snapshot half written in the copy
			crashed := copyDir(t, dir)
			st.snapMu.Unlock()
			h2, svc2 := persistent(t, crashed, 0)
			if got := blobView(t, h2, svc2); got != want {
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
			if got := blobView(t, h3, svc3); got != want {
				t.Errorf("after a clean stop:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
