package shop

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	domainPkg   = "github.com/unified-data/gotables/tools/examples/shop/domain"
	abstractMod = "github.com/unified-data/gotables/abstractions"
	azurePrefix = "github.com/Azure/"
	// blobSDK is the Azure blob SDK, which only tables/azblobs links.
	blobSDK = "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// goList runs "go list" with args in this directory (so inside the workspace) and returns
// the printed lines. It skips the test when there is no go command.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("no go command: ", err)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// TestDomainImportsOnlyAbstractions checks the first way the modules are used: the domain
// package depends on the abstractions module and the standard library, nothing else.
func TestDomainImportsOnlyAbstractions(t *testing.T) {
	deps := goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./domain")
	if len(deps) == 0 {
		t.Fatal("go list printed no packages")
	}
	for _, p := range deps {
		if p != domainPkg && p != abstractMod && !strings.HasPrefix(p, abstractMod+"/") {
			t.Errorf("the domain package depends on %s; it may use only abstractions and the standard library", p)
		}
	}
}

// TestInMemoryTestBuildLinksNoBlobSDK checks the third way: the domain's tests, which wire
// the in-memory backend, build without the Azure blob SDK. They do link the table SDK: the
// in-memory account is the Azure backend's account type (tables.Account), which is the
// price of one account and one store type for both backends (see ARCHITECTURE.md).
func TestInMemoryTestBuildLinksNoBlobSDK(t *testing.T) {
	deps := goList(t, "-deps", "-test", "./domain")
	var sawInMemory bool
	for _, p := range deps {
		if strings.HasPrefix(p, blobSDK) {
			t.Errorf("the in-memory test build of the domain links %s", p)
		}
		if p == "github.com/unified-data/gotables/inmemory" {
			sawInMemory = true
		}
	}
	if !sawInMemory {
		t.Errorf("the domain's test build does not use the in-memory backend; the check proves nothing:\n%s", strings.Join(deps, "\n"))
	}
}

// TestServerLinksTheAzureBackend checks the second way, and that the checks above can fail:
// the server, which wires tables, does pull in the Azure SDK.
func TestServerLinksTheAzureBackend(t *testing.T) {
	for _, p := range goList(t, "-deps", "./server") {
		if strings.HasPrefix(p, azurePrefix) {
			return
		}
	}
	t.Error("the server links no Azure SDK package; the dependency checks would not notice one either")
}

// TestServerLinksNoBlobSDK checks that a program storing only table rows does not link the
// blob SDK (nor what it depends on): blob support is linked only when a program imports
// tables/azblobs.
func TestServerLinksNoBlobSDK(t *testing.T) {
	var sawTables bool
	for _, p := range goList(t, "-deps", "./server") {
		if strings.Contains(p, "/storage/azblob") || strings.HasPrefix(p, "github.com/apache/arrow") {
			t.Errorf("the table-only server links %s", p)
		}
		if strings.HasSuffix(p, "/sdk/data/aztables") {
			sawTables = true
		}
	}
	if !sawTables {
		t.Error("the server does not link aztables; the check proves nothing")
	}
}
