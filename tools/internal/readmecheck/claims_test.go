package readmecheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sdkPrefix starts the import path of every package of the Azure SDK for Go.
const sdkPrefix = "github.com/Azure/azure-sdk-for-go/"

// inmemoryPkg is the in-memory backend's package.
const inmemoryPkg = "github.com/unified-data/gotables/inmemory"

// noSDK matches a statement that something links, imports or needs no Azure SDK, or is
// free of it.
var noSDK = regexp.MustCompile(`(?i)\b(no|without( the)?|free of( the)?) azure sdk\b|\bazure[- ]sdk[- ]free\b|\bazure[- ]free\b|\bnot (link|import|need|depend on)s? (the )?azure sdk\b`)

// aboutMemory matches a mention of the in-memory backend.
var aboutMemory = regexp.MustCompile("(?i)in-memory|\\binmemory\\b|`inmemory`|memory backend")

// A claim is a sentence of a Markdown file saying the in-memory backend links no Azure SDK.
type claim struct {
	line int
	text string
}

// noSDKClaims returns the sentences (a table row counts as one) of md that mention the
// in-memory backend and say something links no Azure SDK. Code blocks are left out.
func noSDKClaims(md []byte) []claim {
	var claims []claim
	var para []string // the paragraph's lines
	start := 0        // its first line
	flush := func() {
		text := strings.Join(para, " ")
		for _, s := range regexp.MustCompile(`[.!?](\s|$)`).Split(text, -1) {
			if noSDK.MatchString(s) && aboutMemory.MatchString(s) {
				claims = append(claims, claim{start, strings.TrimSpace(s)})
			}
		}
		para = nil
	}
	fenced := false
	for i, line := range strings.Split(string(md), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			flush()
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#") {
			flush()
			if trimmed != "" {
				para, start = []string{trimmed}, i+1
				flush()
			}
			continue
		}
		if len(para) == 0 {
			start = i + 1
		}
		para = append(para, trimmed)
	}
	flush()
	return claims
}

// TestNoSDKClaimsFinds shows what noSDKClaims finds: the two sentences the README had while
// the in-memory backend linked the SDK, and not a true one about domain code.
func TestNoSDKClaimsFinds(t *testing.T) {
	md := strings.Join([]string{
		"In tests the in-memory backend takes the same place; it links no Azure SDK and the store is", // 1
		"the same type:", // 2
		"",
		"| `inmemory` | `inmemory.NewAccount`: a `tables.Account` | abstractions, tables (no Azure SDK) |", // 4
		"",
		"Domain code that imports only `abstractions` links no Azure SDK. The in-memory backend", // 6
		"needs no emulator.",
		"```go",
		"// the in-memory backend, no Azure SDK: in a code block, not prose", // 9
		"```",
		"Tests on the memory backend are Azure-free.", // 11
		"",
	}, "\n")
	var got []int
	for _, c := range noSDKClaims([]byte(md)) {
		got = append(got, c.line)
	}
	if want := []int{1, 4, 11}; !slices.Equal(got, want) {
		t.Errorf("claims at lines %v, want %v", got, want)
	}
}

// TestInMemorySDKClaims fails when the README or a guide says the in-memory backend links no
// Azure SDK while go list says the inmemory package links packages of it, which it does
// (ARCHITECTURE.md says why). Should the backend stop linking the SDK, the claim may come
// back; the test then only checks that go list found the package.
func TestInMemorySDKClaims(t *testing.T) {
	inRepository(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
	cmd := exec.Command("go", "list", "-deps", inmemoryPkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", inmemoryPkg, err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, inmemoryPkg) {
		t.Fatalf("go list -deps %s does not list the package itself: %q", inmemoryPkg, deps)
	}
	var sdk []string
	for _, d := range deps {
		if strings.HasPrefix(d, sdkPrefix) {
			sdk = append(sdk, d)
		}
	}
	t.Logf("%s links %d packages of the Azure SDK", inmemoryPkg, len(sdk))
	if len(sdk) == 0 {
		return
	}
	files := append([]string{"README.md"}, guides(t)...)
	for _, f := range files {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range noSDKClaims(md) {
			t.Errorf("%s:%d: says the in-memory backend links no Azure SDK, but it links %d of its packages (%s, …; go list -deps %s): %q",
				f, c.line, len(sdk), sdk[len(sdk)-1], inmemoryPkg, c.text)
		}
	}
}
