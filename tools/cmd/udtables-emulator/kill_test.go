package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/unified-data/gotables/inmemory/emulator"
)

// buildEmulator builds the command into a temporary directory and returns the binary's
// path; without a go command the test is skipped.
func buildEmulator(t *testing.T) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is needed to build the emulator:", err)
	}
	bin := filepath.Join(t.TempDir(), "udtables-emulator")
	if out, err := exec.Command(gocmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// A write load from several connections, a kill -9 in the middle of it, a restart on the
// same data directory: every write the emulator acknowledged is there, with the ETag it
// was acknowledged with, and no write it refused is. Two rounds, with snapshots written
// every few hundred changes, so that kills also land during snapshots; then a clean stop
// (SIGTERM) and a last start from the snapshot it wrote.
func TestKillDuringWrites(t *testing.T) {
	bin := buildEmulator(t)
	data := t.TempDir()
	const workers = 6
	ws := make([]*worker, workers)
	for i := range ws {
		ws[i] = &worker{pk: fmt.Sprint("w", i), rows: make(map[string]*rowState)}
	}
	for round := range 2 {
		p := start(t, bin, data, false)
		c := &signer{base: "http://" + p.addr, tr: &http.Transport{}}
		if round == 0 {
			if r := c.do("POST", "Tables", `{"TableName":"load"}`); r.status != 201 {
				t.Fatalf("create table: %d %s", r.status, r.body)
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

		p = start(t, bin, data, false)
		c = &signer{base: "http://" + p.addr, tr: &http.Transport{}}
		acked := 0
		for _, w := range ws {
			acked += w.acked
			w.check(t, c)
		}
		t.Logf("round %d: %d acknowledged writes", round, acked)
		if acked < 100 {
			t.Errorf("round %d: only %d writes were acknowledged before the kill", round, acked)
		}
		c.tr.CloseIdleConnections()
		if round == 1 {
			p.stop(t)
			p = start(t, bin, data, false)
			c = &signer{base: "http://" + p.addr, tr: &http.Transport{}}
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

// A proc is a running emulator.
type proc struct {
	cmd      *exec.Cmd
	addr     string
	blobAddr string      // with blobs
	lines    chan string // its standard error, closed when it ends
}

// start runs the emulator on a free port (and its blob endpoint on another, with blobs)
// over data and waits until it listens.
func start(t *testing.T, bin, data string, blobs bool) *proc {
	t.Helper()
	blobAddr := "off"
	if blobs {
		blobAddr = "127.0.0.1:0"
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-blob-addr", blobAddr, "-log", "off", "-data", data, "-snapshot-every", "300")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	select {
	case line, ok := <-p.lines:
		_, rest, found := strings.Cut(line, "tables at http://")
		if !ok || !found {
			p.kill(t)
			t.Fatalf("the emulator did not start: %q", line)
		}
		p.addr, _, _ = strings.Cut(rest, "/")
	case <-time.After(10 * time.Second):
		p.kill(t)
		t.Fatal("the emulator did not start in 10 s")
	}
	if blobs {
		line := <-p.lines
		_, rest, found := strings.Cut(line, "blobs at http://")
		if !found {
			p.kill(t)
			t.Fatalf("the emulator serves no blobs: %q", line)
		}
		p.blobAddr, _, _ = strings.Cut(rest, "/")
	}
	return p
}

// kill sends SIGKILL and waits for the process to end.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Kill()
	for range p.lines {
	}
	_ = p.cmd.Wait()
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range p.lines {
		out = append(out, l)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("the emulator did not stop cleanly: %v\n%s", err, strings.Join(out, "\n"))
	}
}

// A signer sends requests signed with the development account's Shared Key.
type signer struct {
	base string
	tr   *http.Transport
}

type response struct {
	status int
	header http.Header
	body   string
	err    error // the request got no answer
}

var devKey, _ = base64.StdEncoding.DecodeString(emulator.DevelopmentKey)

func (s *signer) do(method, path, body string, headers ...string) response {
	acct := "/" + emulator.DevelopmentAccount + "/"
	req, err := http.NewRequest(method, s.base+acct+path, strings.NewReader(body))
	if err != nil {
		return response{err: err}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	toSign := req.Method + "\n\n" + req.Header.Get("Content-Type") + "\n" + req.Header.Get("x-ms-date") + "\n/" +
		emulator.DevelopmentAccount + req.URL.EscapedPath()
	mac := hmac.New(sha256.New, devKey)
	mac.Write([]byte(toSign))
	req.Header.Set("Authorization", "SharedKey "+emulator.DevelopmentAccount+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
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

// A worker writes the rows of its own partition, one request at a time, and keeps what
// each row must be after a restart.
type worker struct {
	pk    string
	n     int // the next row number
	rows  map[string]*rowState
	acked int
}

// rowState is what a row must be: absent, or with properties N and M and the ETag of its
// last acknowledged write ("" when a batch wrote it). While a write is unanswered, alt is
// what it would make of the row.
type rowState struct {
	exists bool
	n, m   int
	etag   string
	alt    *rowState
}

func (w *worker) row(rk string) *rowState {
	if w.rows[rk] == nil {
		w.rows[rk] = &rowState{}
	}
	return w.rows[rk]
}

func key(pk, rk string) string { return fmt.Sprintf("load(PartitionKey='%s',RowKey='%s')", pk, rk) }

// run writes until the emulator stops answering. A write left unanswered may or may not
// have happened; every other answer is final.
func (w *worker) run(t *testing.T, c *signer) {
	for {
		n := w.n
		w.n++
		type write struct {
			rks    []string
			after  []rowState
			method string
			path   string
			body   string
			hdrs   []string
			want   int
		}
		rk := fmt.Sprint("r", n)
		var ops []write
		ops = append(ops, write{[]string{rk}, []rowState{{exists: true, n: n}}, "POST", "load",
			fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"N":%d}`, w.pk, rk, n), []string{"Prefer", "return-no-content"}, 204})
		if prev := w.row(fmt.Sprint("r", n-1)); n%3 == 0 && prev.exists {
			ops = append(ops, write{[]string{fmt.Sprint("r", n-1)}, []rowState{{exists: true, n: -n}}, "PUT", key(w.pk, fmt.Sprint("r", n-1)),
				fmt.Sprintf(`{"N":%d}`, -n), []string{"If-Match", prev.etag}, 204})
		}
		if prev := w.row(fmt.Sprint("r", n-2)); n%4 == 0 && prev.exists {
			ops = append(ops, write{[]string{fmt.Sprint("r", n-2)}, []rowState{{exists: true, n: prev.n, m: n}}, "MERGE", key(w.pk, fmt.Sprint("r", n-2)),
				fmt.Sprintf(`{"M":%d}`, n), []string{"If-Match", "*"}, 204})
		}
		if prev := w.row(fmt.Sprint("r", n-3)); n%5 == 0 && prev.exists {
			ops = append(ops, write{[]string{fmt.Sprint("r", n-3)}, []rowState{{}}, "DELETE", key(w.pk, fmt.Sprint("r", n-3)), "", []string{"If-Match", prev.etag}, 204})
		}
		if n%7 == 0 {
			// Refused: the row exists, and no row has this version.
			ops = append(ops, write{nil, nil, "POST", "load", fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"Refused":true}`, w.pk, rk), nil, 409})
			ops = append(ops, write{nil, nil, "PUT", key(w.pk, rk), `{"Refused":true}`,
				[]string{"If-Match", `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`}, 412})
		}
		for _, op := range ops {
			for i, rk := range op.rks {
				alt := op.after[i]
				w.row(rk).alt = &alt
			}
			r := c.do(op.method, op.path, op.body, op.hdrs...)
			if r.err != nil {
				return // the emulator is gone: op may or may not have happened
			}
			for _, rk := range op.rks {
				w.row(rk).alt = nil
			}
			if r.status != op.want {
				t.Errorf("%s %s: %d %s, want %d", op.method, op.path, r.status, r.body, op.want)
				return
			}
			if op.method != "DELETE" && op.want < 300 && r.header.Get("ETag") == "" {
				t.Errorf("%s %s: no ETag", op.method, op.path)
			}
			for i, rk := range op.rks {
				st := op.after[i]
				st.etag = r.header.Get("ETag")
				*w.row(rk) = st
				w.acked++
			}
		}
		if n%6 == 0 {
			a, b := fmt.Sprint("b", n, "a"), fmt.Sprint("b", n, "b")
			ct, body := batch(c.base, w.pk, a, b, n)
			w.row(a).alt = &rowState{exists: true, n: n}
			w.row(b).alt = &rowState{exists: true, n: n}
			r := c.do("POST", "$batch", body, "Content-Type", ct)
			if r.err != nil {
				return
			}
			if r.status != 202 || strings.Count(r.body, "HTTP/1.1 204") != 2 {
				t.Errorf("batch: %d %s", r.status, r.body)
				return
			}
			*w.row(a), *w.row(b) = rowState{exists: true, n: n}, rowState{exists: true, n: n}
			w.acked++
		}
	}
}

// batch is a $batch of two inserts.
func batch(base, pk, a, b string, n int) (contentType, body string) {
	var s strings.Builder
	s.WriteString("--batch_k\r\nContent-Type: multipart/mixed; boundary=changeset_k\r\n\r\n")
	for _, rk := range []string{a, b} {
		s.WriteString("--changeset_k\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		s.WriteString("POST " + base + "/" + emulator.DevelopmentAccount + "/load HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n")
		fmt.Fprintf(&s, `{"PartitionKey":%q,"RowKey":%q,"N":%d}`+"\r\n", pk, rk, n)
	}
	s.WriteString("--changeset_k--\r\n\r\n--batch_k--\r\n")
	return "multipart/mixed; boundary=batch_k", s.String()
}

// check reads the worker's partition and compares it with what the acknowledged writes
// left. A row that an unanswered write touched may be either way; from now on it is as the
// emulator holds it.
func (w *worker) check(t *testing.T, c *signer) {
	t.Helper()
	got := make(map[string]rowState)
	query := "load()?$filter=" + url.QueryEscape("PartitionKey eq '"+w.pk+"'")
	for {
		r := c.do("GET", query, "")
		if r.err != nil || r.status != 200 {
			t.Fatalf("query: %v %d %s", r.err, r.status, r.body)
		}
		var page struct {
			Value []struct {
				RowKey  string
				N, M    int
				Refused *bool
				ETag    string `json:"odata.etag"`
			} `json:"value"`
		}
		if err := json.Unmarshal([]byte(r.body), &page); err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Value {
			if v.Refused != nil {
				t.Errorf("%s/%s holds a refused write", w.pk, v.RowKey)
			}
			got[v.RowKey] = rowState{exists: true, n: v.N, m: v.M, etag: v.ETag}
		}
		npk, nrk := r.header.Get("x-ms-continuation-NextPartitionKey"), r.header.Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			break
		}
		query = "load()?$filter=" + url.QueryEscape("PartitionKey eq '"+w.pk+"'") + "&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(nrk)
	}
	same := func(want, got rowState) bool {
		if want.exists != got.exists {
			return false
		}
		return !want.exists || want.n == got.n && want.m == got.m && (want.etag == "" || want.etag == got.etag)
	}
	for rk, g := range got {
		if _, ok := w.rows[rk]; !ok {
			t.Errorf("%s/%s was never written: %+v", w.pk, rk, g)
		}
	}
	for rk, want := range w.rows {
		g := got[rk]
		if !same(*want, g) && (want.alt == nil || !same(*want.alt, g)) {
			t.Errorf("%s/%s after the restart: %+v, want %+v (acknowledged)", w.pk, rk, g, *want)
		}
		*want = g
	}
}
