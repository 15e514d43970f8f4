package blobdocs

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoAzureSDK checks that the package depends on the service interfaces only, so
// the in-memory backend can use it without linking any Azure SDK package.
func TestLinksNoAzureSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("no go command: ", err)
	}
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	var sawService bool
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/Azure/") || p == "github.com/unified-data/gotables/tables" {
			t.Errorf("package blobdocs depends on %s", p)
		}
		sawService = sawService || strings.HasSuffix(p, "/tables/service")
	}
	if !sawService {
		t.Errorf("go list shows no dependency on tables/service; the check proves nothing:\n%s", strings.Join(deps, "\n"))
	}
}
