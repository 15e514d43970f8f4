package bench

import (
	"testing"

	"go.uber.org/goleak"
)

// Run closes the idle connections of its own transport before returning, so no HTTP
// goroutine should be left when goleak looks.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
