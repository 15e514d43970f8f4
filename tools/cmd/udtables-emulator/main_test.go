package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tools/bench"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// syncBuffer is a bytes.Buffer safe for the server's and the test's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The command serves until its context ends (as on SIGINT or SIGTERM), logs each request,
// then stops and leaves no goroutine behind.
func TestRunServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-blob-addr", "127.0.0.1:0", "-log", "json", "-account", "acct2:a2V5"}, &out, func(a string) { addrs <- a })
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("run ended at once: %v\n%s", err, out.String())
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/devstoreaccount1/Tables")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Errorf("an unsigned request: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	// The blob endpoint answers in the Blob service's XML.
	_, rest, ok := strings.Cut(out.String(), "blobs at http://")
	blobAddr, _, _ := strings.Cut(rest, "/")
	if !ok || blobAddr == "" || blobAddr == addr {
		t.Fatalf("no blob endpoint in the output:\n%s", out.String())
	}
	resp, err = (&http.Client{Transport: tr}).Get("http://" + blobAddr + "/devstoreaccount1?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "<Code>AuthenticationFailed</Code>") {
		t.Errorf("an unsigned blob request: %d %s", resp.StatusCode, body)
	}
	tr.CloseIdleConnections()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop")
	}
	log := out.String()
	for _, want := range []string{`"msg":"request"`, `"status":403`, `"error_code":"AuthenticationFailed"`, "stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("the output lacks %s:\n%s", want, log)
		}
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-log", "xml"},
		{"-account", "nokey"},
		{"-account", "devstoreaccount1:a2V5"},
		{"extra"},
		{"-addr", "256.0.0.1:1"},
	} {
		var out syncBuffer
		if err := run(context.Background(), args, &out, nil); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}

// The -faults flag reaches the emulator's options as rules, and a bad rule stops the
// command before it listens.
func TestParseFlagsFaults(t *testing.T) {
	var out syncBuffer
	cfg, err := parseFlags([]string{"-addr", "127.0.0.1:0", "-log", "off",
		"-faults", "delay=200ms:read,throttle=100/s:write:Orders:retry-after=2,lose:batch:every=10"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	addr, opts := cfg.addr, cfg.opts
	if addr != "127.0.0.1:0" || cfg.blobAddr != "127.0.0.1:10000" || opts.Logger != nil || len(opts.Faults) != 3 {
		t.Fatalf("read %+v, %+v", cfg, opts)
	}
	d, th, lose := opts.Faults[0], opts.Faults[1], opts.Faults[2]
	if d.Fault != emulator.Delay || d.Calls != emulator.Reads || d.Delay != 200*time.Millisecond {
		t.Errorf("the delay rule: %v %+v", d.Fault, d)
	}
	if th.Fault != emulator.Throttle || th.Calls != emulator.Writes || th.Table != "Orders" || th.Rate != 100 || th.Per != time.Second || th.RetryAfter != 2*time.Second {
		t.Errorf("the throttle rule: %v %+v", th.Fault, th)
	}
	if lose.Fault != emulator.LoseResponse || lose.Calls != emulator.Transactions || lose.Every != 10 {
		t.Errorf("the lose rule: %v %+v", lose.Fault, lose)
	}
	if err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-faults", "throttle=fast:write"}, &out, nil); err == nil || !strings.Contains(err.Error(), "throttle") {
		t.Errorf("a bad -faults rule: %v", err)
	}
}

// -blob-addr off (or empty) serves tables alone; an address serves blobs too, with -data
// as without.
func TestRunBlobEndpointChoices(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		want, lack string
	}{
		{[]string{"-blob-addr", "off"}, "tables at", "blobs at"},
		{[]string{"-blob-addr", ""}, "tables at", "blobs at"},
		{[]string{"-blob-addr", "127.0.0.1:0", "-data", t.TempDir()}, "blobs at", "memory only"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-log", "off"}, tc.args...), &out, func(string) { cancel() })
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%q: %v", tc.args, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%q: run did not stop", tc.args)
		}
		cancel()
		if o := out.String(); !strings.Contains(o, tc.want) || strings.Contains(o, tc.lack) {
			t.Errorf("%q: output\n%s", tc.args, o)
		}
	}
}

// TestRunCosmos: with -cosmos the emulator serves the Cosmos DB for Table profile, whose
// table names compare with case: "Orders" and "orders" are two tables there, one without it.
func TestRunCosmos(t *testing.T) {
	for _, cosmos := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		args := []string{"-addr", "127.0.0.1:0", "-blob-addr", "off", "-log", "off"}
		if cosmos {
			args = append(args, "-cosmos")
		}
		var out syncBuffer
		addrs := make(chan string, 1)
		done := make(chan error, 1)
		go func() { done <- run(ctx, args, &out, func(a string) { addrs <- a }) }()
		var addr string
		select {
		case addr = <-addrs:
		case err := <-done:
			t.Fatalf("run ended at once: %v\n%s", err, out.String())
		}
		conn := strings.Replace(bench.DevelopmentConnectionString, "http://127.0.0.1:10002", "http://"+addr, 1)
		acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azuritetest.ClientOptions(t)})
		if err != nil {
			t.Fatal(err)
		}
		if err := acct.Tables().CreateTable(ctx, "Orders"); err != nil {
			t.Fatalf("cosmos %v: Orders: %v", cosmos, err)
		}
		err = acct.Tables().CreateTable(ctx, "orders")
		if cosmos && err != nil {
			t.Errorf("-cosmos: orders after Orders: %v", err)
		}
		if !cosmos && !abstractions.HasStatus(err, http.StatusConflict, "TableAlreadyExists") {
			t.Errorf("orders after Orders: %v, want 409 TableAlreadyExists", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}
