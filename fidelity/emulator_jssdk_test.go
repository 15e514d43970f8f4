package fidelity

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unified-data/gotables/inmemory/emulator"
	"github.com/unified-data/gotables/tables/azuritetest"
)

// jsDeviations names the JS matrix steps whose answers differ between Azurite and the
// emulator because Azurite differs from Azure; each names an entry of Deviations.
var jsDeviations = map[string]string{
	// A "/" in a row key: Azure answers 400 OutOfRangeInput, Azurite 400 InvalidInput.
	"createEntity.badKey": "invalid-key-code",
}

// jsBlobDeviations names the JS blob matrix steps (tools/jsmatrix/blobmatrix.mjs) whose
// answers differ between Azurite and the emulator because Azurite differs from Azure; each
// names an entry of Deviations, as blobMatrixDeviations does for the azblob matrix.
var jsBlobDeviations = map[string]string{
	// A conditional read of a missing blob: Azure answers 404 BlobNotFound, Azurite 412.
	"download.missingIfMatch": "blob-conditional-missing",
}

// TestEmulatorJS runs tools/jsmatrix/matrix.mjs (a fixed sequence of @azure/data-tables
// calls) against the emulator and against Azurite and compares the two step by step. The
// pinned SDK is installed into .cache/jsmatrix when missing, so make test needs no extra step.
func TestEmulatorJS(t *testing.T) {
	node := jsNode(t)
	dir := jsMatrixDir(t)
	azurite, haveAzurite := azuritetest.LookupConnectionString(t)
	emu := "DefaultEndpointsProtocol=http;AccountName=" + emulator.DevelopmentAccount + ";AccountKey=" + emulator.DevelopmentKey +
		";TableEndpoint=" + emulatorEndpoint(t) + ";"
	name := "jsm" + randomHex(t)
	got := runJSMatrix(t, node, dir, "matrix.mjs", emu, name)
	if !haveAzurite {
		t.Log("no Azurite: the emulator's answers are not compared")
		return
	}
	compareJS(t, got, runJSMatrix(t, node, dir, "matrix.mjs", azurite, name), jsDeviations)
}

// TestEmulatorJSBlob runs tools/jsmatrix/blobmatrix.mjs (a fixed sequence of
// @azure/storage-blob calls: containers, uploads with headers and metadata, whole and ranged
// downloads, conditional requests, staged blocks and block lists, flat and hierarchical
// listings in pages, deletes, and the errors of each) against the emulator's blob endpoint
// and against Azurite's, and compares the two step by step as TestEmulatorJS does.
func TestEmulatorJSBlob(t *testing.T) {
	node := jsNode(t)
	dir := jsMatrixDir(t)
	emu := "DefaultEndpointsProtocol=http;AccountName=" + emulator.DevelopmentAccount + ";AccountKey=" + emulator.DevelopmentKey +
		";BlobEndpoint=" + emulatorBlobEndpoint(t) + ";"
	name := "jsb" + randomHex(t)
	got := runJSMatrix(t, node, dir, "blobmatrix.mjs", emu, name)
	if len(got) == 0 {
		t.Fatal("blobmatrix.mjs ran no step")
	}
	az := azuriteBlobEndpoint(t)
	if az == "" {
		t.Log("no Azurite: the emulator's answers are not compared")
		return
	}
	azurite := "DefaultEndpointsProtocol=http;AccountName=" + emulator.DevelopmentAccount + ";AccountKey=" + emulator.DevelopmentKey +
		";BlobEndpoint=" + az + ";"
	compareJS(t, got, runJSMatrix(t, node, dir, "blobmatrix.mjs", azurite, name), jsBlobDeviations)
}

// jsNode returns the path of node, or skips the test when it is not installed (fails it
// when Azurite tests are required).
func jsNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(azuritetest.RequireEnv) == "1" {
			t.Fatalf("%s=1 but node is not installed: the JS matrices need Node.js 20", azuritetest.RequireEnv)
		}
		t.Skip("node is not installed: the JS matrices (@azure/data-tables, @azure/storage-blob) need Node.js 20")
	}
	return node
}

// compareJS compares the emulator's answers (got) with Azurite's (want) step by step: a step
// may differ only when deviations names it, with a deviation Deviations lists.
func compareJS(t *testing.T, got, want []jsStep, deviations map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("emulator answered %d steps, Azurite %d", len(got), len(want))
	}
	for i := range got {
		if got[i].step != want[i].step {
			t.Fatalf("step %d: emulator ran %s, Azurite %s", i, got[i].step, want[i].step)
		}
		if got[i].line == want[i].line {
			continue
		}
		if d, ok := deviations[got[i].step]; ok {
			if _, listed := Deviations[d]; !listed {
				t.Fatalf("%s names deviation %q, which fidelity/deviations.go does not list", got[i].step, d)
			}
			t.Logf("%s differs (deviation %s)", got[i].step, d)
			continue
		}
		t.Errorf("%s:\n emulator %s\n azurite  %s", got[i].step, got[i].line, want[i].line)
	}
}

type jsStep struct{ step, line string }

// jsMatrixDir returns .cache/jsmatrix with the pinned SDKs and the programs in it, installing
// the SDKs with npm when one is missing.
func jsMatrixDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "tools", "jsmatrix")
	dir := filepath.Join(root, ".cache", "jsmatrix")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	var statErr error
	for _, sdk := range []string{"data-tables", "storage-blob"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", sdk, "package.json")); err != nil {
			statErr = err
		}
	}
	if !bytes.Equal(pkg, old) || statErr != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("npm", "install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install of the pinned SDKs: %v\n%s", err, out)
		}
	}
	for _, name := range []string{"matrix.mjs", "blobmatrix.mjs", "step.mjs"} {
		prog, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), prog, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runJSMatrix runs program (in dir) on the connection string conn and the table or
// container name, and returns its steps.
func runJSMatrix(t *testing.T, node, dir, program, conn, name string) []jsStep {
	t.Helper()
	cmd := exec.Command(node, program, conn, name)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", program, err, stderr.String())
	}
	var steps []jsStep
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s struct{ Step string }
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%s printed %q: %v", program, sc.Text(), err)
		}
		steps = append(steps, jsStep{s.Step, strings.TrimSpace(sc.Text())})
	}
	return steps
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
