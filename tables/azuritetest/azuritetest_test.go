package azuritetest

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeTB records what ConnectionString does to a test.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Cleanup(func())        {}

func TestConnectionString(t *testing.T) {
	for _, tc := range []struct {
		conn, require   string
		skipped, failed bool
	}{
		{"", "", true, false},
		{"", "1", false, true},
		{"UseDevelopmentStorage=true", "1", false, false},
	} {
		t.Setenv(ConnEnv, tc.conn)
		t.Setenv(RequireEnv, tc.require)
		f := &fakeTB{}
		got := ConnectionString(f)
		if f.skipped != tc.skipped || f.failed != tc.failed || (!f.skipped && !f.failed && got != tc.conn) {
			t.Errorf("conn %q require %q: got %q, skipped %v, failed %v", tc.conn, tc.require, got, f.skipped, f.failed)
		}
	}
}
