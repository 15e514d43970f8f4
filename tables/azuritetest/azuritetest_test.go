package azuritetest

import (
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeTB records what the package does to a test. Skipf and Fatalf end the calling
// goroutine, as testing's do.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true; runtime.Goexit() }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true; runtime.Goexit() }
func (f *fakeTB) Cleanup(func())        {}

// onGoroutine runs fn on a goroutine of its own, so that fakeTB may end it.
func onGoroutine(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

func TestConnectionString(t *testing.T) {
	for _, tc := range []struct {
		conn, require string
		// What ConnectionString does: skip, fail, or return conn.
		skipped, failed bool
		// What LookupConnectionString does: fail, or return conn and found.
		lookupFailed, found bool
	}{
		{conn: "", require: "", skipped: true},
		{conn: "", require: "1", failed: true, lookupFailed: true},
		{conn: "UseDevelopmentStorage=true", require: "", found: true},
		{conn: "UseDevelopmentStorage=true", require: "1", found: true},
	} {
		t.Setenv(ConnEnv, tc.conn)
		t.Setenv(RequireEnv, tc.require)

		f := &fakeTB{}
		var got string
		onGoroutine(func() { got = ConnectionString(f) })
		if f.skipped != tc.skipped || f.failed != tc.failed || (!f.skipped && !f.failed && got != tc.conn) {
			t.Errorf("ConnectionString with conn %q require %q: got %q, skipped %v, failed %v", tc.conn, tc.require, got, f.skipped, f.failed)
		}

		f = &fakeTB{}
		var found bool
		got = "unset"
		onGoroutine(func() { got, found = LookupConnectionString(f) })
		switch {
		case f.skipped:
			t.Errorf("LookupConnectionString with conn %q require %q skipped the test", tc.conn, tc.require)
		case f.failed != tc.lookupFailed:
			t.Errorf("LookupConnectionString with conn %q require %q: failed %v, want %v", tc.conn, tc.require, f.failed, tc.lookupFailed)
		case !f.failed && (got != tc.conn || found != tc.found):
			t.Errorf("LookupConnectionString with conn %q require %q: got %q, %v; want %q, %v", tc.conn, tc.require, got, found, tc.conn, tc.found)
		}
	}
}
