package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"go.uber.org/goleak"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables"
	"github.com/unified-data/gotables/tables/azuritetest"
	"github.com/unified-data/gotables/tables/service"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestDemoInMemory(t *testing.T) {
	var out bytes.Buffer
	if err := demoInMemory(context.Background(), &out); err != nil {
		t.Fatalf("demo: %v\noutput so far:\n%s", err, out.String())
	}
	checkDemoOutput(t, out.String())
}

// TestDemoOnAzurite runs the same walkthrough on the emulator "make test" starts, which
// also proves the command cleans up after itself there.
func TestDemoOnAzurite(t *testing.T) {
	conn := azuritetest.ConnectionString(t)
	// A transport of the test's own, so that its idle connections can be closed before
	// goleak looks for leftover goroutines; by default the SDK uses a shared one.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	acct, err := tables.NewAccount(conn, &tables.Options{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := demoOnAccount(context.Background(), &out, acct); err != nil {
		t.Fatalf("demo: %v\noutput so far:\n%s", err, out.String())
	}
	s := out.String()
	checkDemoOutput(t, s)
	i := strings.Index(s, "Cleaned up: deleted table udtdemo")
	if i < 0 {
		t.Fatalf("no clean-up line in the output:\n%s", s)
	}
	table := strings.TrimSpace(strings.TrimPrefix(s[i:], "Cleaned up: deleted table "))
	if _, err := acct.Tables().Query(context.Background(), table, service.Query{}); !abstractions.HasStatus(err, http.StatusNotFound, "TableNotFound") {
		t.Errorf("table %s after the demo: %v, want 404 TableNotFound", table, err)
	}
}

func checkDemoOutput(t *testing.T, s string) {
	t.Helper()
	for _, want := range []string{
		"1. Ensure table ",
		`2. Create customer "EU|Ada Lovelace"`,
		"   stored as eu|ada-lovelace ",
		`   eu|ada-lovelace Name="Ada Lovelace" Email="ada@example.com" Visits=1`,
		"4. Update it with Visits=2, Strict",
		"   refused: errors.Is(err, abstractions.ErrConcurrencyConflict) is true",
		"   the service said 412 UpdateConditionNotSatisfied",
		"   created eu|grace, eu|linus, us|alan, us|barbara",
		"   eu: 3\n   us: 2\n",
		`   eu|ada-lovelace Name="Ada Lovelace" Email="ada@example.com" Visits=2` + "\n" +
			`   eu|grace Name="Grace Hopper" Email="grace@example.com" Visits=4` + "\n" +
			`   eu|linus Name="Linus Torvalds" Email="linus@example.com" Visits=3` + "\n",
		"Delete eu|linus at the version just listed",
		"   deleted: true\n   exists afterwards: false\n   deleting it again is not an error: deleted=false\n",
		"   deleted 2 customers",
		"   2 customers left in the table",
		"Done.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the output lacks %q; it is:\n%s", want, s)
		}
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // a substring; "" means stdout must be empty
		wantStderr string // a substring; "" means stderr must be empty
	}{
		{name: "no arguments", args: nil, wantCode: 1, wantStderr: "Usage:"},
		{name: "help", args: []string{"help"}, wantStdout: "udtables demo"},
		{name: "--help", args: []string{"--help"}, wantStdout: "udtables help"},
		{name: "help demo", args: []string{"help", "demo"}, wantStdout: "--connection-string"},
		{name: "demo --help", args: []string{"demo", "--help"}, wantStdout: "Usage: udtables demo [--connection-string S]"},
		{name: "help --help", args: []string{"help", "--help"}, wantStdout: "Usage: udtables help [command]"},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 1, wantStderr: `udtables: unknown command "frobnicate"`},
		{name: "help unknown", args: []string{"help", "frobnicate"}, wantCode: 1, wantStderr: `unknown command "frobnicate"`},
		{name: "bad flag", args: []string{"demo", "--frobnicate"}, wantCode: 1, wantStderr: "flag provided but not defined: -frobnicate"},
		{name: "stray argument", args: []string{"demo", "extra"}, wantCode: 1, wantStderr: `unexpected argument "extra"`},
		{name: "demo in memory", args: []string{"demo", "--connection-string="}, wantStdout: "Done."},
		{name: "bad connection string", args: []string{"demo", "--connection-string=NoSuchSetting=1"}, wantCode: 1, wantStderr: "udtables demo: connection string: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The demo falls back to this variable; the test must not depend on the caller's.
			t.Setenv(connectionEnv, "")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			check(t, "stdout", stdout.String(), tc.wantStdout)
			check(t, "stderr", stderr.String(), tc.wantStderr)
			if tc.wantCode != 0 && tc.name != "no arguments" && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("an error must print exactly one line; stderr is %q", stderr.String())
			}
		})
	}
}

func check(t *testing.T, stream, got, want string) {
	t.Helper()
	if want == "" {
		if got != "" {
			t.Errorf("%s = %q, want nothing", stream, got)
		}
		return
	}
	if !strings.Contains(got, want) {
		t.Errorf("%s lacks %q; it is:\n%s", stream, want, got)
	}
}

// --timeout ends a command that would otherwise wait: here the demo against a service that
// accepts connections and never answers.
func TestTimeoutFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	defer func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	}()
	conn := "AccountName=acct;AccountKey=a2V5;TableEndpoint=http://" + ln.Addr().String() + "/acct"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "--timeout", "300ms", "--connection-string", conn}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "gave up after 300ms (--timeout)") {
		t.Fatalf("exit %d, stderr %q; want a failure that names the timeout", code, stderr.String())
	}
	code = run(context.Background(), []string{"demo", "--timeout", "-1s"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "must not be negative") {
		t.Fatalf("a negative timeout: exit %d, stderr %q", code, stderr.String())
	}
}
