package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory/emulator"
)

// A blob write load from several connections (Put Blob, blocks staged and committed,
// blocks left staged, metadata set, deletes, refused writes), a kill -9 in the middle of
// it, a restart on the same data directory: every blob change the emulator acknowledged is
// there, with its content, metadata and the ETag it was acknowledged with, every staged
// block too, and no refused write is. Two rounds, with snapshots every few hundred
// changes, then a clean stop (SIGTERM) and a last start from its snapshot.
func TestKillDuringBlobWrites(t *testing.T) {
	bin := buildEmulator(t)
	data := t.TempDir()
	const workers = 6
	ws := make([]*blobWorker, workers)
	for i := range ws {
		ws[i] = &blobWorker{prefix: fmt.Sprint("w", i, "-"), blobs: make(map[string]*blobWant)}
	}
	connect := func(p *proc) *blobSigner {
		return &blobSigner{base: "http://" + p.blobAddr, tr: &http.Transport{}}
	}
	for round := range 2 {
		p := start(t, bin, data, true)
		c := connect(p)
		if round == 0 {
			if r := c.do("PUT", "load?restype=container", ""); r.status != 201 {
				t.Fatalf("create container: %d %s", r.status, r.body)
			}
		}
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(t, c)
			}()
		}
		time.Sleep(1500 * time.Millisecond)
		p.kill(t)
		wg.Wait()
		c.tr.CloseIdleConnections()

		p = start(t, bin, data, true)
		c = connect(p)
		acked := 0
		for _, w := range ws {
			acked += w.acked
			w.check(t, c)
		}
		t.Logf("round %d: %d acknowledged blob writes", round, acked)
		if acked < 100 {
			t.Errorf("round %d: only %d blob writes were acknowledged before the kill", round, acked)
		}
		c.tr.CloseIdleConnections()
		if round == 1 {
			p.stop(t)
			p = start(t, bin, data, true)
			c = connect(p)
			for _, w := range ws {
				w.check(t, c)
			}
			c.tr.CloseIdleConnections()
		}
		p.kill(t)
		if t.Failed() {
			return
		}
	}
}

// A blobSigner sends blob requests signed with the development account's Shared Key Lite.
type blobSigner struct {
	base string
	tr   *http.Transport
}

func (s *blobSigner) do(method, path, body string, headers ...string) response {
	req, err := http.NewRequest(method, s.base+"/"+emulator.DevelopmentAccount+"/"+path, strings.NewReader(body))
	if err != nil {
		return response{err: err}
	}
	req.Header.Set("x-ms-version", "2021-12-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// VERB, Content-MD5, Content-Type, Date, the x-ms-* headers in order, the resource.
	var xms []string
	for name, vs := range req.Header {
		if l := strings.ToLower(name); strings.HasPrefix(l, "x-ms-") {
			xms = append(xms, l+":"+strings.Join(vs, ",")+"\n")
		}
	}
	slices.Sort(xms)
	resource := "/" + emulator.DevelopmentAccount + req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		resource += "?comp=" + comp
	}
	toSign := method + "\n" + req.Header.Get("Content-MD5") + "\n" + req.Header.Get("Content-Type") + "\n\n" +
		strings.Join(xms, "") + resource
	mac := hmac.New(sha256.New, devKey)
	mac.Write([]byte(toSign))
	req.Header.Set("Authorization", "SharedKeyLite "+emulator.DevelopmentAccount+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := (&http.Client{Transport: s.tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return response{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{err: err}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// A blobWorker writes the blobs whose names start with its prefix, one request at a time,
// and keeps what each must be after a restart.
type blobWorker struct {
	prefix string
	n      int
	blobs  map[string]*blobWant
	acked  int
}

// blobWant is what a blob must be: absent, or with content, metadata n and an ETag (""
// while a write that changes it is unanswered: any); and the ids of the blocks staged for
// it, in order. While a write is unanswered, alt is what it would make of the blob.
type blobWant struct {
	exists  bool
	content string
	meta    string
	etag    string
	staged  []string
	alt     *blobWant
}

func (w *blobWorker) blob(name string) *blobWant {
	if w.blobs[name] == nil {
		w.blobs[name] = &blobWant{}
	}
	return w.blobs[name]
}

// blockID is a block id of the load (all of one length).
func blockID(n, i int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%08d-%d", n, i))
}

// run writes until the emulator stops answering. A write left unanswered may or may not
// have happened; every other answer is final.
func (w *blobWorker) run(t *testing.T, c *blobSigner) {
	for {
		n := w.n
		w.n++
		type write struct {
			name   string
			after  blobWant
			stage  string // a block staged: after is the blob's state with it
			method string
			path   string
			body   string
			hdrs   []string
			want   int
		}
		name := fmt.Sprint(w.prefix, n)
		// Contents of many sizes, up to 200 KiB.
		size, unit := 1+(n*7919)%(200<<10), fmt.Sprintf("%s:%d;", w.prefix, n)
		content := strings.Repeat(unit, size/len(unit)+1)[:size]
		var ops []write
		ops = append(ops, write{name, blobWant{exists: true, content: content, meta: fmt.Sprint(n)}, "", "PUT", "load/" + name, content,
			[]string{"x-ms-blob-type", "BlockBlob", "x-ms-meta-n", fmt.Sprint(n), "If-None-Match", "*"}, 201})
		if prev := w.blob(fmt.Sprint(w.prefix, n-1)); n%3 == 0 && prev.exists {
			after := *prev
			after.meta, after.etag = fmt.Sprint(-n), "" // a new ETag, known once answered
			ops = append(ops, write{fmt.Sprint(w.prefix, n-1), after, "", "PUT", "load/" + fmt.Sprint(w.prefix, n-1) + "?comp=metadata", "",
				[]string{"x-ms-meta-n", fmt.Sprint(-n), "If-Match", prev.etag}, 200})
		}
		if n%4 == 0 {
			// Two blocks staged and committed (which discards the blob's other staged
			// blocks, as on the service), then a third staged and left uncommitted.
			bname := fmt.Sprint(w.prefix, "k", n)
			stage := func(i int) write {
				return write{name: bname, stage: blockID(n, i), method: "PUT", path: "load/" + bname + "?comp=block&blockid=" + url.QueryEscape(blockID(n, i)),
					body: fmt.Sprintf("block %d of %d;", i, n), want: 201}
			}
			list := "<BlockList><Latest>" + blockID(n, 1) + "</Latest><Latest>" + blockID(n, 0) + "</Latest></BlockList>"
			ops = append(ops, stage(0), stage(1),
				write{bname, blobWant{exists: true, content: fmt.Sprintf("block 1 of %d;block 0 of %d;", n, n), meta: "k"}, "",
					"PUT", "load/" + bname + "?comp=blocklist", list, []string{"x-ms-meta-n", "k"}, 201},
				stage(2))
		}
		if prev := w.blob(fmt.Sprint(w.prefix, n-3)); n%5 == 0 && prev.exists {
			ops = append(ops, write{fmt.Sprint(w.prefix, n-3), blobWant{}, "", "DELETE", "load/" + fmt.Sprint(w.prefix, n-3), "",
				[]string{"If-Match", prev.etag}, 202})
		}
		if n%7 == 0 {
			// Refused: the blob exists, and no blob has this ETag.
			ops = append(ops, write{"", blobWant{}, "", "PUT", "load/" + name, "refused", []string{"x-ms-blob-type", "BlockBlob", "If-None-Match", "*"}, 409})
			ops = append(ops, write{"", blobWant{}, "", "PUT", "load/" + name + "?comp=metadata", "", []string{"x-ms-meta-refused", "1", "If-Match", `"0x1"`}, 412})
		}
		for _, op := range ops {
			if op.stage != "" {
				op.after = *w.blob(op.name)
				op.after.alt = nil
				op.after.staged = append(slices.Clone(op.after.staged), op.stage)
			}
			if op.name != "" {
				alt := op.after
				w.blob(op.name).alt = &alt
			}
			r := c.do(op.method, op.path, op.body, op.hdrs...)
			if r.err != nil {
				return // the emulator is gone: op may or may not have happened
			}
			if r.status != op.want {
				t.Errorf("%s %s: %d %s, want %d", op.method, op.path, r.status, r.body, op.want)
				return
			}
			if op.name == "" {
				continue
			}
			st := op.after
			if op.after.exists && op.stage == "" {
				st.etag = r.header.Get("ETag")
				if st.etag == "" {
					t.Errorf("%s %s: no ETag", op.method, op.path)
				}
			}
			*w.blob(op.name) = st
			w.acked++
		}
	}
}

var blobNameRE = regexp.MustCompile(`<Name>([^<]*)</Name>`)

// check reads the worker's blobs and compares them with what the acknowledged writes left.
// A blob that an unanswered write touched may be either way; from now on it is as the
// emulator holds it.
func (w *blobWorker) check(t *testing.T, c *blobSigner) {
	t.Helper()
	listed := make(map[string]bool)
	marker := ""
	for {
		r := c.do("GET", "load?restype=container&comp=list&prefix="+url.QueryEscape(w.prefix)+"&marker="+url.QueryEscape(marker), "")
		if r.err != nil || r.status != 200 {
			t.Fatalf("list: %v %d %s", r.err, r.status, r.body)
		}
		blobs, next, _ := strings.Cut(r.body, "<NextMarker>")
		for _, m := range blobNameRE.FindAllStringSubmatch(blobs, -1) {
			listed[m[1]] = true
		}
		marker, _, _ = strings.Cut(next, "</NextMarker>")
		if marker == "" {
			break
		}
	}
	for name := range listed {
		if _, ok := w.blobs[name]; !ok {
			t.Errorf("%s was never written", name)
		}
	}
	for name, want := range w.blobs {
		var got blobWant
		r := c.do("GET", "load/"+name, "")
		switch {
		case r.err != nil:
			t.Fatal(r.err)
		case r.status == 200:
			got = blobWant{exists: true, content: r.body, meta: r.header.Get("x-ms-meta-n"), etag: r.header.Get("ETag")}
			if r.header.Get("x-ms-meta-refused") != "" {
				t.Errorf("%s holds a refused write", name)
			}
		case r.status != 404:
			t.Fatalf("get %s: %d %s", name, r.status, r.body)
		}
		if got.exists != listed[name] {
			t.Errorf("%s: read %v, listed %v", name, got.exists, listed[name])
		}
		bl := c.do("GET", "load/"+name+"?comp=blocklist&blocklisttype=uncommitted", "")
		if bl.status == 200 {
			_, staged, _ := strings.Cut(bl.body, "<UncommittedBlocks>")
			for _, m := range blobNameRE.FindAllStringSubmatch(staged, -1) {
				got.staged = append(got.staged, m[1])
			}
		}
		same := func(want, got blobWant) bool {
			return want.exists == got.exists && slices.Equal(want.staged, got.staged) &&
				(!want.exists || want.content == got.content && want.meta == got.meta && (want.etag == "" || want.etag == got.etag))
		}
		if !same(*want, got) && (want.alt == nil || !same(*want.alt, got)) {
			t.Errorf("%s after the restart: %s, want %s (acknowledged)", name, got, *want)
		}
		*want = got
	}
}

func (b blobWant) String() string {
	if len(b.content) > 40 {
		b.content = fmt.Sprintf("%s… (%d bytes)", b.content[:40], len(b.content))
	}
	return fmt.Sprintf("{exists %v content %q meta %q etag %s staged %v}", b.exists, b.content, b.meta, b.etag, b.staged)
}
