package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
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
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-log", "json", "-account", "acct2:a2V5"}, &out, func(a string) { addrs <- a })
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

// TestRunCosmos: with -cosmos the emulator serves the Cosmos DB for Table profile, whose
// table names compare with case: "Orders" and "orders" are two tables there, one without it.
func TestRunCosmos(t *testing.T) {
	for _, cosmos := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		args := []string{"-addr", "127.0.0.1:0", "-log", "off"}
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
