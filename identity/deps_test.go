package identity

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestDependsOnlyOnAbstractions checks the module's promise: the identity package depends
// on the abstractions module and the standard library, nothing else (its tests may use the
// in-memory backend).
func TestDependsOnlyOnAbstractions(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("no go command: ", err)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	const self, abstractions = "github.com/unified-data/gotables/identity", "github.com/unified-data/gotables/abstractions"
	deps := strings.Fields(string(out))
	var sawSelf bool
	for _, p := range deps {
		switch {
		case p == self:
			sawSelf = true
		case p == abstractions || strings.HasPrefix(p, abstractions+"/"):
		default:
			t.Errorf("the identity package depends on %s; it may use only abstractions and the standard library", p)
		}
	}
	if !sawSelf {
		t.Errorf("go list did not list the package itself; the check proves nothing:\n%s", out)
	}
}
