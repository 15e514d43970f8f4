package abstractions

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when a test leaves a goroutine behind. The abstractions module
// requires nothing, so it checks with the runtime's stacks instead of goleak.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines left behind:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func leakedGoroutines() string {
	deadline := time.Now().Add(2 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "testing.(*M).Run") || strings.Contains(g, "abstractions.leakedGoroutines") ||
				strings.Contains(g, "testing.runFuzzing") || strings.TrimSpace(g) == "" ||
				// The fuzzing engine's signal.Notify starts the runtime's signal loop, which
				// lives as long as the process (goleak ignores it too).
				strings.Contains(g, "os/signal.signal_recv") {
				continue
			}
			leaked = append(leaked, g)
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
