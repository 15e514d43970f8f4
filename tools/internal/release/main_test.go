package release

import (
	"testing"

	"go.uber.org/goleak"
)

// Every git and go command a test starts is waited for, so no goroutine should be left.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
